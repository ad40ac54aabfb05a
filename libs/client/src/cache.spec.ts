import { Indexer, NAMESPACE_INDEX, deepFreeze, namespaceIndexFunc } from './cache';
import type { KubeObject } from '@orch/apimachinery';
import { objectKey, splitObjectKey } from './types';

interface Pod extends KubeObject {
  spec?: { nodeName?: string; volumes?: string[] };
}
const pod = (ns: string, name: string, nodeName?: string, volumes?: string[]): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns }, spec: { nodeName, volumes } });

function indexer(): Indexer<Pod> {
  const ix = new Indexer<Pod>();
  ix.addIndexer(NAMESPACE_INDEX, namespaceIndexFunc);
  ix.addIndexer('node', (p) => (p.spec?.nodeName ? [p.spec.nodeName] : []));
  ix.addIndexer('volume', (p) => p.spec?.volumes ?? []);
  return ix;
}

describe('Indexer', () => {
  // Each row applies writes, then looks up one index value.
  it.each([
    { name: 'by namespace', writes: [pod('a', 'p1'), pod('b', 'p2'), pod('a', 'p3')], deletes: [], index: NAMESPACE_INDEX, value: 'a', want: ['a/p1', 'a/p3'] },
    { name: 'update moves between values', writes: [pod('a', 'p1', 'n1'), pod('a', 'p1', 'n2')], deletes: [], index: 'node', value: 'n1', want: [] },
    { name: 'update lands on new value', writes: [pod('a', 'p1', 'n1'), pod('a', 'p1', 'n2')], deletes: [], index: 'node', value: 'n2', want: ['a/p1'] },
    { name: 'delete removes from index', writes: [pod('a', 'p1', 'n1'), pod('a', 'p2', 'n1')], deletes: ['a/p1'], index: 'node', value: 'n1', want: ['a/p2'] },
    { name: 'multi-valued index', writes: [pod('a', 'p1', undefined, ['v1', 'v2']), pod('a', 'p2', undefined, ['v2'])], deletes: [], index: 'volume', value: 'v2', want: ['a/p1', 'a/p2'] },
    { name: 'no values, not indexed', writes: [pod('a', 'p1')], deletes: [], index: 'node', value: '', want: [] },
    { name: 'unknown value', writes: [pod('a', 'p1', 'n1')], deletes: [], index: 'node', value: 'zz', want: [] },
  ])('$name', ({ writes, deletes, index, value, want }) => {
    const ix = indexer();
    for (const p of writes) ix.set(objectKey(p), p);
    for (const k of deletes) ix.delete(k);
    expect(ix.indexKeys(index, value).sort()).toEqual(want);
    expect(ix.byIndex(index, value).map(objectKey).sort()).toEqual(want);
  });

  it('drops empty index buckets', () => {
    const ix = indexer();
    ix.set('a/p1', pod('a', 'p1', 'n1'));
    ix.delete('a/p1');
    expect(ix.indexValues('node')).toEqual([]);
    expect(ix.size).toBe(0);
  });

  it('indexes existing objects when an indexer is added later', () => {
    const ix = new Indexer<Pod>();
    ix.set('a/p1', pod('a', 'p1', 'n1'));
    ix.addIndexer('node', (p) => (p.spec?.nodeName ? [p.spec.nodeName] : []));
    expect(ix.indexKeys('node', 'n1')).toEqual(['a/p1']);
    expect(() => ix.addIndexer('node', () => [])).toThrow(/already exists/);
    expect(() => ix.byIndex('nope', 'x')).toThrow(/does not exist/);
  });

  it('handles 20k objects with O(1) lookups', () => {
    const ix = indexer();
    const t0 = Date.now();
    for (let i = 0; i < 20_000; i++) ix.set(`ns${i % 10}/p${i}`, pod(`ns${i % 10}`, `p${i}`, `n${i % 100}`));
    for (let i = 0; i < 20_000; i++) ix.set(`ns${i % 10}/p${i}`, pod(`ns${i % 10}`, `p${i}`, `n${(i + 1) % 100}`));
    expect(ix.byIndex('node', 'n1')).toHaveLength(200);
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});

describe('keys and freezing', () => {
  it.each([
    { name: 'namespaced', obj: { metadata: { name: 'p', namespace: 'ns' } }, want: 'ns/p', split: { namespace: 'ns', name: 'p' } },
    { name: 'cluster-scoped', obj: { metadata: { name: 'n1' } }, want: 'n1', split: { name: 'n1' } },
  ])('objectKey $name', ({ obj, want, split }) => {
    expect(objectKey(obj)).toBe(want);
    expect(splitObjectKey(want)).toEqual(split);
  });

  it('deepFreeze freezes nested objects and arrays', () => {
    const o = deepFreeze({ metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c' }] } });
    expect([Object.isFrozen(o), Object.isFrozen(o.metadata.labels), Object.isFrozen(o.spec.containers), Object.isFrozen(o.spec.containers[0])]).toEqual([true, true, true, true]);
  });
});
