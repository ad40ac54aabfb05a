// The replica count a resource metric asks for (upstream pkg/controller/podautoscaler
// replica_calculator.go GetResourceReplicas, with its handling of missing, unready and ignored
// pods). Pure: every input is given, time included.

/** One pod as the calculation sees it. */
export interface PodInfo {
  name: string;
  /** Sum of the containers' requests of the resource (milli-units for cpu, bytes for memory). */
  request: number | undefined;
  phase?: string;
  deleting: boolean;
  /** The Ready condition, if the pod has one. */
  ready?: { status: string; lastTransitionTime: number };
  startTime?: number;
}

/** A pod's usage (same units as its request) and when/over what window it was measured. */
export interface PodMetric {
  value: number;
  timestamp: number;
  windowMs: number;
}

export interface CalculatorOptions {
  /** Changes within this ratio of the target are ignored (upstream --horizontal-pod-autoscaler-tolerance, 0.1). */
  tolerance: number;
  /** upstream --horizontal-pod-autoscaler-cpu-initialization-period (5 min). */
  cpuInitializationPeriodMs: number;
  /** upstream --horizontal-pod-autoscaler-initial-readiness-delay (30 s). */
  delayOfInitialReadinessStatusMs: number;
}

export const DEFAULT_CALCULATOR_OPTIONS: CalculatorOptions = { tolerance: 0.1, cpuInitializationPeriodMs: 5 * 60_000, delayOfInitialReadinessStatusMs: 30_000 };

export interface ReplicaResult {
  replicas: number;
  /** Current average utilization (percent of request), as reported in status.currentMetrics. */
  utilization: number;
  /** Current average usage per pod (resource units). */
  averageValue: number;
}

/** The metrics needed are not there; `reason` is the condition reason upstream reports (FailedGetResourceMetric, FailedGetPodsMetric...). */
export class MetricsUnavailableError extends Error {
  constructor(
    message: string,
    readonly reason = 'FailedGetResourceMetric',
  ) {
    super(message);
  }
}

/** Pods sorted out as upstream groupPods does. */
function groupPods(pods: readonly PodInfo[], metrics: ReadonlyMap<string, PodMetric>, cpu: boolean, now: number, o: CalculatorOptions) {
  const unready = new Set<string>();
  const missing = new Set<string>();
  const ignored = new Set<string>();
  let readyCount = 0;
  for (const pod of pods) {
    if (pod.deleting || pod.phase === 'Failed') {
      ignored.add(pod.name);
      continue;
    }
    if (pod.phase === 'Pending') {
      unready.add(pod.name);
      continue;
    }
    const metric = metrics.get(pod.name);
    if (!metric) {
      missing.add(pod.name);
      continue;
    }
    if (cpu) {
      let isUnready: boolean;
      if (!pod.ready || pod.startTime === undefined) isUnready = true;
      else if (pod.startTime + o.cpuInitializationPeriodMs > now) {
        // Within the initialization period: only a sample taken a whole window after it became ready counts.
        isUnready = pod.ready.status === 'False' || metric.timestamp < pod.ready.lastTransitionTime + metric.windowMs;
      } else {
        // Ignore a pod that is unready and has never been ready.
        isUnready = pod.ready.status === 'False' && pod.startTime + o.delayOfInitialReadinessStatusMs > pod.ready.lastTransitionTime;
      }
      if (isUnready) {
        unready.add(pod.name);
        continue;
      }
    }
    readyCount++;
  }
  return { readyCount, unready, missing, ignored };
}

/** Utilization of the pods with metrics, relative to the target (upstream GetResourceUtilizationRatio). */
function utilizationRatio(metrics: ReadonlyMap<string, PodMetric>, requests: ReadonlyMap<string, number>, targetUtilization: number): { ratio: number; utilization: number; average: number } {
  let usage = 0;
  let request = 0;
  for (const [name, m] of metrics) {
    const r = requests.get(name);
    if (r === undefined) continue;
    usage += m.value;
    request += r;
  }
  if (request === 0) throw new MetricsUnavailableError('no metrics returned matched known pods');
  const utilization = Math.trunc((usage * 100) / request);
  return { ratio: utilization / targetUtilization, utilization, average: usage / metrics.size };
}

/**
 * Replicas for a Resource metric with a target utilization (percent of request). Throws
 * MetricsUnavailableError when no pod has metrics, and when a pod lacks a request of the
 * resource (upstream: "missing request for cpu").
 */
