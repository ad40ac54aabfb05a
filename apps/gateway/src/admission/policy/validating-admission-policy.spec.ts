import { Catalog } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import { ALLOW, NO_OPINION, type AuthorizationAttributes } from '@orch/auth';
import type { AdmissionAttributes } from '../../pipeline/admit';
import type { AdmissionState } from '../admission-state';
import { AUDIT_VALIDATION_FAILURE, ValidatingAdmissionPolicyPlugin } from './validating-admission-policy';

const GROUP = 'admissionregistration.orch.io';
const POLICIES = `${GROUP}/validatingadmissionpolicies`;
const BINDINGS = `${GROUP}/validatingadmissionpolicybindings`;

/** The replica's caches as lists the test edits; each edit bumps the generation, as the watch cache does. */
function cluster(objects: Record<string, KubeObject[]>, versioned: 'async' | 'sync' = 'async') {
  const lists = new Map(Object.entries(objects));
  const generations = new Map<string, number>();
  const cache = (group: string, resource: string) => {
    const key = `${group}/${resource}`;
    const list = () => lists.get(key) ?? [];
    return { generation: generations.get(key) ?? 1, list: () => [...list()], get: (_ns: string, name: string) => list().find((o) => o.metadata.name === name) };
  };
  const state = { catalog: new Catalog(), cache, authorizer: { authorize: async (x: AuthorizationAttributes) => (x.user.username === 'alice' && x.verb === 'get' ? ALLOW() : NO_OPINION()) }, versioned: versioned === 'sync' ? (a: AdmissionAttributes) => a : async (a: AdmissionAttributes) => a } as unknown as AdmissionState;
  const edit = (key: string, next: KubeObject[]) => {
    lists.set(key, next);
    generations.set(key, (generations.get(key) ?? 1) + 1);
  };
  return { state, edit, list: (key: string) => lists.get(key) ?? [] };
}

const policy = (name: string, expression: string, resourceVersion = '1', extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name, resourceVersion },
  spec: { failurePolicy: 'Fail', matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] }, validations: [{ expression, message: `${name} refused` }], ...extra },
});
const binding = (name: string, policyName: string, extra: Record<string, unknown> = {}): KubeObject => ({ apiVersion: `${GROUP}/v1`, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name }, spec: { policyName, validationActions: ['Deny'], ...extra } });

function create(name: string, data: Record<string, string> = {}): AdmissionAttributes {
  return {
    operation: 'CREATE',
    object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'team-a', labels: { app: 'x' } }, data } as KubeObject,
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    subresource: '',
    namespace: 'team-a',
    name,
    userInfo: { username: 'alice', groups: ['devs'] },
    dryRun: false,
  };
}

/** The denial message, or 'admitted'. */
async function outcome(plugin: ValidatingAdmissionPolicyPlugin, a: AdmissionAttributes): Promise<string> {
  try {
    await plugin.validate(a);
    return 'admitted';
  } catch (e) {
    if (e instanceof StatusError) return e.message.replace(/^.*denied request: /, '');
    throw e;
  }
}

/** The request as a policy matched it, given at once (the request's own version, as AdmissionState gives it) or as a promise (a conversion). */
const VERSIONINGS = ['sync', 'async'] as const;

const NAMESPACE: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { tier: 'gold' } } };
const LIMITS: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'limits', namespace: 'team-a' }, data: { maxKeys: '1' } };

describe('ValidatingAdmissionPolicy: policies compiled once per generation', () => {
  it('a policy update: the next request is judged by the new expression', async () => {
    const c = cluster({ [POLICIES]: [policy('p', "object.metadata.name != 'a'")], [BINDINGS]: [binding('b', 'p')], '/namespaces': [NAMESPACE] });
    const plugin = new ValidatingAdmissionPolicyPlugin(c.state);
    expect([await outcome(plugin, create('a')), await outcome(plugin, create('b'))]).toEqual(['p refused', 'admitted']);
    c.edit(POLICIES, [policy('p', "object.metadata.name != 'b'", '2')]);
    expect([await outcome(plugin, create('a')), await outcome(plugin, create('b'))]).toEqual(['admitted', 'p refused']);
  });

  it('a binding removed: its policy stops applying; bound again, it applies again', async () => {
    const c = cluster({ [POLICIES]: [policy('p', "object.metadata.name != 'a'")], [BINDINGS]: [binding('b', 'p')], '/namespaces': [NAMESPACE] });
    const plugin = new ValidatingAdmissionPolicyPlugin(c.state);
    expect(await outcome(plugin, create('a'))).toBe('p refused');
    c.edit(BINDINGS, []);
    expect(await outcome(plugin, create('a'))).toBe('admitted');
    c.edit(BINDINGS, [binding('b2', 'p')]);
    expect(await outcome(plugin, create('a'))).toBe('p refused');
  });
});

