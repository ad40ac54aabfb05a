import type { KubeObject } from '@orch/apimachinery';
import { namespaceDecision } from './namespace-lifecycle';

const ns = (phase?: string, deleting = false): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team', ...(deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}) }, ...(phase ? { status: { phase } } : {}) }) as KubeObject;
const cm = { group: '', version: 'v1', resource: 'configmaps' };
const namespaces = { group: '', version: 'v1', resource: 'namespaces' };

describe('NamespaceLifecycle', () => {
  it.each([
    { name: 'create in an active namespace', a: { operation: 'CREATE', resource: cm, namespace: 'team', name: 'x' }, found: ns('Active'), want: undefined },
    { name: 'create in a missing namespace: 404', a: { operation: 'CREATE', resource: cm, namespace: 'team', name: 'x' }, found: undefined, want: [404, 'namespaces "team" not found'] },
    { name: 'update in a missing namespace: 404', a: { operation: 'UPDATE', resource: cm, namespace: 'team', name: 'x' }, found: undefined, want: [404, 'namespaces "team" not found'] },
    { name: 'create in a terminating namespace: 403', a: { operation: 'CREATE', resource: cm, namespace: 'team', name: 'x' }, found: ns('Terminating'), want: [403, 'configmaps "x" is forbidden: unable to create new content in namespace team because it is being terminated'] },
    { name: 'create while deletionTimestamp is set: 403', a: { operation: 'CREATE', resource: cm, namespace: 'team', name: 'x' }, found: ns(undefined, true), want: [403, 'configmaps "x" is forbidden: unable to create new content in namespace team because it is being terminated'] },
    { name: 'update in a terminating namespace is allowed', a: { operation: 'UPDATE', resource: cm, namespace: 'team', name: 'x' }, found: ns('Terminating'), want: undefined },
    { name: 'delete in a missing namespace is allowed', a: { operation: 'DELETE', resource: cm, namespace: 'team', name: 'x' }, found: undefined, want: undefined },
    { name: 'cluster-scoped objects are not checked', a: { operation: 'CREATE', resource: { group: '', version: 'v1', resource: 'nodes' }, namespace: '', name: 'n' }, found: undefined, want: undefined },
    { name: 'default cannot be deleted', a: { operation: 'DELETE', resource: namespaces, namespace: '', name: 'default' }, found: undefined, want: [403, 'namespaces "default" is forbidden: this namespace may not be deleted'] },
    { name: 'orch-system cannot be deleted', a: { operation: 'DELETE', resource: namespaces, namespace: '', name: 'orch-system' }, found: undefined, want: [403, 'namespaces "orch-system" is forbidden: this namespace may not be deleted'] },
    { name: 'orch-public cannot be deleted', a: { operation: 'DELETE', resource: namespaces, namespace: '', name: 'orch-public' }, found: undefined, want: [403, 'namespaces "orch-public" is forbidden: this namespace may not be deleted'] },
    { name: 'other namespaces can be deleted', a: { operation: 'DELETE', resource: namespaces, namespace: '', name: 'team' }, found: undefined, want: undefined },
  ] as const)('$name', ({ a, found, want }) => {
    const err = namespaceDecision(a, found);
    expect(err ? [err.code, err.message] : undefined).toEqual(want);
  });

  it('names the terminating namespace in a cause', () => {
    const err = namespaceDecision({ operation: 'CREATE', resource: cm, namespace: 'team', name: 'x' }, ns('Terminating'));
    expect(err?.details?.causes).toEqual([{ reason: 'NamespaceTerminating', message: 'namespace team is being terminated', field: 'metadata.namespace' }]);
  });
});
