import { setMaxListeners } from 'node:events';
import { Global, Inject, Injectable, Module, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Catalog } from '@orch/api';
import { SharedInformerFactory } from '@orch/client';
import { ControllerIdentities, eventRecorders } from './controller-credentials';
import { ClusterControllersModule } from './controllers/cluster';
import { WorkloadControllersModule } from './controllers/workloads';
import { DiscoveryRefresher } from './discovery';
import type { Controller, ControllerContext } from './framework/controller';
import { ControllerContexts, controllerToken } from './framework/controller-providers';
import { CONTROLLER_MANAGER_OPTIONS, type ControllerManagerComponent, type ControllerManagerOptions } from './options';
import { COMPONENT, RUN_SIGNAL, SHARED_CONTROLLER_CONTEXT } from './tokens';

/**
 * Runs the enabled controllers once the application has bootstrapped (every controller is
 * built by then, so every informer they use is registered): each controller's `run(signal)`,
 * then the shared informers start. {@link finished} settles when every run returned (after
 * the signal aborted) and rejects when one failed; at shutdown the informers stop.
 */
@Injectable()
export class ControllerRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private running: Promise<void> = Promise.resolve();

  constructor(
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
    @Inject(CONTROLLER_MANAGER_OPTIONS) private readonly options: ControllerManagerOptions,
    @Inject(COMPONENT) private readonly component: ControllerManagerComponent,
    @Inject(SharedInformerFactory) private readonly informers: SharedInformerFactory,
    @Inject(RUN_SIGNAL) private readonly signal: AbortSignal,
  ) {}

  onApplicationBootstrap(): void {
    const controllers = this.options.controllers.map((d) => this.moduleRef.get<Controller>(controllerToken(d.name), { strict: false }));
    this.component.logger.info('starting controllers', { controllers: controllers.map((c) => c.name) });
    this.running = Promise.all(controllers.map((c) => c.run(this.signal))).then(() => undefined);
    // Observed here; finished() still rejects for whoever awaits it.
    this.running.catch(() => undefined);
    this.informers.start();
  }

  finished(): Promise<void> {
    return this.running;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.informers.shutdown();
  }
}

/**
 * What every controller shares, visible to the controller modules: the component runtime's
 * context and run signal, the options, the catalog, the shared informer factory, discovery
 * (read once before any controller is built, then kept fresh until the signal aborts), the
 * controller-manager's own controller context and the controller identities.
 */
@Global()
@Module({})
class ControllerManagerCoreModule {
  static forRoot(component: ControllerManagerComponent, options: ControllerManagerOptions, signal: AbortSignal): DynamicModule {
    // Every controller's workers listen on the one run signal.
    setMaxListeners(0, signal);
    const providers = [
      { provide: COMPONENT, useValue: component },
      { provide: CONTROLLER_MANAGER_OPTIONS, useValue: options },
      { provide: RUN_SIGNAL, useValue: signal },
      { provide: Catalog, useFactory: () => new Catalog() },
      { provide: SharedInformerFactory, useFactory: () => new SharedInformerFactory(component.client) },
      {
        provide: DiscoveryRefresher,
        useFactory: async (catalog: Catalog, informers: SharedInformerFactory) => {
          const discovery = new DiscoveryRefresher(component.client, catalog, component.logger);
          // Custom resources served now are known before the controllers are built.
          await discovery.refresh();
          discovery.start(informers, signal);
          return discovery;
        },
        inject: [Catalog, SharedInformerFactory],
      },
      {
        provide: SHARED_CONTROLLER_CONTEXT,
        useFactory: (catalog: Catalog, informers: SharedInformerFactory, discovery: DiscoveryRefresher): ControllerContext => ({
          client: component.client,
          informers,
          catalog,
          discovery,
          recorder: eventRecorders(component.client, component.identity),
          logger: component.logger,
          metrics: component.metrics,
          options: options.controller,
        }),
        inject: [Catalog, SharedInformerFactory, DiscoveryRefresher],
      },
      { provide: ControllerContexts, useClass: ControllerIdentities },
    ];
    return { module: ControllerManagerCoreModule, providers, exports: providers.map((p) => p.provide) };
  }
}

/**
 * The controller-manager's Nest module, built when this process leads (the component runtime
 * runs the leader election): the shared parts, the controller modules with one provider per
 * controller `--controllers` enables, and the runner.
 */
@Module({})
export class ControllerManagerModule {
  static forRoot(component: ControllerManagerComponent, options: ControllerManagerOptions, signal: AbortSignal): DynamicModule {
    return {
      module: ControllerManagerModule,
      imports: [ControllerManagerCoreModule.forRoot(component, options, signal), WorkloadControllersModule.register(options.controllers), ClusterControllersModule.register(options.controllers)],
      providers: [ControllerRunner],
    };
  }
}
