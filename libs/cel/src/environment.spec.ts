// Compilation (cache, errors), evaluation errors, and the authorizer library through a real
// asynchronous authorizer.

import { CelEnvironment } from './environment';
import { CelCompileError, CelEvaluationError } from './errors';
import { AuthorizerValue, type CelAuthorizationAttributes, type CelAuthorizer } from './library/authorizer';

describe('compilation', () => {
  const env = new CelEnvironment({ variables: [{ name: 'object', type: 'dyn' }] });

  it('compiles once: the same expression returns the same program', () => {
    const a = env.compile('object.spec.replicas > 2');
    expect(env.compile('object.spec.replicas > 2')).toBe(a);
    expect(env.compile('object.spec.replicas > 3')).not.toBe(a);
  });

  it.each([
    ['', /expression is empty/],
    ['object.spec.replicas >', /ERROR: <input>:1:\d+: /],
    ['undeclared > 1', /Unknown variable: undeclared/],
    ['"a" + 1', /no such overload/],
  ])('%j is a compile error', (expression, message) => {
    expect(() => env.compile(expression)).toThrow(CelCompileError);
    expect(() => env.compile(expression)).toThrow(message);
  });

  it('reports evaluation failures as CelEvaluationError naming the problem', () => {
    const program = env.compile('object.spec.replicas > 2');
    expect(() => program.evaluate({ object: { spec: {} } })).toThrow(CelEvaluationError);
    expect(() => program.evaluate({ object: { spec: {} } })).toThrow(/replicas/);
    expect(() => env.compile('1 / (object.n - object.n) > 0').evaluate({ object: { n: 1n } })).toThrow(/division by zero/);
  });
});

/** An authorizer with a fixed rule set that answers asynchronously, recording every question. */
class RuleAuthorizer implements CelAuthorizer {
  readonly asked: CelAuthorizationAttributes[] = [];
  async authorize(a: CelAuthorizationAttributes) {
    this.asked.push(a);
    await new Promise((r) => setImmediate(r));
    if (a.user.username === 'broken') throw new Error('authorizer unreachable');
    const allowed = (a.resource === 'pods' && a.verb === 'get' && a.namespace === 'team') || (a.path === '/healthz' && a.verb === 'get') || (a.resource === 'deployments' && a.verb === 'approve');
    return { decision: allowed ? ('allow' as const) : ('no-opinion' as const), reason: allowed ? 'rule matched' : 'no rule' };
  }
}

describe('authorizer library', () => {
  const env = new CelEnvironment({ authorizer: true });
  const authz = new RuleAuthorizer();
  const user = { username: 'alice', groups: ['dev'] };
  const authorizer = new AuthorizerValue(authz, user, { group: 'apps', resource: 'deployments', namespace: 'team', name: 'web' });

  it.each([
    ['authorizer.group("").resource("pods").namespace("team").check("get").allowed()', true],
    ['authorizer.group("").resource("pods").namespace("other").check("get").allowed()', false],
    ['authorizer.group("").resource("pods").namespace("team").check("get").reason()', 'rule matched'],
    ['authorizer.path("/healthz").check("GET").allowed()', true],
    ['authorizer.requestResource.check("approve").allowed()', true],
    ['authorizer.group("").resource("pods").subresource("log").name("p").namespace("team").check("get").errored()', false],
    ['authorizer.serviceAccount("team", "bot").group("").resource("pods").namespace("team").check("get").allowed()', true],
  ])('%s', async (expression, want) => {
    const r = await env.compile(expression).evaluateAsync({ authorizer });
    expect(r.value).toBe(want);
  });

  it('passes the attributes the expression built, on behalf of the user', async () => {
    authz.asked.length = 0;
    await env.compile('authorizer.group("apps").resource("deployments").subresource("scale").namespace("ns").name("n").fieldSelector("a=b").labelSelector("x=y").check("update").allowed()').evaluateAsync({ authorizer });
    expect(authz.asked).toEqual([
      { user, verb: 'update', resourceRequest: true, apiGroup: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'ns', name: 'n', fieldSelector: 'a=b', labelSelector: 'x=y' },
    ]);
    authz.asked.length = 0;
    await env.compile('authorizer.serviceAccount("team", "bot").path("/metrics").check("get").allowed()').evaluateAsync({ authorizer });
    expect(authz.asked[0].user).toEqual({ username: 'system:serviceaccount:team:bot', groups: ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated'] });
  });

  it('turns an authorizer failure into an errored decision', async () => {
    const broken = new AuthorizerValue(authz, { username: 'broken' });
    const r = await env.compile('authorizer.path("/x").check("get")').evaluateAsync({ authorizer: broken });
    const decision = r.value as { errored(): boolean; error(): string; allowed(): boolean };
    expect([decision.errored(), decision.error(), decision.allowed()]).toEqual([true, 'authorizer unreachable', false]);
  });

  it('charges each check its cost', async () => {
    const r = await env.compile('authorizer.path("/healthz").check("get").allowed()').evaluateAsync({ authorizer });
    expect(r.cost).toBeGreaterThanOrEqual(350_000);
  });
});

describe('untracked evaluation (an expression that cannot reach its limits)', () => {
  const env = new CelEnvironment({ variables: [{ name: 'object' }] });
  const object = env.toCel({ metadata: { name: 'web-1', labels: { app: 'web' } }, spec: { replicas: 3 }, data: { a: 'x' } });
  it.each([
    ['dyn(1) == 1.0 && dyn(2u) < 3 && dyn(1.5) > 1'],
    ["object.metadata.name.matches('^web-[0-9]+$')"],
    ["'app' in object.metadata.labels && !('x' in object.metadata.labels)"],
    ['object.?spec.?replicas.orValue(1) + 1'],
    ["timestamp('2024-01-02T03:04:05Z').getFullYear()"],
    ["object.data.all(k, k.size() == 1) && [1, 2, 3].exists(x, x > 2)"],
    ["object.metadata.name.lowerAscii() + string(object.spec.replicas)"],
  ])('%s gives what the tracked evaluation gives, at no cost', (expression) => {
    const program = env.compile(expression);
    const tracked = program.evaluate({ object }) as { value: unknown; cost: number };
    const untracked = program.evaluate({ object }, { untracked: true }) as { value: unknown; cost: number };
    expect(untracked).toEqual({ value: tracked.value, cost: 0 });
    expect(tracked.cost).toBeGreaterThan(0);
  });

  it.each([['9223372036854775807 + 1'], ["int('x')"], ['object.missing.field']])('%s fails as the tracked evaluation does', (expression) => {
    const program = env.compile(expression);
    let tracked: unknown;
    try {
      program.evaluate({ object });
    } catch (e) {
      tracked = (e as Error).message;
    }
    expect(tracked).toBeDefined();
    expect(() => program.evaluate({ object }, { untracked: true })).toThrow(tracked as string);
  });
});