describe('ValidatingAdmissionPolicy: each expression sees the values it reads, whatever the other policies read', () => {
  // Policies that read nothing but `object` beside each one that reads another value: that value is converted for the request all the same.
  const plain = [policy('plain-1', 'object.metadata.name.size() < 64'), policy('plain-2', "has(object.data) || object.kind == 'ConfigMap'")];
  it.each([
    ['request', "request.userInfo.username == 'alice' && request.operation == 'CREATE'", {}, 'admitted'],
    ['request (refusing)', "request.userInfo.groups.exists(g, g == 'admins')", {}, 'reads refused'],
    ['the whole request', "request.namespace == 'team-a' && request.uid == null && !request.dryRun", {}, 'admitted'],
    ['namespaceObject', "namespaceObject.metadata.labels.tier == 'gold'", {}, 'admitted'],
    ['namespaceObject (refusing)', "namespaceObject.metadata.name == 'team-b'", {}, 'reads refused'],
    ['authorizer', "authorizer.group('').resource('configmaps').check('get').allowed()", {}, 'admitted'],
    ['authorizer (refusing)', "authorizer.group('').resource('configmaps').check('delete').allowed()", {}, 'reads refused'],
    ['params', 'object.data.size() <= int(params.data.maxKeys)', { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } }, 'reads refused'],
    ['variables reading request', "variables.user == 'alice'", { variables: [{ name: 'user', expression: 'request.userInfo.username' }] }, 'admitted'],
    ['oldObject (null on CREATE)', 'oldObject == null', {}, 'admitted'],
  ])('%s', async (_name, expression, extra, want) => {
    const reads = policy('reads', expression, '1', extra);
    const c = cluster({
      [POLICIES]: [...plain, reads],
      [BINDINGS]: [binding('b-plain-1', 'plain-1'), binding('b-plain-2', 'plain-2'), binding('b-reads', 'reads', 'paramKind' in extra ? { paramRef: { name: 'limits', namespace: 'team-a' } } : {})],
      '/namespaces': [NAMESPACE],
      '/configmaps': [LIMITS],
    });
    const plugin = new ValidatingAdmissionPolicyPlugin(c.state);
    expect(await outcome(plugin, create('cm', { a: '1', b: '2' }))).toBe(want);
  });
});

describe('ValidatingAdmissionPolicy: runtime cost, with the estimate typed by the kind', () => {
  // Policies whose estimate over the config map schema is below the limit run without counting; the others are
  // still counted, and an evaluation whose actual cost passes the limit fails (failurePolicy Fail: refused).
  const many = Object.fromEntries(Array.from({ length: 1100 }, (_, i) => [`k${i}`, 'v']));
  it.each([
    ['map membership (bounded by the schema)', "!('forbidden' in object.metadata.labels) && !('password' in object.data)", 'cm', many, 'admitted'],
    ['map membership, refusing', "!('password' in object.data)", 'cm', { password: 'x' }, 'p refused'],
    ['nested iteration over a small map', 'object.data.all(k, object.data.all(j, k == j || k != j))', 'cm', { a: '1', b: '2' }, 'admitted'],
    ['a regex over long values', "object.data.all(k, object.data[k].matches('^[a-z]+$'))", 'cm', { a: 'v'.repeat(150_000), b: 'v'.repeat(150_000) }, /cost limit/],
    ['a regex over a long name', "object.metadata.name.matches('^[a-z0-9]+(-[a-z0-9]+)*$')", 'a'.repeat(100_000), {}, /cost limit/],
    // Estimated with the object's own sizes (a cap above its largest size, map keys included): small objects run uncounted, large ones counted.
    ['a regex over a short name', "object.metadata.name.matches('^[a-z0-9]+(-[a-z0-9]+)*$')", 'cm', {}, 'admitted'],
    ['a regex over short keys', "object.data.all(k, k.matches('^[a-z]+$'))", 'cm', { a: '1', b: '2' }, 'admitted'],
    ['a regex over short keys, refusing', "object.data.all(k, k.matches('^[a-z]+$'))", 'cm', { a1: '1' }, 'p refused'],
    ['a regex over a long key', "object.data.all(k, k.matches('^[a-z]+$'))", 'cm', { ['k'.repeat(150_000)]: '1' }, /cost limit/],
  ])('%s', async (_name, expression, name, data, want) => {
    const c = cluster({ [POLICIES]: [policy('p', expression)], [BINDINGS]: [binding('b', 'p')], '/namespaces': [NAMESPACE] });
    const plugin = new ValidatingAdmissionPolicyPlugin(c.state);
    const got = await outcome(plugin, create(name, data as Record<string, string>));
    if (typeof want === 'string') expect(got).toBe(want);
    else expect(got).toMatch(want);
  });
});

