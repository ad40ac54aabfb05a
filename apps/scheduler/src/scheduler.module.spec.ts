import 'reflect-metadata';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeObject } from '@orch/apimachinery';
import { startTestComponent, testComponentContext } from '@orch/component';
import { ApiPeer, eventually, removeDir, tempDir } from '@orch/testing';
import { SCHEDULER_FLAGS, schedulerAppOptions, type SchedulerComponent } from './options';
import { SchedulerModule } from './scheduler.module';

/** The scheduler's application on an API peer, started with `args` as main.ts starts it. */
async function start(peer: ApiPeer, args: string[]) {
  const component: SchedulerComponent = testComponentContext('scheduler', SCHEDULER_FLAGS, args, { server: peer.url });
  return startTestComponent(component, SchedulerModule.forRoot(schedulerAppOptions(component)));
}

/** Serves `pods/binding` as the gateway does: sets the pod's spec.nodeName. */
function serveBindings(peer: ApiPeer): void {
  peer.intercept((req) => {
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/binding$/.exec(req.path);
    if (!m || req.method !== 'POST') return undefined;
    const pod = peer.stored('/v1/pods').find((p) => p.metadata.namespace === m[1] && p.metadata.name === m[2]) as KubeObject & { spec: Record<string, unknown> };
    const target = (JSON.parse(req.body) as { target: { name: string } }).target.name;
    peer.put('/v1/pods', { ...pod, spec: { ...pod.spec, nodeName: target } });
    return { status: 201, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } };
  });
}

const node = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  status: { allocatable: { cpu: '4', memory: '8Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] },
});
const pod = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '1' } } }] },
  status: { phase: 'Pending' },
});
const nodeOf = (peer: ApiPeer, name: string) => (peer.stored('/v1/pods').find((p) => p.metadata.name === name)?.['spec'] as { nodeName?: string } | undefined)?.nodeName;

describe('SchedulerModule', () => {
  let peer: ApiPeer;
  let dir: string;
  beforeEach(async () => {
    peer = await ApiPeer.start();
    serveBindings(peer);
    dir = await tempDir('scheduler-module');
  });
  afterEach(async () => {
    await peer.stop();
    await removeDir(dir);
  });

  it('binds a pending pod to the node that fits and records the Scheduled event, until the run signal aborts', async () => {
    peer.put('/v1/nodes', node('small'));
    peer.put('/v1/nodes', { ...node('big'), status: { allocatable: { cpu: '64', memory: '64Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] } });
    peer.put('/v1/pods', { ...pod('p'), spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '8' } } }] } });
    const scheduler = await start(peer, []);
    try {
      await eventually('pod bound', () => nodeOf(peer, 'p'));
      expect(nodeOf(peer, 'p')).toBe('big');
      await eventually('Scheduled event', () => peer.stored('events.orch.io/v1/events').find((e) => e['reason'] === 'Scheduled'));
    } finally {
      await scheduler.stop();
    }
  });

  it('schedules only the profiles --config names', async () => {
    const config = join(dir, 'config.yaml');
    await writeFile(config, 'apiVersion: orch.io/v1\nkind: SchedulerConfiguration\nprofiles:\n- schedulerName: custom\n');
    peer.put('/v1/nodes', node('n'));
    peer.put('/v1/pods', pod('default-profile'));
    peer.put('/v1/pods', { ...pod('custom-profile'), spec: { schedulerName: 'custom', containers: [{ name: 'c', image: 'busybox' }] } });
    const scheduler = await start(peer, [`--config=${config}`]);
    try {
      await eventually('custom pod bound', () => nodeOf(peer, 'custom-profile'));
      expect(nodeOf(peer, 'default-profile')).toBeUndefined();
    } finally {
      await scheduler.stop();
    }
  });

  it.each([
    { name: 'an unknown plugin', text: 'apiVersion: orch.io/v1\nkind: SchedulerConfiguration\nprofiles:\n- schedulerName: s\n  plugins:\n    filter:\n      enabled: [{name: NoSuchPlugin}]\n', want: 'NoSuchPlugin' },
    { name: 'an unknown field', text: 'apiVersion: orch.io/v1\nkind: SchedulerConfiguration\nfoo: 1\n', want: 'foo: Invalid value: unknown field' },
  ])('fails to start with a --config naming $name', async ({ text, want }) => {
    const config = join(dir, 'bad.yaml');
    await writeFile(config, text);
    await expect(start(peer, [`--config=${config}`])).rejects.toThrow(want);
  });
});
