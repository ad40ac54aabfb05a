/**
 * Pure helpers of the Deployment controller (upstream pkg/controller/deployment/util):
 * template hashing and matching, revisions and annotations, surge/unavailability math,
 * proportional scaling, status and conditions. Nothing here talks to the API.
 */
import { mirrorUpstreamKeys, omitEmptyFields, readWellKnown, upstreamKeysMissing, withTwin } from '@orch/api';
import { parseTime } from '@orch/apimachinery';
import { computeHash } from '../workload-common/hash';
import { scaledValue } from '../workload-common/intstr';
import { findCondition } from '../workload-common/pods';
import type { Deployment, DeploymentStatus, PodTemplateSpec, ReplicaSet, WorkloadCondition } from '../../framework/api';

/** Label on ReplicaSets and their pods that tells rollouts apart (upstream DefaultDeploymentUniqueLabelKey). */
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';
export const REVISION_ANNOTATION = 'deployment.orch.io/revision';
export const REVISION_HISTORY_ANNOTATION = 'deployment.orch.io/revision-history';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.orch.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.orch.io/max-replicas';
/** upstream maxRevHistoryLengthInChars. */
export const MAX_REVISION_HISTORY_CHARS = 2000;
/** Deployment annotations never copied to its ReplicaSets (with their upstream twins). */
const SKIP_COPY_ANNOTATIONS = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  'kubectl.orch.io/last-applied-configuration',
  ...[REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION, DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION].flatMap(withTwin),
]);

/** Condition reasons (upstream deploymentutil). */
export const REASON = {
  FailedRSCreate: 'ReplicaSetCreateError',
  NewReplicaSet: 'NewReplicaSetCreated',
  FoundNewRS: 'FoundNewReplicaSet',
  NewRSAvailable: 'NewReplicaSetAvailable',
  TimedOut: 'ProgressDeadlineExceeded',
  PausedDeploy: 'DeploymentPaused',
  ResumedDeploy: 'DeploymentResumed',
  ReplicaSetUpdated: 'ReplicaSetUpdated',
  MinimumReplicasAvailable: 'MinimumReplicasAvailable',
  MinimumReplicasUnavailable: 'MinimumReplicasUnavailable',
} as const;

export function specReplicas(obj: Deployment | ReplicaSet): number {
  return obj.spec.replicas ?? 1;
}

// ---------------------------------------------------------------- templates and hashes

/** Drops nulls, empty maps and empty lists (Go's semantic equality treats nil and empty alike). */
function normalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalize);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const n = normalize(v);
    if (n === null || n === undefined) continue;
    if (Array.isArray(n) && n.length === 0) continue;
    if (typeof n === 'object' && !Array.isArray(n) && Object.keys(n as object).length === 0) continue;
    out[k] = n;
  }
  return out;
}

function withoutHashLabel(t: PodTemplateSpec | undefined): unknown {
  const copy = structuredClone(t ?? {});
  if (copy.metadata?.labels) delete copy.metadata.labels[POD_TEMPLATE_HASH_LABEL];
  return normalize(copy);
}

/** upstream EqualIgnoreHash: the templates are equal apart from the pod-template-hash label. */
export function equalIgnoreHash(a: PodTemplateSpec | undefined, b: PodTemplateSpec | undefined): boolean {
  return JSON.stringify(sortKeys(withoutHashLabel(a))) === JSON.stringify(sortKeys(withoutHashLabel(b)));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]));
}

/** The pod-template-hash of a deployment's template (FNV-32a of its canonical JSON and collisionCount). */
export function templateHash(template: PodTemplateSpec, collisionCount?: number): string {
  return computeHash(normalize(template), collisionCount);
}

// ---------------------------------------------------------------- sorting and finding

function created(obj: ReplicaSet): number {
  return obj.metadata.creationTimestamp ? parseTime(obj.metadata.creationTimestamp) : 0;
}

/** upstream ReplicaSetsByCreationTimestamp: older first, then by name. */
export function byCreation(a: ReplicaSet, b: ReplicaSet): number {
  const d = created(a) - created(b);
  if (d !== 0) return d;
  const na = a.metadata.name ?? '';
  const nb = b.metadata.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}

