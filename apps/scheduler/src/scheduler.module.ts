import { Inject, Injectable, Module, type DynamicModule, type OnApplicationBootstrap } from '@nestjs/common';
import { SharedInformerFactory } from '@orch/client';
import { COMPONENT_CONTEXT, ComponentTasks } from '@orch/component';
import { PriorityResolver, Scheduler, SchedulerMetrics, type Registry, type SchedulerConfiguration } from './framework';
import { SCHEDULER_APP_OPTIONS, loadSchedulerConfiguration, type SchedulerAppOptions, type SchedulerComponent } from './options';
import { InTreePluginsModule } from './plugins/plugins.module';
import { SchedulerApi } from './scheduler-api';
import { NamespaceIndex, SchedulerInformers } from './scheduler-informers';
import { PLUGIN_REGISTRY, SCHEDULER_CONFIGURATION } from './tokens';

/**
 * Runs the scheduler once the application has bootstrapped, as a loop of the component's
 * ComponentTasks: the informers start; once their caches synced the scheduling loop runs until
 * the run signal aborts, then stops (in-flight bindings finish). Stopped before the caches
 * synced, it returns at once: nothing was scheduled.
 */
@Injectable()
export class SchedulerRunner implements OnApplicationBootstrap {
  constructor(
    @Inject(Scheduler) private readonly scheduler: Scheduler,
    @Inject(SchedulerInformers) private readonly informers: SchedulerInformers,
    @Inject(SCHEDULER_CONFIGURATION) private readonly config: SchedulerConfiguration,
    @Inject(COMPONENT_CONTEXT) private readonly component: SchedulerComponent,
    @Inject(ComponentTasks) private readonly tasks: ComponentTasks,
  ) {}

  onApplicationBootstrap(): void {
    this.informers.factory.start();
    this.tasks.run('scheduler', (signal) => this.schedule(signal));
  }

  private async schedule(signal: AbortSignal): Promise<void> {
    if (!(await this.informers.factory.waitForCacheSync(signal))) return;
    this.component.logger.info('caches synced; scheduling', { profiles: this.config.profiles.map((p) => p.schedulerName) });
    this.scheduler.run();
    await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
    await this.scheduler.stop();
  }
}

/**
 * The scheduler's Nest module, run by `runComponentModule` when this process leads (the
 * component runtime runs the leader election): the plugin registry (in-tree plugins by
 * {@link InTreePluginsModule}), the configuration `--config` names checked against it, the scheduler core (profiles and their
 * scheduling queue), the API it writes through (binder, preemptor, status, events), the
 * informer wiring and the runner.
 */
@Module({})
export class SchedulerModule {
  static forRoot(options: SchedulerAppOptions): DynamicModule {
    return {
      module: SchedulerModule,
      imports: [InTreePluginsModule],
      providers: [
        { provide: SCHEDULER_APP_OPTIONS, useValue: options },
        { provide: SCHEDULER_CONFIGURATION, useFactory: (registry: Registry) => loadSchedulerConfiguration(options, registry), inject: [PLUGIN_REGISTRY] },
        { provide: SharedInformerFactory, useFactory: (component: SchedulerComponent) => new SharedInformerFactory(component.client), inject: [COMPONENT_CONTEXT] },
        { provide: PriorityResolver, useFactory: () => new PriorityResolver() },
        NamespaceIndex,
        SchedulerApi,
        {
          provide: Scheduler,
          useFactory: (config: SchedulerConfiguration, registry: Registry, api: SchedulerApi, namespaces: NamespaceIndex, priorities: PriorityResolver, component: SchedulerComponent) =>
            new Scheduler({
              config,
              registry,
              metrics: new SchedulerMetrics(component.metrics),
              priorities,
              namespaces,
              namespaceNodeSelector: (ns) => namespaces.nodeSelector(ns),
              bind: api.bind,
              preempt: api.preempt,
              updatePodStatus: api.updatePodStatus,
              recordEvent: api.recordEvent,
              onError: api.onError,
            }),
          inject: [SCHEDULER_CONFIGURATION, PLUGIN_REGISTRY, SchedulerApi, NamespaceIndex, PriorityResolver, COMPONENT_CONTEXT],
        },
        SchedulerInformers,
        SchedulerRunner,
      ],
    };
  }
}
