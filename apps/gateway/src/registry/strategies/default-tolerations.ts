/** NoExecute taint the node lifecycle controller puts on a node whose Ready condition is False. */
export const TAINT_NOT_READY = 'node.orch.io/not-ready';
/** NoExecute taint the node lifecycle controller puts on a node whose Ready condition is Unknown. */
export const TAINT_UNREACHABLE = 'node.orch.io/unreachable';
/** upstream --default-not-ready-toleration-seconds / --default-unreachable-toleration-seconds. */
export const DEFAULT_TOLERATION_SECONDS = 300;

interface Toleration {
  key?: string;
  operator?: string;
  effect?: string;
  tolerationSeconds?: number;
}

/** The part of a pod this step reads and writes (tolerations as decoded: untyped). */
interface PodWithTolerations {
  spec?: { tolerations?: unknown[]; [k: string]: unknown };
}

/**
 * upstream DefaultTolerationSeconds' check: some toleration names `key` (or no key) with
 * effect NoExecute (or no effect); operator and value are not looked at.
 */
function tolerates(tolerations: readonly Toleration[], key: string): boolean {
  return tolerations.some((t) => (!t.key || t.key === key) && (!t.effect || t.effect === 'NoExecute'));
}

/**
 * The DefaultTolerationSeconds admission step (upstream plugin of the same name): a pod
 * being created that does not already tolerate `node.orch.io/not-ready:NoExecute` or
 * `node.orch.io/unreachable:NoExecute` gets `{key, operator: Exists, effect: NoExecute,
 * tolerationSeconds: 300}` for each, so it is evicted 5 minutes after its node fails.
 * Mutates `pod`; idempotent.
 */
export function addDefaultTolerations(pod: PodWithTolerations, seconds = DEFAULT_TOLERATION_SECONDS): void {
  const current = (pod.spec?.tolerations ?? []) as Toleration[];
  const added: Toleration[] = [];
  for (const key of [TAINT_NOT_READY, TAINT_UNREACHABLE]) {
    if (!tolerates(current, key)) added.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds });
  }
  if (added.length === 0) return;
  pod.spec = { ...(pod.spec ?? {}), tolerations: [...current, ...added] };
}