/** upstream ReplicaSetsByRevision: lower revision first, then by creation. */
export function byRevision(a: ReplicaSet, b: ReplicaSet): number {
  return revisionOf(a) - revisionOf(b) || byCreation(a, b);
}

/** upstream ReplicaSetsBySizeOlder: larger first, then older. */
export function bySizeOlder(a: ReplicaSet, b: ReplicaSet): number {
  return specReplicas(b) - specReplicas(a) || byCreation(a, b);
}

/** upstream ReplicaSetsBySizeNewer: larger first, then newer. */
export function bySizeNewer(a: ReplicaSet, b: ReplicaSet): number {
  return specReplicas(b) - specReplicas(a) || byCreation(b, a);
}

/** upstream FindNewReplicaSet: the oldest set whose template equals the deployment's (ignoring the hash). */
export function findNewReplicaSet(d: Deployment, sets: readonly ReplicaSet[]): ReplicaSet | undefined {
  return [...sets].sort(byCreation).find((rs) => equalIgnoreHash(rs.spec.template, d.spec.template));
}

/** upstream FindOldReplicaSets: every set but the new one (`all`), and those with replicas (`withReplicas`). */
export function findOldReplicaSets(d: Deployment, sets: readonly ReplicaSet[]): { withReplicas: ReplicaSet[]; all: ReplicaSet[] } {
  const newRS = findNewReplicaSet(d, sets);
  const all = sets.filter((rs) => rs.metadata.uid !== newRS?.metadata.uid);
  return { withReplicas: all.filter((rs) => specReplicas(rs) !== 0), all };
}

/** upstream FilterActiveReplicaSets: sets with replicas > 0. */
export function activeSets(sets: readonly (ReplicaSet | undefined)[]): ReplicaSet[] {
  return sets.filter((rs): rs is ReplicaSet => !!rs && specReplicas(rs) > 0);
}

// ---------------------------------------------------------------- revisions and annotations

/** The revision annotation as a number (0 when absent or invalid). */
export function revisionOf(obj: { metadata: { annotations?: Record<string, string> } }): number {
  const v = readWellKnown(obj.metadata.annotations, REVISION_ANNOTATION);
  return v && /^\d+$/.test(v) ? Number(v) : 0;
}

export function maxRevision(sets: readonly ReplicaSet[]): number {
  return Math.max(0, ...sets.map(revisionOf));
}

/**
 * upstream SetNewReplicaSetAnnotations (mutates `rs`): copies the deployment's annotations,
 * raises the revision to `newRevision` (recording the old one in revision-history when the
 * set is re-used, i.e. a rollback), and on a new set adds desired/max replicas; with
 * `upstreamTwins` (compatibility option) the `deployment.kubernetes.io/*` twins that kubectl
 * rollout reads are written beside them. Returns whether anything changed.
 */
export function setNewReplicaSetAnnotations(d: Deployment, rs: ReplicaSet, newRevision: number, exists: boolean, upstreamTwins: boolean): boolean {
  const ann = (rs.metadata.annotations ??= {});
  const changed = setRevisionAnnotations(d, rs, ann, newRevision, exists);
  return mirrorUpstreamKeys(ann, upstreamTwins) || changed;
}

function setRevisionAnnotations(d: Deployment, rs: ReplicaSet, ann: Record<string, string>, newRevision: number, exists: boolean): boolean {
  let changed = copyDeploymentAnnotations(d, rs);
  const oldRaw = readWellKnown(ann, REVISION_ANNOTATION);
  const hadRevision = oldRaw !== undefined;
  if (hadRevision && !/^\d+$/.test(oldRaw)) return false;
  const oldRevision = hadRevision ? Number(oldRaw) : 0;
  if (oldRevision < newRevision) {
    ann[REVISION_ANNOTATION] = String(newRevision);
    changed = true;
  }
  if (hadRevision && oldRevision < newRevision) {
    const history = readWellKnown(ann, REVISION_HISTORY_ANNOTATION) ?? '';
    if (!history) ann[REVISION_HISTORY_ANNOTATION] = oldRaw;
    else {
      let revisions = history.split(',');
      let total = history.length + oldRaw.length + 1;
      let start = 0;
      while (total > MAX_REVISION_HISTORY_CHARS && start < revisions.length) total -= revisions[start++].length + 1;
      if (total <= MAX_REVISION_HISTORY_CHARS) {
        revisions = [...revisions.slice(start), oldRaw];
        ann[REVISION_HISTORY_ANNOTATION] = revisions.join(',');
      }
    }
  }
  if (!exists && setReplicasAnnotations(rs, specReplicas(d), specReplicas(d) + maxSurge(d), false)) changed = true;
  return changed;
}

