import type { CertificateSigningRequest } from '../../framework/api';
import { makeCsr } from '../cluster-common/testing/csr';
import { eventually, startHarness, storedObject, type Harness } from '../../framework/testing/harness';
import { parseCsr } from '../cluster-common/csr';
import { CsrApprovingController, autoApproval } from './approver';

const KUBELET = 'orch.io/kube-apiserver-client-kubelet';
const CLIENT = ['digital signature', 'client auth'];

const csr = (name: string, request: string, spec: Partial<CertificateSigningRequest['spec']> = {}): CertificateSigningRequest => ({
  apiVersion: 'certificates.orch.io/v1',
  kind: 'CertificateSigningRequest',
  metadata: { name },
  spec: { request, signerName: KUBELET, usages: CLIENT, ...spec },
});

describe('autoApproval (which permission the requester needs)', () => {
  let nodeCsr: string;
  let adminCsr: string;
  beforeAll(async () => {
    nodeCsr = await makeCsr('system:node:n1', ['system:nodes']);
    adminCsr = await makeCsr('admin', ['system:masters']);
  });

  it.each([
    { name: 'bootstrapper asks for a node', spec: { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] }, admin: false, want: 'nodeclient' },
    { name: 'node renews itself', spec: { username: 'system:node:n1', groups: ['system:nodes'] }, admin: false, want: 'selfnodeclient' },
    { name: 'another node asks for n1 (the gateway decides nodeclient)', spec: { username: 'system:node:n2', groups: ['system:nodes'] }, admin: false, want: 'nodeclient' },
    { name: 'another user asks for n1 (the gateway decides nodeclient)', spec: { username: 'alice', groups: ['devs'] }, admin: false, want: 'nodeclient' },
    { name: 'other signer', spec: { username: 'system:node:n1', signerName: 'orch.io/kube-apiserver-client' }, admin: false, want: undefined },
    { name: 'not a node certificate', spec: { username: 'admin', groups: ['system:bootstrappers'] }, admin: true, want: undefined },
    { name: 'server usages', spec: { username: 'system:node:n1', usages: ['digital signature', 'server auth'] }, admin: false, want: undefined },
  ])('$name', ({ spec, admin, want }) => {
    const request = admin ? adminCsr : nodeCsr;
    const c = csr('c', request, spec);
    expect(autoApproval(c, parseCsr(request))?.subresource).toBe(want);
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
    // The peer answers SubjectAccessReviews as the bootstrap policy does: nodeclient for bootstrappers only.
    h.peer.intercept((req) => {
      if (req.method !== 'POST' || !req.path.endsWith('/subjectaccessreviews')) return undefined;
      const review = JSON.parse(req.body);
      const allowed = review.spec.resourceAttributes.subresource === 'nodeclient' && review.spec.groups.includes('system:bootstrappers');
      return { status: 201, body: { ...review, status: { allowed } } };
    });
    h.start(new CsrApprovingController(h.ctx));
    const approved = await eventually('approved', () => {
      const c = storedObject<CertificateSigningRequest>(h.peer, 'certificates.orch.io/v1/certificatesigningrequests', 'node');
      return c?.status?.conditions?.length ? c : undefined;
    });
    expect(approved.status?.conditions).toEqual([expect.objectContaining({ type: 'Approved', status: 'True', reason: 'AutoApproved' })]);
    expect(h.peer.requestsTo('PUT', '/apis/certificates.orch.io/v1/certificatesigningrequests/node/approval')).toHaveLength(1);
    expect(h.peer.requestsTo('POST', '/apis/authorization.orch.io/v1/subjectaccessreviews').length).toBeGreaterThanOrEqual(2);
    await new Promise((r) => setTimeout(r, 100));
    expect(storedObject<CertificateSigningRequest>(h.peer, 'certificates.orch.io/v1/certificatesigningrequests', 'stranger')?.status).toBeUndefined();
    expect(h.logs.join('\n')).toContain('cannot parse certificate signing request');
  });
});
