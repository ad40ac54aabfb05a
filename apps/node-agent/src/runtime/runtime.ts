import type { ContainerStateTerminated, Pod, PodPhase } from '../api/types';

/** What the runtime knows about one container (init or main) of a pod. */
export interface ContainerRuntimeState {
  name: string;
  init: boolean;
  restartCount: number;
  /** Exactly one of running / terminated / waiting, as in ContainerState. */
  running?: { startedAt: string };
  terminated?: ContainerStateTerminated;
  waiting?: { reason: string; message?: string };
  /** The previous instance's end (lastState.terminated). */
  lastTerminated?: ContainerStateTerminated;
  /** Readiness (probe, or running without a readiness probe). */
  ready: boolean;
  /** Startup probe passed (or running without one). */
  started: boolean;
  containerID?: string;
}

/** What the runtime knows about one pod: enough to compute its status. */
export interface PodRuntimeState {
  uid: string;
  namespace: string;
  name: string;
  podIP: string;
  hostIP: string;
  /** When the agent first started working on the pod (status.startTime). */
  startTime: string;
  /** The pod's sandbox (IP, directories, volumes) exists. */
  sandboxReady: boolean;
  containers: ContainerRuntimeState[];
  /** Set when the pod ended for a reason of its own (e.g. DeadlineExceeded). */
  failed?: { reason: string; message: string };
}

/** Result of a sync: when to sync the pod again at the latest (a back-off or a timer ending). */
export interface SyncResult {
  requeueAfterMs?: number;
}

/**
 * A pod runtime (process or simulated). Every method is idempotent and level-triggered: the
 * pod worker calls them with the pod's latest spec whenever anything changed, and the
 * runtime reports its own changes (a process exited, a probe result) through the `onChange`
 * callback it was built with, so the worker syncs the pod again.
 */
export interface Runtime {
  readonly name: 'process' | 'simulated';
  /** Moves the pod towards its spec: sandbox, init containers in order, containers, restarts, probes. */
  syncPod(pod: Pod): Promise<SyncResult>;
  /**
   * Starts stopping every container of the pod (SIGTERM, then SIGKILL after `graceSeconds`);
   * resolves true once none is running any more.
   */
  killPod(uid: string, graceSeconds: number): Promise<boolean>;
  /** Forgets a stopped pod: releases its IP, removes its files. */
  removePod(uid: string): Promise<void>;
  /** The runtime's view of a pod, if it knows it. */
  podState(uid: string): PodRuntimeState | undefined;
  /** Every pod the runtime knows. */
  podUids(): string[];
  /** Stops every container (within `graceMs`), then releases resources. */
  shutdown(graceMs: number): Promise<void>;
}

/** Key `namespace/name` of a pod. */
export function podKey(pod: { metadata: { namespace?: string; name?: string } }): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

/** A phase is terminal when the pod will never run again. */
export function isTerminal(phase: PodPhase | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}
