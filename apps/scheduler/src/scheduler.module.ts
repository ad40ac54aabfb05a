import { Module, type DynamicModule } from '@nestjs/common';
import type { Scheduler } from './framework';

/** Injection token of the scheduler core. */
export const SCHEDULER = 'Scheduler';

/** The scheduler's Nest module: provides the scheduler core to the app. */
@Module({})
export class SchedulerModule {
  static forRoot(scheduler: Scheduler): DynamicModule {
    return { module: SchedulerModule, providers: [{ provide: SCHEDULER, useValue: scheduler }], exports: [SCHEDULER] };
  }
}
