import { Module, type DynamicModule } from '@nestjs/common';
import type { ControllerDescriptor } from '../framework/controller';
import { controllerModule } from '../framework/controller-providers';
import { CronJobController } from './cronjob/cronjob.controller';
import { DaemonSetController } from './daemonset/daemonset.controller';
import { DeploymentController } from './deployment/deployment.controller';
import { DisruptionController } from './disruption/disruption.controller';
import { GarbageCollector } from './garbagecollector/garbagecollector.controller';
import { JobController } from './job/job.controller';
import { HorizontalPodAutoscalerController } from './podautoscaler/horizontal.controller';
import { TtlAfterFinishedController } from './job/ttl-after-finished.controller';
import { ReplicaSetController } from './replicaset/replicaset.controller';
import { StatefulSetController } from './statefulset/statefulset.controller';

/** Workload controllers (replicaset, deployment, statefulset, daemonset, job, cronjob, garbage collector, disruption, horizontal pod autoscaling). */
export const WORKLOAD_CONTROLLERS: ControllerDescriptor[] = [
  { name: 'replicaset', serviceAccount: 'replicaset-controller', create: (ctx) => new ReplicaSetController(ctx) },
  { name: 'deployment', serviceAccount: 'deployment-controller', create: (ctx) => new DeploymentController(ctx) },
  { name: 'statefulset', serviceAccount: 'statefulset-controller', create: (ctx) => new StatefulSetController(ctx) },
  { name: 'daemonset', serviceAccount: 'daemon-set-controller', create: (ctx) => new DaemonSetController(ctx) },
  { name: 'job', serviceAccount: 'job-controller', create: (ctx) => new JobController(ctx) },
  { name: 'ttl-after-finished', serviceAccount: 'ttl-after-finished-controller', create: (ctx) => new TtlAfterFinishedController(ctx) },
  { name: 'cronjob', serviceAccount: 'cronjob-controller', create: (ctx) => new CronJobController(ctx) },
  { name: 'garbagecollector', serviceAccount: 'generic-garbage-collector', create: (ctx) => new GarbageCollector(ctx) },
  { name: 'disruption', serviceAccount: 'disruption-controller', create: (ctx) => new DisruptionController(ctx) },
  {
    name: 'horizontalpodautoscaling',
    serviceAccount: 'horizontal-pod-autoscaler',
    create: (ctx) =>
      new HorizontalPodAutoscalerController(ctx, ctx.options.autoscaler ?? { syncPeriodMs: 15_000, tolerance: 0.1, downscaleStabilizationMs: 300_000, cpuInitializationPeriodMs: 300_000, delayOfInitialReadinessStatusMs: 30_000 }),
  },
];

/** The workload controllers `--controllers` enables, each a provider. */
@Module({})
export class WorkloadControllersModule {
  static register(enabled: readonly ControllerDescriptor[]): DynamicModule {
    return controllerModule(WorkloadControllersModule, WORKLOAD_CONTROLLERS, enabled);
  }
}
