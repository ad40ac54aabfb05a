/**
 * Stateful pod identity (upstream pkg/controller/statefulset/stateful_set_utils.go): pods
 * are `<set>-<ordinal>`, carry the pod-name and pod-index labels, hostname = pod name,
 * subdomain = the governing service, and claim `<template>-<pod>` volumes.
 */
import type { OwnerReference } from '@orch/apimachinery';
import { podFromTemplate } from '../workload-common/pods';
import { CONTROLLER_REVISION_HASH_LABEL } from '../workload-common/revisions';
import type { PersistentVolumeClaim, Pod, PodTemplateSpec, StatefulSet } from '../../framework/api';

/** SPEC: name of the pod, set by the stateful set controller. */
export const POD_NAME_LABEL = 'statefulset.orch.io/pod-name';
/** The pod's ordinal (upstream apps.kubernetes.io/pod-index). */
export const POD_INDEX_LABEL = 'apps.orch.io/pod-index';

const ORDINAL_RE = /^(.*)-(\d+)$/;

/** upstream getParentNameAndOrdinal: `web-2` → {parent: web, ordinal: 2}; undefined when not of that form. */
export function parentAndOrdinal(pod: Pod): { parent: string; ordinal: number } | undefined {
  const m = ORDINAL_RE.exec(pod.metadata.name ?? '');
  return m ? { parent: m[1], ordinal: Number(m[2]) } : undefined;
}

/** upstream isMemberOf: the pod's name is `<set>-<ordinal>`. */
export function isMemberOf(set: StatefulSet, pod: Pod): boolean {
  return parentAndOrdinal(pod)?.parent === set.metadata.name;
}

export function startOrdinal(set: StatefulSet): number {
  return set.spec.ordinals?.start ?? 0;
}

export function podName(set: StatefulSet, ordinal: number): string {
  return `${set.metadata.name}-${ordinal}`;
}

/** The claim a volume template gives the pod: `<template>-<pod>`. */
export function claimName(templateName: string, pod: string): string {
  return `${templateName}-${pod}`;
}

function claimTemplates(set: StatefulSet): NonNullable<StatefulSet['spec']['volumeClaimTemplates']> {
  return (set.spec.volumeClaimTemplates ?? []).filter((t) => t.metadata?.name);
}

/** upstream getPersistentVolumeClaims: the claims the pod needs, created before the pod. */
export function podClaims(set: StatefulSet, pod: string): PersistentVolumeClaim[] {
  return claimTemplates(set).map((t) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: claimName(t.metadata?.name ?? '', pod), namespace: set.metadata.namespace, labels: { ...(set.spec.selector.matchLabels ?? {}), ...(t.metadata?.labels ?? {}) } },
    spec: structuredClone(t.spec ?? {}),
  }));
}

/**
 * upstream newVersionedStatefulSetPod: the pod of `ordinal` from `template` at `revision`,
 * with its stable identity and storage.
 */
export function newStatefulPod(set: StatefulSet, template: PodTemplateSpec, ordinal: number, revision: string, ref: OwnerReference): Pod {
  const name = podName(set, ordinal);
  const pod = podFromTemplate(template, set, ref, {
    name,
    labels: { [POD_NAME_LABEL]: name, [POD_INDEX_LABEL]: String(ordinal), [CONTROLLER_REVISION_HASH_LABEL]: revision },
  });
  pod.spec.hostname = name;
  if (set.spec.serviceName) pod.spec.subdomain = set.spec.serviceName;
  const volumes = ((pod.spec.volumes as { name: string }[] | undefined) ?? []).filter((v) => !claimTemplates(set).some((t) => t.metadata?.name === v.name));
  for (const t of claimTemplates(set)) volumes.push({ name: t.metadata?.name ?? '', persistentVolumeClaim: { claimName: claimName(t.metadata?.name ?? '', name) } } as { name: string });
  if (volumes.length) pod.spec.volumes = volumes;
  return pod;
}

/** upstream identityMatches: name, namespace, labels and hostname/subdomain as the set wants. */
export function identityMatches(set: StatefulSet, pod: Pod): boolean {
  const po = parentAndOrdinal(pod);
  return (
    !!po &&
    po.parent === set.metadata.name &&
    pod.metadata.namespace === set.metadata.namespace &&
    pod.metadata.labels?.[POD_NAME_LABEL] === pod.metadata.name &&
    pod.metadata.labels?.[POD_INDEX_LABEL] === String(po.ordinal)
  );
}

export function podRevision(pod: Pod): string | undefined {
  return pod.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL];
}
