import { StatusError } from './errors';
import { DEDUCED_SCHEMA, treeSchema, type SchemaTree } from './schema-walker';
import { strategicMergePatch } from './strategic-merge';

// A schema in the style of upstream's strategicpatch test type (mergeItem).
const str: SchemaTree = { shape: { kind: 'scalar' } };
const int: SchemaTree = { shape: { kind: 'scalar' } };
const item: { shape: SchemaTree['shape']; fields: Record<string, SchemaTree> } = { shape: { kind: 'struct' }, fields: {} };
Object.assign(item.fields, {
  name: str,
  value: str,
  other: str,
  mergingList: { shape: { kind: 'list', listType: 'map', listMapKeys: ['name'], patchStrategy: 'merge', patchMergeKey: 'name' }, items: item },
  nonMergingList: { shape: { kind: 'list' }, items: item },
  mergingIntList: { shape: { kind: 'list', listType: 'set', patchStrategy: 'merge' }, items: int },
  nonMergingIntList: { shape: { kind: 'list' }, items: int },
  simpleMap: { shape: { kind: 'map' }, values: str },
  replacingMap: { shape: { kind: 'map', patchStrategy: 'replace' }, values: str },
  retainKeysMap: { shape: { kind: 'struct', patchStrategy: 'retainKeys' }, fields: { name: str, value: str, simpleMap: { shape: { kind: 'map' }, values: str } } },
  retainKeysMergingList: { shape: { kind: 'list', listType: 'map', listMapKeys: ['name'], patchStrategy: 'merge,retainKeys', patchMergeKey: 'name' }, items: item },
  listOfLists: { shape: { kind: 'list', patchStrategy: 'merge' }, items: { shape: { kind: 'list' }, items: int } },
});
const schema = treeSchema(item);

const names = (...n: string[]) => n.map((name) => ({ name }));

