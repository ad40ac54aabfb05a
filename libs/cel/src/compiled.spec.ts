// The environment first: it loads the library's modules in the order their cycle needs.
import { CelEnvironment } from './environment';
import { compile } from './compiled';
import type { EngineNode } from './program';

/** What an evaluation gives: its value, or its error's message. */
function outcome(run: () => unknown): { value: unknown } | { error: string } {
  try {
    return { value: (run() as { value: unknown }).value };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

describe('closure-compiled evaluation (untracked) gives what the engine gives', () => {
  const env = new CelEnvironment({ variables: [{ name: 'object' }, { name: 'request' }] });
  const objects: [string, unknown][] = [
    ['a config map', { kind: 'ConfigMap', metadata: { name: 'web-1', namespace: 'bench', labels: { app: 'web' }, annotations: {} }, data: { key: 'value', 'secret-x': 'y' } }],
    ['no labels, no data', { kind: 'ConfigMap', metadata: { name: 'web-2' } }],
    ['null and mistyped fields', { kind: 1, metadata: { name: null, labels: 'x', annotations: [1, 2] }, data: null }],
    ['a non-ASCII name', { kind: 'ConfigMap', metadata: { name: 'wéb-😀', namespace: 'orch-system' }, data: { password: 'x' } }],
    ['numbers', { kind: 'ConfigMap', metadata: { name: 'n', generation: 3 }, spec: { replicas: 2, ratio: 1.5 } }],
  ];
  const expressions = [
    'object.metadata.name.size() <= 253',
    "!has(object.metadata.labels) || !('forbidden' in object.metadata.labels)",
    "object.metadata.name.matches('^[a-z0-9-]+$')",
    "request.operation != 'DELETE'",
    '!has(object.metadata.annotations) || object.metadata.annotations.size() < 20',
    'has(object.data) ? object.data.size() <= 64 : true',
    "object.metadata.namespace != 'orch-system'",
    "!('password' in object.data)",
    "object.kind == 'ConfigMap'",
    'size(object.metadata.name) == 5 && object.metadata.name.size() > 0',
    'object.spec.replicas >= 2 && object.spec.ratio < 2 && object.metadata.generation + 1 == 4',
    'object.spec.replicas == 2.0 || object.spec.replicas / 0 == 1',
    "object.metadata.labels.app == 'web' && has(object.metadata.labels.app)",
    'has(object.data) && object.data.size() == 2',
    'object.metadata == object.metadata',
    "object.metadata.name.lowerAscii() == 'web-1'",
    '!object.metadata.name',
    "has(object.data) && object.data.all(k, !k.startsWith('secret-'))",
    "has(object.data) && object.data.exists(k, k == 'key' || k == 'password')",
    'object.data.all(k, object.data.exists(j, j == k))',
    'object.metadata.annotations.all(a, a > 0) && !object.metadata.annotations.exists(a, a == 2)',
    'object.metadata.labels.exists(k, k.size() > 100 || k / 2 == 1)',
    'object.metadata.labels.all(k, k / 2 == 1 || k.size() < 100)',
    "object.metadata.name.startsWith('web') && object.metadata.name.endsWith('1') && !object.metadata.name.contains('😀')",
    "object.kind.startsWith(object.metadata.name) || object.metadata.name.contains('')",
  ];
  const activations = objects.map(([name, o]) => [name, { object: env.toCel(o), request: env.toCel({ operation: 'CREATE' }) }] as const);

  it.each(expressions)('%s is compiled', (expression) => {
    const program = env.compile(expression) as unknown as { program: { ast: EngineNode } };
    expect(compile(program.program.ast)).toBeDefined();
  });

  it.each(expressions.flatMap((e) => activations.map(([name, activation]) => [e, name, activation] as const)))('%s on %s', (expression, _name, activation) => {
    const program = env.compile(expression);
    const engine = outcome(() => program.evaluate(activation));
    const compiled = outcome(() => program.evaluate(activation, { untracked: true }));
    expect(compiled).toEqual(engine);
  });

  it.each([['object.data.exists_one(k, k.size() > 0)'], ['object.?metadata.?name.orValue("")'], ['[1, 2].size() == 2'], ["{'a': 1}.size() == 1"]])('%s (a node kind it does not compile) is left to the engine', (expression) => {
    expect(compile((env.compile(expression) as unknown as { program: { ast: EngineNode } }).program.ast)).toBeUndefined();
  });
});
