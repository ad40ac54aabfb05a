import 'reflect-metadata';
import { runComponent, runComponentModule } from '@orch/component';
import { SCHEDULER_FLAGS, schedulerAppOptions } from './options';
import { SchedulerModule } from './scheduler.module';

/** orch scheduler: assigns pending pods to nodes through the gateway. */
void runComponent({
  name: 'scheduler',
  description: 'The orch scheduler watches pods without a node and binds each to the best feasible node per its profile (filter, score, preemption).',
  defaultPort: 10259,
  flags: SCHEDULER_FLAGS,
  leaderElection: true,
  // Runs while leading: the application is built, schedules until the signal aborts, then closes.
  run: (ctx, signal) => runComponentModule(ctx, signal, SchedulerModule.forRoot(schedulerAppOptions(ctx))),
}).catch((err) => {
  console.error(`scheduler: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
