import { treeSchema, type NodeShape, type SchemaTree } from '../schema-walker';
import { FieldSet } from './field-set';
import { TypedValueError, addedFields, compareTyped, ensureNamedFieldsAreMembers, mergeTyped, removeItems, toFieldSet } from './typed';

const scalar = (extra: Partial<NodeShape> = {}): SchemaTree => ({ shape: { kind: 'scalar', ...extra } });
const struct = (fields: Record<string, SchemaTree>, atomic = false): SchemaTree => ({ shape: { kind: 'struct', atomic }, fields });
const map = (values: SchemaTree, atomic = false): SchemaTree => ({ shape: { kind: 'map', atomic }, values });
const listMap = (keys: string[], items: SchemaTree): SchemaTree => ({ shape: { kind: 'list', listType: 'map', listMapKeys: keys }, items });
const setList = (items: SchemaTree): SchemaTree => ({ shape: { kind: 'list', listType: 'set' }, items });
const atomicList = (items: SchemaTree): SchemaTree => ({ shape: { kind: 'list', listType: 'atomic' }, items });

const port = struct({ port: scalar(), protocol: scalar({ default: 'TCP' }) });
const container = struct({ name: scalar(), image: scalar(), ports: listMap(['port', 'protocol'], port), args: atomicList(scalar()) });
const schema = treeSchema(
  struct({
    apiVersion: scalar(),
    metadata: struct({ name: scalar(), labels: map(scalar()), finalizers: setList(scalar()) }),
    spec: struct({
      replicas: scalar(),
      containers: listMap(['name'], container),
      selector: struct({ matchLabels: map(scalar()) }, true),
      nodeSelector: map(scalar(), true),
      security: struct({ user: scalar() }),
    }),
  }),
);

const fields = (tree: Record<string, unknown>) => FieldSet.fromFieldsV1(tree);
const C = (name: string) => `k:{"name":"${name}"}`;

