import { formatTime } from '@orch/apimachinery';
import type { Pod } from '../../api/types';
import { PodIpAllocator, defaultPodCidr } from '../../node/pod-cidr';
import { StreamError, type PodRuntimeState, type Runtime, type SyncResult } from '../runtime';
import type { StreamTarget } from '../../streaming/remote-command';

/**
 * The `simulated` runtime: nothing runs. A pod's init containers are done and its containers
 * running and ready as soon as it is synced; deleting it stops them at once. Pods of every
 * fake node get addresses from that node's range. For scale tests of the control plane.
 */
export class SimulatedRuntime implements Runtime {
  readonly name = 'simulated' as const;
  private readonly pods = new Map<string, PodRuntimeState & { node: string }>();
  private readonly ranges = new Map<string, PodIpAllocator>();

  constructor(private readonly hostIP: string) {}

  /** The pod range of a fake node. */
  podCidr(node: string): string {
    return this.allocator(node).cidr;
  }

  private allocator(node: string): PodIpAllocator {
    let a = this.ranges.get(node);
    if (!a) {
      a = new PodIpAllocator(defaultPodCidr(node));
      this.ranges.set(node, a);
    }
    return a;
  }

  async syncPod(pod: Pod): Promise<SyncResult> {
    const uid = pod.metadata.uid ?? '';
    if (this.pods.has(uid)) return {};
    const node = pod.spec.nodeName ?? '';
    const now = formatTime(new Date());
    this.pods.set(uid, {
      uid,
      node,
      namespace: pod.metadata.namespace ?? '',
      name: pod.metadata.name ?? '',
      podIP: pod.spec.hostNetwork ? this.hostIP : this.allocator(node).allocate(uid, pod.status?.podIP),
      hostIP: this.hostIP,
      startTime: pod.status?.startTime ?? now,
      sandboxReady: true,
      containers: [
        ...(pod.spec.initContainers ?? []).map((c) => ({ name: c.name, init: true, restartCount: 0, terminated: { exitCode: 0, reason: 'Completed', startedAt: now, finishedAt: now }, ready: false, started: false })),
        ...pod.spec.containers.map((c) => ({ name: c.name, init: false, restartCount: 0, running: { startedAt: now }, ready: true, started: true, containerID: `simulated://${uid}/${c.name}` })),
      ],
    });
    return {};
  }

  async killPod(uid: string): Promise<boolean> {
    const p = this.pods.get(uid);
    if (!p) return true;
    const now = formatTime(new Date());
    p.containers = p.containers.map((c) => (c.running ? { name: c.name, init: c.init, restartCount: c.restartCount, terminated: { exitCode: 0, reason: 'Completed', startedAt: c.running.startedAt, finishedAt: now }, ready: false, started: false } : c));
    return true;
  }

  async removePod(uid: string): Promise<void> {
    const p = this.pods.get(uid);
    if (!p) return;
    this.pods.delete(uid);
    this.ranges.get(p.node)?.release(uid);
  }

  podState(uid: string): PodRuntimeState | undefined {
    return this.pods.get(uid);
  }

  podUids(): string[] {
    return [...this.pods.keys()];
  }

  async shutdown(): Promise<void> {
    this.pods.clear();
  }

  async exec(): Promise<StreamTarget> {
    throw new StreamError(400, 'the simulated runtime runs no processes: exec is not available');
  }

  async attach(): Promise<StreamTarget> {
    throw new StreamError(400, 'the simulated runtime runs no processes: attach is not available');
  }
}
