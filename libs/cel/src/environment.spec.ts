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
