import { mirrorUpstreamKeys } from '@orch/api';
import { FieldError } from '@orch/apimachinery';
import type { KubeObject } from '@orch/apimachinery';
import type { Strategy } from '../strategy';
import { fieldsFrom, resetExcept, statusSubresource } from './common';

/** Label set by the service on every namespace, equal to its name (SPEC well-known labels). */
export const NAMESPACE_NAME_LABEL = 'orch.io/metadata.name';
/** The finalizer the namespace controller removes once the content is gone. */
export const NAMESPACE_FINALIZER = 'orch';
/** Namespaces the gateway creates at start-up (the NamespaceLifecycle admission plugin keeps the first three from deletion). */
export const PROTECTED_NAMESPACES = ['default', 'orch-system', 'orch-public', 'orch-node-lease'];
/**
 * Their upstream names, created too under the compatibility option so stock manifests and
 * tools that name them work; orch's own components live in the orch-* ones (kube-public gets
 * a signed cluster-info beside orch-public's; kube-system and kube-node-lease stay empty).
 */
export const UPSTREAM_SYSTEM_NAMESPACES = ['kube-system', 'kube-public', 'kube-node-lease'];

/** The namespaces the gateway creates at start-up. */
export function systemNamespaces(k8sCompatibility: boolean): string[] {
  return k8sCompatibility ? [...PROTECTED_NAMESPACES, ...UPSTREAM_SYSTEM_NAMESPACES] : PROTECTED_NAMESPACES;
}

interface NamespaceLike extends KubeObject {
  spec?: { finalizers?: string[] };
  status?: { phase?: string };
}

/** The name label, with its `kubernetes.io/metadata.name` twin when `upstreamTwin` (compatibility option). */
function setNameLabel(obj: KubeObject, upstreamTwin: boolean): void {
  obj.metadata.labels = { ...(obj.metadata.labels ?? {}), [NAMESPACE_NAME_LABEL]: obj.metadata.name! };
  mirrorUpstreamKeys(obj.metadata.labels, upstreamTwin);
}

/** Namespaces: phase, the `orch` finalizer, the name label (and its upstream twin under the compatibility option). */
export const namespaceStrategy = (upstreamTwin: boolean): Strategy => {
  return {
  nameRule: 'dns1123Label',
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  prepareForCreate(obj) {
    const ns = obj as NamespaceLike;
    ns.status = { phase: 'Active' };
    ns.spec = { ...(ns.spec ?? {}) };
    if (!ns.spec.finalizers || ns.spec.finalizers.length === 0) ns.spec.finalizers = [NAMESPACE_FINALIZER];
    setNameLabel(obj, upstreamTwin);
  },
  prepareForUpdate(obj, old) {
    const ns = obj as NamespaceLike;
    // spec.finalizers change only through /finalize.
    ns.spec = { ...(ns.spec ?? {}), finalizers: (old as NamespaceLike).spec?.finalizers };
    if (!ns.spec.finalizers) delete ns.spec.finalizers;
    setNameLabel(obj, upstreamTwin);
  },
  validateUpdate(obj, old) {
    const label = obj.metadata.labels?.[NAMESPACE_NAME_LABEL];
    return label !== old.metadata.name ? [FieldError.invalid(`metadata.labels[${NAMESPACE_NAME_LABEL}]`, label, 'field is immutable')] : [];
  },
  beforeDelete(obj) {
    (obj as NamespaceLike).status = { ...((obj as NamespaceLike).status ?? {}), phase: 'Terminating' };
  },
  holdsDeletion(obj) {
    return ((obj as NamespaceLike).spec?.finalizers ?? []).length > 0;
  },
  fieldAttributes: fieldsFrom(['status.phase']),
  subresources: {
    status: {
      prepareForUpdate(obj, old) {
        statusSubresource.prepareForUpdate(obj, old);
      },
    },
    finalize: {
      prepareForUpdate(obj, old) {
        resetExcept(obj, old, (incoming, reset) => {
          const finalizers = (incoming as NamespaceLike).spec?.finalizers;
          const spec = { ...((reset as NamespaceLike).spec ?? {}) };
          if (finalizers && finalizers.length) spec.finalizers = finalizers;
          else delete spec.finalizers;
          (reset as NamespaceLike).spec = spec;
        });
      },
    },
  },
};
};