describe('strategicMergePatch', () => {
  it.each([
    // maps
    { name: 'merges maps', original: { other: 'a' }, patch: { value: 'b' }, want: { other: 'a', value: 'b' } },
    { name: 'null deletes a key', original: { value: 'a', other: 'b' }, patch: { value: null }, want: { other: 'b' } },
    { name: 'null of an absent key is ignored', original: {}, patch: { value: null }, want: {} },
    { name: 'nulls inside a new value are dropped', original: {}, patch: { simpleMap: { a: '1', b: null } }, want: { simpleMap: { a: '1' } } },
    { name: 'a value of another type replaces', original: { simpleMap: { a: '1' } }, patch: { simpleMap: 'x' }, want: { simpleMap: 'x' } },
    { name: '$patch: replace on a map', original: { simpleMap: { a: '1' } }, patch: { simpleMap: { $patch: 'replace', b: '2' } }, want: { simpleMap: { b: '2' } } },
    { name: '$patch: delete on a map', original: { simpleMap: { a: '1' }, value: 'v' }, patch: { simpleMap: { $patch: 'delete' } }, want: { simpleMap: {}, value: 'v' } },
    { name: 'replace strategy', original: { replacingMap: { a: '1' } }, patch: { replacingMap: { b: '2' } }, want: { replacingMap: { b: '2' } } },
    // lists of maps with a merge key
    {
      name: 'merges list items by key, new items after, live order kept',
      original: { mergingList: [{ name: 'a', value: '1' }, { name: 'b', value: '2' }] },
      patch: { mergingList: [{ name: 'b', other: 'x' }, { name: 'c' }] },
      want: { mergingList: [{ name: 'a', value: '1' }, { name: 'b', value: '2', other: 'x' }, { name: 'c' }] },
    },
    { name: 'lists without merge strategy are replaced', original: { nonMergingList: names('a') }, patch: { nonMergingList: names('b') }, want: { nonMergingList: names('b') } },
    { name: '$patch: delete removes an item', original: { mergingList: names('a', 'b') }, patch: { mergingList: [{ name: 'a', $patch: 'delete' }] }, want: { mergingList: names('b') } },
    { name: '$patch: replace replaces the list', original: { mergingList: names('a', 'b') }, patch: { mergingList: [{ name: 'c' }, { $patch: 'replace' }] }, want: { mergingList: names('c') } },
    {
      name: 'items merge recursively',
      original: { mergingList: [{ name: 'a', simpleMap: { x: '1' } }] },
      patch: { mergingList: [{ name: 'a', simpleMap: { y: '2' } }] },
      want: { mergingList: [{ name: 'a', simpleMap: { x: '1', y: '2' } }] },
    },
    // lists of scalars with merge strategy
    { name: 'primitive merge lists union without duplicates', original: { mergingIntList: [1, 2] }, patch: { mergingIntList: [2, 3] }, want: { mergingIntList: [1, 2, 3] } },
    { name: 'primitive lists without strategy are replaced', original: { nonMergingIntList: [1, 2] }, patch: { nonMergingIntList: [3] }, want: { nonMergingIntList: [3] } },
    { name: '$deleteFromPrimitiveList', original: { mergingIntList: [1, 2, 3] }, patch: { '$deleteFromPrimitiveList/mergingIntList': [2] }, want: { mergingIntList: [1, 3] } },
    { name: '$deleteFromPrimitiveList of an absent list', original: {}, patch: { '$deleteFromPrimitiveList/mergingIntList': [2] }, want: {} },
    // $setElementOrder
    {
      name: '$setElementOrder reorders without content changes',
      original: { mergingList: names('a', 'b', 'c') },
      patch: { '$setElementOrder/mergingList': names('c', 'a', 'b') },
      want: { mergingList: names('c', 'a', 'b') },
    },
    {
      name: '$setElementOrder places a new item',
      original: { mergingList: names('a', 'b') },
      patch: { '$setElementOrder/mergingList': names('b', 'x', 'a'), mergingList: [{ name: 'x', value: '1' }] },
      want: { mergingList: [{ name: 'b' }, { name: 'x', value: '1' }, { name: 'a' }] },
    },
    {
      name: '$setElementOrder keeps server-only items at their live place',
      original: { mergingList: names('a', 'b', 'c', 'd') },
      patch: { '$setElementOrder/mergingList': names('d', 'b'), mergingList: [{ name: 'd', value: 'x' }] },
      want: { mergingList: [{ name: 'a' }, { name: 'c' }, { name: 'd', value: 'x' }, { name: 'b' }] },
    },
    {
      name: '$setElementOrder with a deletion (kubectl apply)',
      original: { mergingList: names('a', 'b', 'c') },
      patch: { '$setElementOrder/mergingList': names('c', 'a'), mergingList: [{ name: 'b', $patch: 'delete' }] },
      want: { mergingList: names('c', 'a') },
    },
    { name: '$setElementOrder of primitives', original: { mergingIntList: [1, 2, 3] }, patch: { '$setElementOrder/mergingIntList': [3, 1, 2] }, want: { mergingIntList: [3, 1, 2] } },
    {
      name: '$setElementOrder of a new list',
      original: {},
      patch: { '$setElementOrder/mergingList': names('b', 'a'), mergingList: [{ name: 'b', value: '1' }, { name: 'a', $patch: 'delete' }] },
      want: { mergingList: [{ name: 'b', value: '1' }] },
    },
    // $retainKeys
    {
      name: '$retainKeys clears unlisted keys',
      original: { retainKeysMap: { name: 'n', value: 'v', simpleMap: { a: '1' } } },
      patch: { retainKeysMap: { $retainKeys: ['name', 'simpleMap'], simpleMap: { b: '2' } } },
      want: { retainKeysMap: { name: 'n', simpleMap: { a: '1', b: '2' } } },
    },
    {
      name: '$retainKeys in list items',
      original: { retainKeysMergingList: [{ name: 'a', value: 'v', other: 'o' }] },
      patch: { retainKeysMergingList: [{ name: 'a', $retainKeys: ['name', 'other'], other: 'p' }] },
      want: { retainKeysMergingList: [{ name: 'a', other: 'p' }] },
    },
    { name: 'directives of a new value are applied, not stored', original: {}, patch: { retainKeysMap: { $retainKeys: ['name'], name: 'n' } }, want: { retainKeysMap: { name: 'n' } } },
    // schemaless data (custom resources would be refused; the algorithm itself merges like JSON merge patch)
    { name: 'deduced: maps merge, lists replace', schemaless: true, original: { m: { a: 1 }, l: [1, 2] }, patch: { m: { b: 2 }, l: [3] }, want: { m: { a: 1, b: 2 }, l: [3] } },
  ])('$name', ({ original, patch, want, schemaless }) => {
    const before = JSON.stringify([original, patch]);
    expect(strategicMergePatch(original, patch, schemaless ? DEDUCED_SCHEMA : schema)).toEqual(want);
    expect(JSON.stringify([original, patch])).toBe(before);
  });

  it.each([
    { name: 'not an object', original: {}, patch: [1], code: 400, message: 'invalid JSON document' },
    { name: 'unknown $patch in a map', original: { simpleMap: {} }, patch: { simpleMap: { $patch: 'merge' } }, code: 400, message: 'unknown patch type: merge in map: {"$patch":"merge"}' },
    { name: '$patch: merge in a list', original: { mergingList: names('a') }, patch: { mergingList: [{ $patch: 'merge' }] }, code: 400, message: 'merging lists cannot yet be specified in the patch' },
    { name: 'missing merge key', original: { mergingList: names('a') }, patch: { mergingList: [{ value: 'x' }] }, code: 400, message: 'map: {"value":"x"} does not contain declared merge key: name' },
    { name: 'bad $retainKeys', original: { retainKeysMap: {} }, patch: { retainKeysMap: { $retainKeys: ['name'], value: 'v' } }, code: 400, message: 'invalid patch format of retainKeys' },
    { name: '$retainKeys not a list', original: { retainKeysMap: {} }, patch: { retainKeysMap: { $retainKeys: 'name' } }, code: 400, message: 'invalid patch format of retainKeys' },
    { name: 'bad $setElementOrder key', original: {}, patch: { $setElementOrder: [] }, code: 400, message: 'invalid patch format of setElementOrder list' },
    { name: 'bad $deleteFromPrimitiveList key', original: {}, patch: { $deleteFromPrimitiveList: [] }, code: 400, message: 'invalid patch format of primitive list' },
    {
      name: '$setElementOrder against the patch order',
      original: { mergingList: names('a', 'b') },
      patch: { '$setElementOrder/mergingList': names('a', 'b'), mergingList: names('b', 'a') },
      code: 400,
      message: expect.stringContaining("doesn't match $setElementOrder list"),
    },
    { name: 'lists of lists', original: { listOfLists: [[1]] }, patch: { listOfLists: [[2]] }, code: 422, message: 'the server rejected our request due to an error in our request' },
    { name: 'mixed item types', original: { mergingIntList: [1] }, patch: { mergingIntList: ['a'] }, code: 400, message: expect.stringContaining('list element types are not identical') },
  ])('rejects $name', ({ original, patch, code, message }) => {
    let err: unknown;
    try {
      strategicMergePatch(original, patch, schema);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StatusError);
    expect(err).toMatchObject({ code, message });
  });
});
