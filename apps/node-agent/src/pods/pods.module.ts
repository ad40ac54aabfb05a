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
 * The pod workers (pod-worker.ts) of the pods bound to the agent's node(s); when the pod
 * informer first synced, the directories of pods no longer bound here are removed. The agent is
 * ready once that informer synced.
 */
function podWorker(o: NodeAgentOptions, ctx: NodeAgentContext, informers: AgentInformers, runtime: Runtime, queue: PodQueue): PodWorker {
  const nodeNames = new Set(o.nodeNames);
  const pods = informers.pods;
  ctx.health.add(
    'pods-synced',
    () => {
      if (!pods.hasSynced()) throw new Error('pod informer not synced');
    },
    { endpoints: ['readyz'] },
  );
  return new PodWorker({
    client: ctx.client,
    queue,
    runtime,
    informer: pods,
    isMine: (n) => !!n && nodeNames.has(n),
    workers: o.simulated ? Math.max(o.flags['pod-workers'], 32) : o.flags['pod-workers'],
    resyncMs: o.flags['sync-frequency'],
    logger: ctx.logger.with({ loop: 'pods' }),
    statusWrites: new Counter({ name: 'node_agent_pod_status_writes_total', help: 'Pod status writes through pods/status.', registers: [ctx.metrics] }),
    onSynced: async (list) => {
      ctx.logger.info('pod informer synced', { pods: list.length });
      if (runtime instanceof ProcessRuntime) await runtime.removeUnknownPodDirs(new Set(list.map((p) => p.metadata.uid ?? '')));
    },
  });
}

/** At bootstrap, once the nodes are registered (NodeModule's bootstrap ran first), the informers start and the pod workers sync pods until the agent stops. */
@Injectable()
class PodLoop implements OnApplicationBootstrap {
  constructor(
    @Inject(PodWorker) private readonly worker: PodWorker,
    @Inject(AgentInformers) private readonly informers: AgentInformers,
    @Inject(ComponentTasks) private readonly tasks: ComponentTasks,
  ) {}

  onApplicationBootstrap(): void {
    if (this.tasks.signal.aborted) return;
    this.informers.start();
    this.tasks.run('pods', (signal) => this.worker.run(signal));
  }
}

/** The pods bound to the agent's node(s), driven through the runtime, once the nodes are registered. */
@Module({
  imports: [NodeModule],
  providers: [{ provide: PodWorker, useFactory: podWorker, inject: [NodeAgentOptions, COMPONENT_CONTEXT, AgentInformers, RUNTIME, PodQueue] }, PodLoop],
})
export class PodsModule {}
