import { Module, type DynamicModule } from '@nestjs/common';
import type { ControllerContext, ControllerDescriptor } from './framework/controller';

/** Injection token of the shared ControllerContext. */
export const CONTROLLER_CONTEXT = 'ControllerContext';
export const ENABLED_CONTROLLERS = 'EnabledControllers';

/** The controller-manager's Nest module: provides the shared controller context. */
@Module({})
export class ControllerManagerModule {
  static forRoot(context: ControllerContext, enabled: ControllerDescriptor[]): DynamicModule {
    return {
      module: ControllerManagerModule,
      providers: [
        { provide: CONTROLLER_CONTEXT, useValue: context },
        { provide: ENABLED_CONTROLLERS, useValue: enabled },
      ],
      exports: [CONTROLLER_CONTEXT, ENABLED_CONTROLLERS],
    };
  }
}
