import { Injectable } from '@nestjs/common';
import { StatusError } from '@orch/apimachinery';
import { AdmissionPluginProvider, admissionDenied, type AdmissionAttributes, type AdmissionPlugin } from '../../pipeline/admit';
import { StateAdmissionPlugin } from '../admission-state';
import type { Namespace } from '../api';

export const NAMESPACE_LIFECYCLE = 'NamespaceLifecycle';

/**
 * Namespaces that may never be deleted (SPEC: default, orch-system, orch-public; and upstream's
 * kube-system and kube-public, which the compatibility option creates).
 */
export const IMMORTAL_NAMESPACES: readonly string[] = ['default', 'orch-system', 'orch-public', 'kube-system', 'kube-public'];

export const REASON_IMMORTAL = 'this namespace may not be deleted';

/** Resources whose creation is never refused for a missing or terminating namespace (access reviews reveal nothing). */
const ACCESS_REVIEWS = new Set(['localsubjectaccessreviews']);

/**
 * What the plugin decides for one request, given the namespace as found (undefined: it does
 * not exist): a refusal, or undefined to admit. Pure.
 */
export function namespaceDecision(a: Pick<AdmissionAttributes, 'operation' | 'resource' | 'namespace' | 'name'>, namespace: Namespace | undefined): StatusError | undefined {
  if (a.resource.group === '' && a.resource.resource === 'namespaces') {
    return a.operation === 'DELETE' && IMMORTAL_NAMESPACES.includes(a.name) ? admissionDenied(a, REASON_IMMORTAL) : undefined;
  }
  if (!a.namespace || a.operation === 'DELETE' || ACCESS_REVIEWS.has(a.resource.resource)) return undefined;
  if (!namespace) return StatusError.notFound({ group: '', resource: 'namespaces' }, a.namespace);
  if (a.operation !== 'CREATE') return undefined;
  if (namespace.status?.phase !== 'Terminating' && !namespace.metadata.deletionTimestamp) return undefined;
  const err = admissionDenied(a, `unable to create new content in namespace ${a.namespace} because it is being terminated`);
  return new StatusError(err.code, err.reason, err.message, {
    ...err.details,
    causes: [{ reason: 'NamespaceTerminating', message: `namespace ${a.namespace} is being terminated`, field: 'metadata.namespace' }],
  });
}

/**
 * NamespaceLifecycle (upstream plugin of the same name): no content in a missing namespace (404),
 * no new content in a terminating one (403 with a NamespaceTerminating cause), and the
 * system namespaces cannot be deleted. Reads the namespace from the replica's cache and, when
 * the cache does not have it (just created elsewhere), from the store.
 */
@AdmissionPluginProvider()
@Injectable()
export class NamespaceLifecycle extends StateAdmissionPlugin implements AdmissionPlugin {
  readonly name = NAMESPACE_LIFECYCLE;
  readonly keepsObject = true;

  async mutate(a: AdmissionAttributes): Promise<void> {
    const err = namespaceDecision(a, await this.namespace(a));
    if (err) throw err;
  }

  private async namespace(a: AdmissionAttributes): Promise<Namespace | undefined> {
    if (!a.namespace || a.operation === 'DELETE' || (a.resource.group === '' && a.resource.resource === 'namespaces')) return undefined;
    const cached = this.state.cache<Namespace>('', 'namespaces').get('', a.namespace);
    if (cached) return cached;
    try {
      return (await this.state.registry('', 'namespaces').get('', a.namespace)) as Namespace;
    } catch (err) {
      if (err instanceof StatusError && err.code === 404) return undefined;
      throw err;
    }
  }
}