describe('toFieldSet', () => {
  it.each([
    { name: 'struct fields only through what they hold', value: { spec: { replicas: 1 } }, want: { 'f:spec': { 'f:replicas': {} } } },
    { name: 'empty struct: nothing', value: { spec: {} }, want: {} },
    { name: 'map entries are members', value: { metadata: { labels: { a: 'x' } } }, want: { 'f:metadata': { 'f:labels': { 'f:a': {} } } } },
    {
      name: 'list-map items: k:{...} members with their fields',
      value: { spec: { containers: [{ name: 'c', image: 'i' }] } },
      want: { 'f:spec': { 'f:containers': { [C('c')]: { '.': {}, 'f:image': {}, 'f:name': {} } } } },
    },
    {
      name: 'list-map keys take declared defaults',
      value: { spec: { containers: [{ name: 'c', ports: [{ port: 80 }] }] } },
      want: { 'f:spec': { 'f:containers': { [C('c')]: { '.': {}, 'f:name': {}, 'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {} } } } } } },
    },
    { name: 'set items: v:<value>', value: { metadata: { finalizers: ['a', 'b'] } }, want: { 'f:metadata': { 'f:finalizers': { 'v:"a"': {}, 'v:"b"': {} } } } },
    { name: 'atomic list: the list only', value: { spec: { containers: [{ name: 'c', args: ['x', 'y'] }] } }, want: { 'f:spec': { 'f:containers': { [C('c')]: { '.': {}, 'f:args': {}, 'f:name': {} } } } } },
    { name: 'atomic struct and map: the value only', value: { spec: { selector: { matchLabels: { a: 'b' } }, nodeSelector: { x: 'y' } } }, want: { 'f:spec': { 'f:nodeSelector': {}, 'f:selector': {} } } },
    {
      name: 'unknown fields are deduced: maps granular, lists atomic',
      value: { spec: { extra: { x: { y: 1 }, l: [1, 2] } } },
      want: { 'f:spec': { 'f:extra': { '.': {}, 'f:l': {}, 'f:x': { '.': {}, 'f:y': {} } } } },
    },
  ])('$name', ({ value, want }) => {
    expect(toFieldSet(value, schema).toFieldsV1()).toEqual(want);
  });

  it.each([
    { name: 'a list-map item without its key', value: { spec: { containers: [{ image: 'i' }] } }, message: '.spec.containers: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)' },
    { name: 'duplicate list-map items', value: { spec: { containers: [{ name: 'c' }, { name: 'c' }] } }, message: '.spec.containers: duplicate entries for key [name="c"]' },
    { name: 'an object in a set', value: { metadata: { finalizers: [{}] } }, message: ".metadata.finalizers: element 0: associative list without keys has an element that's a map type" },
    { name: 'a scalar in a list map', value: { spec: { containers: ['c'] } }, message: ".spec.containers: element 0: associative list with keys has an element that's not a map type" },
  ])('rejects $name', ({ value, message }) => {
    expect(() => toFieldSet(value, schema)).toThrow(new TypedValueError(message));
  });
});

describe('compareTyped', () => {
  it.each([
    { name: 'equal', lhs: { spec: { replicas: 1 } }, rhs: { spec: { replicas: 1 } }, want: {} },
    { name: 'modified scalar', lhs: { spec: { replicas: 1 } }, rhs: { spec: { replicas: 2 } }, want: { modified: { 'f:spec': { 'f:replicas': {} } } } },
    { name: 'a struct field appearing is not itself added', lhs: {}, rhs: { spec: { replicas: 1 } }, want: { added: { 'f:spec': { 'f:replicas': {} } } } },
    { name: 'a struct disappearing is removed', lhs: { spec: { replicas: 1 } }, rhs: {}, want: { removed: { 'f:spec': { '.': {}, 'f:replicas': {} } } } },
    { name: 'a map appearing is added with its entries', lhs: { metadata: {} }, rhs: { metadata: { labels: { a: 'x' } } }, want: { added: { 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } } } } },
    {
      name: 'list items by key',
      lhs: { spec: { containers: [{ name: 'a', image: '1' }, { name: 'b', image: '1' }] } },
      rhs: { spec: { containers: [{ name: 'b', image: '2' }, { name: 'c' }] } },
      want: {
        added: { 'f:spec': { 'f:containers': { [C('c')]: { '.': {}, 'f:name': {} } } } },
        modified: { 'f:spec': { 'f:containers': { [C('b')]: { 'f:image': {} } } } },
        removed: { 'f:spec': { 'f:containers': { [C('a')]: { '.': {}, 'f:image': {}, 'f:name': {} } } } },
      },
    },
    { name: 'atomic values compare whole', lhs: { spec: { nodeSelector: { a: '1' } } }, rhs: { spec: { nodeSelector: { a: '2' } } }, want: { modified: { 'f:spec': { 'f:nodeSelector': {} } } } },
    { name: 'empty and absent containers are leaves', lhs: { spec: { security: {} } }, rhs: { spec: {} }, want: { removed: { 'f:spec': { 'f:security': {} } } } },
    { name: 'a type change is a modification', lhs: { spec: { extra: { a: 1 } } }, rhs: { spec: { extra: [1] } }, want: { modified: { 'f:spec': { 'f:extra': {} } } } },
  ])('$name', ({ lhs, rhs, want }) => {
    const c = compareTyped(lhs, rhs, schema);
    expect({ added: c.added.toFieldsV1(), modified: c.modified.toFieldsV1(), removed: c.removed.toFieldsV1() }).toEqual({ added: {}, modified: {}, removed: {}, ...want });
  });
});

describe('addedFields', () => {
  it.each([
    { name: 'nothing', value: {} },
    { name: 'struct fields through what they hold, map entries, atomic values', value: { apiVersion: 'v1', metadata: { name: 'n', labels: { a: 'x' } }, spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, nodeSelector: { x: 'y' } } } },
    { name: 'list-map items with defaulted keys, atomic lists', value: { spec: { containers: [{ name: 'c', image: 'i', args: ['x'], ports: [{ port: 80 }, { port: 80, protocol: 'UDP' }] }, { name: 'd' }] } } },
    { name: 'duplicate items are one added item', value: { spec: { containers: [{ name: 'c', image: '1' }, { name: 'c', image: '2' }] }, metadata: { finalizers: ['a', 'a', 'b'] } } },
    { name: 'empty containers are leaves', value: { spec: { security: {}, containers: [] }, metadata: { labels: {} } } },
    { name: 'unknown fields deduced, values that do not fit their schema', value: { spec: { extra: { x: { y: 1 }, l: [1, 2] }, security: [1], replicas: { a: 1 } }, status: { phase: 'x' } } },
    { name: 'absent members', value: { metadata: { name: undefined, labels: { a: undefined } } } },
    { name: 'a root that is not an object', value: [{ name: 'c' }] },
  ])('is compareTyped({}, value).added: $name', ({ value }) => {
    const want = compareTyped({}, value, schema);
    expect(want.modified.empty() && want.removed.empty()).toBe(true);
    expect(JSON.stringify(addedFields(value, schema).toFieldsV1())).toBe(JSON.stringify(want.added.toFieldsV1()));
  });

  it('rejects a list-map item without its key, as compareTyped', () => {
    const value = { spec: { containers: [{ image: 'i' }] } };
    expect(() => compareTyped({}, value, schema)).toThrow(TypedValueError);
    expect(() => addedFields(value, schema)).toThrow(new TypedValueError('.spec.containers: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)'));
  });
});

describe('mergeTyped', () => {
  const names = (v: unknown) => ((v as { spec: { containers: { name: string }[] } }).spec.containers ?? []).map((c) => c.name);
  it.each([
    { name: 'applied scalars win, maps merge', lhs: { metadata: { labels: { a: '1', b: '1' } } }, rhs: { metadata: { labels: { b: '2', c: '2' } } }, want: { metadata: { labels: { a: '1', b: '2', c: '2' } } } },
    { name: 'atomic maps are replaced', lhs: { spec: { nodeSelector: { a: '1' } } }, rhs: { spec: { nodeSelector: { b: '2' } } }, want: { spec: { nodeSelector: { b: '2' } } } },
    { name: 'atomic lists are replaced', lhs: { spec: { containers: [{ name: 'c', args: ['1', '2'] }] } }, rhs: { spec: { containers: [{ name: 'c', args: ['3'] }] } }, want: { spec: { containers: [{ name: 'c', args: ['3'] }] } } },
    { name: 'sets merge, applied order first', lhs: { metadata: { finalizers: ['x', 'y'] } }, rhs: { metadata: { finalizers: ['z', 'x'] } }, want: { metadata: { finalizers: ['z', 'x', 'y'] } } },
    {
      name: 'list-map items merge by key',
      lhs: { spec: { containers: [{ name: 'a', image: '1', args: ['x'] }] } },
      rhs: { spec: { containers: [{ name: 'a', image: '2' }] } },
      want: { spec: { containers: [{ name: 'a', image: '2', args: ['x'] }] } },
    },
  ])('$name', ({ lhs, rhs, want }) => {
    expect(mergeTyped(lhs, rhs, schema)).toEqual(want);
  });

  it.each([
    { name: 'applied order for shared items, live-only items stay in place', live: ['a', 'b', 'c'], applied: ['c', 'a'], want: ['b', 'c', 'a'] },
    { name: 'new items follow the applied order', live: ['a'], applied: ['x', 'a', 'y'], want: ['x', 'a', 'y'] },
    { name: 'live-only items at the end stay', live: ['a', 'b'], applied: ['a'], want: ['a', 'b'] },
  ])('orders list items: $name', ({ live, applied, want }) => {
    const obj = (ns: string[]) => ({ spec: { containers: ns.map((name) => ({ name })) } });
    expect(names(mergeTyped(obj(live), obj(applied), schema))).toEqual(want);
  });
});

describe('removeItems', () => {
  it.each([
    { name: 'a map entry', value: { metadata: { labels: { a: '1', b: '2' } } }, remove: { 'f:metadata': { 'f:labels': { 'f:a': {} } } }, want: { metadata: { labels: { b: '2' } } } },
    { name: 'containers left empty disappear', value: { metadata: { name: 'n', labels: { a: '1' } } }, remove: { 'f:metadata': { 'f:labels': { 'f:a': {} } } }, want: { metadata: { name: 'n' } } },
    {
      name: 'a list item as a whole',
      value: { spec: { containers: [{ name: 'a', image: '1' }, { name: 'b' }] } },
      remove: { 'f:spec': { 'f:containers': { [C('a')]: {} } } },
      want: { spec: { containers: [{ name: 'b' }] } },
    },
    {
      name: 'a field of a list item',
      value: { spec: { containers: [{ name: 'a', image: '1' }] } },
      remove: { 'f:spec': { 'f:containers': { [C('a')]: { 'f:image': {} } } } },
      want: { spec: { containers: [{ name: 'a' }] } },
    },
    { name: 'a set item', value: { metadata: { finalizers: ['x', 'y'] } }, remove: { 'f:metadata': { 'f:finalizers': { 'v:"x"': {} } } }, want: { metadata: { finalizers: ['y'] } } },
    { name: 'everything', value: { spec: { replicas: 1 } }, remove: { 'f:spec': {} }, want: {} },
  ])('$name', ({ value, remove, want }) => {
    expect(removeItems(value, fields(remove), schema)).toEqual(want);
  });
});

describe('ensureNamedFieldsAreMembers', () => {
  it('adds struct fields above owned paths, not map keys or list items', () => {
    const s = fields({ 'f:metadata': { 'f:labels': { 'f:a': {} } }, 'f:spec': { 'f:containers': { [C('c')]: { 'f:image': {} } }, 'f:extra': { 'f:x': {} } } });
    expect(ensureNamedFieldsAreMembers(s, schema).toFieldsV1()).toEqual({
      'f:metadata': { '.': {}, 'f:labels': { '.': {}, 'f:a': {} } },
      'f:spec': { '.': {}, 'f:containers': { '.': {}, [C('c')]: { 'f:image': {} } }, 'f:extra': { 'f:x': {} } },
    });
  });
});
