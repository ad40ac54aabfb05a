// MutatingAdmissionPolicy (admissionregistration.k8s.io/v1alpha1, alpha in 1.32) through stock
// kubectl: served only with the feature gate and runtime-config on; a policy + binding that
// set a Deployment's replicas and labels with an ApplyConfiguration (merged like server-side
// apply: a container found by name) and a Pod's annotations with a JSONPatch; reinvocation;
// failurePolicy; bad expressions refused with 422 naming the field.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type GatewayProcess } from './support/gateway';
import { eventually } from './support/node-agent';

let gw: GatewayProcess;
let plain: GatewayProcess;
let cacheDir: string;

interface Run {
  code: number | null;
  out: string;
  err: string;
}

function kubectlOn(g: GatewayProcess, args: string[], stdin?: string): Run {
  const r = spawnSync('kubectl', ['--kubeconfig', g.kubeconfig, '--cache-dir', cacheDir, ...args], { input: stdin ?? '', encoding: 'utf8', timeout: 30_000 });
  if (r.error) throw r.error;
  return { code: r.status, out: r.stdout, err: r.stderr };
}
const kubectl = (args: string[], stdin?: string) => kubectlOn(gw, args, stdin);

/** Runs kubectl until `ok` holds (a new policy reaches the gateway's caches within the watch delay); `cleanup` runs first each time. */
function kubectlUntil(args: string[], ok: (r: Run) => boolean, stdin?: string, cleanup?: string[]): Promise<Run> {
  return eventually(`kubectl ${args.join(' ')}`, async () => {
    if (cleanup) kubectl(cleanup);
    const r = kubectl(args, stdin);
    return ok(r) ? r : undefined;
  }, 10_000, 200);
}

const ALPHA = ['--feature-gates=MutatingAdmissionPolicy=true', '--runtime-config=admissionregistration.k8s.io/v1alpha1=true'];

beforeAll(async () => {
  cacheDir = mkdtempSync(join(tmpdir(), 'orch-map-'));
  [gw, plain] = await Promise.all([startGateway({ args: ALPHA }), startGateway({ args: ['--runtime-config=admissionregistration.k8s.io/v1alpha1=true'] })]);
  for (const ns of ['apps', 'pods', 'broken', 'reinvoke']) expect(kubectl(['create', 'namespace', ns]).code).toBe(0);
  expect(kubectl(['create', 'serviceaccount', 'default', '-n', 'pods']).code).toBe(0);
}, 60_000);

afterAll(async () => {
  await Promise.all([gw?.stop(), plain?.stop()]);
  rmSync(cacheDir, { recursive: true, force: true });
});

const policy = (name: string, spec: string) => `apiVersion: admissionregistration.k8s.io/v1alpha1
kind: MutatingAdmissionPolicy
metadata:
  name: ${name}
spec:
${spec}`;

const binding = (name: string, policyName: string, ns: string) => `apiVersion: admissionregistration.k8s.io/v1alpha1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: ${name}
spec:
  policyName: ${policyName}
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: ${ns}
`;

