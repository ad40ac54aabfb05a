import type { KubeObject } from '@orch/apimachinery';
import { storedJson } from './stored-objects';

/** The stored form spelled out: apiVersion, kind, metadata without resourceVersion, then the rest in order. */
function spelledOut(obj: Record<string, unknown>): string {
  const { apiVersion, kind, metadata, ...rest } = obj as { apiVersion: unknown; kind: unknown; metadata: Record<string, unknown> };
  const meta = Object.fromEntries(Object.entries(metadata).filter(([k]) => k !== 'resourceVersion'));
  return JSON.stringify({ apiVersion, kind, metadata: meta, ...rest });
}

describe('storedJson: the stored text of an object', () => {
  it.each([
    // Already in the stored order: written as it is.
    { name: 'a decoded body', obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'n' }, data: { k: 'v' } } },
    { name: 'integer-like keys', obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', labels: { '10': 'a', '2': 'b' } }, data: { '10': 'a', '2': 'b' } } },
    { name: 'an undefined resourceVersion', obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: undefined } } },
    // Not in the stored order: reordered.
    { name: 'a resourceVersion in metadata', obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '7' }, data: {} } },
    { name: 'kind first', obj: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a' } } },
    { name: 'data before metadata', obj: { apiVersion: 'v1', kind: 'ConfigMap', data: { k: 'v' }, metadata: { name: 'a' } } },
    { name: 'metadata first', obj: { metadata: { name: 'a' }, apiVersion: 'v1', kind: 'ConfigMap', spec: {} } },
    { name: 'a member before apiVersion', obj: { spec: { x: 1 }, apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } } },
  ])('$name: byte for byte the spelled-out stored form', ({ obj }) => {
    expect(storedJson(obj as unknown as KubeObject)).toBe(spelledOut(obj));
  });
});
