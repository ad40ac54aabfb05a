import type { KubeObject } from '@orch/apimachinery';
import { validateWebhookConfiguration } from './admissionregistration/webhook-configurations';
import { csrStrategy } from './certificates/certificatesigningrequests';
import { validateSecret } from './core/secrets';
import { validateNewEvent } from './events/events';
import { requiredEntropyBits, validatePriorityLevel } from './flowcontrol/prioritylevelconfigurations';
import { validateIngress } from './networking/ingresses';
import { validatePdb } from './policy/poddisruptionbudgets';
import { validateBinding, validateBindingUpdate } from './rbac/rolebindings';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const obj = (o: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'X', metadata: { name: 'x' }, ...o }) as KubeObject & Record<string, any>;
const fields = (errs: { field: string }[]) => errs.map((e) => e.field);

const goodEvent = { action: 'Binding', reason: 'Scheduled', reportingController: 'default-scheduler', reportingInstance: 'i', eventTime: '2026-01-01T00:00:00.000000Z', type: 'Normal' };

const RBAC = 'rbac.authorization.orch.io';
const ref = (o: Record<string, unknown> = {}) => ({ apiGroup: RBAC, kind: 'ClusterRole', name: 'view', ...o });
const binding = (o: Record<string, unknown>) => obj({ roleRef: ref(), subjects: [], ...o });
const sa = (o: Record<string, unknown> = {}) => ({ kind: 'ServiceAccount', name: 'builder', namespace: 'ci', ...o });
const user = (o: Record<string, unknown> = {}) => ({ kind: 'User', apiGroup: RBAC, name: 'jane', ...o });

/** A PriorityLevelConfiguration named `name` (as defaulted: 64 queues, hands of 8, 50 long). */
const level = (spec: Record<string, unknown>, name = 'team') => ({ ...obj({ spec }), metadata: { name } });
const queuing = (q: Record<string, unknown> = {}) => ({ queues: 64, handSize: 8, queueLengthLimit: 50, ...q });
const limited = (l: Record<string, unknown> = {}) => ({ type: 'Limited', limited: { nominalConcurrencyShares: 30, lendablePercent: 0, limitResponse: { type: 'Queue', queuing: queuing() }, ...l } });
const queued = (q: Record<string, unknown>) => limited({ limitResponse: { type: 'Queue', queuing: queuing(q) } });
const CATCH_ALL = { type: 'Limited', limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: 'Reject' } } };

describe('RoleBinding and ClusterRoleBinding validation (upstream ValidateRoleBinding)', () => {
  it.each([
    { name: 'rolebinding: Role or ClusterRole, SA without namespace, user, group', run: () => validateBinding(binding({ roleRef: ref({ kind: 'Role' }), subjects: [sa({ namespace: undefined }), user(), user({ kind: 'Group', name: 'devs' })] }), true), want: [] },
    { name: 'either spelling of the RBAC group', run: () => validateBinding(binding({ roleRef: ref({ apiGroup: 'rbac.authorization.k8s.io' }), subjects: [user({ apiGroup: 'rbac.authorization.k8s.io' })] }), false), want: [] },
    { name: 'roleRef.apiGroup of another group', run: () => validateBinding(binding({ roleRef: ref({ apiGroup: 'apps' }) }), true), want: ['roleRef.apiGroup'] },
    { name: 'roleRef.kind unknown', run: () => validateBinding(binding({ roleRef: ref({ kind: 'Policy' }) }), true), want: ['roleRef.kind'] },
    { name: 'clusterrolebinding: roleRef.kind Role', run: () => validateBinding(binding({ roleRef: ref({ kind: 'Role' }) }), false), want: ['roleRef.kind'] },
    { name: 'roleRef.name missing', run: () => validateBinding(binding({ roleRef: ref({ name: '' }) }), true), want: ['roleRef.name'] },
    { name: 'roleRef.name not a path segment', run: () => validateBinding(binding({ roleRef: ref({ name: 'a/b' }) }), true), want: ['roleRef.name'] },
    { name: 'roleRef missing', run: () => validateBinding(obj({}), true), want: ['roleRef.apiGroup', 'roleRef.kind', 'roleRef.name'] },
    { name: 'subject kind unknown', run: () => validateBinding(binding({ subjects: [{ kind: 'Robot', name: 'r2' }] }), true), want: ['subjects[0].kind'] },
    { name: 'subject name missing', run: () => validateBinding(binding({ subjects: [sa({ name: '' })] }), true), want: ['subjects[0].name'] },
    { name: 'user name missing', run: () => validateBinding(binding({ subjects: [user({ name: undefined })] }), true), want: ['subjects[0].name', 'subjects[0].name'] },
    { name: 'serviceaccount name not a DNS subdomain', run: () => validateBinding(binding({ subjects: [sa({ name: 'Builder_1' })] }), true), want: ['subjects[0].name'] },
    { name: 'serviceaccount with an apiGroup', run: () => validateBinding(binding({ subjects: [sa({ apiGroup: RBAC })] }), true), want: ['subjects[0].apiGroup'] },
    { name: 'clusterrolebinding: serviceaccount without namespace', run: () => validateBinding(binding({ subjects: [sa({ namespace: '' })] }), false), want: ['subjects[0].namespace'] },
    { name: 'group of the core group', run: () => validateBinding(binding({ subjects: [user({ kind: 'Group', apiGroup: '' })] }), true), want: ['subjects[0].apiGroup'] },
    { name: 'roleRef cannot change', run: () => validateBindingUpdate(binding({ roleRef: ref({ name: 'edit' }) }), binding({}), true), want: ['roleRef'] },
    { name: 'roleRef in the other group spelling is the same', run: () => validateBindingUpdate(binding({ roleRef: ref({ apiGroup: 'rbac.authorization.k8s.io' }) }), binding({}), true), want: [] },
    { name: 'subjects may change', run: () => validateBindingUpdate(binding({ subjects: [user()] }), binding({}), true), want: [] },
  ])('$name', ({ run, want }) => {
    expect(fields(run())).toEqual(want);
  });
});

