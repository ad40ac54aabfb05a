import { Inject, Injectable } from '@nestjs/common';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import { nodeNameOf } from '@orch/auth';
import { Gateway } from '../gateway';
import { AdmissionPluginProvider, admissionDenied, type AdmissionAttributes, type AdmissionOperation, type AdmissionPlugin, type AdmissionResource } from '../pipeline/admit';
import type { AdmittedPod } from './api';

export const NODE_LEASE_NAMESPACE = 'orch-node-lease';
const MIRROR_ANNOTATIONS = ['orch.io/config.mirror', 'kubernetes.io/config.mirror'];


/**
 * NodeRestriction (upstream plugin/pkg/admission/noderestriction): a node identity
 * (`system:node:<name>` in `system:nodes`) may only change itself and what runs on it —
 * its own Node object and Lease, pods bound to it (status, deletion, eviction; creating only
 * mirror pods bound to it), and service-account tokens bound to its pods. Other users are not
 * affected.
 */
@Injectable()
@AdmissionPluginProvider()
export class NodeRestriction implements AdmissionPlugin {
  readonly name = 'NodeRestriction';

  constructor(@Inject(Gateway) private readonly gateway: Gateway) {}

  readonly handlesFixed = true;

  handles(_op: AdmissionOperation, resource: AdmissionResource): boolean {
    if (resource.group === '') return ['pods', 'nodes', 'serviceaccounts'].includes(resource.resource);
    return resource.group === 'coordination.orch.io' && resource.resource === 'leases';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const node = nodeNameOf(a.userInfo);
    if (!node) return;
    const deny = (why: string) => admissionDenied(a, `node ${JSON.stringify(node)} ${why}`);
    switch (a.resource.resource) {
      case 'nodes':
        if (a.name !== node && a.object?.metadata?.name !== node) throw deny(`is not allowed to modify node ${JSON.stringify(a.name || a.object?.metadata?.name)}`);
        return;
      case 'leases':
        if (a.namespace !== NODE_LEASE_NAMESPACE || (a.name || a.object?.metadata?.name) !== node) throw deny(`is not allowed to modify lease ${a.namespace}/${a.name || a.object?.metadata?.name}`);
        return;
      case 'pods':
        return this.pod(a, node, deny);
      case 'serviceaccounts':
        if (a.subresource !== 'token') return;
        return this.tokenRequest(a, node, deny);
    }
  }

  private async pod(a: AdmissionAttributes, node: string, deny: (why: string) => StatusError): Promise<void> {
    if (a.operation === 'CONNECT') return;
    if (a.subresource === 'eviction') {
      const pod = (await this.gateway.registry('', 'pods').get(a.namespace, a.name)) as AdmittedPod;
      if (pod.spec?.nodeName !== node) throw deny(`can only evict pods with spec.nodeName set to itself`);
      return;
    }
    if (a.operation === 'CREATE' && !a.subresource) {
      const pod = a.object as AdmittedPod;
      const mirror = MIRROR_ANNOTATIONS.some((k) => pod.metadata.annotations?.[k] !== undefined);
      if (!mirror) throw deny('can only create mirror pods');
      if (pod.spec?.nodeName !== node) throw deny('can only create pods with spec.nodeName set to itself');
      return;
    }
    const bound = (a.oldObject as AdmittedPod | undefined)?.spec?.nodeName;
    if (bound !== node) throw deny(`can only ${a.operation === 'DELETE' ? 'delete' : 'update'} pods with spec.nodeName set to itself`);
  }

  private async tokenRequest(a: AdmissionAttributes, node: string, deny: (why: string) => StatusError): Promise<void> {
    const ref = (a.object as KubeObject & { spec?: { boundObjectRef?: { kind?: string; name?: string; uid?: string } } }).spec?.boundObjectRef;
    if (ref?.kind !== 'Pod' || !ref.name) throw deny('requested a token not bound to a pod');
    const pod = (await this.gateway.registry('', 'pods').get(a.namespace, ref.name)) as AdmittedPod;
    if (pod.spec?.nodeName !== node) throw deny(`requested a token bound to pod ${a.namespace}/${ref.name}, which is not on it`);
    if (ref.uid && ref.uid !== pod.metadata.uid) throw deny(`requested a token bound to a pod uid that does not match`);
  }
}