export function resourceReplicas(currentReplicas: number, targetUtilization: number, resource: string, pods: readonly PodInfo[], podMetrics: ReadonlyMap<string, PodMetric>, now: number, o: CalculatorOptions = DEFAULT_CALCULATOR_OPTIONS): ReplicaResult {
  if (pods.length === 0) throw new MetricsUnavailableError('no pods returned by selector while calculating replica count');
  const metrics = new Map(podMetrics);
  const { readyCount, unready, missing, ignored } = groupPods(pods, metrics, resource === 'cpu', now, o);
  for (const name of [...ignored, ...unready]) metrics.delete(name);
  const requests = new Map<string, number>();
  for (const pod of pods) {
    if (pod.request === undefined) throw new MetricsUnavailableError(`missing request for ${resource} in pod ${pod.name}`);
    requests.set(pod.name, pod.request);
  }
  if (metrics.size === 0) throw new MetricsUnavailableError('did not receive metrics for targeted pods (pods might be unready)');
  const first = utilizationRatio(metrics, requests, targetUtilization);
  const result = (replicas: number) => ({ replicas, utilization: first.utilization, averageValue: first.average });
  const scaleUpWithUnready = unready.size > 0 && first.ratio > 1;
  if (!scaleUpWithUnready && missing.size === 0) {
    if (Math.abs(1 - first.ratio) <= o.tolerance) return result(currentReplicas);
    return result(Math.ceil(first.ratio * readyCount));
  }
  // Missing pods count as using all of their request when scaling down, nothing when scaling up;
  // unready pods as nothing when scaling up.
  if (missing.size > 0) {
    for (const name of missing) {
      const value = first.ratio < 1 ? (requests.get(name)! * Math.max(100, targetUtilization)) / 100 : first.ratio > 1 ? 0 : undefined;
      if (value !== undefined) metrics.set(name, { value, timestamp: now, windowMs: 0 });
    }
  }
  if (scaleUpWithUnready) for (const name of unready) metrics.set(name, { value: 0, timestamp: now, windowMs: 0 });
  const next = utilizationRatio(metrics, requests, targetUtilization);
  if (Math.abs(1 - next.ratio) <= o.tolerance || (first.ratio < 1 && next.ratio > 1) || (first.ratio > 1 && next.ratio < 1)) return result(currentReplicas);
  const replicas = Math.ceil(next.ratio * metrics.size);
  if ((next.ratio < 1 && replicas > currentReplicas) || (next.ratio > 1 && replicas < currentReplicas)) return result(currentReplicas);
  return result(replicas);
}

/** Replicas and the current per-pod average (milli-units) for a plain per-pod metric. */
export interface PlainReplicaResult {
  replicas: number;
  averageValue: number;
}

/** Average of the metrics (milli-units, truncated as upstream's integer division) and its ratio to the target. */
function usageRatio(metrics: ReadonlyMap<string, PodMetric>, targetAverage: number): { ratio: number; average: number } {
  let total = 0;
  for (const m of metrics.values()) total += m.value;
  const average = Math.trunc(total / metrics.size);
  return { ratio: average / targetAverage, average };
}

/**
 * Replicas for a Pods metric (upstream GetMetricReplicas / calcPlainMetricReplicas): the pods'
 * average against a target average value. Pending pods count as unready; readiness timing is
 * not looked at (that is for cpu); missing pods count as at the target when scaling down and as
 * zero when scaling up; unready pods as zero when scaling up.
 */
export function podsMetricReplicas(currentReplicas: number, targetAverage: number, pods: readonly PodInfo[], podMetrics: ReadonlyMap<string, PodMetric>, now: number, o: CalculatorOptions = DEFAULT_CALCULATOR_OPTIONS): PlainReplicaResult {
  if (pods.length === 0) throw new MetricsUnavailableError('no pods returned by selector while calculating replica count');
  const metrics = new Map(podMetrics);
  const { readyCount, unready, missing, ignored } = groupPods(pods, metrics, false, now, o);
  for (const name of [...ignored, ...unready]) metrics.delete(name);
  if (metrics.size === 0) throw new MetricsUnavailableError('did not receive metrics for targeted pods (pods might be unready)');
  const first = usageRatio(metrics, targetAverage);
  const result = (replicas: number) => ({ replicas, averageValue: first.average });
  const scaleUpWithUnready = unready.size > 0 && first.ratio > 1;
  if (!scaleUpWithUnready && missing.size === 0) {
    if (Math.abs(1 - first.ratio) <= o.tolerance) return result(currentReplicas);
    return result(Math.ceil(first.ratio * readyCount));
  }
  for (const name of missing) metrics.set(name, { value: first.ratio < 1 ? targetAverage : 0, timestamp: now, windowMs: 0 });
  if (scaleUpWithUnready) for (const name of unready) metrics.set(name, { value: 0, timestamp: now, windowMs: 0 });
  const next = usageRatio(metrics, targetAverage);
  if (Math.abs(1 - next.ratio) <= o.tolerance || (first.ratio < 1 && next.ratio > 1) || (first.ratio > 1 && next.ratio < 1)) return result(currentReplicas);
  const replicas = Math.ceil(next.ratio * metrics.size);
  if ((next.ratio < 1 && replicas > currentReplicas) || (next.ratio > 1 && replicas < currentReplicas)) return result(currentReplicas);
  return result(replicas);
}

/**
 * Replicas for a single value against a target Value (Object and External metrics; upstream
 * getUsageRatioReplicaCount): the ratio times the ready (Running and Ready) pods, or the ratio
 * alone when the target has no replicas.
 */
export function valueReplicas(currentReplicas: number, usage: number, target: number, readyPods: number, o: Pick<CalculatorOptions, 'tolerance'> = DEFAULT_CALCULATOR_OPTIONS): number {
  const ratio = usage / target;
  if (currentReplicas === 0) return Math.ceil(ratio);
  if (Math.abs(1 - ratio) <= o.tolerance) return currentReplicas;
  return Math.ceil(ratio * readyPods);
}

/**
 * Replicas for a single value against a target AverageValue per replica (Object and External
 * metrics; upstream GetObjectPerPodMetricReplicas / GetExternalPerPodMetricReplicas): the
 * value divided by the target, unless the per-replica average is within tolerance.
 */
export function averageValueReplicas(statusReplicas: number, usage: number, targetAverage: number, o: Pick<CalculatorOptions, 'tolerance'> = DEFAULT_CALCULATOR_OPTIONS): PlainReplicaResult {
  const ratio = usage / (targetAverage * statusReplicas);
  const replicas = Math.abs(1 - ratio) > o.tolerance ? Math.ceil(usage / targetAverage) : statusReplicas;
  return { replicas, averageValue: statusReplicas > 0 ? Math.ceil(usage / statusReplicas) : usage };
}
