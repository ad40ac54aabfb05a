import 'reflect-metadata';
import { componentMain } from '@orch/component';
import { SCHEDULER_FLAGS, schedulerAppOptions } from './options';
import { SchedulerModule } from './scheduler.module';

/** orch scheduler: assigns pending pods to nodes through the gateway. */
componentMain({
  name: 'scheduler',
  description: 'The orch scheduler watches pods without a node and binds each to the best feasible node per its profile (filter, score, preemption).',
  defaultPort: 10259,
  flags: SCHEDULER_FLAGS,
  leaderElection: true,
  // Runs while leading: the application is built, schedules until the signal aborts, then closes.
  module: (ctx) => SchedulerModule.forRoot(schedulerAppOptions(ctx)),
});