const deployment = (name: string, replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: apps
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
      - name: web
        image: nginx
      - name: sidecar
        image: busybox:1.36
`;

describe('MutatingAdmissionPolicy', () => {
  it('is served only when both the feature gate and the group version are on', () => {
    expect(kubectl(['api-resources', '--api-group=admissionregistration.k8s.io', '-o', 'name']).out).toContain('mutatingadmissionpolicies.admissionregistration.k8s.io');
    const off = kubectlOn(plain, ['get', 'mutatingadmissionpolicies']);
    expect(off.code).not.toBe(0);
    expect(off.err).toMatch(/doesn't have a resource type "mutatingadmissionpolicies"/);
  });

  it('ApplyConfiguration: caps replicas and sets a container by name, merged like server-side apply', async () => {
    const spec = `  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  matchConditions:
  - name: too-many
    expression: "object.spec.replicas > 3"
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{
          metadata: Object.metadata{labels: {"capped": "true"}},
          spec: Object.spec{
            replicas: 3,
            template: Object.spec.template{spec: Object.spec.template.spec{
              containers: [Object.spec.template.spec.containers{name: "web", imagePullPolicy: "Always"}]
            }}
          }
        }
`;
    expect(kubectl(['apply', '-f', '-'], policy('cap-replicas', spec)).code).toBe(0);
    expect(kubectl(['apply', '-f', '-'], binding('cap-replicas', 'cap-replicas', 'apps')).code).toBe(0);
    const created = await kubectlUntil(['create', '-f', '-', '-o', 'json'], (r) => r.code === 0 && JSON.parse(r.out).spec.replicas === 3, deployment('big', 10), ['delete', 'deployment', 'big', '-n', 'apps', '--ignore-not-found']);
    const d = JSON.parse(created.out);
    expect(d.metadata.labels).toEqual({ capped: 'true' });
    // list-map merge by name: the sidecar is kept, the web container keeps its image and gains the pull policy
    expect(d.spec.template.spec.containers.map((c: { name: string; image: string; imagePullPolicy: string }) => [c.name, c.image, c.imagePullPolicy])).toEqual([
      ['web', 'nginx', 'Always'],
      ['sidecar', 'busybox:1.36', 'IfNotPresent'],
    ]);
    // a Deployment the matchCondition does not select is left alone
    const small = JSON.parse(kubectl(['create', '-f', '-', '-o', 'json'], deployment('small', 2)).out);
    expect(small.spec.replicas).toBe(2);
    expect(small.metadata.labels).toBeUndefined();
    // and the stored object is the mutated one
    expect(kubectl(['get', 'deployment', 'big', '-n', 'apps', '-o', 'jsonpath={.spec.replicas}']).out).toBe('3');
  });

  it('JSONPatch with params-free variables: annotates a Pod, escaping the key', async () => {
    const spec = `  reinvocationPolicy: IfNeeded
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["pods"]
  variables:
  - name: owner
    expression: "request.userInfo.username"
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: >
        [
          JSONPatch{op: "add", path: "/metadata/annotations", value: {}},
          JSONPatch{op: "add", path: "/metadata/annotations/" + jsonpatch.escapeKey("example.com/created-by"), value: variables.owner}
        ]
`;
    expect(kubectl(['apply', '-f', '-'], policy('annotate-pods', spec)).code).toBe(0);
    expect(kubectl(['apply', '-f', '-'], binding('annotate-pods', 'annotate-pods', 'pods')).code).toBe(0);
    const pod = (name: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: pods}
spec:
  automountServiceAccountToken: false
  containers: [{name: c, image: busybox}]
`;
    const created = await kubectlUntil(['create', '-f', '-', '-o', 'json'], (r) => r.code === 0 && !!JSON.parse(r.out).metadata.annotations, pod('p1'), ['delete', 'pod', 'p1', '-n', 'pods', '--ignore-not-found', '--wait=false']);
    const me = kubectl(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']).out;
    expect(me).not.toBe('');
    expect(JSON.parse(created.out).metadata.annotations).toEqual({ 'example.com/created-by': me });
  });

  it('failurePolicy: a mutation that fails refuses the request under Fail and is skipped under Ignore', async () => {
    const spec = (failurePolicy: string) => `  reinvocationPolicy: Never
  failurePolicy: ${failurePolicy}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: '[JSONPatch{op: "replace", path: "/data/missing", value: "x"}]'
`;
    expect(kubectl(['apply', '-f', '-'], policy('broken', spec('Fail'))).code).toBe(0);
    expect(kubectl(['apply', '-f', '-'], binding('broken', 'broken', 'broken')).code).toBe(0);
    const refused = await kubectlUntil(['create', 'configmap', 'c1', '-n', 'broken', '--from-literal=a=b'], (r) => r.code !== 0);
    expect(refused.err).toMatch(/configmaps "c1" is forbidden: policy 'broken' with binding 'broken' denied request: JSON Patch/);
    expect(kubectl(['apply', '-f', '-'], policy('broken', spec('Ignore'))).code).toBe(0);
    await kubectlUntil(['create', 'configmap', 'c2', '-n', 'broken', '--from-literal=a=b'], (r) => r.code === 0, undefined, ['delete', 'configmap', 'c2', '-n', 'broken', '--ignore-not-found']);
  });

  it('paramKind and reinvocation: a label set from a parameter object makes an IfNeeded policy that ran earlier run again', async () => {
    const rules = `  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
`;
    // bound first (bindings run in name order), selects only objects that already have the label
    const seen = `  reinvocationPolicy: IfNeeded
${rules}  matchConditions:
  - name: has-team
    expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"team-seen": object.metadata.labels["team"]}}}'
`;
    const team = `  reinvocationPolicy: Never
  paramKind:
    apiVersion: v1
    kind: ConfigMap
${rules}  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"team": params.data["team"]}}}'
`;
    expect(kubectl(['create', 'configmap', 'team-param', '-n', 'default', '--from-literal=team=storage']).code).toBe(0);
    expect(kubectl(['apply', '-f', '-'], policy('see-team', seen)).code).toBe(0);
    expect(kubectl(['apply', '-f', '-'], policy('set-team', team)).code).toBe(0);
    expect(kubectl(['apply', '-f', '-'], binding('a-see-team', 'see-team', 'reinvoke')).code).toBe(0);
    expect(kubectl(['apply', '-f', '-'], `${binding('b-set-team', 'set-team', 'reinvoke')}  paramRef:
    name: team-param
    namespace: default
    parameterNotFoundAction: Deny
`).code).toBe(0);
    const created = await kubectlUntil(['create', 'configmap', 'c1', '-n', 'reinvoke', '-o', 'json'], (r) => r.code === 0 && JSON.parse(r.out).metadata.labels?.['team-seen'] !== undefined, undefined, ['delete', 'configmap', 'c1', '-n', 'reinvoke', '--ignore-not-found']);
    expect(JSON.parse(created.out).metadata.labels).toEqual({ team: 'storage', 'team-seen': 'storage' });
    // without its parameter object the binding denies (parameterNotFoundAction Deny)
    expect(kubectl(['delete', 'configmap', 'team-param', '-n', 'default']).code).toBe(0);
    const refused = await kubectlUntil(['create', 'configmap', 'c2', '-n', 'reinvoke'], (r) => r.code !== 0);
    expect(refused.err).toMatch(/no params found for policy binding with `Deny` parameterNotFoundAction/);
  });

  it.each([
    ['an expression that does not compile', 'ApplyConfiguration', 'applyConfiguration', 'Object{spec: Object.spec{replicas: }}', /spec\.mutations\[0\]\.applyConfiguration\.expression: Invalid value: .*compilation failed/],
    ['an undeclared variable', 'JSONPatch', 'jsonPatch', '[JSONPatch{op: "add", path: "/x", value: nope}]', /spec\.mutations\[0\]\.jsonPatch\.expression: Invalid value: .*compilation failed/],
    ['a missing patchType', '', 'applyConfiguration', 'Object{}', /spec\.mutations\[0\]\.patchType: Required value/],
    ['an apply configuration that is a string', 'ApplyConfiguration', 'applyConfiguration', '"teapot"', /spec\.mutations\[0\]\.applyConfiguration\.expression: Invalid value: .*must evaluate to Object but got string/],
    ['an apply configuration that is a map', 'ApplyConfiguration', 'applyConfiguration', '{"spec": 1}', /must evaluate to Object but got map\(string, int\)/],
    ['an apply configuration of another object type', 'ApplyConfiguration', 'applyConfiguration', 'Object.spec.metadata{}', /must evaluate to Object but got Object\.spec\.metadata/],
    ['a JSON patch that is not a list', 'JSONPatch', 'jsonPatch', 'JSONPatch{op: "remove", path: "/x"}', /spec\.mutations\[0\]\.jsonPatch\.expression: Invalid value: .*must evaluate to list\(JSONPatch\) but got JSONPatch/],
  ])('refuses %s with 422 naming the field', (_name, patchType, field, expression, want) => {
    const spec = `  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  mutations:
  - ${patchType ? `patchType: ${patchType}\n    ` : ''}${field}:
      expression: '${expression}'
`;
    const r = kubectl(['create', '-f', '-'], policy('bad', spec));
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/is invalid/);
    expect(r.err).toMatch(want);
  });
});

