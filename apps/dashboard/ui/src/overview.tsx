import { useEffect, useState } from 'preact/hooks';
import { collectionPath, request, type KubeObject } from './api';
import { CORE } from './discovery';
import { useLive } from './live';
import { age, detailHref, ErrorNote, SimpleTable } from './tables';

interface NodeMetrics {
  metadata: { name: string };
  usage: { cpu: string; memory: string };
}

const METRICS_REFRESH_MS = 15_000;

/**
 * Node usage from the metrics API (metrics.k8s.io has no watch: it is read again at the metrics
 * server's resolution). Undefined while unknown or when the API is not there.
 */
function useNodeMetrics(): Map<string, NodeMetrics['usage']> | undefined {
  const [usage, setUsage] = useState<Map<string, NodeMetrics['usage']>>();
  useEffect(() => {
    let stopped = false;
    const load = () =>
      request<{ items: NodeMetrics[] }>('/apis/metrics.k8s.io/v1beta1/nodes').then(
        (list) => !stopped && setUsage(new Map(list.items.map((m) => [m.metadata.name, m.usage]))),
        () => !stopped && setUsage(undefined),
      );
    void load();
    const timer = setInterval(load, METRICS_REFRESH_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, []);
  return usage;
}

function ready(node: KubeObject): string {
  const c = (node.status?.conditions ?? []).find((x: { type: string }) => x.type === 'Ready');
  return c?.status === 'True' ? 'Ready' : c ? `NotReady (${c.reason ?? c.status})` : 'Unknown';
}

function cpuMillis(q: string | undefined): number | undefined {
  if (!q) return undefined;
  if (q.endsWith('n')) return Number(q.slice(0, -1)) / 1e6;
  if (q.endsWith('u')) return Number(q.slice(0, -1)) / 1e3;
  if (q.endsWith('m')) return Number(q.slice(0, -1));
  return Number(q) * 1000;
}

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
function bytes(q: string | undefined): number | undefined {
  if (!q) return undefined;
  const m = /^([0-9.]+)([A-Za-z]*)$/.exec(q);
  return m ? Number(m[1]) * (BINARY[m[2]] ?? 1) : undefined;
}

function Usage({ used, capacity, unit }: { used?: number; capacity?: number; unit: string }) {
  if (used === undefined || !capacity) return <span>–</span>;
  const pct = Math.round((used / capacity) * 100);
  return (
    <span>
      <meter min={0} max={100} value={pct} aria-label={`${pct}% of ${unit}`} /> {pct}%
    </span>
  );
}

const PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];

/** Cluster overview: nodes (readiness, taints, capacity, usage), pods by phase, recent Warning events. */
export function Overview({ namespace }: { namespace?: string }) {
  const nodes = useLive(collectionPath(CORE.nodes));
  const pods = useLive(collectionPath(CORE.pods, namespace));
  const warnings = useLive(`${collectionPath(CORE.events, namespace)}?fieldSelector=type%3DWarning`);
  const usage = useNodeMetrics();
  const byPhase = new Map<string, number>(PHASES.map((p) => [p, 0]));
  for (const p of pods.items) byPhase.set(p.status?.phase ?? 'Unknown', (byPhase.get(p.status?.phase ?? 'Unknown') ?? 0) + 1);
  const recent = [...warnings.items].sort((a, b) => String(b.lastTimestamp ?? b.eventTime ?? '').localeCompare(String(a.lastTimestamp ?? a.eventTime ?? ''))).slice(0, 20);
  return (
    <div class="overview">
      <section aria-label="Nodes">
        <h2>Nodes</h2>
        {nodes.error && <ErrorNote error={nodes.error} what="list nodes" />}
        <SimpleTable
          caption={`Nodes (${nodes.items.length})`}
          rows={nodes.items}
          rowKey={(n) => n.metadata.name}
          columns={[
            { name: 'Name', cell: (n) => <a href={detailHref(CORE.nodes, n.metadata.name)}>{n.metadata.name}</a> },
            { name: 'Status', cell: (n) => `${ready(n)}${n.spec?.unschedulable ? ', SchedulingDisabled' : ''}` },
            { name: 'Taints', cell: (n) => (n.spec?.taints ?? []).map((t: { key: string; value?: string; effect: string }) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).join(', ') || '–' },
            { name: 'CPU', cell: (n) => <Usage used={cpuMillis(usage?.get(n.metadata.name)?.cpu)} capacity={cpuMillis(n.status?.allocatable?.cpu ?? n.status?.capacity?.cpu)} unit={`${n.status?.capacity?.cpu ?? '?'} CPU`} /> },
            { name: 'Memory', cell: (n) => <Usage used={bytes(usage?.get(n.metadata.name)?.memory)} capacity={bytes(n.status?.allocatable?.memory ?? n.status?.capacity?.memory)} unit={`${n.status?.capacity?.memory ?? '?'} memory`} /> },
            { name: 'Pods', cell: (n) => pods.items.filter((p) => p.spec?.nodeName === n.metadata.name).length },
            { name: 'Age', cell: (n) => age(n.metadata.creationTimestamp) },
          ]}
        />
      </section>
      <section aria-label="Pods by phase">
        <h2>Pods by phase</h2>
        {pods.error && <ErrorNote error={pods.error} what={`list pods${namespace ? ` in namespace "${namespace}"` : ' in all namespaces'}`} />}
        <dl class="phases" data-total={pods.items.length}>
          {[...byPhase].map(([phase, n]) => (
            <div class={`phase phase-${phase}`} data-phase={phase}>
              <dt>{phase}</dt>
              <dd>{n}</dd>
            </div>
          ))}
        </dl>
      </section>
      <section aria-label="Recent warnings">
        <h2>Recent warnings</h2>
        {warnings.error && <ErrorNote error={warnings.error} what="list events" />}
        <SimpleTable
          caption={`Warning events (${warnings.items.length})`}
          rows={recent}
          rowKey={(e) => e.metadata.uid ?? e.metadata.name}
          columns={[
            { name: 'Last seen', cell: (e) => age((e.lastTimestamp ?? e.eventTime) as string) },
            { name: 'Object', cell: (e) => `${(e.involvedObject as { kind: string; name: string }).kind}/${(e.involvedObject as { name: string }).name}` },
            { name: 'Reason', cell: (e) => String(e.reason ?? '') },
            { name: 'Message', cell: (e) => String(e.message ?? '') },
          ]}
        />
      </section>
    </div>
  );
}
