import { injectResourceVersion } from './generic-store';

describe('injectResourceVersion (list fast path)', () => {
  it.each([
    { name: 'metadata with fields', json: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"metadata":{"x":1}}}', want: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '7' }, data: { metadata: { x: 1 } } } },
    { name: 'empty metadata', json: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}', want: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { resourceVersion: '7' } } },
  ])('$name', ({ json, want }) => {
    expect(JSON.parse(injectResourceVersion(json, 7)!)).toEqual(want);
  });

  it.each([
    { name: 'not the canonical order', json: '{"metadata":{"name":"a"},"apiVersion":"v1","kind":"ConfigMap"}' },
    { name: 'no metadata', json: '{"apiVersion":"v1","kind":"ConfigMap"}' },
  ])('falls back (undefined): $name', ({ json }) => {
    expect(injectResourceVersion(json, 7)).toBeUndefined();
  });
});
