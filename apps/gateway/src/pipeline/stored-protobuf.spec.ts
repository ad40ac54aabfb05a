import { ProtobufError, decodeProtobuf, encodeProtobuf } from '@orch/api';
import { StoredProtobuf } from './stored-protobuf';
import { servedObject as served, storedConfigMap as stored } from './stored-fixture';

const same = (apiVersion: string) => apiVersion;

describe('StoredProtobuf', () => {
  it.each([
    { name: 'one object', kvs: [stored('a', 5)] },
    { name: 'non-ASCII data', kvs: [stored('b', 6, { 'ключ': 'значение'.repeat(40) })] },
  ])('a GET body equals encodeProtobuf of the served object: $name', ({ kvs }) => {
    const cache = new StoredProtobuf();
    for (const kv of kvs) expect(cache.object(kv, same).toString('hex')).toBe(encodeProtobuf(served(kv)).toString('hex'));
  });

  it.each([
    { name: 'three items', items: [stored('a', 5), stored('b', 6), stored('c', 7)], metadata: { resourceVersion: '9' } },
    { name: 'a page with a continue token', items: [stored('a', 5)], metadata: { resourceVersion: '9', continue: 'tok', remainingItemCount: 2 } },
    { name: 'no items', items: [], metadata: { resourceVersion: '9' } },
  ])('a list body equals encodeProtobuf of the served list: $name', ({ items, metadata }) => {
    const head = { apiVersion: 'v1', kind: 'ConfigMapList', metadata };
    const body = Buffer.concat([...new StoredProtobuf().list({ ...head, items }, 64)]);
    expect(body.toString('hex')).toBe(encodeProtobuf({ ...head, items: items.map(served) }).toString('hex'));
    expect(decodeProtobuf(body)).toEqual({ ...head, items: items.map(served) });
  });

  it('encodes a stored revision once: the same key and revision reuse the message, a new revision replaces it', () => {
    const cache = new StoredProtobuf();
    const first = cache.object(stored('a', 5, { v: '1' }), same);
    // Same key and revision name the same stored bytes: the kept message answers.
    expect(cache.object(stored('a', 5, { v: 'other text' }), same)).toEqual(first);
    const size = cache.size;
    const next = cache.object(stored('a', 6, { v: '2' }), same);
    expect(decodeProtobuf(next)).toMatchObject({ metadata: { resourceVersion: '6' }, data: { v: '2' } });
    expect(cache.size).toBe(size);
  });

  it('keeps at most maxBytes of messages, dropping the ones encoded longest ago', () => {
    const probe = new StoredProtobuf();
    probe.object(stored('x0', 1), same);
    const one = probe.size;
    const cache = new StoredProtobuf(one * 3);
    for (let i = 0; i < 10; i++) cache.object(stored(`x${i}`, i + 1), same);
    expect(cache.size).toBeLessThanOrEqual(one * 3);
    expect(cache.size).toBeGreaterThan(one * 2);
    // x9 is still kept (a changed text at the same revision answers the kept message); x0 is not.
    expect(decodeProtobuf(cache.object(stored('x9', 10, { a: 'changed' }), same))).toMatchObject({ data: { a: 'b' } });
    expect(decodeProtobuf(cache.object(stored('x0', 1, { a: 'changed' }), same))).toMatchObject({ data: { a: 'changed' } });
  });

  it('names the envelope in the group asked for (a *.k8s.io alias)', () => {
    const kv = { key: '/registry/rbac/roles/default/r', value: JSON.stringify({ apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: { name: 'r' } }), createRevision: 3, modRevision: 3 };
    const body = new StoredProtobuf().object(kv, (v) => v.replace('orch.io', 'k8s.io'));
    expect(decodeProtobuf(body)).toMatchObject({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'r', resourceVersion: '3' } });
  });

  it('a stored value that does not fit its schema is a ProtobufError (the encoder then answers as for any body)', () => {
    const kv = { ...stored('bad', 4), value: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bad' }, data: { a: 5 } }) };
    expect(() => new StoredProtobuf().object(kv, same)).toThrow(ProtobufError);
  });
});