describe('ValidatingAdmissionPolicy: every kind of expression, synchronous or waiting for the authorizer', () => {
  // ALLOWED is true for alice: as the literal (the evaluation runs in one call) or as an authorizer check (a promise the evaluation continues after).
  const forms = [['true', 'synchronous'], ["authorizer.group('').resource('configmaps').check('get').allowed()", 'authorizer']];
  const rows: [string, Record<string, unknown>, string[], unknown][] = [
    ['a matchCondition that matches, then a refusing validation', { matchConditions: [{ name: 'm', expression: 'ALLOWED' }], validations: [{ expression: "object.metadata.name != 'cm'", message: 'no cm' }] }, ['Deny'], 'no cm'],
    ['a matchCondition that does not match', { matchConditions: [{ name: 'm', expression: '!ALLOWED' }], validations: [{ expression: 'false' }] }, ['Deny'], 'admitted'],
    ['a variable a validation reads', { variables: [{ name: 'can', expression: 'ALLOWED' }], validations: [{ expression: '!variables.can', message: 'can' }] }, ['Deny'], 'can'],
    ['a failing variable, read by the second validation only', { variables: [{ name: 'bad', expression: "ALLOWED ? int('x') : 0" }], validations: [{ expression: 'true' }, { expression: 'variables.bad == 0' }] }, ['Deny'], /expression 'variables.bad == 0' resulted in error/],
    ['a failing variable nothing reads', { variables: [{ name: 'bad', expression: "ALLOWED ? int('x') : 0" }], validations: [{ expression: "object.metadata.name == 'cm'" }] }, ['Deny'], 'admitted'],
    ['a messageExpression', { validations: [{ expression: '!ALLOWED', message: 'static', messageExpression: "ALLOWED ? 'from the expression' : 'no'" }] }, ['Deny'], 'from the expression'],
    ['a failing messageExpression: the static message', { validations: [{ expression: '!ALLOWED', message: 'static', messageExpression: "ALLOWED ? string(int('x')) : 'no'" }] }, ['Deny'], 'static'],
    ['a passing validation, its messageExpression skipped, then a refusing one', { validations: [{ expression: 'ALLOWED', messageExpression: "'first'" }, { expression: '!ALLOWED', message: 'second' }] }, ['Deny'], 'second'],
    ['an audit annotation', { validations: [{ expression: 'ALLOWED' }], auditAnnotations: [{ key: 'who', valueExpression: "ALLOWED ? 'can-get' : 'cannot'" }] }, ['Deny'], { annotations: { 'p/who': 'can-get' } }],
    ['Warn and Audit', { validations: [{ expression: '!ALLOWED', message: 'watched' }] }, ['Warn', 'Audit'], { warnings: ["Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': watched"], annotations: { [AUDIT_VALIDATION_FAILURE]: JSON.stringify([{ message: 'watched', policy: 'p', binding: 'b', expressionIndex: 0, validationActions: ['Warn', 'Audit'] }]) } }],
  ];
  // The request as the policy matched it given at once (the request's own version) or as a promise (a conversion): validate
  // answers without a promise exactly when nothing it waits for is one (synchronous form, versioned at once).
  it.each(forms.flatMap(([allowed, form]) => VERSIONINGS.flatMap((versioned) => rows.map(([name, spec, actions, want]) => [`${name} (${form}, versioned ${versioned})`, JSON.parse(JSON.stringify(spec).replaceAll('ALLOWED', allowed)), actions, want, form === 'synchronous' && versioned === 'sync', versioned] as const))))('%s', async (_name, spec, actions, want, synchronous, versioned) => {
    const c = cluster({ [POLICIES]: [policy('p', 'true', '1', spec)], [BINDINGS]: [binding('b', 'p', { validationActions: actions })], '/namespaces': [NAMESPACE] }, versioned);
    const plugin = new ValidatingAdmissionPolicyPlugin(c.state);
    const { got, answeredAtOnce } = await answer(plugin, create('cm'));
    expect(answeredAtOnce).toBe(synchronous);
    if (want instanceof RegExp) expect(got).toMatch(want);
    else expect(got).toEqual(want);
  });
});

