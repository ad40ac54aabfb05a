import type { KubeObject } from '@orch/apimachinery';
import { csrStrategy } from './csr';
import { validateNewEvent } from './events';
import { validateIngress, validatePdb } from './networking-policy';
import { validateSecret } from './secret';
import { validateWebhookConfiguration } from './webhooks';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const obj = (o: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'X', metadata: { name: 'x' }, ...o }) as KubeObject & Record<string, any>;
const fields = (errs: { field: string }[]) => errs.map((e) => e.field);

const goodEvent = { action: 'Binding', reason: 'Scheduled', reportingController: 'default-scheduler', reportingInstance: 'i', eventTime: '2026-01-01T00:00:00.000000Z', type: 'Normal' };

describe('per-kind validation (SPEC)', () => {
  it.each([
    { name: 'event: valid', run: () => validateNewEvent(obj(goodEvent)), want: [] },
    { name: 'event: required fields', run: () => validateNewEvent(obj({ type: 'Normal' })), want: ['action', 'reason', 'reportingController', 'reportingInstance', 'eventTime'] },
    { name: 'event: type Normal or Warning', run: () => validateNewEvent(obj({ ...goodEvent, type: 'Info' })), want: ['type'] },
    { name: 'event: deprecated fields forbidden', run: () => validateNewEvent(obj({ ...goodEvent, deprecatedCount: 3, deprecatedSource: { component: 'x' } })), want: ['deprecatedCount', 'deprecatedSource'] },
    { name: 'event: note over 1 KiB', run: () => validateNewEvent(obj({ ...goodEvent, note: 'x'.repeat(1025) })), want: ['note'] },

    { name: 'secret: opaque ok', run: () => validateSecret(obj({ type: 'Opaque', data: { 'a.b-c_d': b64('v') } })), want: [] },
    { name: 'secret: bad key', run: () => validateSecret(obj({ data: { 'a/b': b64('v') } })), want: ['data[a/b]'] },
    { name: 'sa token secret needs the name annotation', run: () => validateSecret(obj({ type: 'orch.io/service-account-token' })), want: ['metadata.annotations[orch.io/service-account.name]'] },
    {
      name: 'bootstrap token ok',
      run: () => validateSecret({ ...obj({ type: 'bootstrap.orch.io/token', stringData: { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', expiration: '2030-01-01T00:00:00Z', 'auth-extra-groups': 'system:bootstrappers:worker' } }), metadata: { name: 'bootstrap-token-abcdef' } }),
      want: [],
    },
    {
      name: 'bootstrap token rules',
      run: () => validateSecret({ ...obj({ type: 'bootstrap.orch.io/token', stringData: { 'token-id': 'ABC', 'token-secret': 'short', expiration: 'tomorrow', 'auth-extra-groups': 'admins' } }), metadata: { name: 'tok' } }),
      want: ['data[token-id]', 'data[token-secret]', 'metadata.name', 'data[expiration]', 'data[auth-extra-groups]'],
    },
    { name: 'bootstrap token name must match the id', run: () => validateSecret({ ...obj({ type: 'bootstrap.orch.io/token', stringData: { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef' } }), metadata: { name: 'tok' } }), want: ['metadata.name'] },

    { name: 'ingress ok', run: () => validateIngress(obj({ spec: { rules: [{ http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 's', port: { number: 80 } } } }] } }] } })), want: [] },
    { name: 'ingress pathType required', run: () => validateIngress(obj({ spec: { rules: [{ http: { paths: [{ path: '/', backend: { service: { name: 's', port: { name: 'http' } } } }] } }] } })), want: ['spec.rules[0].http.paths[0].pathType'] },
    { name: 'ingress pathType enum and absolute path', run: () => validateIngress(obj({ spec: { rules: [{ http: { paths: [{ path: 'x', pathType: 'Glob', backend: { service: { name: 's', port: { number: 1 } } } }, { path: 'x', pathType: 'Exact', backend: { service: { name: 's', port: { number: 1 } } } }] } }] } })), want: ['spec.rules[0].http.paths[0].pathType', 'spec.rules[0].http.paths[1].path'] },
    { name: 'ingress backend port number xor name', run: () => validateIngress(obj({ spec: { defaultBackend: { service: { name: 's', port: { number: 80, name: 'http' } } } } })), want: ['spec.defaultBackend.service.port'] },

    { name: 'pdb ok', run: () => validatePdb(obj({ spec: { minAvailable: '50%', selector: {} } })), want: [] },
    { name: 'pdb min and max exclusive', run: () => validatePdb(obj({ spec: { minAvailable: 1, maxUnavailable: 1 } })), want: ['spec'] },
    { name: 'pdb bad percentage', run: () => validatePdb(obj({ spec: { maxUnavailable: '150%' } })), want: ['spec.maxUnavailable'] },

    { name: 'webhook ok', run: () => validateWebhookConfiguration(obj({ webhooks: [{ name: 'a.b.c', sideEffects: 'None', admissionReviewVersions: ['v1'], clientConfig: { url: 'https://x' } }] }), false), want: [] },
    {
      name: 'webhook rules',
      run: () => validateWebhookConfiguration(obj({ webhooks: [{ name: 'a.b.c', clientConfig: {} }, { name: 'a.b.c', sideEffects: 'Some', admissionReviewVersions: ['v9'], timeoutSeconds: 60, clientConfig: { url: 'http://x' } }] }), false),
      want: ['webhooks[0].sideEffects', 'webhooks[0].admissionReviewVersions', 'webhooks[0].clientConfig', 'webhooks[1].name', 'webhooks[1].sideEffects', 'webhooks[1].admissionReviewVersions', 'webhooks[1].timeoutSeconds', 'webhooks[1].clientConfig.url'],
    },

    { name: 'csr signerName and usages required', run: () => csrStrategy.validate!(obj({ spec: { request: 'x' } }), ctx()), want: ['spec.signerName', 'spec.usages'] },
    { name: 'csr unknown and duplicate usages', run: () => csrStrategy.validate!(obj({ spec: { request: 'x', signerName: 'orch.io/kube-apiserver-client', usages: ['client auth', 'teleport', 'client auth'] } }), ctx()), want: ['spec.usages[1]', 'spec.usages[2]'] },
  ])('$name', ({ run, want }) => {
    expect(fields(run())).toEqual(want);
  });

  it('csr requester comes from the authenticated user, not the body', () => {
    const csr = obj({ spec: { request: 'x', username: 'system:admin', groups: ['system:masters'] } });
    csrStrategy.prepareForCreate!(csr, ctx({ username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] }));
    expect(csr.spec).toMatchObject({ username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] });
  });
});

function ctx(user = { username: 'u', groups: [] as string[] }) {
  return { user, namespace: '', dryRun: false, warnings: [] };
}
