import { CelEnvironment } from './environment';
import { merge, project, type Projection } from './projection';

/** A projection as plain data: `true`, or an object of the fields. */
const plain = (p: Projection | undefined): unknown => (p === undefined || p === true ? p : Object.fromEntries([...p].map(([k, v]) => [k, plain(v)])));

describe('what an expression reads of a variable', () => {
  const env = new CelEnvironment({ variables: [{ name: 'object' }, { name: 'oldObject' }, { name: 'request' }] });
  it.each([
    { expression: 'object.metadata.name.size() <= 253', want: { metadata: { name: true } } },
    { expression: "has(object.metadata.labels) && 'x' in object.metadata.labels", want: { metadata: { labels: true } } },
    { expression: "object.data.all(k, !k.startsWith('secret-')) && object.kind == 'ConfigMap'", want: { data: true, kind: true } },
    { expression: 'object.?spec.?replicas.orValue(1) > 0', want: { spec: { replicas: true } } },
    { expression: 'object.metadata.name == oldObject.metadata.name', want: { metadata: { name: true } } },
    { expression: 'object.spec.containers[0].image != ""', want: { spec: { containers: true } } },
    { expression: 'object == oldObject', want: true },
    { expression: 'object["metadata"].name != ""', want: true },
    { expression: 'cel.bind(m, object.metadata, m.name != "")', want: { metadata: true } },
    { expression: "request.operation == 'CREATE'", want: undefined },
  ])('$expression', ({ expression, want }) => {
    expect(plain(env.compile(expression).readsOf('object'))).toEqual(want);
  });

  it('merges what two expressions read, and projects a value to it', () => {
    const reads = merge(env.compile('object.metadata.name != ""').readsOf('object'), env.compile('object.data.size() < 3').readsOf('object'))!;
    expect(plain(reads)).toEqual({ metadata: { name: true }, data: true });
    const obj = { kind: 'ConfigMap', metadata: { name: 'a', managedFields: [{ manager: 'x' }], uid: 'u' }, data: { k: 'v' } };
    expect(project(obj, reads)).toEqual({ metadata: { name: 'a' }, data: { k: 'v' } });
    expect(merge(reads, true)).toBe(true);
  });
});
