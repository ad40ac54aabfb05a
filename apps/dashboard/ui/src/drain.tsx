import { useEffect, useState } from 'preact/hooks';
import { ApiError, request, type KubeObject } from './api';
import { ErrorNote, SimpleTable } from './tables';

/** What drain does with one pod of the node. */
export interface DrainStep {
  namespace: string;
  name: string;
  /** `evict` (planned), then `evicted`, `refused` (a disruption budget said no: 429) or `failed`; `skip` is left as it is. */
  outcome: 'evict' | 'evicted' | 'refused' | 'failed' | 'skip';
  /** Why it is skipped, what the gateway answered, or a warning (no controller will recreate it). */
  note: string;
}

const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

const nodeMergePatch = (node: string, body: unknown) =>
  request(`/api/v1/nodes/${encodeURIComponent(node)}`, { method: 'PATCH', contentType: 'application/merge-patch+json', body: JSON.stringify(body) });

/** Marks the node unschedulable (`kubectl cordon`) or schedulable again (`kubectl uncordon`). */
export function setCordoned(node: string, cordoned: boolean): Promise<unknown> {
  return nodeMergePatch(node, { spec: { unschedulable: cordoned ? true : null } });
}

/**
 * The pods on `node` and what `kubectl drain --ignore-daemonsets` would do with each:
 * DaemonSet pods and mirror (static) pods stay; the others are evicted, those no controller
 * manages with a warning that they will not come back.
 */
export async function drainPlan(node: string): Promise<DrainStep[]> {
  const list = await request<{ items: KubeObject[] }>(`/api/v1/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${node}`)}`);
  return list.items
    .map((pod): DrainStep => {
      const owner = (pod.metadata.ownerReferences ?? []).find((o) => o.controller);
      const base = { namespace: pod.metadata.namespace ?? '', name: pod.metadata.name };
      if (pod.metadata.annotations?.[MIRROR_ANNOTATION] !== undefined) return { ...base, outcome: 'skip', note: 'mirror pod of a static pod: the node runs it' };
      if (owner?.kind === 'DaemonSet') return { ...base, outcome: 'skip', note: `DaemonSet ${owner.name} runs one on every node` };
      return { ...base, outcome: 'evict', note: owner ? `${owner.kind} ${owner.name} recreates it elsewhere` : 'no controller: it will not be recreated' };
    })
    .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
}

/**
 * Drains `node` as `kubectl drain` does: cordons it, then evicts the planned pods through the
 * Eviction subresource (`POST pods/<name>/eviction`, policy/v1), so PodDisruptionBudgets
 * decide; a refusal (429) is reported, not retried. A pod gone already counts as evicted.
 * `onStep` hears each outcome as it comes.
 */
export async function drain(node: string, plan: DrainStep[], onStep: (step: DrainStep) => void): Promise<DrainStep[]> {
  await setCordoned(node, true);
  return Promise.all(
    plan.map(async (step): Promise<DrainStep> => {
      if (step.outcome === 'skip') return step;
      const path = `/api/v1/namespaces/${encodeURIComponent(step.namespace)}/pods/${encodeURIComponent(step.name)}/eviction`;
      let done: DrainStep;
      try {
        await request(path, { method: 'POST', contentType: 'application/json', body: JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: step.name, namespace: step.namespace } }) });
        done = { ...step, outcome: 'evicted', note: 'eviction accepted' };
      } catch (err) {
        const e = err instanceof ApiError ? err : new ApiError(0, 'NetworkError', String(err));
        if (e.code === 404) done = { ...step, outcome: 'evicted', note: 'already gone' };
        else done = { ...step, outcome: e.code === 429 ? 'refused' : 'failed', note: e.message };
      }
      onStep(done);
      return done;
    }),
  );
}

/**
 * The drain dialog's body: the plan (which pods go, which stay and why), then each pod's
 * outcome as it comes, refused evictions with the gateway's reason. `onDone` hears a summary.
 */
export function DrainPanel({ node, onCancel, onDone }: { node: string; onCancel: () => void; onDone: (summary: string) => void }) {
  const [steps, setSteps] = useState<DrainStep[]>();
  const [error, setError] = useState<ApiError>();
  const [running, setRunning] = useState(false);
  useEffect(() => {
    drainPlan(node).then(setSteps, (err: ApiError) => setError(err));
  }, [node]);
  const start = async () => {
    if (!steps) return;
    setRunning(true);
    setError(undefined);
    try {
      const done = await drain(node, steps, (step) => setSteps((now) => now?.map((s) => (s.namespace === step.namespace && s.name === step.name ? step : s))));
      const count = (o: DrainStep['outcome']) => done.filter((s) => s.outcome === o).length;
      onDone(`Cordoned ${node}; ${count('evicted')} evicted, ${count('refused')} refused, ${count('failed')} failed, ${count('skip')} left.`);
    } catch (err) {
      setError(err as ApiError);
    }
    setRunning(false);
  };
  const finished = steps?.some((s) => s.outcome !== 'evict' && s.outcome !== 'skip');
  return (
    <div class="drain">
      <p>The node is cordoned (no new pods), then its pods are evicted: disruption budgets may refuse some.</p>
      {error && <ErrorNote error={error} what={`drain node ${node}`} />}
      {!steps && !error && <p>Listing the pods on {node}…</p>}
      {steps && (
        <SimpleTable
          caption={`Pods on ${node} (${steps.length})`}
          rows={steps}
          rowKey={(s) => `${s.namespace}/${s.name}`}
          columns={[
            { name: 'Pod', cell: (s) => `${s.namespace}/${s.name}` },
            { name: 'Outcome', cell: (s) => <span class={`outcome outcome-${s.outcome}`}>{OUTCOME_TEXT[s.outcome]}</span> },
            { name: 'Note', cell: (s) => s.note },
          ]}
        />
      )}
      <div class="buttons">
        {!finished && (
          <button type="button" class="danger" disabled={!steps || running} onClick={() => void start()}>
            Drain
          </button>
        )}
        <button type="button" onClick={onCancel}>
          {finished ? 'Close' : 'Cancel'}
        </button>
      </div>
    </div>
  );
}

const OUTCOME_TEXT: Record<DrainStep['outcome'], string> = { evict: 'to evict', evicted: 'evicted', refused: 'refused', failed: 'failed', skip: 'left' };