/** What validate answered (the denial message, 'admitted', or the warnings and annotations) and whether it answered without a promise. */
async function answer(plugin: ValidatingAdmissionPolicyPlugin, a: AdmissionAttributes): Promise<{ got: unknown; answeredAtOnce: boolean }> {
  let answeredAtOnce = true;
  try {
    const answered = plugin.validate(a);
    answeredAtOnce = !(answered instanceof Promise);
    const r = await answered;
    return { got: r?.warnings || r?.auditAnnotations ? { ...(r.warnings ? { warnings: r.warnings } : {}), ...(r.auditAnnotations ? { annotations: r.auditAnnotations } : {}) } : 'admitted', answeredAtOnce };
  } catch (e) {
    if (!(e instanceof StatusError)) throw e;
    return { got: e.message.replace(/^.*denied request: /, ''), answeredAtOnce };
  }
}

describe('ValidatingAdmissionPolicy: several policies, some waiting for the authorizer', () => {
  // Policies in binding name order; AUTH: an authorizer check true for alice (a promise), the others synchronous.
  const AUTH = "authorizer.group('').resource('configmaps').check('get').allowed()";
  const FAILING = "int('x') == 1";
  type Row = [string, [expression: string, actions: string[], failurePolicy: 'Fail' | 'Ignore'][], unknown];
  const rows: Row[] = [
    ['a waiting Warn, then a synchronous Deny', [[`!${AUTH}`, ['Warn'], 'Fail'], ['false', ['Deny'], 'Fail']], 'p1 refused'],
    ['a synchronous Warn, a waiting Warn, a synchronous Warn: in order', [['false', ['Warn'], 'Fail'], [`!${AUTH}`, ['Warn'], 'Fail'], ['false', ['Warn'], 'Fail']], { warnings: [0, 1, 2].map((i) => `Validation failed for ValidatingAdmissionPolicy 'p${i}' with binding 'b${i}': p${i} refused`) }],
    ['a waiting Deny before a synchronous one', [[`!${AUTH}`, ['Deny'], 'Fail'], ['false', ['Deny'], 'Fail']], 'p0 refused'],
    ['a waiting failure under Ignore, then a synchronous Deny', [[`${AUTH} && ${FAILING}`, ['Deny'], 'Ignore'], ['false', ['Deny'], 'Fail']], 'p1 refused'],
    ['a waiting failure under Fail', [[`${AUTH} && ${FAILING}`, ['Deny'], 'Fail'], ['false', ['Deny'], 'Fail']], /expression .* resulted in error/],
    ['a synchronous failure under Ignore, then a waiting Audit', [[FAILING, ['Deny'], 'Ignore'], [`!${AUTH}`, ['Audit'], 'Fail']], { annotations: { [AUDIT_VALIDATION_FAILURE]: JSON.stringify([{ message: 'p1 refused', policy: 'p1', binding: 'b1', expressionIndex: 0, validationActions: ['Audit'] }]) } }],
    ['all admit, one waiting', [['true', ['Deny'], 'Fail'], [AUTH, ['Deny'], 'Fail'], ['true', ['Deny'], 'Fail']], 'admitted'],
  ];
  it.each(VERSIONINGS.flatMap((versioned) => rows.map(([name, ps, want]) => [`${name} (versioned ${versioned})`, ps, want, versioned] as const)))('%s', async (_name, ps, want, versioned) => {
    const c = cluster({ [POLICIES]: ps.map(([expression, , failurePolicy], i) => policy(`p${i}`, expression, '1', { failurePolicy })), [BINDINGS]: ps.map(([, actions], i) => binding(`b${i}`, `p${i}`, { validationActions: actions })), '/namespaces': [NAMESPACE] }, versioned);
    const { got } = await answer(new ValidatingAdmissionPolicyPlugin(c.state), create('cm'));
    if (want instanceof RegExp) expect(got).toMatch(want);
    else expect(got).toEqual(want);
  });
});

