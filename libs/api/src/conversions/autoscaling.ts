/**
 * HorizontalPodAutoscaler between autoscaling/v1 and autoscaling/v2 (upstream
 * pkg/apis/autoscaling/v1 conversion). v1 only has a CPU utilization target; everything else
 * a v2 object holds rides along in annotations of the v1 form (the metric lists in the v1
 * metric format), so v2 → v1 → v2 loses nothing:
 */
export const HPA_METRICS_ANNOTATION = 'autoscaling.alpha.orch.io/metrics';
export const HPA_CURRENT_METRICS_ANNOTATION = 'autoscaling.alpha.orch.io/current-metrics';
export const HPA_CONDITIONS_ANNOTATION = 'autoscaling.alpha.orch.io/conditions';
export const HPA_BEHAVIOR_ANNOTATION = 'autoscaling.alpha.orch.io/behavior';
const ROUND_TRIP_ANNOTATIONS = [HPA_METRICS_ANNOTATION, HPA_CURRENT_METRICS_ANNOTATION, HPA_CONDITIONS_ANNOTATION, HPA_BEHAVIOR_ANNOTATION];

/** upstream DefaultCPUUtilization: the target of a v1 object that names none. */
export const DEFAULT_CPU_UTILIZATION = 80;

type Json = Record<string, any>;

/** Drops undefined members (JSON leaves them out anyway; tests compare objects). */
function compact(o: Json): Json {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

function isCpuUtilization(m: Json, field: 'target' | 'current'): boolean {
  return m?.type === 'Resource' && m.resource?.name === 'cpu' && m.resource?.[field]?.averageUtilization !== undefined;
}

// ---------------------------------------------------------------- metric specs

/**
 * A v2 metric as v1 spells it: a spec's `target` (side `target`) or a status's `current` (side
 * `current`) flattened into `<side>Value`, `<side>AverageValue`, `<side>AverageUtilization`.
 */
function metricV2ToV1(m: Json, side: 'target' | 'current'): Json {
  const out: Json = { type: m.type };
  if (m.object) out.object = compact({ target: m.object.describedObject, metricName: m.object.metric?.name, selector: m.object.metric?.selector, [`${side}Value`]: m.object[side]?.value, averageValue: m.object[side]?.averageValue });
  if (m.pods) out.pods = compact({ metricName: m.pods.metric?.name, selector: m.pods.metric?.selector, [`${side}AverageValue`]: m.pods[side]?.averageValue });
  for (const kind of ['resource', 'containerResource'] as const) {
    const r = m[kind];
    if (r) out[kind] = compact({ name: r.name, container: r.container, [`${side}AverageUtilization`]: r[side]?.averageUtilization, [`${side}AverageValue`]: r[side]?.averageValue });
  }
  if (m.external) out.external = compact({ metricName: m.external.metric?.name, metricSelector: m.external.metric?.selector, [`${side}Value`]: m.external[side]?.value, [`${side}AverageValue`]: m.external[side]?.averageValue });
  return out;
}

function resourceTargetV1ToV2(r: Json): Json {
  return compact({ type: r.targetAverageUtilization !== undefined ? 'Utilization' : 'AverageValue', averageUtilization: r.targetAverageUtilization, averageValue: r.targetAverageValue });
}

function specV1ToV2(m: Json): Json {
  const out: Json = { type: m.type };
  if (m.object) {
    const o = m.object;
    out.object = {
      describedObject: o.target,
      metric: compact({ name: o.metricName, selector: o.selector }),
      target: compact({ type: o.averageValue !== undefined ? 'AverageValue' : 'Value', value: o.targetValue, averageValue: o.averageValue }),
    };
  }
  if (m.pods) out.pods = { metric: compact({ name: m.pods.metricName, selector: m.pods.selector }), target: compact({ type: 'AverageValue', averageValue: m.pods.targetAverageValue }) };
  if (m.resource) out.resource = { name: m.resource.name, target: resourceTargetV1ToV2(m.resource) };
  if (m.containerResource) out.containerResource = { name: m.containerResource.name, container: m.containerResource.container, target: resourceTargetV1ToV2(m.containerResource) };
  if (m.external) {
    const e = m.external;
    out.external = {
      metric: compact({ name: e.metricName, selector: e.metricSelector }),
      target: compact({ type: e.targetValue === undefined ? 'AverageValue' : 'Value', value: e.targetValue, averageValue: e.targetAverageValue }),
    };
  }
  return out;
}

// ---------------------------------------------------------------- metric statuses

function statusV1ToV2(m: Json): Json {
  const out: Json = { type: m.type };
  if (m.object) out.object = { describedObject: m.object.target, metric: compact({ name: m.object.metricName, selector: m.object.selector }), current: compact({ value: m.object.currentValue, averageValue: m.object.averageValue }) };
  if (m.pods) out.pods = { metric: compact({ name: m.pods.metricName, selector: m.pods.selector }), current: compact({ averageValue: m.pods.currentAverageValue }) };
  if (m.resource) out.resource = { name: m.resource.name, current: compact({ averageValue: m.resource.currentAverageValue, averageUtilization: m.resource.currentAverageUtilization }) };
  if (m.containerResource) {
    const c = m.containerResource;
    out.containerResource = { name: c.name, container: c.container, current: compact({ averageValue: c.currentAverageValue, averageUtilization: c.currentAverageUtilization }) };
  }
  if (m.external) out.external = { metric: compact({ name: m.external.metricName, selector: m.external.metricSelector }), current: compact({ value: m.external.currentValue, averageValue: m.external.currentAverageValue }) };
  return out;
}

// ---------------------------------------------------------------- objects

/** A round-trip annotation's JSON list or object; a malformed value is an error naming the annotation. */
function annotationJson(annotations: Record<string, string>, key: string): any {
  const raw = annotations[key];
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    throw new Error(`metadata.annotations[${key}]: invalid JSON`);
  }
}

