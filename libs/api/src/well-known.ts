/**
 * Well-known labels and annotations (SPEC "Well-known labels, annotations and taints") that
 * stock tools read under their upstream `kubernetes.io` spelling: `kubectl rollout history`
 * reads `deployment.kubernetes.io/revision`, kube-proxy-style consumers select slices by
 * `kubernetes.io/service-name`, NetworkPolicies select namespaces by
 * `kubernetes.io/metadata.name`, Indexed Job workloads read `batch.kubernetes.io/job-completion-index`.
 *
 * The `orch.io` key is the primary form; with the compatibility option on, writers put the
 * upstream twin beside it with the same value ({@link mirrorUpstreamKeys}); readers take the
 * primary form and fall back to the twin ({@link readWellKnown}) so objects written by stock
 * tools are understood too.
 */
export const UPSTREAM_TWINS: Readonly<Record<string, string>> = {
  // Deployments and their ReplicaSets (kubectl rollout history / undo).
  'deployment.orch.io/revision': 'deployment.kubernetes.io/revision',
  'deployment.orch.io/revision-history': 'deployment.kubernetes.io/revision-history',
  'deployment.orch.io/desired-replicas': 'deployment.kubernetes.io/desired-replicas',
  'deployment.orch.io/max-replicas': 'deployment.kubernetes.io/max-replicas',
  // EndpointSlices and Endpoints.
  'orch.io/service-name': 'kubernetes.io/service-name',
  'endpointslice.orch.io/managed-by': 'endpointslice.kubernetes.io/managed-by',
  'service.orch.io/headless': 'service.kubernetes.io/headless',
  // Namespaces.
  'orch.io/metadata.name': 'kubernetes.io/metadata.name',
  // Jobs and their pods.
  'batch.orch.io/job-completion-index': 'batch.kubernetes.io/job-completion-index',
  'batch.orch.io/controller-uid': 'batch.kubernetes.io/controller-uid',
  'batch.orch.io/job-name': 'batch.kubernetes.io/job-name',
};

/** The upstream spelling of a well-known key, or undefined when it has none. */
export function upstreamTwin(key: string): string | undefined {
  return UPSTREAM_TWINS[key];
}

/**
 * Every key a writer reserves for `key`: the key and, when it has one, its upstream twin
 * (for controllers that drop user labels colliding with the ones they set).
 */
export function withTwin(key: string): string[] {
  const twin = UPSTREAM_TWINS[key];
  return twin ? [key, twin] : [key];
}

/** A well-known label or annotation: the `orch.io` form, else its upstream twin. */
export function readWellKnown(map: Readonly<Record<string, string>> | undefined, key: string): string | undefined {
  if (!map) return undefined;
  const value = map[key];
  if (value !== undefined) return value;
  const twin = UPSTREAM_TWINS[key];
  return twin === undefined ? undefined : map[twin];
}

/**
 * Sets every upstream twin of the well-known keys present in `map` to the same value (mutates
 * `map`); with `enabled` false (compatibility option off) it does nothing. Returns whether
 * anything changed, so callers can skip a write.
 */
export function mirrorUpstreamKeys(map: Record<string, string>, enabled: boolean): boolean {
  if (!enabled) return false;
  let changed = false;
  for (const [key, twin] of Object.entries(UPSTREAM_TWINS)) {
    const value = map[key];
    if (value !== undefined && map[twin] !== value) {
      map[twin] = value;
      changed = true;
    }
  }
  return changed;
}

/** True when {@link mirrorUpstreamKeys} would change `map`. */
export function upstreamKeysMissing(map: Readonly<Record<string, string>> | undefined, enabled: boolean): boolean {
  if (!enabled || !map) return false;
  return Object.entries(UPSTREAM_TWINS).some(([key, twin]) => map[key] !== undefined && map[twin] !== map[key]);
}

/** Labels tying a Job's pods to it (upstream batch/v1 ControllerUidLabel, JobNameLabel). */
export const JOB_CONTROLLER_UID_LABEL = 'batch.orch.io/controller-uid';
export const JOB_NAME_LABEL = 'batch.orch.io/job-name';
/** The unprefixed forms upstream still sets for compatibility (LegacyControllerUidLabel, LegacyJobNameLabel). */
export const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid';
export const LEGACY_JOB_NAME_LABEL = 'job-name';

/**
 * The labels that tie a Job's pods to it (upstream generateSelector): its name and uid, under
 * the unprefixed and the `batch.orch.io/` keys, plus their `batch.kubernetes.io/` twins when
 * `upstreamTwins` (compatibility option). The gateway puts them in a job's template, the job
 * controller on every pod it creates.
 */
export function jobPodLabels(job: { metadata: { name?: string; uid?: string } }, upstreamTwins: boolean): Record<string, string> {
  const name = job.metadata.name ?? '';
  const uid = job.metadata.uid ?? '';
  const labels = { [LEGACY_JOB_NAME_LABEL]: name, [JOB_NAME_LABEL]: name, [LEGACY_CONTROLLER_UID_LABEL]: uid, [JOB_CONTROLLER_UID_LABEL]: uid };
  mirrorUpstreamKeys(labels, upstreamTwins);
  return labels;
}
