import { mirrorUpstreamKeys, type coreV1, type Namespace } from '@orch/api';
import { FieldError } from '@orch/apimachinery';
import type { Strategy } from '../../strategy';
import { col, defineKind, part, resetExcept, statusSubresource } from '../binding';
import { age } from '../table-cells';

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

/** The name label, with its `kubernetes.io/metadata.name` twin when `upstreamTwin` (compatibility option). */
function setNameLabel(ns: Namespace, upstreamTwin: boolean): void {
  ns.metadata.labels = { ...(ns.metadata.labels ?? {}), [NAMESPACE_NAME_LABEL]: ns.metadata.name! };
  mirrorUpstreamKeys(ns.metadata.labels, upstreamTwin);
}

/** Namespaces: phase, the `orch` finalizer, the name label (and its upstream twin under the compatibility option). */
export const namespaceStrategy = (upstreamTwin: boolean): Strategy<Namespace> => ({
  nameRule: 'dns1123Label',
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  prepareForCreate(ns) {
    ns.status = { phase: 'Active' };
    ns.spec = { ...(ns.spec ?? {}) };
    if (!ns.spec.finalizers || ns.spec.finalizers.length === 0) ns.spec.finalizers = [NAMESPACE_FINALIZER];
    setNameLabel(ns, upstreamTwin);
  },
  prepareForUpdate(ns, old) {
    // spec.finalizers change only through /finalize.
    ns.spec = { ...(ns.spec ?? {}), finalizers: old.spec?.finalizers };
    if (!ns.spec.finalizers) delete ns.spec.finalizers;
    setNameLabel(ns, upstreamTwin);
  },
  validateUpdate(ns, old) {
    const label = ns.metadata.labels?.[NAMESPACE_NAME_LABEL];
    return label !== old.metadata.name ? [FieldError.invalid(`metadata.labels[${NAMESPACE_NAME_LABEL}]`, label, 'field is immutable')] : [];
  },
  beforeDelete(ns) {
    ns.status = { ...(ns.status ?? {}), phase: 'Terminating' };
  },
  holdsDeletion: (ns) => (ns.spec?.finalizers ?? []).length > 0,
});

/** namespaces/finalize writes spec.finalizers, nothing else. */
const finalizeWrites = part<Namespace>({
  prepareForUpdate(obj, old) {
    resetExcept(obj, old, (incoming, reset) => {
      const finalizers = incoming.spec?.finalizers;
      const spec = { ...(reset.spec ?? {}) };
      if (finalizers && finalizers.length) spec.finalizers = finalizers;
      else delete spec.finalizers;
      reset.spec = spec;
    });
  },
});

/** core/v1 Namespaces. */
export const namespaces = defineKind<coreV1.Namespace>({
  group: '',
  resource: 'namespaces',
  strategy: (deps) => namespaceStrategy(deps.k8sCompatibility),
  fields: ['status.phase'],
  subresources: { finalize: finalizeWrites, status: part(statusSubresource) },
  table: { columns: [col('Name'), col('Status'), col('Age')], cells: (n) => [n.metadata.name, n.status?.phase ?? '', age(n.metadata.creationTimestamp)] },
});
