import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { runComponent } from '@orch/component';
import { SCHEDULER_FLAGS, schedulerAppOptions } from './options';
import { SchedulerModule, SchedulerRunner } from './scheduler.module';

/** orch scheduler: assigns pending pods to nodes through the gateway. */
void runComponent({
  name: 'scheduler',
  description: 'The orch scheduler watches pods without a node and binds each to the best feasible node per its profile (filter, score, preemption).',
  defaultPort: 10259,
  flags: SCHEDULER_FLAGS,
  leaderElection: true,
  /** Runs while leading: the application is built, schedules until `signal` aborts, then closes. */
  async run(component, signal) {
    const app = await NestFactory.createApplicationContext(SchedulerModule.forRoot(component, schedulerAppOptions(component), signal), { logger: ['error', 'warn'], abortOnError: false });
    try {
      await app.get(SchedulerRunner).finished();
    } finally {
      await app.close();
    }
  },
}).catch((err) => {
  console.error(`scheduler: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
