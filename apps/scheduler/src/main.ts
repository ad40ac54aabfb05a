import 'reflect-metadata';
import { readFile } from 'node:fs/promises';
import { NestFactory } from '@nestjs/core';
import { Catalog } from '@orch/api';
import { EventRecorder, SharedInformerFactory, unwrapTombstone, type RestClient } from '@orch/client';
import { runComponent, type ComponentContext } from '@orch/component';
import type { FlagDefs } from '@orch/server-common';
import {
  ANNOTATION_NAMESPACE_NODE_SELECTOR,
  DEFAULT_SCHEDULER_NAME,
  PriorityResolver,
  Scheduler,
  SchedulerMetrics,
  defaultSchedulerConfiguration,
  inTreeRegistry,
  parseSchedulerConfiguration,
  type Node,
  type Pod,
  type PodCondition,
} from './framework';
import { SCHEDULER, SchedulerModule } from './scheduler.module';

const FLAGS = {
  config: { type: 'string', default: '', description: 'Path to a SchedulerConfiguration file (apiVersion orch.io/v1): profiles, plugins, weights, plugin args.' },
} satisfies FlagDefs;

const catalog = new Catalog();
const def = (group: string, resource: string) => {
  const d = catalog.resources().find((r) => r.group === group && r.resource === resource);
  if (!d) throw new Error(`resource ${resource}.${group} is not in the catalog`);
  return d;
};

/** Creates the Binding (`pods/binding`) that assigns a pod to a node. */
async function bind(client: RestClient, pod: Pod, nodeName: string): Promise<void> {
  await client.resource(def('', 'pods'), pod.metadata.namespace).createSubresource(pod.metadata.name!, 'binding', {
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid },
    target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
  });
}

/** orch scheduler: assigns pending pods to nodes through the gateway. */
void runComponent({
  name: 'scheduler',
  description: 'The orch scheduler watches pods without a node and binds each to the best feasible node per its profile (filter, score, preemption).',
  defaultPort: 10259,
  flags: FLAGS,
  leaderElection: true,
  async run(ctx: ComponentContext<typeof FLAGS>, signal: AbortSignal) {
    const config = ctx.flags.config ? parseSchedulerConfiguration(await readFile(ctx.flags.config, 'utf8'), inTreeRegistry) : defaultSchedulerConfiguration();
    const client = ctx.client;
    const informers = new SharedInformerFactory(client);
    const recorder = new EventRecorder({ client, reportingController: DEFAULT_SCHEDULER_NAME, reportingInstance: ctx.identity });
    const priorities = new PriorityResolver();
    const namespaceSelectors = new Map<string, string | undefined>();
    const namespaceLabels = new Map<string, Record<string, string>>();
    const pods = client.resource(def('', 'pods'));

    const scheduler = new Scheduler({
      config,
      registry: inTreeRegistry,
      metrics: new SchedulerMetrics(ctx.metrics),
      priorities,
      namespaceNodeSelector: (ns) => namespaceSelectors.get(ns),
      namespaces: {
        labels: (name) => namespaceLabels.get(name),
        list: () => [...namespaceLabels].map(([name, labels]) => ({ name, labels })),
      },
      bind: (pod, nodeName) => bind(client, pod, nodeName),
      preempt: async (_pod, _node, victims) => {
        await Promise.all(victims.map((v) => pods.inNamespace(v.metadata.namespace!).delete(v.metadata.name!, {}).catch(() => undefined)));
      },
      updatePodStatus: async (pod: Pod, condition: PodCondition, nominatedNodeName?: string) => {
        const conditions = [...((pod.status?.conditions as PodCondition[] | undefined) ?? []).filter((c) => c.type !== condition.type), condition];
        const status: Record<string, unknown> = { conditions };
        if (nominatedNodeName !== undefined) status.nominatedNodeName = nominatedNodeName || null;
        await pods.inNamespace(pod.metadata.namespace!).patch(pod.metadata.name!, 'merge', { status }, { subresource: 'status' });
      },
      recordEvent: (e) =>
        recorder.event(
          { apiVersion: 'v1', kind: 'Pod', name: e.pod.metadata.name!, namespace: e.pod.metadata.namespace!, uid: e.pod.metadata.uid },
          e.type,
          e.reason,
          e.reason === 'Scheduled' ? 'Binding' : 'Scheduling',
          e.message,
        ),
      onError: (message, err) => ctx.logger.error(message, { err: String(err) }),
    });

    const nodeInformer = informers.informerFor(def('', 'nodes'));
    nodeInformer.addEventHandler({
      onAdd: (n) => scheduler.onNodeAdd(n as unknown as Node),
      onUpdate: (o, n) => scheduler.onNodeUpdate(o as unknown as Node, n as unknown as Node),
      onDelete: (n) => scheduler.onNodeDelete(unwrapTombstone(n) as unknown as Node),
    });
    const podInformer = informers.informerFor(def('', 'pods'));
    podInformer.addEventHandler({
      onAdd: (p) => scheduler.onPodAdd(p as unknown as Pod),
      onUpdate: (o, p) => scheduler.onPodUpdate(o as unknown as Pod, p as unknown as Pod),
      onDelete: (p) => scheduler.onPodDelete(unwrapTombstone(p) as unknown as Pod),
    });
    const nsInformer = informers.informerFor(def('', 'namespaces'));
    const onNamespace = (old: Record<string, string> | undefined, ns: { metadata: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> } }) => {
      const name = ns.metadata.name!;
      const selector = ns.metadata.annotations?.[ANNOTATION_NAMESPACE_NODE_SELECTOR];
      const selectorChanged = namespaceSelectors.has(name) && namespaceSelectors.get(name) !== selector;
      namespaceSelectors.set(name, selector);
      namespaceLabels.set(name, { ...(ns.metadata.labels ?? {}) });
      scheduler.onNamespaceChange(old, ns.metadata.labels ?? {}, selectorChanged);
    };
    nsInformer.addEventHandler({
      onAdd: (ns) => onNamespace(undefined, ns as never),
      onUpdate: (o, ns) => onNamespace((o as { metadata: { labels?: Record<string, string> } }).metadata.labels ?? {}, ns as never),
      onDelete: (ns) => {
        const name = (unwrapTombstone(ns) as { metadata: { name?: string } }).metadata.name!;
        namespaceSelectors.delete(name);
        namespaceLabels.delete(name);
      },
    });
    const pcInformer = informers.informerFor(def('scheduling.orch.io', 'priorityclasses'));
    pcInformer.addEventHandler({
      onAdd: (pc) => priorities.set(pc as never),
      onUpdate: (_o, pc) => priorities.set(pc as never),
      onDelete: (pc) => priorities.delete((unwrapTombstone(pc) as { metadata: { name?: string } }).metadata.name!),
    });

    const app = await NestFactory.createApplicationContext(SchedulerModule.forRoot(scheduler), { logger: ['error', 'warn'] });
    informers.start();
    try {
      // Stopped before the caches synced: nothing was scheduled, only the informers need stopping.
      if (!(await informers.waitForCacheSync(signal))) return;
      ctx.logger.info('caches synced; scheduling', { profiles: config.profiles.map((p) => p.schedulerName) });
      app.get<Scheduler>(SCHEDULER).run();
      await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
      await scheduler.stop();
    } finally {
      await recorder.stop(2000);
      informers.shutdown();
      await app.close();
    }
  },
}).catch((err) => {
  console.error(`scheduler: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
