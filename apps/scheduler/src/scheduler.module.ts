import { Inject, Injectable, Module, type DynamicModule, type OnApplicationBootstrap } from '@nestjs/common';
import { SharedInformerFactory } from '@orch/client';
import { PriorityResolver, Scheduler, SchedulerMetrics, type Registry, type SchedulerConfiguration } from './framework';
import { SCHEDULER_APP_OPTIONS, loadSchedulerConfiguration, type SchedulerAppOptions, type SchedulerComponent } from './options';
import { InTreePluginsModule } from './plugins/plugins.module';
import { SchedulerApi } from './scheduler-api';
import { NamespaceIndex, SchedulerInformers } from './scheduler-informers';
import { COMPONENT, PLUGIN_REGISTRY, RUN_SIGNAL, SCHEDULER_CONFIGURATION } from './tokens';

/**
 * Runs the scheduler once the application has bootstrapped: the informers start; once their
 * caches synced the scheduling loop runs until the run signal aborts, then stops (in-flight
 * bindings finish). {@link finished} settles then (at once when stopped before the caches
 * synced: nothing was scheduled) and rejects when the loop failed.
 */
@Injectable()
export class SchedulerRunner implements OnApplicationBootstrap {
  private running: Promise<void> = Promise.resolve();

  constructor(
    @Inject(Scheduler) private readonly scheduler: Scheduler,
    @Inject(SchedulerInformers) private readonly informers: SchedulerInformers,
    @Inject(SCHEDULER_CONFIGURATION) private readonly config: SchedulerConfiguration,
    @Inject(COMPONENT) private readonly component: SchedulerComponent,
    @Inject(RUN_SIGNAL) private readonly signal: AbortSignal,
  ) {}

  onApplicationBootstrap(): void {
    this.informers.factory.start();
    this.running = this.schedule();
    // Observed here; finished() still rejects for whoever awaits it.
    this.running.catch(() => undefined);
  }

  finished(): Promise<void> {
    return this.running;
  }

  private async schedule(): Promise<void> {
    const signal = this.signal;
    if (!(await this.informers.factory.waitForCacheSync(signal))) return;
    this.component.logger.info('caches synced; scheduling', { profiles: this.config.profiles.map((p) => p.schedulerName) });
    this.scheduler.run();
    await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
    await this.scheduler.stop();
  }
}

/**
 * The scheduler's Nest module, built when this process leads (the component runtime runs the
 * leader election): the plugin registry (in-tree plugins by {@link InTreePluginsModule}), the
 * configuration `--config` names checked against it, the scheduler core (profiles and their
 * scheduling queue), the API it writes through (binder, preemptor, status, events), the
 * informer wiring and the runner.
 */
@Module({})
export class SchedulerModule {
  static forRoot(component: SchedulerComponent, options: SchedulerAppOptions, signal: AbortSignal): DynamicModule {
    return {
      module: SchedulerModule,
      imports: [InTreePluginsModule],
      providers: [
        { provide: COMPONENT, useValue: component },
        { provide: SCHEDULER_APP_OPTIONS, useValue: options },
        { provide: RUN_SIGNAL, useValue: signal },
        { provide: SCHEDULER_CONFIGURATION, useFactory: (registry: Registry) => loadSchedulerConfiguration(options, registry), inject: [PLUGIN_REGISTRY] },
        { provide: SharedInformerFactory, useFactory: () => new SharedInformerFactory(component.client) },
        { provide: PriorityResolver, useFactory: () => new PriorityResolver() },
        NamespaceIndex,
        SchedulerApi,
        {
          provide: Scheduler,
          useFactory: (config: SchedulerConfiguration, registry: Registry, api: SchedulerApi, namespaces: NamespaceIndex, priorities: PriorityResolver) =>
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
          inject: [SCHEDULER_CONFIGURATION, PLUGIN_REGISTRY, SchedulerApi, NamespaceIndex, PriorityResolver],
        },
        SchedulerInformers,
        SchedulerRunner,
      ],
    };
  }
}
