import type { CertificateSigningRequest } from '../cluster-common/types';
import { makeCsr } from '../cluster-common/testing/csr';
import { eventually, startHarness, storedObject, type Harness } from '../cluster-common/testing/harness';
import { parseCsr } from '../cluster-common/csr';
import { CsrApprovingController, autoApprovalMessage } from './approver';

const KUBELET = 'orch.io/kube-apiserver-client-kubelet';
const CLIENT = ['digital signature', 'client auth'];

const csr = (name: string, request: string, spec: Partial<CertificateSigningRequest['spec']> = {}): CertificateSigningRequest => ({
  apiVersion: 'certificates.orch.io/v1',
  kind: 'CertificateSigningRequest',
  metadata: { name },
  spec: { request, signerName: KUBELET, usages: CLIENT, ...spec },
});

describe('autoApprovalMessage', () => {
  let nodeCsr: string;
  let adminCsr: string;
  beforeAll(async () => {
    nodeCsr = await makeCsr('system:node:n1', ['system:nodes']);
    adminCsr = await makeCsr('admin', ['system:masters']);
  });

  it.each([
    { name: 'bootstrapper asks for a node', spec: { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] }, admin: false, want: 'Auto approving kubelet client certificate after SubjectAccessReview.' },
    { name: 'node renews itself', spec: { username: 'system:node:n1', groups: ['system:nodes'] }, admin: false, want: 'Auto approving self kubelet client certificate after SubjectAccessReview.' },
    { name: 'another node is not approved', spec: { username: 'system:node:n2', groups: ['system:nodes'] }, admin: false, want: undefined },
    { name: 'other users are not approved', spec: { username: 'alice', groups: ['devs'] }, admin: false, want: undefined },
    { name: 'other signer', spec: { username: 'system:node:n1', signerName: 'orch.io/kube-apiserver-client' }, admin: false, want: undefined },
    { name: 'not a node certificate', spec: { username: 'admin', groups: ['system:bootstrappers'] }, admin: true, want: undefined },
    { name: 'server usages', spec: { username: 'system:node:n1', usages: ['digital signature', 'server auth'] }, admin: false, want: undefined },
  ])('$name', ({ spec, admin, want }) => {
    const request = admin ? adminCsr : nodeCsr;
    const c = csr('c', request, spec);
    expect(autoApprovalMessage(c, parseCsr(request))).toBe(want);
  });
});

describe('CsrApprovingController against an API peer', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(() => h.stop());

  it('approves node client requests through the approval subresource', async () => {
    const request = await makeCsr('system:node:n1', ['system:nodes']);
    h.peer.put('certificates.orch.io/v1/certificatesigningrequests', csr('node', request, { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers'] }));
    h.peer.put('certificates.orch.io/v1/certificatesigningrequests', csr('stranger', request, { username: 'mallory', groups: [] }));
    h.peer.put('certificates.orch.io/v1/certificatesigningrequests', csr('garbage', Buffer.from('x').toString('base64'), { username: 'system:node:n1' }));
    h.start(new CsrApprovingController(h.ctx));
    const approved = await eventually(() => {
      const c = storedObject<CertificateSigningRequest>(h.peer, 'certificates.orch.io/v1/certificatesigningrequests', 'node');
      return c?.status?.conditions?.length ? c : undefined;
    }, 'approved');
    expect(approved.status?.conditions).toEqual([expect.objectContaining({ type: 'Approved', status: 'True', reason: 'AutoApproved' })]);
    expect(h.peer.requestsTo('PUT', '/apis/certificates.orch.io/v1/certificatesigningrequests/node/approval')).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(storedObject<CertificateSigningRequest>(h.peer, 'certificates.orch.io/v1/certificatesigningrequests', 'stranger')?.status).toBeUndefined();
    expect(h.logs.join('\n')).toContain('cannot parse certificate signing request');
  });
});
