import 'reflect-metadata';
import { componentMain } from '@orch/component';
import { ControllerManagerModule } from './controller-manager.module';
import { CONTROLLER_MANAGER_FLAGS, controllerManagerOptions } from './options';

/** orch controller-manager: runs the core control loops against the gateway. */
componentMain({
  name: 'controller-manager',
  description: 'The orch controller-manager embeds the core control loops: it watches the shared state through the gateway and makes changes to move the current state towards the desired state.',
  defaultPort: 10257,
  flags: CONTROLLER_MANAGER_FLAGS,
  leaderElection: true,
  // Runs while leading: the application is built, runs its controllers until the signal aborts, then closes.
  module: (ctx) => ControllerManagerModule.forRoot(controllerManagerOptions(ctx)),
});
