import { Global, Inject, Injectable, Module, type BeforeApplicationShutdown, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { SharedInformerFactory } from '@orch/client';
import { COMPONENT_CONTEXT, ComponentTasks } from '@orch/component';
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

/** The options and metrics every part of the proxy reads. */
@Global()
@Module({})
class ProxyCoreModule {
  static forRoot(options: ProxyOptions): DynamicModule {
    return {
      module: ProxyCoreModule,
      providers: [
        { provide: ProxyOptions, useValue: options },
        { provide: ProxyMetrics, useFactory: (ctx: ProxyContext) => new ProxyMetrics(ctx.metrics), inject: [COMPONENT_CONTEXT] },
      ],
      exports: [ProxyOptions, ProxyMetrics],
    };
  }
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

/**
 * The control loop and the metrics server: the metrics server listens at init (when
 * --metrics-bind-address is set); at bootstrap the informers start and the controller programs
 * services until the proxy stops; at shutdown (after the data plane closed) both stop.
 */
@Injectable()
class ProxyLifecycle implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private metricsServer?: ComponentServer;

  constructor(
    @Inject(ProxyOptions) private readonly options: ProxyOptions,
    @Inject(COMPONENT_CONTEXT) private readonly ctx: ProxyContext,
    @Inject(SharedInformerFactory) private readonly informers: SharedInformerFactory,
    @Inject(ProxyController) private readonly controller: ProxyController,
    @Inject(ComponentTasks) private readonly tasks: ComponentTasks,
  ) {}

  async onModuleInit(): Promise<void> {
    const address = this.options.metricsAddress;
    if (address) this.metricsServer = await startComponentServer({ ...address, healthChecks: this.ctx.health, registry: this.ctx.metrics });
  }

  onApplicationBootstrap(): void {
    const { ctx, controller, options: o } = this;
    ctx.health.add(
      'proxier-synced',
      () => {
        if (!controller.synced()) throw new Error('services and endpoint slices not synced yet');
      },
      { endpoints: ['healthz', 'readyz'] },
    );
    this.informers.start();
    ctx.logger.info('network proxy configured', { mode: o.mode, scheduler: o.scheduler, nodeName: o.nodeName, metrics: o.flags['metrics-bind-address'] || 'off' });
    this.tasks.run('proxy controller', (signal) => controller.run(signal));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.informers.shutdown();
    await this.metricsServer?.close();
  }
}

/**
 * The network-proxy's Nest module (run by `runComponentModule` for the component runtime): the
 * options provider, the metrics, the data plane (DataPlaneModule), and the controller that keeps
 * it in step with Services and EndpointSlices.
 */
@Module({})
export class ProxyModule {
  static forRoot(options: ProxyOptions): DynamicModule {
    return {
      module: ProxyModule,
      imports: [ProxyCoreModule.forRoot(options), DataPlaneModule],
      providers: [
        { provide: SharedInformerFactory, useFactory: (ctx: ProxyContext) => new SharedInformerFactory(ctx.client), inject: [COMPONENT_CONTEXT] },
        {
          provide: ProxyController,
          useFactory: (o: ProxyOptions, ctx: ProxyContext, informers: SharedInformerFactory, proxier: Proxier, metrics: ProxyMetrics) =>
            new ProxyController(informers, proxier, { nodeName: o.nodeName, nodePortAddresses: o.nodePortAddresses }, ctx.logger, metrics),
          inject: [ProxyOptions, COMPONENT_CONTEXT, SharedInformerFactory, Proxier, ProxyMetrics],
        },
        ProxyLifecycle,
      ],
    };
  }
}
