import type { Pod, RestartPolicy } from '../api/types';
import type { ContainerRuntimeState, PodRuntimeState } from '../runtime/runtime';
import { computePodStatus } from './pod-status';

const NOW = new Date('2025-01-01T00:00:10Z');
const T0 = '2025-01-01T00:00:00Z';

function pod(policy: RestartPolicy, containers: string[], inits: string[] = [], conditions?: Pod['status']): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
    spec: { restartPolicy: policy, containers: containers.map((name) => ({ name, image: `img-${name}` })), initContainers: inits.map((name) => ({ name })) },
    status: conditions,
  };
}

const running = (name: string, ready = true, init = false): ContainerRuntimeState => ({ name, init, restartCount: 0, running: { startedAt: T0 }, ready, started: true, containerID: `process://${name}` });
const exited = (name: string, exitCode: number, init = false, restartCount = 0): ContainerRuntimeState => ({
  name,
  init,
  restartCount,
  terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt: T0, finishedAt: T0 },
  ready: false,
  started: false,
});
const backingOff = (name: string, restartCount = 1): ContainerRuntimeState => ({
  name,
  init: false,
  restartCount,
  waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' },
  lastTerminated: { exitCode: 1, reason: 'Error' },
  ready: false,
  started: false,
});

function state(containers: ContainerRuntimeState[], failed?: PodRuntimeState['failed']): PodRuntimeState {
  return { uid: 'u1', namespace: 'ns', name: 'p', podIP: '127.1.1.2', hostIP: '127.0.0.1', startTime: T0, sandboxReady: true, containers, failed };
}

describe('computePodStatus phase', () => {
  it.each<{ name: string; pod: Pod; state: PodRuntimeState; deleting?: boolean; want: string }>([
    { name: 'nothing started yet', pod: pod('Always', ['a']), state: state([]), want: 'Pending' },
    { name: 'init container running', pod: pod('Always', ['a'], ['i']), state: state([running('i', false, true)]), want: 'Pending' },
    { name: 'init done, container running', pod: pod('Always', ['a'], ['i']), state: state([exited('i', 0, true), running('a')]), want: 'Running' },
    { name: 'init failed, Never', pod: pod('Never', ['a'], ['i']), state: state([exited('i', 1, true)]), want: 'Failed' },
    { name: 'init failed, OnFailure retries', pod: pod('OnFailure', ['a'], ['i']), state: state([exited('i', 1, true)]), want: 'Pending' },
    { name: 'one of two running', pod: pod('Always', ['a', 'b']), state: state([running('a')]), want: 'Pending' },
    { name: 'crash looping, Always', pod: pod('Always', ['a']), state: state([backingOff('a')]), want: 'Running' },
    { name: 'all succeeded, Never', pod: pod('Never', ['a', 'b']), state: state([exited('a', 0), exited('b', 0)]), want: 'Succeeded' },
    { name: 'one failed, Never', pod: pod('Never', ['a', 'b']), state: state([exited('a', 0), exited('b', 2)]), want: 'Failed' },
    { name: 'all succeeded, OnFailure', pod: pod('OnFailure', ['a']), state: state([exited('a', 0)]), want: 'Succeeded' },
    { name: 'exited 0 under Always restarts', pod: pod('Always', ['a']), state: state([exited('a', 0)]), want: 'Running' },
    { name: 'deleted and stopped cleanly', pod: pod('Always', ['a']), state: state([exited('a', 0)]), deleting: true, want: 'Succeeded' },
    { name: 'deleted and killed', pod: pod('Always', ['a']), state: state([exited('a', 137)]), deleting: true, want: 'Failed' },
    { name: 'deleting while still running', pod: pod('Always', ['a']), state: state([running('a')]), deleting: true, want: 'Running' },
    { name: 'deadline exceeded', pod: pod('Always', ['a']), state: state([exited('a', 137)], { reason: 'DeadlineExceeded', message: 'too long' }), want: 'Failed' },
  ])('$name → $want', ({ pod: p, state: s, deleting, want }) => {
    expect(computePodStatus(p, s, NOW, deleting).phase).toBe(want);
  });
});

describe('computePodStatus', () => {
  it('reports container states, IPs and the four conditions', () => {
    const s = computePodStatus(pod('Always', ['a', 'b'], ['i']), state([exited('i', 0, true), running('a'), running('b', false)]), NOW);
    expect(s).toMatchObject({ phase: 'Running', podIP: '127.1.1.2', podIPs: [{ ip: '127.1.1.2' }], hostIP: '127.0.0.1', hostIPs: [{ ip: '127.0.0.1' }], startTime: T0 });
    expect(s.containerStatuses?.map((c) => [c.name, c.ready, c.image, Object.keys(c.state)[0]])).toEqual([
      ['a', true, 'img-a', 'running'],
      ['b', false, 'img-b', 'running'],
    ]);
    expect(s.initContainerStatuses?.[0].state.terminated?.reason).toBe('Completed');
    expect(s.conditions?.map((c) => [c.type, c.status, c.reason ?? '', c.message ?? ''])).toEqual([
      ['PodReadyToStartContainers', 'True', '', ''],
      ['Initialized', 'True', '', ''],
      ['ContainersReady', 'False', 'ContainersNotReady', 'containers with unready status: [b]'],
      ['Ready', 'False', 'ContainersNotReady', 'containers with unready status: [b]'],
    ]);
  });

  it('shows waiting reasons for containers not started yet', () => {
    const s = computePodStatus(pod('Always', ['a'], ['i1', 'i2']), state([exited('i1', 0, true), running('i2', false, true)]), NOW);
    expect(s.initContainerStatuses?.map((c) => Object.keys(c.state)[0])).toEqual(['terminated', 'running']);
    expect(s.containerStatuses?.[0].state).toEqual({ waiting: { reason: 'PodInitializing' } });
    expect(s.conditions?.find((c) => c.type === 'Initialized')).toMatchObject({ status: 'False', reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [i2]' });
    expect(computePodStatus(pod('Always', ['a']), state([]), NOW).containerStatuses?.[0].state).toEqual({ waiting: { reason: 'ContainerCreating' } });
  });

  it('keeps transition times and conditions owned by others', () => {
    const before = { conditions: [{ type: 'PodScheduled', status: 'True' as const, lastTransitionTime: T0 }, { type: 'Ready', status: 'True' as const, lastTransitionTime: T0 }] };
    const s = computePodStatus(pod('Always', ['a'], [], before), state([running('a')]), NOW);
    expect(s.conditions?.find((c) => c.type === 'PodScheduled')).toEqual(before.conditions[0]);
    expect(s.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe(T0);
    expect(s.conditions?.find((c) => c.type === 'ContainersReady')?.lastTransitionTime).toBe('2025-01-01T00:00:10Z');
  });

  it('marks a finished pod not ready with PodCompleted', () => {
    const s = computePodStatus(pod('Never', ['a']), state([exited('a', 0)]), NOW);
    expect(s.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'PodCompleted' });
    expect(s.containerStatuses?.[0].state.terminated?.exitCode).toBe(0);
  });

  it('shows a crash-looping container as waiting with its last termination', () => {
    const s = computePodStatus(pod('Always', ['a']), state([backingOff('a', 3)]), NOW);
    expect(s.containerStatuses?.[0]).toMatchObject({ restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1 } } });
  });
});
