import { abacAuthorizer, parseAbacPolicyFile } from './abac';
import { nonResourceAttributes, resourceAttributes, type AuthorizationAttributes } from './authz';

// Upstream's policy examples (the ABAC documentation) as a decision table.
const POLICY = [
  '# comments and blank lines are skipped',
  '',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "alice", "namespace": "*", "resource": "*", "apiGroup": "*"}}',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "kubelet", "namespace": "*", "resource": "pods", "readonly": true}}',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "kubelet", "namespace": "*", "resource": "events"}}',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "bob", "namespace": "projectCaribou", "resource": "pods", "readonly": true}}',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"group": "system:authenticated", "readonly": true, "nonResourcePath": "*"}}',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"group": "system:unauthenticated", "readonly": true, "nonResourcePath": "/version"}}',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "carol", "nonResourcePath": "/logs/*"}}',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "*", "namespace": "shared", "resource": "configmaps", "apiGroup": "", "readonly": true}}',
  '{"user": "legacy"}',
].join('\n');

const authz = abacAuthorizer(parseAbacPolicyFile(POLICY, 'policy.jsonl'));
const AUTH = 'system:authenticated';
const res = (user: string, verb: string, resource: string, namespace: string, apiGroup = '', groups = [AUTH]): AuthorizationAttributes =>
  resourceAttributes({ username: user, groups }, { verb, resource, namespace, apiGroup, apiVersion: 'v1' });
const path = (user: string, verb: string, p: string, groups = [AUTH]): AuthorizationAttributes => nonResourceAttributes({ username: user, groups }, verb, p);

describe('ABAC', () => {
  it.each([
    { name: 'alice does anything anywhere', a: res('alice', 'delete', 'deployments', 'x', 'apps'), want: 'allow' },
    { name: 'kubelet reads pods', a: res('kubelet', 'list', 'pods', 'x'), want: 'allow' },
    { name: 'kubelet cannot write pods (readonly)', a: res('kubelet', 'create', 'pods', 'x'), want: 'no-opinion' },
    { name: 'kubelet writes events', a: res('kubelet', 'create', 'events', 'x'), want: 'allow' },
    { name: 'kubelet events policy has apiGroup "": not events.k8s.io', a: res('kubelet', 'create', 'events', 'x', 'events.k8s.io'), want: 'no-opinion' },
    { name: 'bob reads pods in projectCaribou', a: res('bob', 'get', 'pods', 'projectCaribou'), want: 'allow' },
    { name: 'bob not in another namespace', a: res('bob', 'get', 'pods', 'other'), want: 'no-opinion' },
    { name: 'bob cannot watch secrets there', a: res('bob', 'watch', 'secrets', 'projectCaribou'), want: 'no-opinion' },
    { name: 'authenticated users get any path', a: path('bob', 'get', '/apis'), want: 'allow' },
    { name: 'authenticated users cannot post paths', a: path('bob', 'post', '/apis'), want: 'no-opinion' },
    { name: 'anonymous reads /version', a: path('system:anonymous', 'get', '/version', ['system:unauthenticated']), want: 'allow' },
    { name: 'anonymous not /healthz', a: path('system:anonymous', 'get', '/healthz', ['system:unauthenticated']), want: 'no-opinion' },
    { name: 'carol posts under /logs/', a: path('carol', 'post', '/logs/kube.log'), want: 'allow' },
    { name: 'a non-resource policy never matches a resource request', a: res('carol', 'get', 'pods', 'x'), want: 'no-opinion' },
    { name: 'user "*" is every authenticated user (v1beta1)', a: res('dave', 'get', 'configmaps', 'shared'), want: 'allow' },
    { name: 'user "*" is not anonymous', a: res('system:anonymous', 'get', 'configmaps', 'shared', '', ['system:unauthenticated']), want: 'no-opinion' },
    { name: 'v0 line: everything, every group, every path', a: res('legacy', 'delete', 'nodes', '', 'apps'), want: 'allow' },
    { name: 'v0 line: paths too', a: path('legacy', 'put', '/anything'), want: 'allow' },
  ])('$name → $want', async ({ a, want }) => {
    expect((await authz.authorize(a)).decision).toBe(want);
  });

  it('lists the rules of a subject in a namespace (rules review; as upstream, only policies of that namespace or "*")', () => {
    expect(authz.rulesFor!({ username: 'bob', groups: [AUTH] }, 'projectCaribou')).toEqual({
      resourceRules: [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] }],
      nonResourceRules: [],
      incomplete: false,
    });
    expect(authz.rulesFor!({ username: 'kubelet', groups: [AUTH] }, 'x').resourceRules).toEqual([
      { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['*'], apiGroups: [''], resources: ['events'] },
    ]);
  });

  it.each([
    { line: '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"usr": "x"}}', error: 'policy.jsonl:1: unknown field "spec.usr"' },
    { line: '{"apiVersion": "v2", "kind": "Policy", "spec": {}}', error: 'policy.jsonl:1: apiVersion must be abac.authorization.kubernetes.io/v1beta1' },
    { line: '{"user": "x", "readonly": "yes"}', error: 'policy.jsonl:1: readonly must be a boolean' },
    { line: '{not json', error: 'policy.jsonl:1: not a JSON object' },
  ])('refuses $line', ({ line, error }) => {
    expect(() => parseAbacPolicyFile(line, 'policy.jsonl')).toThrow(error);
  });
});
