import { collectionPath, type KubeObject } from './api';
import { EventTimeline, formatCpu, formatMemory, Sparkline } from './charts';
import { CORE } from './discovery';
import { useLive } from './live';
import { bytes, cpuMillis, useUsageHistory, type UsageSample } from './metrics';
import { age, detailHref, ErrorNote, SimpleTable } from './tables';

function ready(node: KubeObject): string {
  const c = (node.status?.conditions ?? []).find((x: { type: string }) => x.type === 'Ready');
  return c?.status === 'True' ? 'Ready' : c ? `NotReady (${c.reason ?? c.status})` : 'Unknown';
}

/** Usage against the node's allocatable capacity: a meter, then the sparkline of the last samples. */
function Usage({ samples, capacity, value, label, format }: { samples: UsageSample[]; capacity?: number; value: (s: UsageSample) => number; label: string; format: (v: number) => string }) {
  if (samples.length === 0 || !capacity) return <span>–</span>;
  const pct = Math.round((value(samples[samples.length - 1]) / capacity) * 100);
  return (
    <span>
      <meter min={0} max={100} value={pct} aria-label={`${label}: ${pct}% of allocatable`} /> {pct}% <Sparkline samples={samples} value={value} label={label} format={format} max={capacity} />
    </span>
  );
}

const PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];

/** Cluster overview: nodes (readiness, taints, capacity, usage), pods by phase, recent Warning events. */
export function Overview({ namespace }: { namespace?: string }) {
  const nodes = useLive(collectionPath(CORE.nodes));
  const pods = useLive(collectionPath(CORE.pods, namespace));
  const warnings = useLive(`${collectionPath(CORE.events, namespace)}?fieldSelector=type%3DWarning`);
  const usage = useUsageHistory('/apis/metrics.k8s.io/v1beta1/nodes');
  const seriesOf = (n: KubeObject) => usage.series.get(`/${n.metadata.name}`) ?? [];
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
            { name: 'CPU', cell: (n) => <Usage samples={seriesOf(n)} capacity={cpuMillis(n.status?.allocatable?.cpu ?? n.status?.capacity?.cpu)} value={(u) => u.cpuMillis} label={`CPU of ${n.metadata.name}`} format={formatCpu} /> },
            { name: 'Memory', cell: (n) => <Usage samples={seriesOf(n)} capacity={bytes(n.status?.allocatable?.memory ?? n.status?.capacity?.memory)} value={(u) => u.memoryBytes} label={`Memory of ${n.metadata.name}`} format={formatMemory} /> },
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
        <EventTimeline events={warnings.items} />
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
