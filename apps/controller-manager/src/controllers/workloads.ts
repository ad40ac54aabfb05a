import type { ControllerDescriptor } from '../controller';
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
  { name: 'replicaset', create: (ctx) => new ReplicaSetController(ctx) },
  { name: 'deployment', create: (ctx) => new DeploymentController(ctx) },
  { name: 'statefulset', create: (ctx) => new StatefulSetController(ctx) },
  { name: 'daemonset', create: (ctx) => new DaemonSetController(ctx) },
  { name: 'job', create: (ctx) => new JobController(ctx) },
  { name: 'ttl-after-finished', create: (ctx) => new TtlAfterFinishedController(ctx) },
  { name: 'cronjob', create: (ctx) => new CronJobController(ctx) },
  { name: 'garbagecollector', create: (ctx) => new GarbageCollector(ctx) },
  { name: 'disruption', create: (ctx) => new DisruptionController(ctx) },
  {
    name: 'horizontalpodautoscaling',
    create: (ctx) =>
      new HorizontalPodAutoscalerController(ctx, ctx.options.autoscaler ?? { syncPeriodMs: 15_000, tolerance: 0.1, downscaleStabilizationMs: 300_000, cpuInitializationPeriodMs: 300_000, delayOfInitialReadinessStatusMs: 30_000 }),
  },
];
