import type { Namespace } from '../../framework/api';
import { eventually, serveNamespaceSubresources, startHarness, storedObject, type Harness } from '../../framework/testing/harness';
import { NamespaceController } from './namespace-controller';

const terminating = (name: string, finalizers = ['orch']): Namespace => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, deletionTimestamp: '2026-01-01T00:00:00Z' },
  spec: { finalizers },
  status: { phase: 'Terminating' },
});

describe('NamespaceController against an API peer', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
    serveNamespaceSubresources(h.peer);
  });
  afterEach(() => h.stop());

  it('deletes all content of a terminating namespace, then finalizes and deletes it', async () => {
    h.peer.put('/v1/namespaces', terminating('doomed'));
    h.peer.put('/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kept' }, spec: { finalizers: ['orch'] }, status: { phase: 'Active' } });
    h.peer.put('/v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'doomed' } });
    h.peer.put('/v1/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'b', namespace: 'doomed' } });
    h.peer.put('apps/v1/deployments', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'c', namespace: 'doomed' } });
    h.peer.put('/v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'kept' } });
    h.start(new NamespaceController(h.ctx));

    await eventually('namespace removed', () => (storedObject(h.peer, '/v1/namespaces', 'doomed') ? undefined : true));
    expect(h.peer.stored('/v1/configmaps').map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['kept/a']);
    expect(h.peer.stored('/v1/secrets')).toEqual([]);
    expect(h.peer.stored('apps/v1/deployments')).toEqual([]);
    const finalize = h.peer.requestsTo('PUT', '/api/v1/namespaces/doomed/finalize');
    expect(finalize).toHaveLength(1);
    expect(JSON.parse(finalize[0].body).spec.finalizers).toEqual([]);
    expect(h.peer.requestsTo('DELETE', '/api/v1/namespaces/doomed/configmaps')).toHaveLength(1);
    // The status carries the upstream conditions, all "ok".
    const statusWrites = h.peer.requestsTo('PUT', '/api/v1/namespaces/doomed/status').map((r) => JSON.parse(r.body) as Namespace);
    expect(statusWrites.at(-1)?.status?.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual([
      'NamespaceDeletionDiscoveryFailure=False',
      'NamespaceDeletionGroupVersionParsingFailure=False',
      'NamespaceDeletionContentFailure=False',
      'NamespaceContentRemaining=False',
      'NamespaceFinalizersRemaining=False',
    ]);
    expect(storedObject(h.peer, '/v1/namespaces', 'kept')).toBeDefined();
  });

  it('leaves a namespace without the orch finalizer alone', async () => {
    h.peer.put('/v1/namespaces', terminating('other', ['example.com/custom']));
    h.peer.put('/v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'other' } });
    h.start(new NamespaceController(h.ctx));
    await eventually('namespace read', () => (h.peer.requestsTo('GET', '/api/v1/namespaces/other').length > 0 ? true : undefined));
    await new Promise((r) => setTimeout(r, 100));
    expect(h.peer.stored('/v1/configmaps')).toHaveLength(1);
    expect(h.peer.requestsTo('PUT', '/api/v1/namespaces/other/finalize')).toHaveLength(0);
  });
});
