import { X509Certificate } from 'node:crypto';
import { ensurePki, type Pki } from '@orch/auth';
import { removeDir, tempDir } from '@orch/testing';
import type { CertificateSigningRequest } from '../../framework/api';
import { makeCsr } from '../cluster-common/testing/csr';
import { eventually, startHarness, storedObject, type Harness } from '../../framework/testing/harness';
import { CsrSigningController, DEFAULT_CERT_TTL_SECONDS, certLifetimeSeconds, csrSigningController, signingDecision } from './signer';

const KUBELET = 'orch.io/kube-apiserver-client-kubelet';
const APISERVER = 'orch.io/kube-apiserver-client';
const approved = [{ type: 'Approved', status: 'True' as const, reason: 'AutoApproved' }];

const csr = (name: string, request: string, spec: Partial<CertificateSigningRequest['spec']> = {}, status: CertificateSigningRequest['status'] = { conditions: approved }): CertificateSigningRequest => ({
  apiVersion: 'certificates.orch.io/v1',
  kind: 'CertificateSigningRequest',
  metadata: { name },
  spec: { request, signerName: KUBELET, usages: ['digital signature', 'client auth'], ...spec },
  status,
});

describe('certLifetimeSeconds', () => {
  it.each([
    { name: 'default', input: undefined, want: DEFAULT_CERT_TTL_SECONDS },
    { name: 'shorter request honoured', input: 3600, want: 3600 },
    { name: 'at least 10 minutes', input: 60, want: 600 },
    { name: 'at most the default', input: DEFAULT_CERT_TTL_SECONDS * 2, want: DEFAULT_CERT_TTL_SECONDS },
  ])('$name', ({ input, want }) => {
    expect(certLifetimeSeconds(input)).toBe(want);
  });
});

describe('signingDecision', () => {
  let nodeCsr: string;
  beforeAll(async () => {
    nodeCsr = await makeCsr('system:node:n1', ['system:nodes']);
  });
  it.each([
    { name: 'approved node request', input: () => csr('c', nodeCsr), want: { kind: 'sign' } },
    { name: 'not approved', input: () => csr('c', nodeCsr, {}, {}), want: { kind: 'skip' } },
    { name: 'denied', input: () => csr('c', nodeCsr, {}, { conditions: [...approved, { type: 'Denied', status: 'True' }] }), want: { kind: 'skip' } },
    { name: 'already issued', input: () => csr('c', nodeCsr, {}, { conditions: approved, certificate: 'eA==' }), want: { kind: 'skip' } },
    { name: 'failed before', input: () => csr('c', nodeCsr, {}, { conditions: [...approved, { type: 'Failed', status: 'True' }] }), want: { kind: 'skip' } },
    { name: 'unknown signer', input: () => csr('c', nodeCsr, { signerName: 'example.com/x' }), want: { kind: 'skip' } },
    { name: 'kubelet signer rejects server usages', input: () => csr('c', nodeCsr, { usages: ['digital signature', 'server auth'] }), want: { kind: 'fail', message: expect.stringContaining('usages did not match') } },
    { name: 'apiserver client signer', input: () => csr('c', nodeCsr, { signerName: APISERVER, usages: ['client auth'] }), want: { kind: 'sign' } },
    { name: 'apiserver client signer rejects server auth', input: () => csr('c', nodeCsr, { signerName: APISERVER, usages: ['server auth'] }), want: { kind: 'fail', message: 'invalid usage for client certificate: server auth' } },
  ])('$name', ({ input, want }) => {
    expect(signingDecision(input())).toEqual(want);
  });
});

describe('CsrSigningController against an API peer', () => {
  let h: Harness;
  let dir: string;
  let pki: Pki;
  beforeAll(async () => {
    dir = await tempDir('orch-csr-');
    pki = await ensurePki(dir);
  });
  afterAll(() => removeDir(dir));
  beforeEach(async () => {
    h = await startHarness({ clusterSigning: pki.ca });
  });
  afterEach(() => h.stop());

  it('issues approved requests with the cluster CA and fails invalid ones', async () => {
    h.peer.put('certificates.orch.io/v1/certificatesigningrequests', csr('node', await makeCsr('system:node:n1', ['system:nodes']), { expirationSeconds: 3600 }));
    h.peer.put('certificates.orch.io/v1/certificatesigningrequests', csr('bad', await makeCsr('admin', ['system:masters'])));
    h.start(new CsrSigningController(h.ctx, pki.ca));
    const stored = (name: string) => storedObject<CertificateSigningRequest>(h.peer, 'certificates.orch.io/v1/certificatesigningrequests', name);
    const issued = await eventually('certificate issued', () => (stored('node')?.status?.certificate ? stored('node') : undefined));
    const cert = new X509Certificate(Buffer.from(issued?.status?.certificate ?? '', 'base64'));
    expect(cert.subject).toBe('O=system:nodes\nCN=system:node:n1');
    expect(cert.verify(new X509Certificate(pki.ca.certPem).publicKey)).toBe(true);
    expect(Date.parse(cert.validTo) - Date.now()).toBeLessThanOrEqual(3600_000);
    expect(cert.keyUsage).toContain('1.3.6.1.5.5.7.3.2');
    expect(h.peer.requestsTo('PUT', '/apis/certificates.orch.io/v1/certificatesigningrequests/node/status')).toHaveLength(1);
    const failed = await eventually('failed', () => (stored('bad')?.status?.conditions?.length === 2 ? stored('bad') : undefined));
    expect(failed?.status?.conditions?.[1]).toMatchObject({ type: 'Failed', status: 'True', reason: 'SignerValidationFailure' });
    expect(failed?.status?.certificate).toBeUndefined();
  });

  it('does nothing without a signing CA', async () => {
    const plain = await startHarness();
    try {
      await csrSigningController.create(plain.ctx).run(new AbortController().signal);
      expect(plain.logs.join('\n')).toContain('csrsigning controller disabled');
    } finally {
      await plain.stop();
    }
  });
});
