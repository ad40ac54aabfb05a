import { CelEnvironment } from './environment';
import { JsonPatchLibrary } from './library/jsonpatch';
import { analyseObjectLiterals, rewriteObjectLiterals } from './object-literals';
import { celToJson } from './values';

describe('message construction in object-building expressions', () => {
  it.each([
    ['Object{spec: Object.spec{replicas: 3}}', 'dyn({"spec": dyn({"replicas": 3})})'],
    ['Object{metadata: Object.metadata{labels: {"a": "b"}}}', 'dyn({"metadata": dyn({"labels": {"a": "b"}})})'],
    ['[JSONPatch{op: "add", path: "/x", value: 1}]', '[dyn({"op": "add", "path": "/x", "value": 1})]'],
    ['Object{ ?spec : optional.none() }', 'dyn({ ?"spec" : optional.none() })'],
    ["'T{a: b}' + \"X{y: z}\"", "'T{a: b}' + \"X{y: z}\""],
    ['"a" in {"a": 1}', '"a" in {"a": 1}'],
    ['x ? {"k": 1} : {}', 'x ? {"k": 1} : {}'],
    ['Object{spec: Object.spec{containers: [Object.spec.containers{name: "c", args: f(a, b)}]}}', 'dyn({"spec": dyn({"containers": [dyn({"name": "c", "args": f(a, b)})]})})'],
  ])('%s', (source, want) => {
    expect(rewriteObjectLiterals(source)).toBe(want);
  });

  const mismatch = (got: string, want: string) => `type mismatch: unexpected type name "${got}", expected "${want}", which matches field name path from root Object type`;
  it.each([
    { name: 'the whole expression one construction', expression: 'Object{spec: Object.spec{replicas: 3}}', want: { root: 'Object' } },
    { name: 'a construction of another type', expression: ' Object.spec.metadata{} ', want: { root: 'Object.spec.metadata' } },
    { name: 'not the whole expression', expression: 'x ? Object{} : Object{}', want: {} },
    { name: 'a list of patches', expression: '[JSONPatch{op: "remove", path: "/x"}]', want: {} },
    { name: 'a field value of another path', expression: 'Object{spec: Object.specx{replicas: 1}}', want: { root: 'Object', typeMismatch: mismatch('Object.specx', 'Object.spec') } },
    { name: 'a list item of another path', expression: 'Object{spec: Object.spec{containers: [Object.spec.containers{name: "c"}, Object.spec.containerz{}]}}', want: { root: 'Object', typeMismatch: mismatch('Object.spec.containerz', 'Object.spec.containers') } },
    {
      name: 'inside a patch value (any Object type at its root)',
      expression: '[JSONPatch{op: "add", path: "/spec/template/spec/containers/-", value: Object.spec.template.spec.containers{name: "x", ports: [Object.spec.template.spec.containers.portsZ{containerPort: 8080}]}}]',
      want: { typeMismatch: mismatch('Object.spec.template.spec.containers.portsZ', 'Object.spec.template.spec.containers.ports') },
    },
    { name: 'not a direct value (a call) is not checked', expression: 'Object{spec: f(Object.other{})}', want: { root: 'Object' } },
  ])('type names: $name', ({ expression, want }) => {
    const { source: _source, ...got } = analyseObjectLiterals(expression);
    expect(got).toEqual(want);
  });

  const env = new CelEnvironment({ variables: [{ name: 'object' }], objectLiterals: true });
  it.each([
    ['Object{spec: Object.spec{replicas: object.spec.replicas + 1, paused: false}}', { spec: { replicas: 3, paused: false } }],
    ['[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("orch.io/x~y"), value: "v"}]', [{ op: 'add', path: '/metadata/labels/orch.io~1x~0y', value: 'v' }]],
  ])('evaluates %s', (expression, want) => {
    const r = env.compile(expression).evaluate({ object: env.toCel({ spec: { replicas: 2 } }), jsonpatch: new JsonPatchLibrary() });
    expect(celToJson((r as { value: unknown }).value)).toEqual(want);
  });

  it('reports compile errors of a rewritten expression', () => {
    expect(() => env.compile('Object{spec: Object.spec{replicas: }}')).toThrow(/ERROR: <input>/);
  });
});
