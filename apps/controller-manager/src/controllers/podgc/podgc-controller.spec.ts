import type { Pod } from '../../framework/api';
import { eventually, startHarness, storedObject, type Harness } from '../../framework/testing/harness';
import { PodGcController } from './podgc-controller';

const pod = (name: string, p: { phase?: string; created?: string; node?: string } = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', uid: `u-${name}`, creationTimestamp: p.created ?? '2026-01-01T00:00:00Z' },
  spec: { nodeName: p.node, containers: [] },
  status: { phase: p.phase ?? 'Running' },
});
const exists = (h: Harness, name: string) => storedObject(h.peer, '/v1/pods', name, 'ns') !== undefined;

describe('PodGcController against an API peer', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ terminatedPodGcThreshold: 1 });
  });
  afterEach(() => h.stop());

  it('collects terminated pods above the threshold and pods of deleted nodes', async () => {
    h.peer.put('/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
    h.peer.put('/v1/pods', pod('done-old', { phase: 'Succeeded', created: '2026-01-01T00:00:00Z', node: 'n1' }));
    h.peer.put('/v1/pods', pod('done-new', { phase: 'Succeeded', created: '2026-01-02T00:00:00Z', node: 'n1' }));
    h.peer.put('/v1/pods', pod('running', { node: 'n1' }));
    h.peer.put('/v1/pods', pod('orphan', { node: 'vanished' }));
    const started = Date.now();
    h.start(new PodGcController(h.ctx, { periodMs: 50, quarantineMs: 300 }));

    await eventually('oldest terminated pod deleted', () => (exists(h, 'done-old') ? undefined : true));
    expect(exists(h, 'done-new')).toBe(true);
    await eventually('orphan deleted', () => (exists(h, 'orphan') ? undefined : true));
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    const orphanStatus = JSON.parse(h.peer.requestsTo('PUT', '/api/v1/namespaces/ns/pods/orphan/status')[0].body) as Pod;
    expect(orphanStatus.status).toMatchObject({ phase: 'Failed', conditions: [expect.objectContaining({ type: 'DisruptionTarget', reason: 'DeletionByPodGC' })] });
    const del = h.peer.requestsTo('DELETE', '/api/v1/namespaces/ns/pods/orphan')[0];
    expect(JSON.parse(del.body)).toMatchObject({ gracePeriodSeconds: 0, preconditions: { uid: 'u-orphan' } });
    expect(exists(h, 'running')).toBe(true);
  });
});
