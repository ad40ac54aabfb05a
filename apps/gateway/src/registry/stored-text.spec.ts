import { parseFieldSelector, parseLabelSelector } from '@orch/apimachinery';
import { StoredText, selectsOnMetadata } from './stored-text';

/** What the object path serves: the stored text parsed, its resourceVersion set, written again. */
function parsed(stored: string, revision: number): string {
  const obj = JSON.parse(stored) as { metadata: Record<string, unknown> };
  obj.metadata.resourceVersion = String(revision);
  return JSON.stringify(obj);
}

const stored = (metadata: Record<string, unknown>, rest: Record<string, unknown> = {}) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata, ...rest });

describe('StoredText: a watch event object from the stored text', () => {
  it.each([
    ['empty metadata', stored({})],
    ['a name only', stored({ name: 'a' })],
    ['labels, annotations and data after metadata', stored({ name: 'a', namespace: 'ns', labels: { app: 'x', 'k8s.io/part-of': 'y' }, annotations: { note: '{"metadata":{}}' } }, { data: { a: '1' } })],
    ['escapes and quotes in values', stored({ name: 'a', annotations: { q: 'say "hi" \\', nl: 'a\nb', u: '\u2028é😀\ud800' } }, { data: { 'x"y': '\\"' } })],
    ['nested arrays (managedFields, ownerReferences, finalizers)', stored({ name: 'a', finalizers: ['x/y'], ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'r', uid: 'u', controller: true }], managedFields: [{ manager: 'm', operation: 'Apply', fieldsV1: { 'f:data': { 'f:a': {}, '.': {} } }, time: '2024-01-01T00:00:00Z' }] })],
    ['numbers, booleans and null members', stored({ name: 'a', generation: 3, deletionGracePeriodSeconds: 0, labels: null, x: true, y: 1.5e300 })],
    ['integer-like keys', stored({ name: 'a', labels: { '10': 'a', '2': 'b' } }, { data: { '10': 'a', '2': 'b', z: '' } })],
    ['a large object', stored({ name: 'big', labels: { a: 'b' } }, { data: { v: 'x'.repeat(300_000) } })],
  ])('%s: byte for byte what the parsed object writes', (_name, text) => {
    expect(StoredText.of(text, 42)?.text).toBe(parsed(text, 42));
  });

  it.each([
    ['not the stored shape (kind first)', JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a' } })],
    ['whitespace (not compact)', JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }, null, 1)],
    ['a resourceVersion already in metadata', stored({ name: 'a', resourceVersion: '5' })],
    ['an escaped member name', '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"n\\u0061me":"a"}}'],
    ['metadata that does not end', '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"'],
    ['an unterminated string', '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a}}'],
    ['no metadata', '{"apiVersion":"v1","kind":"ConfigMap","data":{}}'],
  ])('%s: undefined (the caller parses)', (_name, text) => {
    expect(StoredText.of(text, 1)).toBeUndefined();
  });

  const obj = stored({ name: 'web-1', namespace: 'prod', labels: { app: 'web', tier: 'front' } }, { data: { labels: 'app=db' } });
  it.each([
    ['', '', true],
    ['app=web', '', true],
    ['app=db', '', false],
    ['app in (web,api),tier', '', true],
    ['!tier', '', false],
    ['', 'metadata.name=web-1', true],
    ['', 'metadata.name!=web-1', false],
    ['', 'metadata.namespace=prod,metadata.name=web-1', true],
    ['app=web', 'metadata.namespace=dev', false],
  ])('labels %j, fields %j: matches %s', (labels, fields, want) => {
    expect(StoredText.of(obj, 1)!.matches(parseLabelSelector(labels), parseFieldSelector(fields), true)).toBe(want);
  });

  it.each([
    ['no labels member', 'app', false, stored({ name: 'a' })],
    ['no labels member, a negated selector', '!app', true, stored({ name: 'a' })],
    ['labels: null', 'app!=x', true, stored({ name: 'a', labels: null })],
  ])('%s: %j matches: %s', (_name, selector, want, text) => {
    expect(StoredText.of(text, 1)!.matches(parseLabelSelector(selector), parseFieldSelector(''), true)).toBe(want);
  });

  it.each([
    ['', true],
    ['metadata.name=a,metadata.namespace=b', true],
    ['spec.nodeName=n', false],
    ['metadata.name=a,status.phase=Running', false],
  ])('field selector %j reads off the stored metadata: %s', (fields, want) => {
    expect(selectsOnMetadata(parseFieldSelector(fields))).toBe(want);
  });
});
