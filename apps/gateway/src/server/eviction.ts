import type { ResourceDef, coreV1, metaV1, policyV1 } from '@orch/api';
import { labelSelectorFromObject, StatusError } from '@orch/apimachinery';
import type { GenericStore } from '../registry/generic-store';
import { storeOf } from '../registry/kinds';
import { podDisruptionBudgets } from '../registry/kinds/policy/poddisruptionbudgets';
import { nowTime } from '../registry/object-meta';
import type { RequestContext, Served } from '../registry/strategy';

/** Budget status writes that lost a race are retried this often before the eviction answers 429. */
const EVICTION_RETRIES = 5;
/** upstream MaxDisruptedPodSize: evictions not yet confirmed by the disruption controller. */
const MAX_DISRUPTED_PODS = 2000;
const VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget.";

type EvictedPod = Served<coreV1.Pod>;
/** A budget as stored: its status may not be written in full yet (no disruption controller ran). */
type Budget = Served<Omit<policyV1.PodDisruptionBudget, 'status'> & { status?: Partial<policyV1.PodDisruptionBudgetStatus> }>;
type Condition = metaV1.Condition;

function tooManyRequests(message: string, retryAfterSeconds?: number): StatusError {
  const details = { causes: [{ reason: 'DisruptionBudget', message }], ...(retryAfterSeconds ? { retryAfterSeconds } : {}) };
  return new StatusError(429, 'TooManyRequests', VIOLATION, details, retryAfterSeconds ? { 'Retry-After': String(retryAfterSeconds) } : {});
}

function isReady(pod: EvictedPod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

function selects(pdb: Budget, pod: EvictedPod): boolean {
  try {
    return labelSelectorFromObject(pdb.spec?.selector).matches(pod.metadata.labels);
  } catch {
    return false;
  }
}

/**
 * The PodDisruptionBudget check of pods/eviction (upstream EvictionREST.Create), run before
 * the pod is deleted; throws to refuse the eviction.
 * - Pods that are finished, pending or already being deleted may always go.
 * - The budgets in the pod's namespace whose selector matches it: none → allowed; more
 *   than one → 500 (unsupported, as upstream).
 * - An unready pod goes without using the budget when the budget is met (or its
 *   unhealthyPodEvictionPolicy is AlwaysAllow).
 * - Otherwise the budget must be observed (else 429, retry after 10 s) and have
 *   disruptionsAllowed ≥ 1 (else 429 with a DisruptionBudget cause); it is decremented and
 *   the pod recorded in status.disruptedPods by a status update conditioned on the budget's
 *   resourceVersion. A lost race re-reads and retries; still losing answers 429.
 * `dryRun` checks without writing.
 */
export async function admitEviction(registries: Map<ResourceDef, GenericStore>, pods: GenericStore, namespace: string, podName: string, ctx: RequestContext, dryRun: boolean): Promise<void> {
  const pod = (await pods.get(namespace, podName)) as EvictedPod;
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || pod.metadata.deletionTimestamp) return;
  const budgets = storeOf(registries, podDisruptionBudgets);
  if (!budgets) return;
  const matching = ((await budgets.list(namespace, {})).items as Budget[]).filter((b) => selects(b, pod));
  if (matching.length === 0) return;
  if (matching.length > 1) throw StatusError.internal('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
  let pdb = matching[0];
  if (!isReady(pod)) {
    const s = pdb.status ?? {};
    if (pdb.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow') return;
    if ((s.currentHealthy ?? 0) >= (s.desiredHealthy ?? 0) && (s.desiredHealthy ?? 0) > 0) return;
  }
  for (let attempt = 0; ; attempt++) {
    const next = checkAndDecrement(pdb, podName);
    if (dryRun) return;
    try {
      await budgets.update(namespace, pdb.metadata.name ?? '', next, ctx, 'status');
      return;
    } catch (err) {
      if (!(err instanceof StatusError) || err.code !== 409) throw err;
      if (attempt >= EVICTION_RETRIES) throw tooManyRequests(`The disruption budget ${pdb.metadata.name} is being updated by others; try again.`);
      pdb = (await budgets.get(namespace, pdb.metadata.name ?? '')) as Budget;
    }
  }
}

/** upstream checkAndDecrement: the budget after this eviction, or the refusal. */
function checkAndDecrement(pdb: Budget, podName: string): Budget {
  const status = structuredClone(pdb.status ?? {});
  const name = pdb.metadata.name ?? '';
  if ((status.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0)) {
    throw tooManyRequests(`The disruption budget ${name} is still being processed by the server.`, 10);
  }
  const allowed = status.disruptionsAllowed ?? 0;
  if (allowed < 0) throw StatusError.forbidden({ group: 'policy', resource: 'poddisruptionbudget' }, name, 'pdb disruptions allowed is negative');
  if (Object.keys(status.disruptedPods ?? {}).length > MAX_DISRUPTED_PODS) {
    throw StatusError.forbidden({ group: 'policy', resource: 'poddisruptionbudget' }, name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
  }
  if (allowed === 0) {
    throw tooManyRequests(`The disruption budget ${name} needs ${status.desiredHealthy ?? 0} healthy pods and has ${status.currentHealthy ?? 0} currently`);
  }
  status.disruptionsAllowed = allowed - 1;
  const now = nowTime();
  if (status.disruptionsAllowed === 0) {
    const conditions = (status.conditions ??= []);
    const current = conditions.find((c) => c.type === 'DisruptionAllowed');
    const cond: Condition = { type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods', message: '', observedGeneration: status.observedGeneration, lastTransitionTime: current?.status === 'False' ? current.lastTransitionTime : now };
    status.conditions = [...conditions.filter((c) => c.type !== 'DisruptionAllowed'), cond];
  }
  status.disruptedPods = { ...(status.disruptedPods ?? {}), [podName]: now };
  return { ...structuredClone(pdb), status };
}
