import { Catalog, objectSchemaOf } from '@orch/api';
import { atomicPaths } from './mutating-admission-policy';
import { mutationResultError } from './policy-validation';

describe('MutatingAdmissionPolicy: what a mutation must evaluate to (upstream return types)', () => {
  it.each([
    { name: 'an Object construction', patchType: 'ApplyConfiguration' as const, expression: 'Object{spec: Object.spec{replicas: 1}}', type: 'dyn', want: undefined },
    { name: 'a dynamic value (a variable)', patchType: 'ApplyConfiguration' as const, expression: 'variables.patch', type: 'dyn', want: undefined },
    { name: 'a string', patchType: 'ApplyConfiguration' as const, expression: '"teapot"', type: 'string', want: 'must evaluate to Object but got string' },
    { name: 'a map literal', patchType: 'ApplyConfiguration' as const, expression: '{"a": 1}', type: 'map<string, int>', want: 'must evaluate to Object but got map(string, int)' },
    { name: 'another object type', patchType: 'ApplyConfiguration' as const, expression: 'Object.spec.metadata{}', type: 'dyn', want: 'must evaluate to Object but got Object.spec.metadata' },
    { name: 'a list of patches', patchType: 'JSONPatch' as const, expression: '[JSONPatch{op: "remove", path: "/x"}]', type: 'list', want: undefined },
    { name: 'one patch, not a list', patchType: 'JSONPatch' as const, expression: 'JSONPatch{op: "remove", path: "/x"}', type: 'dyn', want: 'must evaluate to list(JSONPatch) but got JSONPatch' },
    { name: 'a bool', patchType: 'JSONPatch' as const, expression: '1 < 2', type: 'bool', want: 'must evaluate to list(JSONPatch) but got bool' },
  ])('$patchType: $name', ({ patchType, expression, type, want }) => {
    expect(mutationResultError(patchType, expression, type)).toBe(want);
  });
});

describe('MutatingAdmissionPolicy: atomic parts an apply configuration may not set', () => {
  const deployments = objectSchemaOf(new Catalog().lookup('apps', 'v1', 'deployments')!);
  it.each([
    { name: 'granular fields only', patch: { metadata: { labels: { a: 'b' } }, spec: { replicas: 2, template: { spec: { containers: [{ name: 'web', image: 'x' }] } } } }, want: [] },
    { name: 'an atomic struct (label selector)', patch: { spec: { selector: { matchLabels: { a: 'b' } } } }, want: ['.spec.selector'] },
    { name: 'an atomic list inside a list-map item, named by its key', patch: { spec: { template: { spec: { containers: [{ name: 'web', args: ['-v'] }] } } } }, want: ['.spec.template.spec.containers[name="web"].args'] },
  ])('$name', ({ patch, want }) => {
    expect(atomicPaths(patch, deployments)).toEqual(want);
  });
});
