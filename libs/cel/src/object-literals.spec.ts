import { CelEnvironment } from './environment';
import { JsonPatchLibrary } from './library/jsonpatch';
import { rewriteObjectLiterals } from './object-literals';
import { celToJson } from './values';

describe('message construction in object-building expressions', () => {
  it.each([
    ['Object{spec: Object.spec{replicas: 3}}', '{"spec": {"replicas": 3}}'],
    ['Object{metadata: Object.metadata{labels: {"a": "b"}}}', '{"metadata": {"labels": {"a": "b"}}}'],
    ['[JSONPatch{op: "add", path: "/x", value: 1}]', '[{"op": "add", "path": "/x", "value": 1}]'],
    ['Object{ ?spec : optional.none() }', '{ ?"spec" : optional.none() }'],
    ["'T{a: b}' + \"X{y: z}\"", "'T{a: b}' + \"X{y: z}\""],
    ['"a" in {"a": 1}', '"a" in {"a": 1}'],
    ['x ? {"k": 1} : {}', 'x ? {"k": 1} : {}'],
    ['Object{spec: Object.spec{containers: [Object.spec.containers{name: "c", args: f(a, b)}]}}', '{"spec": {"containers": [{"name": "c", "args": f(a, b)}]}}'],
  ])('%s', (source, want) => {
    expect(rewriteObjectLiterals(source)).toBe(want);
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
