import type { ContainerStateTerminated, Pod } from '../api/types';
import type { StreamOptions, StreamTarget } from '../streaming/remote-command';

/** Init containers run first, one at a time; ephemeral ones are added to a running pod for debugging. */
export type ContainerKind = 'init' | 'main' | 'ephemeral';

/** What the runtime knows about one container (init or main) of a pod. */
export interface ContainerRuntimeState {
  name: string;
  init: boolean;
  /** An ephemeral (debug) container. */
  ephemeral?: boolean;
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

/** A stream request that cannot be served: HTTP status and message for the client. */
export class StreamError extends Error {
  override name = 'StreamError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
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
  readonly name: 'process' | 'sandbox' | 'simulated';
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
  /** The address range of the pods of a node this runtime serves (the Node's podCIDR). */
  podCidr(node: string): string;
  /** Stops every container (within `graceMs`), then releases resources. */
  shutdown(graceMs: number): Promise<void>;
  /**
   * Runs `command` beside a running container (exec), with the container's environment, in
   * its namespaces and cgroup when it has them. Throws {@link StreamError}.
   */
  exec(uid: string, container: string, command: string[], opts: StreamOptions): Promise<StreamTarget>;
  /** Attaches to a running container's own standard streams. Throws {@link StreamError}. */
  attach(uid: string, container: string, opts: StreamOptions): Promise<StreamTarget>;
}

/** Key `namespace/name` of a pod. */
export function podKey(pod: { metadata: { namespace?: string; name?: string } }): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

/** A phase is terminal when the pod will never run again. */
export function isTerminal(phase: string | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}
