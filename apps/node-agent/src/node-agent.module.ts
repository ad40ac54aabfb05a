import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { globalModule } from '@orch/component';
import { AgentInformers } from './informers';
import { NodeMachine } from './node/machine';
import { NodeAgentOptions } from './options';
import { PodQueue } from './pods/pod-worker';
import { PodsModule } from './pods/pods.module';
import { RuntimeModule } from './runtime/runtime.module';

/** What every part of the agent reads: its options, the machine, the informers and the pod queue (the providers of the core module, a {@link globalModule}). */
function coreProviders(options: NodeAgentOptions): Provider[] {
  const machine = async () => {
    await mkdir(join(options.rootDir, 'pods'), { recursive: true });
    return NodeMachine.detect(options.simulated, options.rootDir);
  };
  return [{ provide: NodeAgentOptions, useValue: options }, { provide: NodeMachine, useFactory: machine }, AgentInformers, PodQueue];
}

/**
 * The node agent's Nest module (run by `runComponentModule` for the component runtime). Parts
 * and their order, deepest first at start and last at stop:
 * - core (global): options, machine, informers (stopped last), the pod queue;
 * - runtime (global, runtime.module.ts): the runtime `--runtime` chose with its volume and token
 *   managers; leftovers found at start, containers stopped first at shutdown;
 * - server (server.module.ts): the HTTPS API and its streaming endpoints, listening at init;
 * - node (node.module.ts): registration at bootstrap, then the status and lease loops;
 * - pods (pods.module.ts): the informers start and the pod workers run once the nodes exist.
 * The loops run on the component's ComponentTasks and end with the run signal.
 */
@Module({})
export class NodeAgentModule {
  static forRoot(options: NodeAgentOptions): DynamicModule {
    return { module: NodeAgentModule, imports: [globalModule('NodeAgentCoreModule', coreProviders(options)), RuntimeModule.forRoot(options), PodsModule] };
  }
}
