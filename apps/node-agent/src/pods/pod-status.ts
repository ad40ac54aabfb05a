import type { coreV1 } from '@orch/api';
import { formatTime } from '@orch/apimachinery';
import type { Container, ContainerStatus, Pod, PodCondition, PodPhase, PodStatus } from '../api/types';
import type { ContainerRuntimeState, PodRuntimeState } from '../runtime/runtime';

/** Condition types the agent owns (upstream kubelet status manager). */
export const OWNED_CONDITIONS = ['PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready'];

function stateOf(rs: ContainerRuntimeState | undefined, waitingReason: string): coreV1.ContainerState {
  if (rs?.running) return { running: rs.running };
  if (rs?.terminated) return { terminated: rs.terminated };
  if (rs?.waiting) return { waiting: rs.waiting };
  return { waiting: { reason: waitingReason } };
}

function containerStatus(c: Container, rs: ContainerRuntimeState | undefined, waitingReason: string): ContainerStatus {
  return {
    name: c.name,
    state: stateOf(rs, waitingReason),
    lastState: rs?.lastTerminated ? { terminated: rs.lastTerminated } : {},
    ready: rs?.ready ?? false,
    restartCount: rs?.restartCount ?? 0,
    image: c.image ?? '',
    imageID: '',
    ...(rs?.containerID ? { containerID: rs.containerID } : {}),
    started: rs?.started ?? false,
  };
}

/** Init containers are done when each terminated with exit code 0, in order. */
function initIncomplete(pod: Pod, state: PodRuntimeState | undefined): string[] {
  return (pod.spec.initContainers ?? [])
    .filter((c) => {
      const rs = state?.containers.find((x) => x.init && x.name === c.name);
      return !(rs?.terminated && rs.terminated.exitCode === 0);
    })
    .map((c) => c.name);
}

/**
 * upstream kubelet getPhase: the pod phase from its containers' states and restart policy.
 * `terminal` is set for a pod being deleted whose containers all stopped: it ends
 * Succeeded or Failed whatever the restart policy.
 */
export function podPhase(pod: Pod, init: ContainerStatus[], main: ContainerStatus[], terminal: boolean): PodPhase {
  const policy = pod.spec.restartPolicy ?? 'Always';
  let pendingInit = 0;
  let failedInit = 0;
  for (const s of init) {
    const ended = s.state.terminated ?? s.lastState.terminated;
    if (s.state.running || !ended) pendingInit++;
    else if (ended.exitCode !== 0) failedInit++;
  }
  if (failedInit > 0 && policy === 'Never') return 'Failed';
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const s of main) {
    if (s.state.running) running++;
    else if (s.state.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.lastState.terminated) stopped++;
    else waiting++;
  }
  if ((pendingInit > 0 || failedInit > 0) && !terminal) return 'Pending';
  if (terminal && running === 0) return stopped > 0 && stopped === succeeded && waiting === 0 ? 'Succeeded' : 'Failed';
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

function condition(previous: PodCondition[] | undefined, type: string, ok: boolean, now: string, reason?: string, message?: string): PodCondition {
  const status = ok ? 'True' : 'False';
  const prev = previous?.find((c) => c.type === type);
  return {
    type,
    status,
    lastTransitionTime: prev?.status === status && prev.lastTransitionTime ? prev.lastTransitionTime : now,
    ...(!ok && reason ? { reason } : {}),
    ...(!ok && message ? { message } : {}),
  };
}

/** A pod status as the agent reports it: each container status with its state and lastState. */
export type ReportedPodStatus = Omit<PodStatus, 'initContainerStatuses' | 'containerStatuses' | 'ephemeralContainerStatuses'> & {
  initContainerStatuses?: ContainerStatus[];
  containerStatuses: ContainerStatus[];
  ephemeralContainerStatuses?: ContainerStatus[];
};

/**
 * The pod status the agent reports (upstream generateAPIPodStatus): phase, conditions
 * (PodReadyToStartContainers, Initialized, ContainersReady, Ready; others such as
 * PodScheduled are kept), init and container statuses, pod and host IPs, start time.
 * Transition times are kept from the pod's current conditions while a status holds.
 * `deleting`: the pod is being deleted (its containers are stopping or stopped).
 */
export function computePodStatus(pod: Pod, state: PodRuntimeState, now: Date, deleting = false): ReportedPodStatus {
  const ts = formatTime(now);
  const previous = pod.status?.conditions;
  const rsOf = (name: string, init: boolean) => state.containers.find((c) => c.name === name && c.init === init && !c.ephemeral);
  const incomplete = initIncomplete(pod, state);
  const initializing = incomplete.length > 0;
  const init = (pod.spec.initContainers ?? []).map((c) => containerStatus(c, rsOf(c.name, true), 'PodInitializing'));
  const main = pod.spec.containers.map((c) => containerStatus(c, rsOf(c.name, false), initializing ? 'PodInitializing' : 'ContainerCreating'));
  // Ephemeral (debug) containers are reported but count for neither phase nor readiness.
  const ephemeral = (pod.spec.ephemeralContainers ?? []).map((c) => containerStatus(c, state.containers.find((x) => x.ephemeral && x.name === c.name), 'ContainerCreating'));
  const anyRunning = [...init, ...main].some((s) => s.state.running);
  let phase = podPhase(pod, init, main, deleting && !anyRunning);
  if (state.failed) phase = 'Failed';
  const terminal = phase === 'Succeeded' || phase === 'Failed';

  const unready = main.filter((s) => !s.ready).map((s) => s.name);
  const gates = (pod.spec.readinessGates ?? []).filter((g) => previous?.find((c) => c.type === g.conditionType)?.status !== 'True');
  const containersReady = !terminal && unready.length === 0;
  const conditions: PodCondition[] = [
    condition(previous, 'PodReadyToStartContainers', state.sandboxReady && !terminal, ts),
    condition(previous, 'Initialized', !initializing || terminal, ts, 'ContainersNotInitialized', `containers with incomplete status: [${incomplete.join(' ')}]`),
    condition(previous, 'ContainersReady', containersReady, ts, terminal ? 'PodCompleted' : 'ContainersNotReady', terminal ? undefined : `containers with unready status: [${unready.join(' ')}]`),
    condition(
      previous,
      'Ready',
      containersReady && gates.length === 0,
      ts,
      terminal ? 'PodCompleted' : unready.length ? 'ContainersNotReady' : 'ReadinessGatesNotReady',
      terminal ? undefined : unready.length ? `containers with unready status: [${unready.join(' ')}]` : `corresponding condition of pod readiness gate "${gates[0]?.conditionType}" does not exist.`,
    ),
  ];
  const foreign = (previous ?? []).filter((c) => !OWNED_CONDITIONS.includes(c.type));
  const status: ReportedPodStatus = {
    phase,
    conditions: [...foreign, ...conditions],
    hostIP: state.hostIP,
    hostIPs: [{ ip: state.hostIP }],
    ...(state.podIP ? { podIP: state.podIP, podIPs: [{ ip: state.podIP }] } : {}),
    startTime: state.startTime,
    ...(init.length ? { initContainerStatuses: init } : {}),
    containerStatuses: main,
    ...(ephemeral.length ? { ephemeralContainerStatuses: ephemeral } : {}),
  };
  if (state.failed) {
    status.reason = state.failed.reason;
    status.message = state.failed.message;
  }
  return status;
}