describe('PriorityLevelConfiguration validation (upstream ValidatePriorityLevelConfiguration)', () => {
  it.each([
    { name: 'limited, queued', pl: level(limited()), want: [] },
    { name: 'limited, rejecting, zero shares, borrowing limit', pl: level(limited({ nominalConcurrencyShares: 0, borrowingLimitPercent: 200, limitResponse: { type: 'Reject' } })), want: [] },
    { name: 'type unknown', pl: level({ type: 'Unlimited' }), want: ['spec.type'] },
    { name: 'type Exempt under another name', pl: level({ type: 'Exempt' }), want: ['spec.type'] },
    { name: 'exempt must be Exempt', pl: level(limited(), 'exempt'), want: ['spec.type', 'spec'] },
    { name: 'Exempt with limited', pl: level({ type: 'Exempt', limited: limited().limited }, 'exempt'), want: ['spec.limited', 'spec'] },
    { name: 'exempt may change spec.exempt', pl: level({ type: 'Exempt', exempt: { nominalConcurrencyShares: 10, lendablePercent: 50 } }, 'exempt'), want: [] },
    { name: 'exempt shares and lendable percent in range', pl: level({ type: 'Exempt', exempt: { nominalConcurrencyShares: -1, lendablePercent: 101 } }, 'exempt'), want: ['spec.exempt.nominalConcurrencyShares', 'spec.exempt.lendablePercent'] },
    { name: 'Limited with exempt', pl: level({ ...limited(), exempt: {} }), want: ['spec.exempt'] },
    { name: 'Limited without limited', pl: level({ type: 'Limited' }), want: ['spec.limited'] },
    { name: 'negative shares', pl: level(limited({ nominalConcurrencyShares: -1 })), want: ['spec.limited.nominalConcurrencyShares'] },
    { name: 'lendablePercent over 100', pl: level(limited({ lendablePercent: 101 })), want: ['spec.limited.lendablePercent'] },
    { name: 'lendablePercent negative', pl: level(limited({ lendablePercent: -1 })), want: ['spec.limited.lendablePercent'] },
    { name: 'borrowingLimitPercent negative', pl: level(limited({ borrowingLimitPercent: -5 })), want: ['spec.limited.borrowingLimitPercent'] },
    { name: 'limitResponse type unknown', pl: level(limited({ limitResponse: { type: 'Drop' } })), want: ['spec.limited.limitResponse.type'] },
    { name: 'Reject with queuing', pl: level(limited({ limitResponse: { type: 'Reject', queuing: queuing() } })), want: ['spec.limited.limitResponse.queuing'] },
    { name: 'Queue without queuing', pl: level(limited({ limitResponse: { type: 'Queue' } })), want: ['spec.limited.limitResponse.queuing'] },
    { name: 'queues zero', pl: level(queued({ queues: 0 })), want: ['spec.limited.limitResponse.queuing.queues'] },
    { name: 'queues over 10^7', pl: level(queued({ queues: 10_000_001, handSize: 2 })), want: ['spec.limited.limitResponse.queuing.queues'] },
    { name: 'handSize zero', pl: level(queued({ handSize: 0 })), want: ['spec.limited.limitResponse.queuing.handSize'] },
    { name: 'handSize over queues', pl: level(queued({ queues: 4, handSize: 5 })), want: ['spec.limited.limitResponse.queuing.handSize'] },
    { name: 'handSize needing over 60 hash bits', pl: level(queued({ queues: 128, handSize: 9 })), want: ['spec.limited.limitResponse.queuing.handSize'] },
    { name: 'handSize at 60 hash bits', pl: level(queued({ queues: 1024, handSize: 6 })), want: [] },
    { name: 'queueLengthLimit zero', pl: level(queued({ queueLengthLimit: 0 })), want: ['spec.limited.limitResponse.queuing.queueLengthLimit'] },
    { name: 'queuing fields of the wrong type', pl: level(queued({ queues: '64', handSize: 1.5, queueLengthLimit: null })), want: ['spec.limited.limitResponse.queuing.queueLengthLimit', 'spec.limited.limitResponse.queuing.queues', 'spec.limited.limitResponse.queuing.handSize'] },
    { name: 'catch-all with its fixed spec', pl: level(CATCH_ALL, 'catch-all'), want: [] },
    { name: 'catch-all with another spec', pl: level(limited(), 'catch-all'), want: ['spec'] },
    { name: 'no spec', pl: { ...obj({}), metadata: { name: 'x' } }, want: ['spec.type'] },
  ])('$name', ({ pl, want }) => {
    expect(fields(validatePriorityLevel(pl as never))).toEqual(want);
  });

  it.each([
    [64, 8, 48],
    [128, 9, 63],
    [1024, 6, 60],
    [3, 2, 4],
  ])('a deck of %i dealt hands of %i needs %i hash bits', (deck, hand, bits) => expect(requiredEntropyBits(deck, hand)).toBe(bits));
});