function copyDeploymentAnnotations(d: Deployment, rs: ReplicaSet): boolean {
  let changed = false;
  const ann = (rs.metadata.annotations ??= {});
  for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) {
    if (SKIP_COPY_ANNOTATIONS.has(k) || ann[k] === v) continue;
    ann[k] = v;
    changed = true;
  }
  return changed;
}

/**
 * upstream SetReplicasAnnotations (mutates `rs`): desired-replicas and max-replicas, with
 * their upstream twins when asked; returns whether changed.
 */
export function setReplicasAnnotations(rs: ReplicaSet, desired: number, max: number, upstreamTwins: boolean): boolean {
  const ann = (rs.metadata.annotations ??= {});
  let changed = mirrorUpstreamKeys(ann, upstreamTwins);
  if (ann[DESIRED_REPLICAS_ANNOTATION] !== String(desired)) {
    ann[DESIRED_REPLICAS_ANNOTATION] = String(desired);
    changed = true;
  }
  if (ann[MAX_REPLICAS_ANNOTATION] !== String(max)) {
    ann[MAX_REPLICAS_ANNOTATION] = String(max);
    changed = true;
  }
  return mirrorUpstreamKeys(ann, upstreamTwins) || changed;
}

/** upstream ReplicasAnnotationsNeedUpdate (and missing upstream twins when asked). */
export function replicasAnnotationsNeedUpdate(rs: ReplicaSet, desired: number, max: number, upstreamTwins: boolean): boolean {
  const ann = rs.metadata.annotations ?? {};
  return ann[DESIRED_REPLICAS_ANNOTATION] !== String(desired) || ann[MAX_REPLICAS_ANNOTATION] !== String(max) || upstreamKeysMissing(ann, upstreamTwins);
}

function intAnnotation(rs: ReplicaSet, key: string): number | undefined {
  const v = readWellKnown(rs.metadata.annotations, key);
  return v !== undefined && /^-?\d+$/.test(v) ? Number(v) : undefined;
}

export function desiredReplicasAnnotation(rs: ReplicaSet): number | undefined {
  return intAnnotation(rs, DESIRED_REPLICAS_ANNOTATION);
}

// ---------------------------------------------------------------- surge and unavailability

