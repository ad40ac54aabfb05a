import { formatTime } from '@orch/apimachinery';
import { signCsr, type CertAndKey, type Pki } from '@orch/auth';
import { disabledController, type ControllerContext, type ControllerDescriptor } from '../../framework/controller';
import { APISERVER_CLIENT_SIGNER, KUBELET_CLIENT_SIGNER, apiServerClientUsagesProblem, hasFailed, isApproved, kubeletClientCsrProblem, parseCsr } from '../cluster-common/csr';
import { QueueController } from '../../framework/queue-controller';
import { CSRS } from '../../framework/resources';
import type { CertificateSigningRequest } from '../../framework/api';

/** Default certificate lifetime (upstream --cluster-signing-duration 8760h). */
export const DEFAULT_CERT_TTL_SECONDS = 365 * 24 * 3600;
/** Shortest lifetime honoured for `spec.expirationSeconds` (upstream: 10 min). */
const MIN_CERT_TTL_SECONDS = 600;

/** upstream signer.duration: the requested expirationSeconds, within [10 min, the default TTL]. */
export function certLifetimeSeconds(expirationSeconds: number | undefined, ttlSeconds = DEFAULT_CERT_TTL_SECONDS): number {
  if (expirationSeconds === undefined) return ttlSeconds;
  return Math.min(ttlSeconds, Math.max(MIN_CERT_TTL_SECONDS, expirationSeconds));
}

/**
 * What the signer does with a request (upstream signer.handle): `skip` when it is not
 * approved, failed or already issued, or for a signer not handled here; `fail` with the
 * reason when the signer's rules reject it; `sign` otherwise.
 */
export function signingDecision(csr: CertificateSigningRequest): { kind: 'skip' } | { kind: 'fail'; message: string } | { kind: 'sign' } {
  if (!isApproved(csr) || hasFailed(csr) || csr.status?.certificate) return { kind: 'skip' };
  const usages = csr.spec.usages ?? [];
  let problem: string | undefined;
  if (csr.spec.signerName === KUBELET_CLIENT_SIGNER) {
    try {
      problem = kubeletClientCsrProblem(parseCsr(csr.spec.request), usages);
    } catch (err) {
      problem = (err as Error).message;
    }
  } else if (csr.spec.signerName === APISERVER_CLIENT_SIGNER) {
    problem = apiServerClientUsagesProblem(usages);
  } else {
    return { kind: 'skip' };
  }
  return problem ? { kind: 'fail', message: problem } : { kind: 'sign' };
}

/**
 * CSR signing controller (upstream csrsigning for the kube-apiserver-client-kubelet and
 * kube-apiserver-client signers): signs approved requests with the cluster signing CA
 * (`--cluster-signing-cert-file`/`--cluster-signing-key-file`) and writes the PEM to
 * `status.certificate`; a request the signer's rules reject gets the condition
 * Failed/SignerValidationFailure. Both through the `status` subresource.
 */
export class CsrSigningController extends QueueController {
  private readonly cache = this.informersOf({ csrs: CSRS });
  private readonly api = this.clientsOf({ csrs: CSRS });
  /** signCsr reads only the CA of a Pki. */
  private readonly signingPki: Pki;

  constructor(ctx: ControllerContext, ca: CertAndKey) {
    super('csrsigning', ctx);
    this.signingPki = { ca } as Pki;
    this.enqueueOn(this.cache.csrs, (csr) => csr.metadata.name);
  }

  protected async sync(name: string): Promise<void> {
    const csr = this.cache.csrs.get(name);
    if (!csr) return;
    const decision = signingDecision(csr);
    if (decision.kind === 'skip') return;
    const next = structuredClone(csr) as CertificateSigningRequest;
    const failed = decision.kind === 'fail' ? decision.message : await this.sign(next);
    if (failed !== undefined) {
      const now = formatTime(Date.now());
      next.status = {
        ...(next.status ?? {}),
        conditions: [...(next.status?.conditions ?? []), { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: failed, lastUpdateTime: now, lastTransitionTime: now }],
      };
      this.logger.info('refusing to sign certificate signing request', { csr: name, reason: failed });
    }
    await this.api.csrs.updateStatus(next);
  }

  /**
   * Puts the certificate into `csr.status`; returns why signing failed instead for a request
   * no retry can fix (malformed, badly self-signed, unknown usage).
   */
  private async sign(csr: CertificateSigningRequest): Promise<string | undefined> {
    const pem = Buffer.from(csr.spec.request, 'base64').toString('utf8');
    const days = certLifetimeSeconds(csr.spec.expirationSeconds) / 86_400;
    let cert: string;
    try {
      cert = await signCsr(this.signingPki, pem, { usages: csr.spec.usages ?? [], days });
    } catch (err) {
      return (err as Error).message;
    }
    csr.status = { ...(csr.status ?? {}), certificate: Buffer.from(cert, 'utf8').toString('base64') };
    this.logger.info('signed certificate signing request', { csr: csr.metadata.name, signer: csr.spec.signerName });
    return undefined;
  }
}

/** Stands in when no signing CA was given: logs once and does nothing. */
export const csrSigningController: ControllerDescriptor = {
  name: 'csrsigning',
  serviceAccount: 'certificate-controller',
  create: (ctx) => (ctx.options.clusterSigning ? new CsrSigningController(ctx, ctx.options.clusterSigning) : disabledController(ctx, 'csrsigning', 'no --cluster-signing-cert-file/--cluster-signing-key-file given')),
};