describe('per-kind validation (SPEC)', () => {
  it.each([
    { name: 'event: valid', run: () => validateNewEvent(obj(goodEvent) as never), want: [] },
    { name: 'event: required fields', run: () => validateNewEvent(obj({ type: 'Normal' }) as never), want: ['action', 'reason', 'reportingController', 'reportingInstance', 'eventTime'] },
    { name: 'event: type Normal or Warning', run: () => validateNewEvent(obj({ ...goodEvent, type: 'Info' }) as never), want: ['type'] },
    { name: 'event: deprecated fields forbidden', run: () => validateNewEvent(obj({ ...goodEvent, deprecatedCount: 3, deprecatedSource: { component: 'x' } }) as never), want: ['deprecatedCount', 'deprecatedSource'] },
    { name: 'event: note over 1 KiB', run: () => validateNewEvent(obj({ ...goodEvent, note: 'x'.repeat(1025) }) as never), want: ['note'] },

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

    { name: 'csr signerName and usages required', run: () => csrStrategy.validate!(obj({ spec: { request: 'x' } }) as never, ctx()), want: ['spec.signerName', 'spec.usages'] },
    { name: 'csr unknown and duplicate usages', run: () => csrStrategy.validate!(obj({ spec: { request: 'x', signerName: 'orch.io/kube-apiserver-client', usages: ['client auth', 'teleport', 'client auth'] } }) as never, ctx()), want: ['spec.usages[1]', 'spec.usages[2]'] },
  ])('$name', ({ run, want }) => {
    expect(fields(run())).toEqual(want);
  });

  it('csr requester comes from the authenticated user, not the body', () => {
    const csr = obj({ spec: { request: 'x', username: 'system:admin', groups: ['system:masters'] } });
    csrStrategy.prepareForCreate!(csr as never, ctx({ username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] }));
    expect(csr.spec).toMatchObject({ username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] });
  });
});

function ctx(user = { username: 'u', groups: [] as string[] }) {
  return { user, namespace: '', dryRun: false, warnings: [] };
}