// As upstream 1.32: `Object{...}` is not checked against the kind when the policy is written
// (its object types are dynamic to the checker); the mutation fails when it runs, and
// failurePolicy Fail refuses the request with what is wrong. DELETE: no object to mutate, but
// parameters and matchConditions of matching policies are evaluated.
describe('mutations checked against the kind when they run', () => {
  const rules = (operations: string) => `  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: [${operations}]
      resources: ["deployments"]
`;
  const mutation = (patchType: string, expression: string) => `  reinvocationPolicy: Never
  failurePolicy: Fail
${rules('"CREATE"')}  mutations:
  - patchType: ${patchType}
    ${patchType === 'JSONPatch' ? 'jsonPatch' : 'applyConfiguration'}:
      expression: '${expression}'
`;

  beforeAll(() => {
    expect(kubectl(['create', 'namespace', 'typed']).code).toBe(0);
  });

  it.each([
    { name: 'a field the kind does not declare', patchType: 'ApplyConfiguration', expression: 'Object{spec: Object.spec{replicasx: 1}}', want: 'error applying patch: failed to convert patch object to typed object: .spec.replicasx: field not declared in schema' },
    { name: 'a value of the wrong type', patchType: 'ApplyConfiguration', expression: 'Object{spec: Object.spec{replicas: "three"}}', want: 'error applying patch: failed to convert patch object to typed object: .spec.replicas: expected numeric (int or float), got string' },
    { name: 'a construction not named by its field path', patchType: 'ApplyConfiguration', expression: 'Object{spec: Object.specx{replicas: 1}}', want: 'type mismatch: unexpected type name "Object.specx", expected "Object.spec", which matches field name path from root Object type' },
    { name: 'an atomic struct', patchType: 'ApplyConfiguration', expression: 'Object{spec: Object.spec{selector: Object.spec.selector{matchLabels: {"l": "v"}}}}', want: 'error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector' },
    { name: 'a JSON patch leaving a field the kind does not declare', patchType: 'JSONPatch', expression: '[JSONPatch{op: "add", path: "/spec/replicasx", value: 1}]', want: 'strict decoding error: unknown field "spec.replicasx"' },
  ])('refuses $name', async ({ patchType, expression, want }) => {
    expect(kubectl(['apply', '-f', '-'], policy('typed', mutation(patchType, expression))).code).toBe(0);
    expect(kubectl(['apply', '-f', '-'], binding('typed', 'typed', 'typed')).code).toBe(0);
    const r = await kubectlUntil(['create', '-f', '-'], (x) => x.code !== 0 && x.err.includes(want), deployment('big', 1).replace('namespace: apps', 'namespace: typed'), ['delete', 'deployment', 'big', '-n', 'typed', '--ignore-not-found']);
    expect(r.err).toContain(`deployments.apps "big" is forbidden: policy 'typed' with binding 'typed' denied request: ${want}`);
  });

  it('DELETE: a matching policy’s missing parameter object refuses it, its matchConditions decide, nothing is mutated', async () => {
    expect(kubectl(['delete', 'mutatingadmissionpolicy', 'typed', '--ignore-not-found']).code).toBe(0);
    expect(kubectl(['create', '-f', '-'], deployment('kept', 1).replace('namespace: apps', 'namespace: typed')).code).toBe(0);
    const onDelete = (condition: string) => `  reinvocationPolicy: Never
  failurePolicy: Fail
  paramKind:
    apiVersion: v1
    kind: ConfigMap
${rules('"DELETE"')}  matchConditions:
  - name: guarded
    expression: "${condition}"
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"deleted": "yes"}}}'
`;
    expect(kubectl(['apply', '-f', '-'], policy('on-delete', onDelete('oldObject.spec.replicas == 1'))).code).toBe(0);
    expect(kubectl(['apply', '-f', '-'], `${binding('on-delete', 'on-delete', 'typed')}  paramRef:
    name: delete-param
    namespace: typed
    parameterNotFoundAction: Deny
`).code).toBe(0);
    const noParam = await kubectlUntil(['delete', 'deployment', 'kept', '-n', 'typed'], (r) => r.code !== 0);
    expect(noParam.err).toContain("policy 'on-delete' with binding 'on-delete' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction");
    expect(kubectl(['create', 'configmap', 'delete-param', '-n', 'typed']).code).toBe(0);
    // A condition that fails to evaluate refuses under Fail.
    expect(kubectl(['apply', '-f', '-'], policy('on-delete', onDelete('oldObject.spec.nope == 1'))).code).toBe(0);
    const failing = await kubectlUntil(['delete', 'deployment', 'kept', '-n', 'typed'], (r) => r.code !== 0 && r.err.includes('nope'));
    expect(failing.err).toContain("policy 'on-delete' with binding 'on-delete' denied request");
    // A condition that holds: the delete goes through (there is no object to put the label on).
    expect(kubectl(['apply', '-f', '-'], policy('on-delete', onDelete('oldObject.spec.replicas == 1'))).code).toBe(0);
    await kubectlUntil(['delete', 'deployment', 'kept', '-n', 'typed'], (r) => r.code === 0 || r.err.includes('NotFound'));
    expect(kubectl(['get', 'deployment', 'kept', '-n', 'typed']).err).toContain('NotFound');
  });
});