/** autoscaling/v2 (storage form) → autoscaling/v1. */
export function convertHpaV2ToV1(obj: Json): Json {
  const spec: Json = obj.spec ?? {};
  const status: Json | undefined = obj.status;
  const metrics: Json[] = spec.metrics ?? [];
  const cpu = metrics.find((m) => m?.type === 'Resource' && m.resource?.name === 'cpu');
  const others = metrics.filter((m) => !isCpuUtilization(m, 'target'));
  const annotations: Record<string, string> = { ...(obj.metadata?.annotations ?? {}) };
  for (const k of ROUND_TRIP_ANNOTATIONS) delete annotations[k];
  if (others.length) annotations[HPA_METRICS_ANNOTATION] = JSON.stringify(others.map((m) => metricV2ToV1(m, 'target')));
  if (spec.behavior) annotations[HPA_BEHAVIOR_ANNOTATION] = JSON.stringify(spec.behavior);
  const out: Json = { ...obj, metadata: { ...obj.metadata } };
  out.spec = compact({ scaleTargetRef: spec.scaleTargetRef, minReplicas: spec.minReplicas, maxReplicas: spec.maxReplicas, targetCPUUtilizationPercentage: cpu?.resource?.target?.averageUtilization });
  if (status) {
    const current: Json[] = status.currentMetrics ?? [];
    const cpuNow = current.find((m) => isCpuUtilization(m, 'current'));
    // Every current metric is kept (the CPU one too: its raw value is not in the v1 field).
    if (current.length) annotations[HPA_CURRENT_METRICS_ANNOTATION] = JSON.stringify(current.map((m) => metricV2ToV1(m, 'current')));
    if (status.conditions?.length) annotations[HPA_CONDITIONS_ANNOTATION] = JSON.stringify(status.conditions);
    out.status = compact({
      observedGeneration: status.observedGeneration,
      lastScaleTime: status.lastScaleTime,
      currentReplicas: status.currentReplicas ?? 0,
      desiredReplicas: status.desiredReplicas ?? 0,
      currentCPUUtilizationPercentage: cpuNow?.resource?.current?.averageUtilization,
    });
  }
  if (Object.keys(annotations).length) out.metadata.annotations = annotations;
  else delete out.metadata.annotations;
  return out;
}

/**
 * autoscaling/v1 → autoscaling/v2 (storage form): the CPU target becomes a Resource metric
 * (80% when none is named and the annotations hold no other metric, as upstream); the
 * round-trip annotations are read back and removed. Throws on a malformed annotation.
 */
export function convertHpaV1ToV2(obj: Json): Json {
  const spec: Json = obj.spec ?? {};
  const annotations: Record<string, string> = { ...(obj.metadata?.annotations ?? {}) };
  const metrics: Json[] = [];
  const otherMetrics = annotationJson(annotations, HPA_METRICS_ANNOTATION);
  if (Array.isArray(otherMetrics)) metrics.push(...otherMetrics.map(specV1ToV2));
  const cpuTarget = spec.targetCPUUtilizationPercentage ?? (metrics.length ? undefined : DEFAULT_CPU_UTILIZATION);
  if (cpuTarget !== undefined) metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: cpuTarget } } });
  const behavior = annotationJson(annotations, HPA_BEHAVIOR_ANNOTATION);
  const out: Json = { ...obj, metadata: { ...obj.metadata } };
  out.spec = compact({ scaleTargetRef: spec.scaleTargetRef, minReplicas: spec.minReplicas, maxReplicas: spec.maxReplicas, metrics, behavior: behavior ?? undefined });
  if (obj.status) {
    const s: Json = obj.status;
    let currentMetrics: Json[] | undefined;
    if (s.currentCPUUtilizationPercentage !== undefined) currentMetrics = [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: s.currentCPUUtilizationPercentage } } }];
    const current = annotationJson(annotations, HPA_CURRENT_METRICS_ANNOTATION);
    if (Array.isArray(current)) currentMetrics = current.map(statusV1ToV2);
    const conditions = annotationJson(annotations, HPA_CONDITIONS_ANNOTATION);
    out.status = compact({
      observedGeneration: s.observedGeneration,
      lastScaleTime: s.lastScaleTime,
      currentReplicas: s.currentReplicas,
      desiredReplicas: s.desiredReplicas,
      currentMetrics,
      conditions: Array.isArray(conditions) ? conditions : undefined,
    });
  }
  for (const k of ROUND_TRIP_ANNOTATIONS) delete annotations[k];
  if (Object.keys(annotations).length) out.metadata.annotations = annotations;
  else delete out.metadata.annotations;
  return out;
}