function isRollingUpdate(d: Deployment): boolean {
  return (d.spec.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
}

/**
 * upstream ResolveFenceposts: maxSurge rounded up, maxUnavailable rounded down, both of
 * `desired`; if both come out 0, maxUnavailable is 1 so a rollout can proceed.
 */
export function resolveFenceposts(d: Deployment): { surge: number; unavailable: number } {
  const desired = specReplicas(d);
  const ru = d.spec.strategy?.rollingUpdate ?? {};
  const surge = scaledValue(ru.maxSurge ?? '25%', desired, true);
  let unavailable = scaledValue(ru.maxUnavailable ?? '25%', desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

/** upstream MaxUnavailable: 0 unless RollingUpdate with replicas; never above replicas. */
export function maxUnavailable(d: Deployment): number {
  if (!isRollingUpdate(d) || specReplicas(d) === 0) return 0;
  return Math.min(resolveFenceposts(d).unavailable, specReplicas(d));
}

/** upstream MaxSurge: 0 unless RollingUpdate. */
export function maxSurge(d: Deployment): number {
  return isRollingUpdate(d) ? resolveFenceposts(d).surge : 0;
}

export function replicaCount(sets: readonly (ReplicaSet | undefined)[]): number {
  return sets.reduce((n, rs) => n + (rs ? specReplicas(rs) : 0), 0);
}

export function actualReplicaCount(sets: readonly (ReplicaSet | undefined)[]): number {
  return sets.reduce((n, rs) => n + (rs?.status?.replicas ?? 0), 0);
}

export function readyReplicaCount(sets: readonly (ReplicaSet | undefined)[]): number {
  return sets.reduce((n, rs) => n + (rs?.status?.readyReplicas ?? 0), 0);
}

export function availableReplicaCount(sets: readonly (ReplicaSet | undefined)[]): number {
  return sets.reduce((n, rs) => n + (rs?.status?.availableReplicas ?? 0), 0);
}

/**
 * upstream NewRSNewReplicas: the size the new set may grow to now. RollingUpdate: up to
 * replicas + maxSurge pods in all sets, never above replicas; Recreate: replicas.
 */
export function newRSNewReplicas(d: Deployment, allSets: readonly ReplicaSet[], newRS: ReplicaSet): number {
  if (!isRollingUpdate(d)) return specReplicas(d);
  const current = replicaCount(allSets);
  const maxTotal = specReplicas(d) + maxSurge(d);
  if (current >= maxTotal) return specReplicas(newRS);
  const scaleUp = Math.min(maxTotal - current, specReplicas(d) - specReplicas(newRS));
  return specReplicas(newRS) + scaleUp;
}

/** A scaling decision: set `rs` to `replicas`. */
export interface ScaleStep {
  rs: ReplicaSet;
  replicas: number;
}

/**
 * upstream reconcileOldReplicaSets (cleanupUnhealthyReplicas, then
 * scaleDownOldReplicaSetsForRollingUpdate) as a plan: old sets shrink, oldest first, only
 * as far as keeps `replicas - maxUnavailable` pods available, unhealthy (unavailable) old
 * pods going first. Returns the steps in order; empty when nothing may shrink.
 */
export function planOldReplicaSetScaleDown(d: Deployment, allSets: readonly ReplicaSet[], oldSets: readonly ReplicaSet[], newRS: ReplicaSet): ScaleStep[] {
  const oldPods = replicaCount(oldSets);
  if (oldPods === 0) return [];
  const allPods = replicaCount(allSets);
  const minAvailable = specReplicas(d) - maxUnavailable(d);
  const newUnavailable = specReplicas(newRS) - (newRS.status?.availableReplicas ?? 0);
  const maxScaledDown = allPods - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return [];
  const steps = new Map<string, ScaleStep>();
  const sized = (rs: ReplicaSet) => steps.get(rs.metadata.uid ?? '')?.replicas ?? specReplicas(rs);
  const sorted = [...oldSets].sort(byCreation);
  // Unhealthy replicas first.
  let cleaned = 0;
  for (const rs of sorted) {
    if (cleaned >= maxScaledDown) break;
    const size = sized(rs);
    const available = rs.status?.availableReplicas ?? 0;
    if (size === 0 || size <= available) continue;
    const down = Math.min(maxScaledDown - cleaned, size - available);
    steps.set(rs.metadata.uid ?? '', { rs, replicas: size - down });
    cleaned += down;
  }
  // Then healthy ones, while more than minAvailable pods are available.
  const availablePods = availableReplicaCount(allSets);
  if (availablePods > minAvailable) {
    const total = availablePods - minAvailable;
    let scaled = 0;
    for (const rs of sorted) {
      if (scaled >= total) break;
      const size = sized(rs);
      if (size === 0) continue;
      const down = Math.min(size, total - scaled);
      steps.set(rs.metadata.uid ?? '', { rs, replicas: size - down });
      scaled += down;
    }
  }
  return [...steps.values()];
}

/** upstream IsSaturated: the new set has all replicas, desired annotation matches, all available. */
export function isSaturated(d: Deployment, rs: ReplicaSet | undefined): boolean {
  if (!rs) return false;
  const desired = desiredReplicasAnnotation(rs);
  return desired !== undefined && specReplicas(rs) === specReplicas(d) && desired === specReplicas(d) && (rs.status?.availableReplicas ?? 0) === specReplicas(d);
}

/** upstream FindActiveOrLatest: the only active set, or the newest when none is active; else undefined. */
export function findActiveOrLatest(newRS: ReplicaSet | undefined, oldSets: readonly ReplicaSet[]): ReplicaSet | undefined {
  if (!newRS && oldSets.length === 0) return undefined;
  const newestFirst = [...oldSets].sort((a, b) => byCreation(b, a));
  const active = activeSets([...newestFirst, newRS]);
  if (active.length === 0) return newRS ?? newestFirst[0];
  return active.length === 1 ? active[0] : undefined;
}

function replicaSetFraction(rs: ReplicaSet, d: Deployment): number {
  if (specReplicas(d) === 0) return -specReplicas(rs);
  const deploymentReplicas = specReplicas(d) + maxSurge(d);
  const annotated = intAnnotation(rs, MAX_REPLICAS_ANNOTATION) ?? d.status?.replicas ?? 0;
  if (annotated === 0) return 0;
  const size = (specReplicas(rs) * deploymentReplicas) / annotated;
  return roundHalfAway(size) - specReplicas(rs);
}

function roundHalfAway(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/** upstream GetProportion: this set's share of `toAdd`, bounded by what is left to add. */
export function proportion(rs: ReplicaSet, d: Deployment, toAdd: number, added: number): number {
  if (specReplicas(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const fraction = replicaSetFraction(rs, d);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

export interface ProportionalScalePlan {
  steps: ScaleStep[];
  operation: 'up' | 'down' | '';
  /**
   * True for the proportional case: every step is written when its size or its
   * desired/max annotations changed; otherwise only size changes are written.
   */
  proportional: boolean;
}

/**
 * upstream DeploymentController.scale as a plan: a scaling event (replicas changed while a
 * rollout is in flight). One active set (or none) takes the whole count; a saturated new
 * set shrinks every old one to 0; otherwise (RollingUpdate) the difference to
 * replicas + maxSurge is spread over the active sets in proportion to their size, leftovers
 * to the largest. Returns the sizes to set (unchanged sets included: annotations may need it).
 */
export function planProportionalScale(d: Deployment, newRS: ReplicaSet | undefined, oldSets: readonly ReplicaSet[]): ProportionalScalePlan {
  const single = findActiveOrLatest(newRS, oldSets);
  if (single) {
    if (specReplicas(single) === specReplicas(d)) return { steps: [], operation: '', proportional: false };
    return { steps: [{ rs: single, replicas: specReplicas(d) }], operation: specReplicas(single) < specReplicas(d) ? 'up' : 'down', proportional: false };
  }
  if (isSaturated(d, newRS)) return { steps: activeSets(oldSets).map((rs) => ({ rs, replicas: 0 })), operation: 'down', proportional: false };
  if (!isRollingUpdate(d)) return { steps: [], operation: '', proportional: false };
  const all = activeSets([...oldSets, newRS]);
  const allowed = specReplicas(d) > 0 ? specReplicas(d) + maxSurge(d) : 0;
  const toAdd = allowed - replicaCount(all);
  let operation: 'up' | 'down' | '' = '';
  if (toAdd > 0) {
    all.sort(bySizeNewer);
    operation = 'up';
  } else if (toAdd < 0) {
    all.sort(bySizeOlder);
    operation = 'down';
  }
  let added = 0;
  const sizes = all.map((rs) => {
    if (toAdd === 0) return specReplicas(rs);
    const p = proportion(rs, d, toAdd, added);
    added += p;
    return specReplicas(rs) + p;
  });
  if (all.length && toAdd !== 0) sizes[0] = Math.max(0, sizes[0] + toAdd - added);
  return { steps: all.map((rs, i) => ({ rs, replicas: sizes[i] })), operation, proportional: true };
}

/**
 * upstream cleanupDeployment as a plan: the oldest old sets beyond revisionHistoryLimit
 * that are fully scaled down, observed and not already being deleted.
 */
export function replicaSetsToCleanUp(d: Deployment, oldSets: readonly ReplicaSet[]): ReplicaSet[] {
  const limit = d.spec.revisionHistoryLimit;
  if (limit === undefined || limit === null || limit === 2 ** 31 - 1) return [];
  const cleanable = oldSets.filter((rs) => !rs.metadata.deletionTimestamp).sort(byRevision);
  const diff = cleanable.length - limit;
  if (diff <= 0) return [];
  return cleanable
    .slice(0, diff)
    .filter((rs) => (rs.status?.replicas ?? 0) === 0 && specReplicas(rs) === 0 && (rs.metadata.generation ?? 0) <= (rs.status?.observedGeneration ?? 0));
}

// ---------------------------------------------------------------- conditions and status

export function hasProgressDeadline(d: Deployment): boolean {
  const s = d.spec.progressDeadlineSeconds;
  return s !== undefined && s !== null && s !== 2 ** 31 - 1;
}

/** upstream NewDeploymentCondition: both times now. */
export function newDeploymentCondition(type: string, status: WorkloadCondition['status'], reason: string, message: string, nowIso: string): WorkloadCondition {
  return { type, status, lastUpdateTime: nowIso, lastTransitionTime: nowIso, reason, message };
}

/**
 * upstream SetDeploymentCondition (mutates `status`): no-op when status and reason are
 * unchanged; keeps lastTransitionTime when only the reason changes.
 */
export function setDeploymentCondition(status: DeploymentStatus, cond: WorkloadCondition): void {
  const current = findCondition(status.conditions, cond.type);
  if (current && current.status === cond.status && current.reason === cond.reason) return;
  const next = { ...cond };
  if (current && current.status === cond.status) next.lastTransitionTime = current.lastTransitionTime;
  status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== cond.type), next];
}

export function removeDeploymentCondition(status: DeploymentStatus, type: string): void {
  if (!status.conditions) return;
  status.conditions = status.conditions.filter((c) => c.type !== type);
}

/** upstream DeploymentComplete: every replica updated and available, generation observed. */
export function deploymentComplete(d: Deployment, status: DeploymentStatus): boolean {
  const r = specReplicas(d);
  return (status.updatedReplicas ?? 0) === r && (status.replicas ?? 0) === r && (status.availableReplicas ?? 0) === r && (status.observedGeneration ?? 0) >= (d.metadata.generation ?? 0);
}

/** upstream DeploymentProgressing: more updated/ready/available pods, or fewer old ones, than before. */
export function deploymentProgressing(d: Deployment, next: DeploymentStatus): boolean {
  const old = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (next.replicas ?? 0) - (next.updatedReplicas ?? 0);
  return (
    (next.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (next.readyReplicas ?? 0) > (old.readyReplicas ?? 0) ||
    (next.availableReplicas ?? 0) > (old.availableReplicas ?? 0)
  );
}

/** upstream DeploymentTimedOut: no progress for progressDeadlineSeconds since the Progressing condition's last update. */
export function deploymentTimedOut(d: Deployment, next: DeploymentStatus, nowMs: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const cond = findCondition(next.conditions, 'Progressing');
  if (!cond) return false;
  if (cond.reason === REASON.NewRSAvailable) return false;
  if (cond.reason === REASON.TimedOut) return true;
  const from = cond.lastUpdateTime ? parseTime(cond.lastUpdateTime) : 0;
  return from + (d.spec.progressDeadlineSeconds ?? 0) * 1000 < nowMs;
}

/** upstream calculateStatus: counts over all sets and the Available condition. */
export function calculateDeploymentStatus(allSets: readonly (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined, d: Deployment, nowIso: string): DeploymentStatus {
  const available = availableReplicaCount(allSets);
  const status: DeploymentStatus = {
    observedGeneration: d.metadata.generation,
    replicas: actualReplicaCount(allSets),
    updatedReplicas: actualReplicaCount([newRS]),
    readyReplicas: readyReplicaCount(allSets),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, replicaCount(allSets) - available),
  };
  if (d.status?.collisionCount !== undefined) status.collisionCount = d.status.collisionCount;
  if (d.status?.conditions) status.conditions = structuredClone(d.status.conditions);
  if (available >= specReplicas(d) - maxUnavailable(d)) {
    setDeploymentCondition(status, newDeploymentCondition('Available', 'True', REASON.MinimumReplicasAvailable, 'Deployment has minimum availability.', nowIso));
  } else {
    setDeploymentCondition(status, newDeploymentCondition('Available', 'False', REASON.MinimumReplicasUnavailable, 'Deployment does not have minimum availability.', nowIso));
  }
  return status;
}

/**
 * upstream syncRolloutStatus's computation: the status of a rollout with its Progressing
 * condition (NewReplicaSetAvailable when complete, ReplicaSetUpdated while progressing,
 * ProgressDeadlineExceeded when stuck past the deadline) and the ReplicaFailure condition
 * of the sets.
 */
export function rolloutStatus(allSets: readonly (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined, d: Deployment, nowMs: number, nowIso: string): DeploymentStatus {
  const status = calculateDeploymentStatus(allSets, newRS, d, nowIso);
  if (!hasProgressDeadline(d)) removeDeploymentCondition(status, 'Progressing');
  const current = findCondition(d.status?.conditions, 'Progressing');
  const complete = status.replicas === status.updatedReplicas && current?.reason === REASON.NewRSAvailable;
  if (hasProgressDeadline(d) && !complete) {
    const subject = newRS ? `ReplicaSet "${newRS.metadata.name}"` : `Deployment "${d.metadata.name}"`;
    if (deploymentComplete(d, status)) {
      setDeploymentCondition(status, newDeploymentCondition('Progressing', 'True', REASON.NewRSAvailable, `${subject} has successfully progressed.`, nowIso));
    } else if (deploymentProgressing(d, status)) {
      const cond = newDeploymentCondition('Progressing', 'True', REASON.ReplicaSetUpdated, `${subject} is progressing.`, nowIso);
      if (current?.status === 'True') cond.lastTransitionTime = current.lastTransitionTime;
      removeDeploymentCondition(status, 'Progressing');
      setDeploymentCondition(status, cond);
    } else if (deploymentTimedOut(d, status, nowMs)) {
      setDeploymentCondition(status, newDeploymentCondition('Progressing', 'False', REASON.TimedOut, `${subject} has timed out progressing.`, nowIso));
    }
  }
  // The new set's failure wins over the old sets'.
  const failure = findCondition(newRS?.status?.conditions, 'ReplicaFailure') ?? allSets.map((rs) => findCondition(rs?.status?.conditions, 'ReplicaFailure')).find((c) => !!c);
  if (failure) {
    setDeploymentCondition(status, { type: 'ReplicaFailure', status: failure.status, lastUpdateTime: failure.lastTransitionTime, lastTransitionTime: failure.lastTransitionTime, reason: failure.reason, message: failure.message });
  } else {
    removeDeploymentCondition(status, 'ReplicaFailure');
  }
  return status;
}

/**
 * upstream requeueStuckDeployment: ms after which a rollout without progress must be
 * checked for its deadline; undefined when there is nothing to check.
 */
export function stuckRecheckAfterMs(d: Deployment, next: DeploymentStatus, nowMs: number): number | undefined {
  const cond = findCondition(d.status?.conditions, 'Progressing');
  if (!hasProgressDeadline(d) || !cond) return undefined;
  if (deploymentComplete(d, next) || cond.reason === REASON.TimedOut) return undefined;
  const last = cond.lastUpdateTime ? parseTime(cond.lastUpdateTime) : nowMs;
  const after = last + (d.spec.progressDeadlineSeconds ?? 0) * 1000 - nowMs;
  return after < 1000 ? 0 : after + 1000;
}

/**
 * Statuses equal for the purpose of skipping a write, as Go compares them: a zero count is the
 * same as an absent one (the stored status has none: its counts are omitempty).
 */
export function sameStatus(a: DeploymentStatus | undefined, b: DeploymentStatus): boolean {
  return JSON.stringify(sortKeys(normalize(goForm(a ?? {})))) === JSON.stringify(sortKeys(normalize(goForm(b))));
}

function goForm(status: DeploymentStatus): DeploymentStatus {
  const d = { status: structuredClone(status) };
  omitEmptyFields(d, 'apps', 'v1', 'Deployment');
  return d.status;
}
