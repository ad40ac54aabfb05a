import type { Catalog, ResourceDef } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import type { NamespaceCondition, Pod } from '../../framework/api';

/** The finalizer (in `spec.finalizers`) the namespace controller owns. */
export const NAMESPACE_FINALIZER = 'orch';

/** Requeue delay while content with finalizers remains (upstream finalizerEstimateSeconds). */
export const FINALIZER_ESTIMATE_SECONDS = 15;

/** Pods' default termination grace (upstream DefaultTerminationGracePeriodSeconds). */
const DEFAULT_POD_GRACE_SECONDS = 30;

/**
 * The resources a namespace's content lives in: namespaced, stored (not virtual) and
 * deletable (`deletecollection` or `delete`), one version per group/resource (the first the
 * catalog lists), in catalog order.
 */
export function namespacedResources(catalog: Catalog): ResourceDef[] {
  const seen = new Set<string>();
  const out: ResourceDef[] = [];
  for (const def of catalog.resources()) {
    if (def.scope !== 'Namespaced' || def.virtual) continue;
    if (!def.verbs.includes('deletecollection') && !def.verbs.includes('delete')) continue;
    const key = `${def.group}/${def.resource}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(def);
  }
  return out;
}

/** What deleting one resource's content left behind (upstream gvrDeletionMetadata). */
export interface ResourceOutcome {
  /** `<resource>.<group>` as upstream prints it (`pods.` for the core group). */
  resource: string;
  remaining: number;
  /** Finalizer → number of remaining objects carrying it. */
  finalizers: Record<string, number>;
  /** Seconds to wait before checking again; 0 when nothing remains. */
  estimateSeconds: number;
  error?: string;
}

/**
 * upstream estimateGracefulTerminationForPods: the longest termination grace of the pods
 * that are not terminal (their deletion may take that long).
 */
export function podsGraceEstimate(pods: readonly Pod[]): number {
  let estimate = 0;
  for (const pod of pods) {
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') continue;
    estimate = Math.max(estimate, pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_POD_GRACE_SECONDS);
  }
  return estimate;
}

/**
 * upstream deleteAllContentForGroupVersionResource, after the delete: nothing left → done;
 * objects left while a grace estimate runs → wait that long; objects with finalizers →
 * wait {@link FINALIZER_ESTIMATE_SECONDS}; objects left without either → an error (they
 * should have gone).
 */
export function remainingOutcome(resource: string, namespace: string, left: readonly KubeObject[], graceEstimate: number): ResourceOutcome {
  const finalizers: Record<string, number> = {};
  for (const obj of left) for (const f of obj.metadata.finalizers ?? []) finalizers[f] = (finalizers[f] ?? 0) + 1;
  const base = { resource, remaining: left.length, finalizers };
  if (left.length === 0) return { ...base, estimateSeconds: 0 };
  if (graceEstimate > 0) return { ...base, estimateSeconds: graceEstimate };
  if (Object.keys(finalizers).length > 0) return { ...base, estimateSeconds: FINALIZER_ESTIMATE_SECONDS };
  return { ...base, estimateSeconds: 0, error: `unexpected items still remain in namespace: ${namespace} for gvr: ${resource}` };
}

/** Namespace condition types the controller maintains, in upstream order. */
export const CONDITION_TYPES = [
  'NamespaceDeletionDiscoveryFailure',
  'NamespaceDeletionGroupVersionParsingFailure',
  'NamespaceDeletionContentFailure',
  'NamespaceContentRemaining',
  'NamespaceFinalizersRemaining',
] as const;

const OK: Record<(typeof CONDITION_TYPES)[number], { reason: string; message: string }> = {
  NamespaceDeletionDiscoveryFailure: { reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' },
  NamespaceDeletionGroupVersionParsingFailure: { reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' },
  NamespaceDeletionContentFailure: { reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
  NamespaceContentRemaining: { reason: 'ContentRemoved', message: 'All content successfully removed' },
  NamespaceFinalizersRemaining: { reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' },
};

/**
 * The conditions a deletion pass reports (upstream namespaceConditionUpdater): a failing
 * condition per problem found (content left, finalizers left, delete errors), the "ok"
 * variant of every other maintained type.
 */
export function deletionConditions(outcomes: readonly ResourceOutcome[], now: string): NamespaceCondition[] {
  const failing = new Map<string, NamespaceCondition>();
  const remaining = outcomes
    .filter((o) => o.remaining > 0)
    .map((o) => `${o.resource} has ${o.remaining} resource instances`)
    .sort();
  if (remaining.length) {
    failing.set('NamespaceContentRemaining', {
      type: 'NamespaceContentRemaining',
      status: 'True',
      lastTransitionTime: now,
      reason: 'SomeResourcesRemain',
      message: `Some resources are remaining: ${remaining.join(', ')}`,
    });
  }
  const byFinalizer: Record<string, number> = {};
  for (const o of outcomes) for (const [f, n] of Object.entries(o.finalizers)) byFinalizer[f] = (byFinalizer[f] ?? 0) + n;
  const finalizers = Object.entries(byFinalizer)
    .filter(([, n]) => n > 0)
    .map(([f, n]) => `${f} in ${n} resource instances`)
    .sort();
  if (finalizers.length) {
    failing.set('NamespaceFinalizersRemaining', {
      type: 'NamespaceFinalizersRemaining',
      status: 'True',
      lastTransitionTime: now,
      reason: 'SomeFinalizersRemain',
      message: `Some content in the namespace has finalizers remaining: ${finalizers.join(', ')}`,
    });
  }
  const errors = outcomes.filter((o) => o.error).map((o) => o.error as string);
  if (errors.length) {
    const aggregate = errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
    failing.set('NamespaceDeletionContentFailure', {
      type: 'NamespaceDeletionContentFailure',
      status: 'True',
      lastTransitionTime: now,
      reason: 'ContentDeletionFailed',
      message: `Failed to delete all resource types, ${errors.length} remaining: ${aggregate}`,
    });
  }
  return CONDITION_TYPES.map((type) => failing.get(type) ?? { type, status: 'False', lastTransitionTime: now, ...OK[type] });
}

/**
 * Merges freshly computed conditions into the namespace's (upstream Update): a type not yet
 * present is added; one whose status, reason or message changed is replaced; an unchanged one
 * keeps its lastTransitionTime. Returns the merged list, or undefined when nothing changed.
 */
export function mergeConditions(current: readonly NamespaceCondition[], computed: readonly NamespaceCondition[]): NamespaceCondition[] | undefined {
  const out = current.map((c) => ({ ...c }));
  let changed = false;
  for (const next of computed) {
    const i = out.findIndex((c) => c.type === next.type);
    if (i < 0) {
      out.push({ ...next });
      changed = true;
    } else if (out[i].status !== next.status || out[i].reason !== next.reason || out[i].message !== next.message) {
      out[i] = { ...next };
      changed = true;
    }
  }
  return changed ? out : undefined;
}
