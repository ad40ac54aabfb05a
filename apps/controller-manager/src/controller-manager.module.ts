import { Inject, Injectable, Module, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Catalog } from '@orch/api';
import { SharedInformerFactory } from '@orch/client';
import { COMPONENT_CONTEXT, ComponentTasks, globalModule } from '@orch/component';
import { ControllerIdentities, eventRecorders } from './controller-credentials';
import { ClusterControllersModule } from './controllers/cluster';
import { WorkloadControllersModule } from './controllers/workloads';
import { DiscoveryRefresher } from './discovery';
import type { Controller, ControllerContext } from './framework/controller';
import { ControllerContexts, controllerToken } from './framework/controller-providers';
import { CONTROLLER_MANAGER_OPTIONS, type ControllerManagerComponent, type ControllerManagerOptions } from './options';
import { SHARED_CONTROLLER_CONTEXT } from './tokens';

/**
 * Runs the enabled controllers once the application has bootstrapped (every controller is
 * built by then, so every informer they use is registered): each controller's `run(signal)`
 * as a loop of the component's ComponentTasks (the first to fail stops them all), then the
 * shared informers start. At shutdown, after every controller returned, the informers stop.
 */
@Injectable()
export class ControllerRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
    @Inject(CONTROLLER_MANAGER_OPTIONS) private readonly options: ControllerManagerOptions,
    @Inject(COMPONENT_CONTEXT) private readonly component: ControllerManagerComponent,
    @Inject(SharedInformerFactory) private readonly informers: SharedInformerFactory,
    @Inject(ComponentTasks) private readonly tasks: ComponentTasks,
  ) {}

  onApplicationBootstrap(): void {
    const controllers = this.options.controllers.map((d) => this.moduleRef.get<Controller>(controllerToken(d.name), { strict: false }));
    this.component.logger.info('starting controllers', { controllers: controllers.map((c) => c.name) });
    for (const c of controllers) this.tasks.run(`${c.name} controller`, (signal) => c.run(signal));
    this.informers.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.informers.shutdown();
  }
}

/**
 * What every controller shares, visible to the controller modules (beside the component's
 * context and loops, libs/component's COMPONENT_CONTEXT and ComponentTasks): the options, the catalog, the shared informer factory, discovery
 * (read once before any controller is built, then kept fresh until the component stops), the
 * controller-manager's own controller context and the controller identities: the
 * providers of the core module, a {@link globalModule}.
 */
function coreProviders(options: ControllerManagerOptions): Provider[] {
  return [
    { provide: CONTROLLER_MANAGER_OPTIONS, useValue: options },
    { provide: Catalog, useFactory: () => new Catalog() },
    { provide: SharedInformerFactory, useFactory: (component: ControllerManagerComponent) => new SharedInformerFactory(component.client), inject: [COMPONENT_CONTEXT] },
    {
      provide: DiscoveryRefresher,
      useFactory: async (component: ControllerManagerComponent, catalog: Catalog, informers: SharedInformerFactory, tasks: ComponentTasks) => {
        const discovery = new DiscoveryRefresher(component.client, catalog, component.logger);
        // Custom resources served now are known before the controllers are built.
        await discovery.refresh();
        discovery.start(informers, tasks.signal);
        return discovery;
      },
      inject: [COMPONENT_CONTEXT, Catalog, SharedInformerFactory, ComponentTasks],
    },
    {
      provide: SHARED_CONTROLLER_CONTEXT,
      useFactory: (component: ControllerManagerComponent, catalog: Catalog, informers: SharedInformerFactory, discovery: DiscoveryRefresher): ControllerContext => ({
        client: component.client,
        informers,
        catalog,
        discovery,
        recorder: eventRecorders(component.client, component.identity),
        logger: component.logger,
        metrics: component.metrics,
        options: options.controller,
      }),
      inject: [COMPONENT_CONTEXT, Catalog, SharedInformerFactory, DiscoveryRefresher],
    },
    { provide: ControllerContexts, useClass: ControllerIdentities },
  ];
}

/**
 * The controller-manager's Nest module, run by `runComponentModule` when this process leads
 * (the component runtime runs the leader election): the shared parts, the controller modules
 * with one provider per controller `--controllers` enables, and the runner.
 */
@Module({})
export class ControllerManagerModule {
  static forRoot(options: ControllerManagerOptions): DynamicModule {
    return {
      module: ControllerManagerModule,
      imports: [globalModule('ControllerManagerCoreModule', coreProviders(options)), WorkloadControllersModule.register(options.controllers), ClusterControllersModule.register(options.controllers)],
      providers: [ControllerRunner],
    };
  }
}
