import { FieldSet, fieldElement, indexElement, keyElement, parsePathElement, pathString, valueElement, type FieldPath } from './field-set';

const f = fieldElement;
const set = (...paths: FieldPath[]) => FieldSet.fromPaths(paths);

describe('FieldsV1 encoding', () => {
  it.each([
    { name: 'one leaf', fieldsV1: { 'f:data': { 'f:a': {} } }, paths: [[f('data'), f('a')]] },
    { name: 'a member that also has children', fieldsV1: { 'f:data': { '.': {}, 'f:a': {} } }, paths: [[f('data')], [f('data'), f('a')]] },
    {
      name: 'list-map items with sorted keys',
      fieldsV1: { 'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } } },
      paths: [[f('ports'), keyElement({ protocol: 'TCP', containerPort: 80 })], [f('ports'), keyElement({ containerPort: 80, protocol: 'TCP' }), f('containerPort')]],
    },
    { name: 'set items', fieldsV1: { 'f:finalizers': { 'v:"a"': {}, 'v:"b"': {} } }, paths: [[f('finalizers'), valueElement('a')], [f('finalizers'), valueElement('b')]] },
    { name: 'list indexes', fieldsV1: { 'f:l': { 'i:0': {}, 'i:10': { 'f:x': {} } } }, paths: [[f('l'), indexElement(0)], [f('l'), indexElement(10), f('x')]] },
    { name: 'empty', fieldsV1: {}, paths: [] },
  ])('$name', ({ fieldsV1, paths }) => {
    const decoded = FieldSet.fromFieldsV1(fieldsV1);
    expect(decoded.paths()).toEqual(paths);
    expect(decoded.toFieldsV1()).toEqual(fieldsV1);
    expect(set(...paths).toFieldsV1()).toEqual(fieldsV1);
  });

  it('orders elements as upstream: fields, keys, values, indexes; "." first', () => {
    const s = set([f('l'), indexElement(10)], [f('l'), indexElement(2)], [f('l'), valueElement('x')], [f('l'), keyElement({ k: 'a' })], [f('l'), f('z')], [f('l')]);
    expect(JSON.stringify(s.toFieldsV1())).toBe('{"f:l":{".":{},"f:z":{},"k:{\\"k\\":\\"a\\"}":{},"v:\\"x\\"":{},"i:2":{},"i:10":{}}}');
  });

  it('canonicalizes keys it decodes', () => {
    expect(FieldSet.fromFieldsV1({ 'k:{ "b": 1, "a": "x" }': {} }).paths()).toEqual([['k:{"a":"x","b":1}']]);
  });

  it.each([
    { name: 'not an object', tree: [], message: 'FieldsV1 must be an object' },
    { name: 'unknown prefix', tree: { 'x:a': {} }, message: 'invalid path element "x:a": unknown prefix' },
    { name: 'bad key JSON', tree: { 'k:{': {} }, message: 'invalid path element "k:{": bad JSON' },
    { name: 'key not an object', tree: { 'k:[1]': {} }, message: 'invalid path element "k:[1]": key must be an object' },
    { name: 'bad index', tree: { 'i:-1': {} }, message: 'invalid path element "i:-1": bad index' },
    { name: 'entry not an object', tree: { 'f:a': 1 }, message: 'FieldsV1 entry "f:a" must be an object' },
  ])('rejects $name', ({ tree, message }) => {
    expect(() => FieldSet.fromFieldsV1(tree)).toThrow(message);
  });
});

describe('FieldSet operations', () => {
  const a = [f('a')];
  const ab = [f('a'), f('b')];
  const ac = [f('a'), f('c')];
  it.each([
    { name: 'union', got: () => set(ab).union(set(ac, a)), want: [a, ab, ac] },
    { name: 'difference keeps children of a removed member', got: () => set(a, ab, ac).difference(set(a, ab)), want: [ac] },
    { name: 'difference of a parent member only', got: () => set(ab).difference(set(a)), want: [ab] },
    { name: 'recursive difference removes the subtree', got: () => set(ab, ac, [f('d')]).recursiveDifference(set(a)), want: [[f('d')]] },
    { name: 'intersection', got: () => set(a, ab, ac).intersection(set(ab, [f('x')])), want: [ab] },
    { name: 'intersection of disjoint sets is empty', got: () => set(ab).intersection(set(ac)), want: [] },
  ])('$name', ({ got, want }) => {
    expect(got().paths()).toEqual(want);
  });

  it('has, withPrefix, empty', () => {
    const s = set(ab, [f('a'), f('b'), f('c')]);
    expect(s.has(ab)).toBe(true);
    expect(s.has(a)).toBe(false);
    expect(s.withPrefix(f('a')).paths()).toEqual([[f('b')], [f('b'), f('c')]]);
    expect(new FieldSet().empty()).toBe(true);
    expect(s.withPrefix(f('zz')).empty()).toBe(true);
    expect(() => s.withPrefix(f('zz')).insert(a)).toThrow('immutable');
  });
});

describe('paths', () => {
  it.each([
    { path: [f('data'), f('key')], want: '.data.key' },
    { path: [f('spec'), f('containers'), keyElement({ name: 'c' }), f('image')], want: '.spec.containers[name="c"].image' },
    { path: [f('ports'), keyElement({ protocol: 'TCP', containerPort: 80 })], want: '.ports[containerPort=80,protocol="TCP"]' },
    { path: [f('finalizers'), valueElement('x')], want: '.finalizers[="x"]' },
    { path: [f('l'), indexElement(3)], want: '.l[3]' },
  ])('$want', ({ path, want }) => {
    expect(pathString(path)).toBe(want);
    for (const pe of path) expect(parsePathElement(pe)).toBe(pe);
  });
});
