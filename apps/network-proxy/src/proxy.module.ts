import { Inject, Injectable, Module, type BeforeApplicationShutdown, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { SharedInformerFactory } from '@orch/client';
import { COMPONENT_CONTEXT, ComponentTasks, globalModule } from '@orch/component';
import { startComponentServer, type ComponentServer } from '@orch/server-common';
import { ProxyController } from './controller';
import type { FrontendContext, FrontendFactory } from './frontend';
import { ProxyMetrics } from './metrics';
import { ProxyOptions, type ProxyContext } from './options';
import { Proxier } from './proxier';
import { tcpFrontends } from './tcp-frontend';
import { udpFrontends } from './udp-frontend';

/** Injection tokens of what every frontend shares, and of the TCP and UDP frontend factories. */
const FRONTEND_CONTEXT = Symbol('FrontendContext');
const TCP_FRONTENDS = Symbol('TcpFrontends');
const UDP_FRONTENDS = Symbol('UdpFrontends');

/** How long a backend may take to accept a TCP connection before the next is tried, and how long a dropped connection idles (upstream userspace proxy). */
const CONNECT_TIMEOUT_MS = 2000;
const DROP_IDLE_MS = 60_000;

/** The options and metrics every part of the proxy reads (the providers of the core module, a {@link globalModule}). */
function coreProviders(options: ProxyOptions): Provider[] {
  return [
    { provide: ProxyOptions, useValue: options },
    { provide: ProxyMetrics, useFactory: (ctx: ProxyContext) => new ProxyMetrics(ctx.metrics), inject: [COMPONENT_CONTEXT] },
  ];
}

/** Closes every listener and ends every proxied connection, once the controller stopped. */
@Injectable()
class DataPlaneLifecycle implements BeforeApplicationShutdown {
  constructor(@Inject(Proxier) private readonly proxier: Proxier) {}

  async beforeApplicationShutdown(): Promise<void> {
    await this.proxier.close();
  }
}

/**
 * The data plane: the proxier and the TCP and UDP frontends it opens per service address.
 * Nest builds them at start; connections and datagrams never pass through it.
 */
@Module({
  providers: [
    {
      provide: FRONTEND_CONTEXT,
      useFactory: (options: ProxyOptions, ctx: ProxyContext, metrics: ProxyMetrics): FrontendContext => ({ logger: ctx.logger, metrics, connectTimeoutMs: CONNECT_TIMEOUT_MS, dropIdleMs: DROP_IDLE_MS, udpIdleMs: options.udpIdleMs }),
      inject: [ProxyOptions, COMPONENT_CONTEXT, ProxyMetrics],
    },
    { provide: TCP_FRONTENDS, useFactory: tcpFrontends, inject: [FRONTEND_CONTEXT] },
    { provide: UDP_FRONTENDS, useFactory: udpFrontends, inject: [FRONTEND_CONTEXT] },
    {
      provide: Proxier,
      useFactory: (options: ProxyOptions, metrics: ProxyMetrics, tcp: FrontendFactory, udp: FrontendFactory) => new Proxier({ scheduler: options.scheduler, metrics, frontends: [tcp, udp] }),
      inject: [ProxyOptions, ProxyMetrics, TCP_FRONTENDS, UDP_FRONTENDS],
    },
    DataPlaneLifecycle,
  ],
  exports: [Proxier],
})
class DataPlaneModule {}

/** The plain-HTTP metrics server on --metrics-bind-address (health too), listening until application shutdown. */
class MetricsServer implements OnApplicationShutdown {
  private constructor(private readonly server: ComponentServer) {}

  /** Listens when --metrics-bind-address is set; null when it is empty. */
  static async listen(o: ProxyOptions, ctx: ProxyContext): Promise<MetricsServer | null> {
    if (!o.metricsAddress) return null;
    return new MetricsServer(await startComponentServer({ ...o.metricsAddress, healthChecks: ctx.health, registry: ctx.metrics }));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server.close();
  }
}

/**
 * The control loop: at bootstrap the informers start and the controller programs services
 * until the proxy stops (ready once both caches synced); the informers stop at shutdown, after
 * the data plane closed.
 */
@Injectable()
class ProxyLoop implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(COMPONENT_CONTEXT) private readonly ctx: ProxyContext,
    @Inject(SharedInformerFactory) private readonly informers: SharedInformerFactory,
    @Inject(ProxyController) private readonly controller: ProxyController,
    @Inject(ComponentTasks) private readonly tasks: ComponentTasks,
  ) {}

  onApplicationBootstrap(): void {
    const controller = this.controller;
    this.ctx.health.add(
      'proxier-synced',
      () => {
        if (!controller.synced()) throw new Error('services and endpoint slices not synced yet');
      },
      { endpoints: ['healthz', 'readyz'] },
    );
    this.informers.start();
    this.tasks.run('proxy controller', (signal) => controller.run(signal));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.informers.shutdown();
  }
}

/** The controller that keeps the data plane in step with Services and EndpointSlices. */
function proxyController(o: ProxyOptions, ctx: ProxyContext, informers: SharedInformerFactory, proxier: Proxier, metrics: ProxyMetrics): ProxyController {
  ctx.logger.info('network proxy configured', { mode: o.mode, scheduler: o.scheduler, nodeName: o.nodeName, metrics: o.flags['metrics-bind-address'] || 'off' });
  return new ProxyController(informers, proxier, { nodeName: o.nodeName, nodePortAddresses: o.nodePortAddresses }, ctx.logger, metrics);
}

/**
 * The network-proxy's Nest module (run by `runComponentModule` for the component runtime): the
 * options provider, the metrics, the data plane (DataPlaneModule), the controller that keeps
 * it in step with Services and EndpointSlices, and the metrics server.
 */
@Module({})
export class ProxyModule {
  static forRoot(options: ProxyOptions): DynamicModule {
    return {
      module: ProxyModule,
      imports: [globalModule('ProxyCoreModule', coreProviders(options)), DataPlaneModule],
      providers: [
        { provide: SharedInformerFactory, useFactory: (ctx: ProxyContext) => new SharedInformerFactory(ctx.client), inject: [COMPONENT_CONTEXT] },
        { provide: ProxyController, useFactory: proxyController, inject: [ProxyOptions, COMPONENT_CONTEXT, SharedInformerFactory, Proxier, ProxyMetrics] },
        { provide: MetricsServer, useFactory: MetricsServer.listen, inject: [ProxyOptions, COMPONENT_CONTEXT] },
        ProxyLoop,
      ],
    };
  }
}
