/**
 * ControllerRevision history shared by the StatefulSet and DaemonSet controllers (upstream
 * pkg/controller/history): a revision snapshots the pod template as a `$patch: replace`
 * patch of `spec.template`, is named `<owner>-<hash>` and numbered in order.
 */
import type { KubeObject } from '@orch/apimachinery';
import { newControllerRef } from '../../framework/controller-ref';
import { canonicalJson, computeHash } from './hash';
import type { ControllerRevision, PodTemplateSpec } from '../../framework/api';
import { CONTROLLER_REVISIONS } from '../../framework/resources';

/** Pod label naming the revision a pod was made from (upstream apps.ControllerRevisionHashLabelKey). */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller-revision-hash';
/** Label on a ControllerRevision with its hash (upstream controller.kubernetes.io/hash). */
export const REVISION_HASH_LABEL = 'controller.orch.io/hash';

/** upstream getPatch: the part of the owner a revision stores. */
export function templatePatch(template: PodTemplateSpec): { spec: { template: PodTemplateSpec & { $patch: 'replace' } } } {
  return { spec: { template: { ...structuredClone(template), $patch: 'replace' } } };
}

/** The template a revision stores (ApplyRevision, for template-only patches). */
export function templateOf(revision: ControllerRevision): PodTemplateSpec | undefined {
  const data = revision.data as { spec?: { template?: PodTemplateSpec & { $patch?: string } } } | undefined;
  const t = data?.spec?.template;
  if (!t) return undefined;
  const { $patch: _patch, ...template } = t;
  return template;
}

/** upstream HashControllerRevision: FNV-32a of the data and the collision count, safe-encoded. */
export function revisionHash(data: unknown, collisionCount?: number): string {
  return computeHash(data, collisionCount);
}

/** upstream NewControllerRevision: named `<owner>-<hash>`, owned by `owner`, labelled with the template labels and the hash. */
export function newRevision(owner: KubeObject, ownerType: { apiVersion: string; kind: string }, template: PodTemplateSpec, revision: number, collisionCount?: number): ControllerRevision {
  const data = templatePatch(template);
  const hash = revisionHash(data, collisionCount);
  return {
    apiVersion: CONTROLLER_REVISIONS.apiVersion,
    kind: CONTROLLER_REVISIONS.kind,
    metadata: {
      name: `${(owner.metadata.name ?? '').slice(0, 223)}-${hash}`,
      namespace: owner.metadata.namespace,
      labels: { ...(template.metadata?.labels ?? {}), [REVISION_HASH_LABEL]: hash },
      ownerReferences: [newControllerRef(owner, ownerType)],
    },
    data,
    revision,
  };
}

/** upstream EqualRevision: same stored data. */
export function equalRevision(a: ControllerRevision, b: ControllerRevision): boolean {
  return canonicalJson(a.data) === canonicalJson(b.data);
}

/** upstream SortControllerRevisions: by revision number, then creation, then name. */
export function byRevisionNumber(a: ControllerRevision, b: ControllerRevision): number {
  return a.revision - b.revision || (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}

/** upstream nextRevision: one more than the highest. */
export function nextRevisionNumber(revisions: readonly ControllerRevision[]): number {
  return Math.max(0, ...revisions.map((r) => r.revision)) + 1;
}

/**
 * What to do to record `candidate` (upstream getStatefulSetRevisions / constructHistory):
 * reuse the latest revision when equal; bump an older equal one (a rollback); else create.
 */
export function revisionDecision(revisions: readonly ControllerRevision[], candidate: ControllerRevision): { action: 'reuse' | 'bump'; revision: ControllerRevision } | { action: 'create' } {
  const sorted = [...revisions].sort(byRevisionNumber);
  const equal = sorted.filter((r) => equalRevision(r, candidate));
  if (!equal.length) return { action: 'create' };
  const latestEqual = equal[equal.length - 1];
  if (sorted[sorted.length - 1] === latestEqual) return { action: 'reuse', revision: latestEqual };
  return { action: 'bump', revision: latestEqual };
}

/**
 * upstream truncateHistory: the oldest revisions beyond `limit` that no pod uses and that are
 * neither the current nor the update revision.
 */
export function revisionsToPrune(revisions: readonly ControllerRevision[], live: ReadonlySet<string>, limit: number): ControllerRevision[] {
  const historic = [...revisions].filter((r) => !live.has(r.metadata.name ?? '')).sort(byRevisionNumber);
  return historic.slice(0, Math.max(0, historic.length - limit));
}
