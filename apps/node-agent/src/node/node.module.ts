import { Inject, Injectable, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { COMPONENT_CONTEXT, ComponentTasks } from '@orch/component';
import { AgentInformers } from '../informers';
import { NodeAgentOptions, type NodeAgentContext } from '../options';
import type { Runtime } from '../runtime/runtime';
import { RUNTIME } from '../runtime/runtime.module';
import { AgentServer, ServerModule } from '../server/server.module';
import { NodeMachine } from './machine';
import { NodeManager } from './node-manager';

/** Injection token of the agent's node managers: one, or one per fake node of the simulated runtime. */
const NODE_MANAGERS = Symbol('NodeManagers');

/** Nodes registered at once: a thousand fake nodes do not open a thousand connections together. */
const REGISTER_BATCH = 50;

/** The managers of the agent's nodes (node-manager.ts), each with its identity, machine figures and timings. */
function nodeManagers(o: NodeAgentOptions, ctx: NodeAgentContext, machine: NodeMachine, informers: AgentInformers, runtime: Runtime, server: AgentServer): NodeManager[] {
  const f = o.flags;
  return o.nodeNames.map(
    (name) =>
      new NodeManager({
        client: ctx.client,
        id: { name, hostname: o.simulated ? name : o.hostname, nodeIp: o.nodeIp, port: server.port, podCidr: runtime.podCidr(name), labels: o.labels, taints: o.taints },
        info: machine.infoFor(name, o.simulated),
        usage: machine.usage,
        cached: () => informers.nodes.get(name),
        thresholds: o.thresholds,
        reserved: o.reserved,
        maxPods: f['max-pods'],
        runtime: runtime.name,
        statusUpdateMs: f['node-status-update-frequency'],
        statusReportMs: f['node-status-report-frequency'],
        leaseDurationSeconds: f['node-lease-duration-seconds'],
        jitterStart: o.simulated && o.nodeNames.length > 1,
        logger: ctx.logger,
      }),
  );
}

/**
 * At bootstrap every node is registered (retried until it succeeds or the agent stops; the pod
 * loop starts after this), then the status and lease loops of each run until the agent stops.
 */
@Injectable()
class NodeLoops implements OnApplicationBootstrap {
  constructor(
    @Inject(NODE_MANAGERS) private readonly managers: NodeManager[],
    @Inject(ComponentTasks) private readonly tasks: ComponentTasks,
    @Inject(COMPONENT_CONTEXT) private readonly ctx: NodeAgentContext,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(AgentServer) private readonly server: AgentServer,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { managers, tasks } = this;
    for (let i = 0; i < managers.length && !tasks.signal.aborted; i += REGISTER_BATCH) await Promise.all(managers.slice(i, i + REGISTER_BATCH).map((m) => m.register(tasks.signal)));
    if (tasks.signal.aborted) return;
    this.ctx.logger.info('nodes registered', { nodes: managers.length, runtime: this.runtime.name, port: this.server.port });
    tasks.run('node status', async (signal) => {
      await Promise.all(managers.map((m) => m.run(signal)));
    });
  }
}

/** The agent's Node objects: registration, status and lease, once the HTTPS API listens (its port is in the Node's status). */
@Module({
  imports: [ServerModule],
  providers: [{ provide: NODE_MANAGERS, useFactory: nodeManagers, inject: [NodeAgentOptions, COMPONENT_CONTEXT, NodeMachine, AgentInformers, RUNTIME, AgentServer] }, NodeLoops],
})
export class NodeModule {}
