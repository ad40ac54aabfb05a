import type { CertificateSigningRequest } from '../../framework/api';
import { apiServerClientUsagesProblem, hasFailed, isApproved, isDecided, kubeletClientCsrProblem, parseCsr } from './csr';
import { makeCsr } from './testing/csr';

describe('parseCsr', () => {
  it('reads CN, organizations and alternative names', async () => {
    expect(parseCsr(await makeCsr('system:node:n1', ['system:nodes'], ['n1.example']))).toEqual({ commonName: 'system:node:n1', organizations: ['system:nodes'], altNames: 1 });
  });
  it.each([
    { name: 'not PEM', input: Buffer.from('hello').toString('base64'), want: 'PEM block type must be CERTIFICATE REQUEST' },
    { name: 'garbage PEM', input: Buffer.from('-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n').toString('base64'), want: 'invalid certificate request' },
  ])('$name', ({ input, want }) => {
    expect(() => parseCsr(input)).toThrow(want);
  });
});

const node = { commonName: 'system:node:n1', organizations: ['system:nodes'], altNames: 0 };
const CLIENT = ['digital signature', 'client auth'];

describe('kubeletClientCsrProblem', () => {
  it.each([
    { name: 'node client request', csr: node, usages: CLIENT, want: undefined },
    { name: 'with key encipherment (RSA)', csr: node, usages: ['key encipherment', 'digital signature', 'client auth'], want: undefined },
    { name: 'wrong organization', csr: { ...node, organizations: ['system:masters'] }, usages: CLIENT, want: 'subject organization is not system:nodes' },
    { name: 'extra organization', csr: { ...node, organizations: ['system:nodes', 'x'] }, usages: CLIENT, want: 'subject organization is not system:nodes' },
    { name: 'alternative names', csr: { ...node, altNames: 1 }, usages: CLIENT, want: 'DNS, email, IP or URI subjectAltNames are not allowed' },
    { name: 'wrong common name', csr: { ...node, commonName: 'admin' }, usages: CLIENT, want: 'subject common name does not begin with system:node:' },
    { name: 'server auth usage', csr: node, usages: ['digital signature', 'server auth'], want: expect.stringContaining('usages did not match') },
    { name: 'missing digital signature', csr: node, usages: ['client auth'], want: expect.stringContaining('usages did not match') },
  ])('$name', ({ csr, usages, want }) => {
    expect(kubeletClientCsrProblem(csr, usages)).toEqual(want);
  });
});

describe('apiServerClientUsagesProblem', () => {
  it.each([
    { name: 'client auth only', usages: ['client auth'], want: undefined },
    { name: 'all client usages', usages: ['digital signature', 'key encipherment', 'client auth'], want: undefined },
    { name: 'server auth is refused', usages: ['client auth', 'server auth'], want: 'invalid usage for client certificate: server auth' },
    { name: 'client auth is required', usages: ['digital signature'], want: 'missing required usage for client certificate: client auth' },
  ])('$name', ({ usages, want }) => {
    expect(apiServerClientUsagesProblem(usages)).toBe(want);
  });
});

describe('condition helpers', () => {
  const csr = (...types: [string, 'True' | 'False'][]): CertificateSigningRequest => ({
    apiVersion: 'certificates.orch.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name: 'c' },
    spec: { request: '', signerName: 's' },
    status: { conditions: types.map(([type, status]) => ({ type, status })) },
  });
  it.each([
    { name: 'pending', input: csr(), want: [false, false, false] },
    { name: 'approved', input: csr(['Approved', 'True']), want: [true, true, false] },
    { name: 'denied', input: csr(['Denied', 'True']), want: [false, true, false] },
    { name: 'approved and denied', input: csr(['Approved', 'True'], ['Denied', 'True']), want: [false, true, false] },
    { name: 'approved, then failed', input: csr(['Approved', 'True'], ['Failed', 'True']), want: [true, true, true] },
    { name: 'False conditions do not count', input: csr(['Approved', 'False']), want: [false, false, false] },
  ])('$name', ({ input, want }) => {
    expect([isApproved(input), isDecided(input), hasFailed(input)]).toEqual(want);
  });
});
