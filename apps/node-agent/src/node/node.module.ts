import { Inject, Injectable, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { COMPONENT_CONTEXT, ComponentTasks } from '@orch/component';
import { AgentInformers } from '../informers';
import { NodeAgentOptions, type NodeAgentContext } from '../options';
import type { Runtime } from '../runtime/runtime';
import { RUNTIME } from '../runtime/runtime.module';
import { AgentServer, ServerModule } from '../server/server.module';
import { NodeMachine } from './machine';
import { NodeManager } from './node-manager';

/** Nodes registered at once: a thousand fake nodes do not open a thousand connections together. */
const REGISTER_BATCH = 50;

/**
 * The agent's Node objects (node-manager.ts): one, or the simulated runtime's fake nodes. At
 * bootstrap each is registered (retried until it succeeds or the agent stops; the pod loop
 * starts after this), then its status and lease loops run until the agent stops.
 */
@Injectable()
export class NodeLoops implements OnApplicationBootstrap {
  constructor(
    @Inject(NodeAgentOptions) private readonly options: NodeAgentOptions,
    @Inject(COMPONENT_CONTEXT) private readonly ctx: NodeAgentContext,
    @Inject(NodeMachine) private readonly machine: NodeMachine,
    @Inject(AgentInformers) private readonly informers: AgentInformers,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(AgentServer) private readonly server: AgentServer,
    @Inject(ComponentTasks) private readonly tasks: ComponentTasks,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const managers = this.options.nodeNames.map((name) => this.manager(name));
    const signal = this.tasks.signal;
    for (let i = 0; i < managers.length && !signal.aborted; i += REGISTER_BATCH) await Promise.all(managers.slice(i, i + REGISTER_BATCH).map((m) => m.register(signal)));
    if (signal.aborted) return;
    this.ctx.logger.info('nodes registered', { nodes: managers.length, runtime: this.runtime.name, port: this.server.port });
    this.tasks.run('node status', async (stop) => {
      await Promise.all(managers.map((m) => m.run(stop)));
    });
  }

  private manager(name: string): NodeManager {
    const { options: o, ctx } = this;
    const f = o.flags;
    return new NodeManager({
      client: ctx.client,
      id: { name, hostname: o.simulated ? name : o.hostname, nodeIp: o.nodeIp, port: this.server.port, podCidr: this.runtime.podCidr(name), labels: o.labels, taints: o.taints },
      info: this.machine.infoFor(name, o.simulated),
      usage: this.machine.usage,
      cached: () => this.informers.nodes.get(name),
      thresholds: o.thresholds,
      reserved: o.reserved,
      maxPods: f['max-pods'],
      runtime: this.runtime.name,
      statusUpdateMs: f['node-status-update-frequency'],
      statusReportMs: f['node-status-report-frequency'],
      leaseDurationSeconds: f['node-lease-duration-seconds'],
      jitterStart: o.simulated && o.nodeNames.length > 1,
      logger: ctx.logger,
    });
  }
}

/** Node registration, status and lease: after the HTTPS API listens (its port is in the Node's status). */
@Module({ imports: [ServerModule], providers: [NodeLoops] })
export class NodeModule {}
