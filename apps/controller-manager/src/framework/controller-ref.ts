import { labelSelectorFromObject, type KubeObject, type OwnerReference } from '@orch/apimachinery';
import type { metaV1 } from '@orch/api';

/** The owner reference with `controller: true`, if any (upstream metav1.GetControllerOf). */
export function controllerRefOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller === true);
}

/** True when `owner` is the managing controller of `obj` (same uid). */
export function isControlledBy(obj: KubeObject, owner: KubeObject): boolean {
  const ref = controllerRefOf(obj);
  return !!ref && ref.uid === owner.metadata.uid;
}

/**
 * upstream metav1.NewControllerRef: a reference to `owner` with `controller` and
 * `blockOwnerDeletion` set, typed with `type` (the owner's apiVersion and kind).
 */
export function newControllerRef(owner: KubeObject, type: { apiVersion: string; kind: string }): OwnerReference {
  return {
    apiVersion: type.apiVersion,
    kind: type.kind,
    name: owner.metadata.name ?? '',
    uid: owner.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The API group of an apiVersion (`apps/v1` → `apps`, `v1` → ``). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * upstream resolveControllerRef: the cached controller `ref` points to, when it is of
 * `type` (group and kind) and still has the referenced uid; undefined otherwise.
 */
export function resolveControllerRef<T extends KubeObject>(
  namespace: string | undefined,
  ref: OwnerReference | undefined,
  type: { group: string; kind: string },
  cache: { get(key: string): T | undefined },
): T | undefined {
  if (!ref || ref.kind !== type.kind || groupOf(ref.apiVersion) !== type.group) return undefined;
  const owner = cache.get(namespace ? `${namespace}/${ref.name}` : ref.name);
  return owner && owner.metadata.uid === ref.uid ? owner : undefined;
}

/**
 * The controllers in `cache` in `obj`'s namespace whose non-empty `spec.selector` matches
 * `obj`'s labels: who may adopt it when it is an orphan (upstream getPodReplicaSets and
 * friends). An invalid selector matches nothing.
 */
export function controllersSelecting<T extends KubeObject & { spec: { selector?: metaV1.LabelSelector } }>(cache: { listInNamespace(namespace: string): T[] }, obj: KubeObject): T[] {
  return cache.listInNamespace(obj.metadata.namespace ?? '').filter((c) => {
    try {
      const sel = labelSelectorFromObject(c.spec.selector);
      return !sel.empty() && sel.matches(obj.metadata.labels);
    } catch {
      return false;
    }
  });
}
