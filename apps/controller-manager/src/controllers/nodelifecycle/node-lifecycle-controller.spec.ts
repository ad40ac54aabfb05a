import { formatMicroTime, formatTime, parseTime } from '@orch/apimachinery';
import type { Lease, Node, Pod, Toleration } from '../../framework/api';
import { eventually, startHarness, storedObject, type Harness } from '../../framework/testing/harness';
import { NodeLifecycleController } from './node-lifecycle-controller';

const node = (name: string): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: formatTime(Date.now()), lastTransitionTime: formatTime(Date.now()) }] },
});
const lease = (name: string): Lease => ({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name, namespace: 'orch-node-lease' }, spec: { holderIdentity: name, renewTime: formatMicroTime(Date.now() * 1000) } });
const pod = (name: string, nodeName: string, tolerations: Toleration[] = []): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', uid: `u-${name}` },
  spec: { nodeName, containers: [{ name: 'c' }], tolerations },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});
const unreachableFor = (seconds?: number): Toleration => ({ key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', ...(seconds === undefined ? {} : { tolerationSeconds: seconds }) });
const stored = <T extends Pod | Node>(h: Harness, gvr: string, name: string, ns?: string) => storedObject<T>(h.peer, gvr, name, ns);

describe('NodeLifecycleController against an API peer', () => {
  let h: Harness;
  let renewer: NodeJS.Timeout | undefined;
  beforeEach(async () => {
    h = await startHarness({ nodeMonitorGracePeriodMs: 600, nodeMonitorPeriodMs: 100 });
  });
  afterEach(async () => {
    clearInterval(renewer);
    await h.stop();
  });

  it('taints a node whose lease stops and evicts its pods per their tolerations', async () => {
    for (const n of ['alive', 'dead']) {
      h.peer.put('/v1/nodes', node(n));
      h.peer.put('coordination.orch.io/v1/leases', lease(n));
    }
    renewer = setInterval(() => h.peer.put('coordination.orch.io/v1/leases', lease('alive')), 100);
    h.peer.put('/v1/pods', pod('evict-now', 'dead'));
    h.peer.put('/v1/pods', pod('evict-later', 'dead', [unreachableFor(1)]));
    h.peer.put('/v1/pods', pod('stay', 'dead', [unreachableFor()]));
    h.peer.put('/v1/pods', pod('safe', 'alive'));
    h.start(new NodeLifecycleController(h.ctx));

    const dead = await eventually('dead node tainted', () => {
      const n = stored<Node>(h, '/v1/nodes', 'dead');
      return n?.spec?.taints?.some((t) => t.effect === 'NoExecute') ? n : undefined;
    });
    expect(dead.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown' });
    const taint = dead.spec?.taints?.find((t) => t.effect === 'NoExecute');
    expect(taint?.key).toBe('node.orch.io/unreachable');
    expect(dead.spec?.taints?.map((t) => `${t.key}:${t.effect}`)).toEqual(['node.orch.io/unreachable:NoSchedule', 'node.orch.io/unreachable:NoExecute']);

    await eventually('intolerant pod evicted', () => (stored(h, '/v1/pods', 'evict-now', 'ns') ? undefined : true));
    expect(stored(h, '/v1/pods', 'evict-later', 'ns')).toBeDefined();
    await eventually('pod evicted after tolerationSeconds', () => (stored(h, '/v1/pods', 'evict-later', 'ns') ? undefined : true), 4000);
    // timeAdded (whole seconds) + tolerationSeconds had passed when it went.
    expect(Date.now()).toBeGreaterThanOrEqual(parseTime(taint?.timeAdded ?? '') + 1000);

    const evictionStatus = h.peer.requestsTo('PUT', '/api/v1/namespaces/ns/pods/evict-now/status').map((r) => JSON.parse(r.body) as Pod);
    expect(evictionStatus.at(-1)?.status?.conditions).toContainEqual(expect.objectContaining({ type: 'DisruptionTarget', reason: 'DeletionByTaintManager' }));
    expect(stored<Pod>(h, '/v1/pods', 'stay', 'ns')?.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');
    expect(stored<Pod>(h, '/v1/pods', 'safe', 'ns')?.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(stored<Node>(h, '/v1/nodes', 'alive')?.spec?.taints ?? []).toEqual([]);
  });

  it('does not add NoExecute taints when every node is down (master disruption)', async () => {
    h.peer.put('/v1/nodes', node('only'));
    h.peer.put('coordination.orch.io/v1/leases', lease('only'));
    h.peer.put('/v1/pods', pod('p', 'only'));
    h.start(new NodeLifecycleController(h.ctx));
    const n = await eventually('node marked', () => {
      const x = stored<Node>(h, '/v1/nodes', 'only');
      return x?.spec?.taints?.length ? x : undefined;
    });
    expect(n.spec?.taints?.map((t) => `${t.key}:${t.effect}`)).toEqual(['node.orch.io/unreachable:NoSchedule']);
    await new Promise((r) => setTimeout(r, 300));
    expect(stored(h, '/v1/pods', 'p', 'ns')).toBeDefined();
  });
});
