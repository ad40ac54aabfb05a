import { Inject, Injectable, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { COMPONENT_CONTEXT, ComponentTasks } from '@orch/component';
import { Counter } from 'prom-client';
import { AgentInformers } from '../informers';
import { NodeModule } from '../node/node.module';
import { NodeAgentOptions, type NodeAgentContext } from '../options';
import { ProcessRuntime } from '../runtime/process/process-runtime';
import type { Runtime } from '../runtime/runtime';
import { RUNTIME } from '../runtime/runtime.module';
import { PodQueue, PodWorker } from './pod-worker';

/**
 * The pod loop (pod-worker.ts): at bootstrap, once the nodes are registered (NodeModule's
 * bootstrap ran first), the informers start and the pod workers sync pods until the agent
 * stops; when the pod informer first synced, directories of pods no longer bound here go.
 */
@Injectable()
export class PodLoop implements OnApplicationBootstrap {
  constructor(
    @Inject(NodeAgentOptions) private readonly options: NodeAgentOptions,
    @Inject(COMPONENT_CONTEXT) private readonly ctx: NodeAgentContext,
    @Inject(AgentInformers) private readonly informers: AgentInformers,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(PodQueue) private readonly queue: PodQueue,
    @Inject(ComponentTasks) private readonly tasks: ComponentTasks,
  ) {}

  onApplicationBootstrap(): void {
    if (this.tasks.signal.aborted) return;
    const { options: o, ctx, runtime } = this;
    const nodeNames = new Set(o.nodeNames);
    const pods = this.informers.pods;
    const worker = new PodWorker({
      client: ctx.client,
      queue: this.queue,
      runtime,
      informer: pods,
      isMine: (n) => !!n && nodeNames.has(n),
      workers: o.simulated ? Math.max(o.flags['pod-workers'], 32) : o.flags['pod-workers'],
      resyncMs: o.flags['sync-frequency'],
      logger: ctx.logger.with({ loop: 'pods' }),
      statusWrites: new Counter({ name: 'node_agent_pod_status_writes_total', help: 'Pod status writes through pods/status.', registers: [ctx.metrics] }),
    });
    this.informers.start();
    ctx.health.add(
      'pods-synced',
      () => {
        if (!pods.hasSynced()) throw new Error('pod informer not synced');
      },
      { endpoints: ['readyz'] },
    );
    this.tasks.run('pods', (signal) =>
      worker.run(signal, async (list) => {
        ctx.logger.info('pod informer synced', { pods: list.length });
        if (runtime instanceof ProcessRuntime) await runtime.removeUnknownPodDirs(new Set(list.map((p) => p.metadata.uid ?? '')));
      }),
    );
  }
}

/** The pods bound to the agent's node(s), driven through the runtime: after the nodes are registered. */
@Module({ imports: [NodeModule], providers: [PodLoop] })
export class PodsModule {}
