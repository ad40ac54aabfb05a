import { formatTime } from '@orch/apimachinery';
import type { ResourceClient, SharedInformer } from '@orch/client';
import type { ControllerContext, ControllerDescriptor } from '../../controller';
import { KUBELET_CLIENT_SIGNER, isDecided, kubeletClientCsrProblem, parseCsr, type ParsedCsr } from '../cluster-common/csr';
import { QueueController } from '../cluster-common/queue-controller';
import { CSRS } from '../cluster-common/resources';
import type { CertificateSigningRequest } from '../cluster-common/types';

/** Group of bootstrap-token users (SPEC "Methods": bootstrap token). */
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';

/**
 * upstream sarApprover's recognizers, with the permission check reduced to who asked: a node
 * client request (signer `orch.io/kube-apiserver-client-kubelet`, see kubeletClientCsrProblem)
 * from the node itself (`spec.username` equals the CN) is a "selfnodeclient"; one from a
 * member of `system:bootstrappers` is a "nodeclient". Returns the approval message, or
 * undefined when the request is not auto-approved.
 */
export function autoApprovalMessage(csr: CertificateSigningRequest, parsed: ParsedCsr): string | undefined {
  if (csr.spec.signerName !== KUBELET_CLIENT_SIGNER) return undefined;
  if (kubeletClientCsrProblem(parsed, csr.spec.usages ?? [])) return undefined;
  if (csr.spec.username === parsed.commonName) return 'Auto approving self kubelet client certificate after SubjectAccessReview.';
  if ((csr.spec.groups ?? []).includes(BOOTSTRAPPERS_GROUP)) return 'Auto approving kubelet client certificate after SubjectAccessReview.';
  return undefined;
}

/**
 * CSR approving controller (upstream csrapproving): auto-approves node client certificate
 * requests (see {@link autoApprovalMessage}) by adding the condition Approved/AutoApproved
 * through the `approval` subresource. Requests already approved, denied or issued are left
 * alone; malformed ones are logged and left for a human.
 */
export class CsrApprovingController extends QueueController {
  private readonly csrs: SharedInformer<CertificateSigningRequest>;
  private readonly csrClient: ResourceClient<CertificateSigningRequest>;

  constructor(ctx: ControllerContext) {
    super('csrapproving', ctx);
    this.csrClient = ctx.client.resource<CertificateSigningRequest>(CSRS);
    this.csrs = this.informer<CertificateSigningRequest>(CSRS);
    this.enqueueOn(this.csrs, (csr) => csr.metadata.name);
  }

  protected async sync(name: string): Promise<void> {
    const csr = this.csrs.get(name);
    if (!csr || csr.status?.certificate || isDecided(csr)) return;
    let parsed: ParsedCsr;
    try {
      parsed = parseCsr(csr.spec.request);
    } catch (err) {
      this.logger.warn('cannot parse certificate signing request', { csr: name, error: (err as Error).message });
      return;
    }
    const message = autoApprovalMessage(csr, parsed);
    if (!message) return;
    const next = structuredClone(csr) as CertificateSigningRequest;
    const now = formatTime(Date.now());
    next.status = { ...(next.status ?? {}), conditions: [...(next.status?.conditions ?? []), { type: 'Approved', status: 'True', reason: 'AutoApproved', message, lastUpdateTime: now, lastTransitionTime: now }] };
    await this.csrClient.updateSubresource(name, 'approval', next);
    this.logger.info('approved certificate signing request', { csr: name, requester: csr.spec.username });
  }
}

export const csrApprovingController: ControllerDescriptor = { name: 'csrapproving', create: (ctx) => new CsrApprovingController(ctx) };
