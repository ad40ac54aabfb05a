import { parseTime, type KubeObject, type OwnerReference } from '@orch/apimachinery';
import type { Pod, PodTemplateSpec, WorkloadCondition } from '../../framework/api';

/** The condition of `type` in a list of conditions, if any. */
export function findCondition<C extends { type: string }>(conditions: readonly C[] | undefined, type: string): C | undefined {
  return conditions?.find((c) => c.type === type);
}

/** The pod's Ready condition, if reported. */
export function podReadyCondition(pod: Pod): WorkloadCondition | undefined {
  return findCondition(pod.status?.conditions, 'Ready');
}

/** upstream podutil.IsPodReady: the Ready condition is True. */
export function isPodReady(pod: Pod): boolean {
  return podReadyCondition(pod)?.status === 'True';
}

/** When the pod last became Ready (ms since the epoch), or undefined when not ready or unknown. */
export function podReadyTime(pod: Pod): number | undefined {
  const c = podReadyCondition(pod);
  return c?.status === 'True' && c.lastTransitionTime ? parseTime(c.lastTransitionTime) : undefined;
}

/**
 * upstream podutil.IsPodAvailable: ready, and ready for at least `minReadySeconds` at `nowMs`
 * (a ready pod without a transition time counts only when minReadySeconds is 0).
 */
export function isPodAvailable(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  if (!isPodReady(pod)) return false;
  if (!minReadySeconds) return true;
  const since = podReadyTime(pod);
  return since !== undefined && since + minReadySeconds * 1000 < nowMs;
}

/** Finished: phase Succeeded or Failed. */
export function isPodTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** upstream controller.IsPodActive: not finished and not being deleted. */
export function isPodActive(pod: Pod): boolean {
  return !isPodTerminal(pod) && !pod.metadata.deletionTimestamp;
}

/** Being deleted (deletionTimestamp set) but not yet gone. */
export function isPodTerminating(pod: Pod): boolean {
  return !!pod.metadata.deletionTimestamp && !isPodTerminal(pod);
}

/** The highest restart count of the pod's containers. */
export function maxContainerRestarts(pod: Pod): number {
  return Math.max(0, ...(pod.status?.containerStatuses ?? []).map((c) => c.restartCount ?? 0));
}

export interface PodFromTemplateOptions {
  /** Extra labels (e.g. pod-template-hash, the job's labels) over the template's. */
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Exact name; otherwise `generateName` is `<parent name>-`. */
  name?: string;
  generateName?: string;
  finalizers?: string[];
}

/**
 * upstream controller.GetPodFromTemplate: a new pod in the parent's namespace with the
 * template's labels, annotations, finalizers and spec (deep copies), the controller
 * reference, and `generateName: <parent>-` unless a name is given.
 */
export function podFromTemplate(template: PodTemplateSpec | undefined, parent: KubeObject, controllerRef: OwnerReference, opts: PodFromTemplateOptions = {}): Pod {
  const meta = template?.metadata ?? {};
  const labels = { ...(meta.labels ?? {}), ...(opts.labels ?? {}) };
  const annotations = { ...(meta.annotations ?? {}), ...(opts.annotations ?? {}) };
  const finalizers = [...(meta.finalizers ?? []), ...(opts.finalizers ?? [])];
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace: parent.metadata.namespace, labels, ownerReferences: [controllerRef] },
    spec: structuredClone(template?.spec ?? { containers: [] }),
  };
  if (opts.name) pod.metadata.name = opts.name;
  else pod.metadata.generateName = opts.generateName ?? `${parent.metadata.name}-`;
  if (Object.keys(annotations).length) pod.metadata.annotations = annotations;
  if (finalizers.length) pod.metadata.finalizers = finalizers;
  return pod;
}