describe('ValidatingAdmissionPolicy: policies of validations only, told at once by compiled forms, answer as their evaluations', () => {
  // Versioned at once, a policy with validations only is admitted without an evaluation when every compiled form gives true;
  // versioned by a promise, it always is evaluated: both must answer alike for every kind of expression.
  const rows: [string, string[], Record<string, string>, string, string[], 'Fail' | 'Ignore'][] = [
    ['a literal true', ['true'], {}, 'cm', ['Deny'], 'Fail'],
    ['a literal false', ['false'], {}, 'cm', ['Deny'], 'Fail'],
    ['a comparison, true then false', ["object.metadata.name == 'cm'", "object.metadata.name != 'cm'"], {}, 'cm', ['Deny'], 'Fail'],
    ['has() and map membership', ["has(object.data) && !('password' in object.data)"], { password: 'x' }, 'cm', ['Deny'], 'Fail'],
    ['a quantifier over the data keys', ["object.data.all(k, !k.startsWith('secret-'))"], { a: '1', 'secret-b': '2' }, 'cm', ['Deny'], 'Fail'],
    ['size() of a string and a map', ['object.metadata.name.size() <= 3 && object.data.size() < 2'], { a: '1' }, 'cm', ['Deny'], 'Fail'],
    ['a regex', ["object.metadata.name.matches('^[a-z0-9-]+$')"], {}, 'Cm', ['Deny'], 'Fail'],
    ['a value the compiled form leaves to the engine (a timestamp)', ["object.metadata.?creationTimestamp.orValue('') == ''"], {}, 'cm', ['Deny'], 'Fail'],
    ['an error', ["int('x') == 1"], {}, 'cm', ['Deny'], 'Fail'],
    ['an error under Ignore', ["int('x') == 1"], {}, 'cm', ['Deny'], 'Ignore'],
    ['a true expression that reads a missing field (an error)', ['object.spec.replicas > 0 || true'], {}, 'cm', ['Deny'], 'Fail'],
    ['Warn and Audit of a false one', ['object.data.size() == 0'], { a: '1' }, 'cm', ['Warn', 'Audit'], 'Fail'],
    ['a true regex over a long name, counted: over the cost limit', ["object.metadata.name.matches('^[a-z0-9]+(-[a-z0-9]+)*$')"], {}, 'a'.repeat(100_000), ['Deny'], 'Fail'],
  ];
  it.each(rows)('%s', async (_name, expressions, data, name, actions, failurePolicy) => {
    const outcomes = await Promise.all(
      VERSIONINGS.map(async (versioned) => {
        const spec = { failurePolicy, validations: expressions.map((expression, i) => ({ expression, message: `v${i} refused` })) };
        const c = cluster({ [POLICIES]: [policy('p', 'true', '1', spec), policy('q', 'true')], [BINDINGS]: [binding('b', 'p', { validationActions: actions }), binding('c', 'q')], '/namespaces': [NAMESPACE] }, versioned);
        const plugin = new ValidatingAdmissionPolicyPlugin(c.state);
        // Twice: the second request finds what the first decided about the candidate.
        return [(await answer(plugin, create(name, data))).got, (await answer(plugin, create(name, data))).got];
      }),
    );
    expect(outcomes[0]).toEqual(outcomes[1]);
  });
});
