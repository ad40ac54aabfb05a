import { BUILTIN_RESOURCES } from '@orch/api';
import { podStatusReason } from './core/pods';
import { tableFor } from './index';

const def = (group: string, resource: string) => BUILTIN_RESOURCES.find((r) => r.group === group && r.resource === resource)!;
// 30 minutes ago prints as `30m` whatever the seconds (5 minutes would print `5m1s` a second later).
const created = new Date(Date.now() - 30 * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');

describe('table columns', () => {
  it.each([
    {
      name: 'running pod',
      def: def('', 'pods'),
      obj: {
        metadata: { name: 'p', creationTimestamp: created },
        spec: { nodeName: 'n1', containers: [{ name: 'a' }, { name: 'b' }] },
        status: { phase: 'Running', podIP: '10.0.0.1', containerStatuses: [{ ready: true, restartCount: 1, state: { running: {} } }, { ready: false, restartCount: 0, state: { running: {} } }] },
      },
      want: ['p', '1/2', 'Running', '1', '30m', '10.0.0.1', 'n1', '<none>', '<none>'],
    },
    {
      name: 'deployment',
      def: def('apps', 'deployments'),
      obj: { metadata: { name: 'd', creationTimestamp: created }, spec: { replicas: 3, selector: { matchLabels: { app: 'x' } }, template: { spec: { containers: [{ name: 'c', image: 'img:1' }] } } }, status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 } },
      want: ['d', '2/3', 3, 2, '30m', 'c', 'img:1', 'app=x'],
    },
    {
      name: 'service',
      def: def('', 'services'),
      obj: { metadata: { name: 's', creationTimestamp: created }, spec: { type: 'NodePort', clusterIP: '10.96.0.10', ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }], selector: { app: 'x' } } },
      want: ['s', 'NodePort', '10.96.0.10', '<none>', '80:30080/TCP', '30m', 'app=x'],
    },
    {
      name: 'node',
      def: def('', 'nodes'),
      obj: { metadata: { name: 'n', creationTimestamp: created }, spec: { unschedulable: true }, status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kubeletVersion: 'v1.32.0' } } },
      want: ['n', 'Ready,SchedulingDisabled', '<none>', '30m', 'v1.32.0', '<none>', '<none>', '<none>', '<none>', '<none>'],
    },
    { name: 'configmap', def: def('', 'configmaps'), obj: { metadata: { name: 'c', creationTimestamp: created }, data: { a: '1', b: '2' } }, want: ['c', 2, '30m'] },
  ])('$name', ({ def: d, obj, want }) => {
    const t = tableFor(d);
    expect(t.cells(obj as never)).toEqual(want);
    expect(t.columns).toHaveLength(want.length);
  });

  it('kinds without their own columns get the SPEC default (Name, Created At)', () => {
    expect(tableFor(def('storage.orch.io', 'storageclasses')).columns.map((c) => c.name)).toEqual(['Name', 'Created At']);
  });

  it.each([
    { name: 'terminating', pod: { metadata: { deletionTimestamp: 'x' }, status: { phase: 'Running' } }, want: 'Terminating' },
    { name: 'waiting reason', pod: { metadata: {}, status: { phase: 'Pending', containerStatuses: [{ state: { waiting: { reason: 'CrashLoopBackOff' } } }] } }, want: 'CrashLoopBackOff' },
    { name: 'init container', pod: { metadata: {}, spec: { initContainers: [{}, {}] }, status: { phase: 'Pending', initContainerStatuses: [{ state: { running: {} } }] } }, want: 'Init:0/2' },
    { name: 'terminated with exit code', pod: { metadata: {}, status: { phase: 'Failed', containerStatuses: [{ state: { terminated: { exitCode: 3 } } }] } }, want: 'ExitCode:3' },
  ])('pod status: $name', ({ pod, want }) => {
    expect(podStatusReason(pod as never)).toBe(want);
  });
});
