import { formatTime } from '@orch/apimachinery';
import type { ControllerContext, ControllerDescriptor } from '../../framework/controller';
import { KUBELET_CLIENT_SIGNER, isDecided, kubeletClientCsrProblem, parseCsr, type ParsedCsr } from '../cluster-common/csr';
import { QueueController } from '../../framework/queue-controller';
import { CSRS } from '../../framework/resources';
import type { CertificateSigningRequest } from '../../framework/api';

/**
 * upstream sarApprover's recognizers: a node client request (signer
 * `orch.io/kube-apiserver-client-kubelet`, see kubeletClientCsrProblem) from the node itself
 * (`spec.username` equals the CN) is a "selfnodeclient", any other one a "nodeclient". Returns
 * the subresource whose `create` permission the requester needs and the approval message, or
 * undefined when the request is not one the approver handles.
 */
export function autoApproval(csr: CertificateSigningRequest, parsed: ParsedCsr): { subresource: 'selfnodeclient' | 'nodeclient'; message: string } | undefined {
  if (csr.spec.signerName !== KUBELET_CLIENT_SIGNER) return undefined;
  if (kubeletClientCsrProblem(parsed, csr.spec.usages ?? [])) return undefined;
  if (csr.spec.username === parsed.commonName) return { subresource: 'selfnodeclient', message: 'Auto approving self kubelet client certificate after SubjectAccessReview.' };
  return { subresource: 'nodeclient', message: 'Auto approving kubelet client certificate after SubjectAccessReview.' };
}

/** The SubjectAccessReview the approver asks the gateway: may the requester create that CSR subresource? */
export function approvalReview(csr: CertificateSigningRequest, subresource: string): Record<string, unknown> {
  const spec = csr.spec as CertificateSigningRequest['spec'] & { uid?: string; extra?: Record<string, string[]> };
  return {
    apiVersion: 'authorization.orch.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: spec.username ?? '',
      groups: spec.groups ?? [],
      ...(spec.uid ? { uid: spec.uid } : {}),
      ...(spec.extra ? { extra: spec.extra } : {}),
      resourceAttributes: { group: 'certificates.orch.io', resource: 'certificatesigningrequests', verb: 'create', subresource },
    },
  };
}

/**
 * CSR approving controller (upstream csrapproving): auto-approves node client certificate
 * requests (see {@link autoApprovalMessage}) by adding the condition Approved/AutoApproved
 * through the `approval` subresource. Requests already approved, denied or issued are left
 * alone; malformed ones are logged and left for a human.
 */
export class CsrApprovingController extends QueueController {
  private readonly cache = this.informersOf({ csrs: CSRS });
  private readonly api = this.clientsOf({ csrs: CSRS });

  constructor(ctx: ControllerContext) {
    super('csrapproving', ctx);
    this.enqueueOn(this.cache.csrs, (csr) => csr.metadata.name);
  }

  protected async sync(name: string): Promise<void> {
    const csr = this.cache.csrs.get(name);
    if (!csr || csr.status?.certificate || isDecided(csr)) return;
    let parsed: ParsedCsr;
    try {
      parsed = parseCsr(csr.spec.request);
    } catch (err) {
      this.logger.warn('cannot parse certificate signing request', { csr: name, error: (err as Error).message });
      return;
    }
    const approval = autoApproval(csr, parsed);
    if (!approval) return;
    // The gateway's authorizer decides (bootstrap policy: nodeclient for system:bootstrappers, selfnodeclient for system:nodes).
    const review = await this.ctx.client.request<{ status?: { allowed?: boolean } }>({ method: 'POST', path: '/apis/authorization.orch.io/v1/subjectaccessreviews', body: approvalReview(csr, approval.subresource) });
    if (!review.status?.allowed) return;
    const message = approval.message;
    const next = structuredClone(csr) as CertificateSigningRequest;
    const now = formatTime(Date.now());
    next.status = { ...(next.status ?? {}), conditions: [...(next.status?.conditions ?? []), { type: 'Approved', status: 'True', reason: 'AutoApproved', message, lastUpdateTime: now, lastTransitionTime: now }] };
    await this.api.csrs.updateSubresource(name, 'approval', next);
    this.logger.info('approved certificate signing request', { csr: name, requester: csr.spec.username });
  }
}

export const csrApprovingController: ControllerDescriptor = { name: 'csrapproving', serviceAccount: 'certificate-controller', create: (ctx) => new CsrApprovingController(ctx) };
