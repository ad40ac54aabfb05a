import { parseApiVersion } from '@orch/api';
import { Quantity, labelSelectorObjectToString, parseLabelSelector } from '@orch/apimachinery';
import { isNotFound, unwrapTombstone } from '@orch/client';
import type { ControllerContext } from '../../framework/controller';
import { QueueController } from '../../framework/queue-controller';
import type { HorizontalPodAutoscaler, HorizontalPodAutoscalerCondition, MetricIdentifier, MetricSpec, MetricStatus, Pod, Scale } from '../../framework/api';
import { HORIZONTAL_POD_AUTOSCALERS as HPAS, PODS } from '../../framework/resources';
import { normalizeWithBehavior, type Recommendation, type ScaleEvent } from './behavior';
import { MetricsUnavailableError, averageValueReplicas, podsMetricReplicas, resourceReplicas, valueReplicas, type CalculatorOptions, type PodInfo, type PodMetric } from './replica-calculator';

/** The resource metrics API the autoscaler reads (served by the metrics server through aggregation). */
const METRICS_API = '/apis/metrics.orch.io/v1beta1';
/** The custom and external metrics APIs (extension servers such as prometheus-adapter register them under these names). */
const CUSTOM_METRICS_API = '/apis/custom.metrics.k8s.io/v1beta2';
const EXTERNAL_METRICS_API = '/apis/external.metrics.k8s.io/v1beta1';

/** What every metric of one autoscaler is computed against. */
interface ScaleTargetState {
  namespace: string;
  selectorText: string;
  /** The pods the scale target's selector picks. */
  pods: Pod[];
  current: number;
  /** The scale subresource's status.replicas (AverageValue targets divide by it). */
  statusReplicas: number;
  now: number;
}

/** One metric's answer: the replicas it asks for and its status.currentMetrics entry. */
interface MetricReplicas {
  replicas: number;
  status: MetricStatus;
  /** What the metric is called in conditions ("pods metric requests"). */
  name: string;
  reason: string;
}

/** custom.metrics.k8s.io/v1beta2 MetricValueList, external.metrics.k8s.io/v1beta1 ExternalMetricValueList. */
interface MetricValueList {
  items?: { describedObject?: { kind: string; name: string }; timestamp: string; windowSeconds?: number; value: string }[];
}

type Condition = HorizontalPodAutoscalerCondition;

interface PodMetricsList {
  items: { metadata: { name: string }; timestamp: string; window: string; containers: { name: string; usage: Record<string, string> }[] }[];
}

export interface AutoscalerOptions extends CalculatorOptions {
  /** upstream --horizontal-pod-autoscaler-sync-period (15 s). */
  syncPeriodMs: number;
  /** upstream --horizontal-pod-autoscaler-downscale-stabilization (5 min). */
  downscaleStabilizationMs: number;
}

const DEFAULT_METRICS: MetricSpec[] = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }];

function formatTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A resource amount in the unit the calculation uses: milli-cores for cpu, bytes otherwise. */
function amount(resource: string, q: string | number | undefined): number | undefined {
  if (q === undefined) return undefined;
  const parsed = Quantity.parse(q);
  return resource === 'cpu' ? parsed.scaledValue(-3) : parsed.scaledValue(0);
}

function podRequest(pod: Pod, resource: string): number | undefined {
  let total = 0;
  for (const c of (pod.spec?.containers ?? []) as { resources?: { requests?: Record<string, string> } }[]) {
    const r = amount(resource, c.resources?.requests?.[resource]);
    if (r === undefined) return undefined;
    total += r;
  }
  return total;
}

/** A quantity in milli-units (custom and external metric values, as upstream's MilliValue). */
function milli(q: string | number | undefined): number {
  return q === undefined ? 0 : Quantity.parse(q).scaledValue(-3);
}

/** Milli-units as a quantity (upstream resource.NewMilliQuantity(v, DecimalSI).String()). */
function formatMilli(v: number): string {
  return v % 1000 === 0 ? String(v / 1000) : `${v}m`;
}

/** The metric's own label selector as the metrics APIs take it (`metricLabelSelector`). */
function metricSelector(metric: MetricIdentifier): Record<string, string> {
  return metric.selector ? { metricLabelSelector: labelSelectorObjectToString(metric.selector) } : {};
}

/** A pod as the replica calculator sees it, with its request of `resource`. */
function podInfo(p: Pod, resource: string): PodInfo {
  const ready = p.status?.conditions?.find((c) => c.type === 'Ready');
  const startTime = (p.status as { startTime?: string } | undefined)?.startTime;
  return {
    name: p.metadata.name!,
    request: resource ? podRequest(p, resource) : undefined,
    phase: p.status?.phase,
    deleting: !!p.metadata.deletionTimestamp,
    ready: ready ? { status: ready.status, lastTransitionTime: Date.parse((ready as { lastTransitionTime?: string }).lastTransitionTime ?? '') || 0 } : undefined,
    startTime: startTime ? Date.parse(startTime) : undefined,
  };
}

/** Running pods with Ready=True (upstream getReadyPodsCount). */
function readyPods(pods: readonly Pod[]): number {
  return pods.filter((p) => p.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
}

function goDurationMs(window: string): number {
  const m = /^([\d.]+)s$/.exec(window);
  return m ? Number(m[1]) * 1000 : 0;
}

/**
 * The HorizontalPodAutoscaler controller (upstream pkg/controller/podautoscaler, autoscaling/v2
 * Resource metrics): every sync period it reads the target's scale subresource, the pods its
 * selector picks and their metrics from the resource metrics API, computes the replicas each
 * metric asks for (target utilization or average value, tolerance, missing and unready pods),
 * takes the largest, stabilizes and rate-limits it by the scaling behavior, scales the target
 * through its scale subresource and reports status, conditions and events.
 */
export class HorizontalPodAutoscalerController extends QueueController {
  private readonly cache = this.informersOf({ hpas: HPAS, pods: PODS });
  private readonly recommendations = new Map<string, Recommendation[]>();
  private readonly scaleEvents = new Map<string, ScaleEvent[]>();

  constructor(
    ctx: ControllerContext,
    private readonly opts: AutoscalerOptions,
  ) {
    super('horizontal-pod-autoscaler', ctx);
    // Status writes (this controller's own) do not trigger a sync: autoscalers are looked at every sync period.
    const key = (h: HorizontalPodAutoscaler) => `${h.metadata.namespace}/${h.metadata.name}`;
    this.cache.hpas.addEventHandler({
      onAdd: (h) => this.queue.add(key(h)),
      onUpdate: (old, cur) => old.metadata.generation !== cur.metadata.generation && this.queue.add(key(cur)),
      onDelete: (h) => this.queue.add(key(unwrapTombstone(h))),
    });
  }

  protected async sync(key: string): Promise<void> {
    const namespace = key.slice(0, key.indexOf('/'));
    const hpa = this.cache.hpas.get(key);
    if (!hpa) {
      this.recommendations.delete(key);
      this.scaleEvents.delete(key);
      return;
    }
    try {
      await this.reconcile(key, structuredClone(hpa), namespace);
    } finally {
      // Level-triggered on a period, as upstream: every autoscaler is looked at again.
      if (this.cache.hpas.get(key)) this.queue.addAfter(key, this.opts.syncPeriodMs);
    }
  }

  private scalePath(hpa: HorizontalPodAutoscaler, namespace: string): string {
    const ref = hpa.spec.scaleTargetRef;
    const { group, version } = parseApiVersion(ref.apiVersion ?? 'apps/v1');
    const def = this.ctx.catalog.lookupKind(group, version, ref.kind);
    if (!def) throw new Error(`the scale target ${ref.kind} in ${ref.apiVersion} is not a known resource`);
    const prefix = group ? `/apis/${group}/${version}` : `/api/${version}`;
    return `${prefix}/namespaces/${namespace}/${def.resource}/${ref.name}/scale`;
  }

  private async reconcile(key: string, hpa: HorizontalPodAutoscaler, namespace: string): Promise<void> {
    const now = Date.now();
    const conditions: Condition[] = [];
    let scale: Scale;
    const scalePath = this.scalePath(hpa, namespace);
    try {
      scale = await this.ctx.client.request<Scale>({ method: 'GET', path: scalePath });
    } catch (err) {
      conditions.push({ type: 'AbleToScale', status: 'False', reason: 'FailedGetScale', message: `the HPA controller was unable to get the target's current scale: ${(err as Error).message}` });
      this.recorder.event(hpa, 'Warning', 'FailedGetScale', 'Scale', (err as Error).message);
      await this.writeStatus(hpa, { currentReplicas: hpa.status?.currentReplicas ?? 0, desiredReplicas: hpa.status?.desiredReplicas ?? 0 }, conditions);
      if (isNotFound(err)) return;
      throw err;
    }
    conditions.push({ type: 'AbleToScale', status: 'True', reason: 'SucceededGetScale', message: 'the HPA controller was able to get the target\'s current scale' });
    const current = scale.spec?.replicas ?? 0;
    const min = hpa.spec.minReplicas ?? 1;
    const max = hpa.spec.maxReplicas;
    let desired: number;
    let currentMetrics: MetricStatus[] = [];
    let rescaleReason = '';
    if (current === 0 && min !== 0) {
      // Scaled to zero by someone else: autoscaling is off until the target has replicas again.
      desired = 0;
      conditions.push({ type: 'ScalingActive', status: 'False', reason: 'ScalingDisabled', message: 'scaling is disabled since the replica count of the target is zero' });
    } else if (current > max || current < min) {
      desired = current > max ? max : min;
      rescaleReason = current > max ? 'Current number of replicas above Spec.MaxReplicas' : 'Current number of replicas below Spec.MinReplicas';
      conditions.push({ type: 'ScalingActive', status: 'True', reason: 'ValidMetricFound', message: 'the HPA was able to successfully calculate a replica count' });
    } else {
      let computed: { replicas: number; metrics: MetricStatus[]; reason: string; from: string };
      try {
        computed = await this.computeReplicas(hpa, scale, current, namespace, now);
      } catch (err) {
        const reason = err instanceof MetricsUnavailableError ? err.reason : 'FailedComputeMetricsReplicas';
        conditions.push({ type: 'ScalingActive', status: 'False', reason, message: `the HPA was unable to compute the replica count: ${(err as Error).message}` });
        this.recorder.event(hpa, 'Warning', reason, 'Scale', (err as Error).message);
        await this.writeStatus(hpa, { currentReplicas: current, desiredReplicas: hpa.status?.desiredReplicas ?? current }, conditions);
        return;
      }
      currentMetrics = computed.metrics;
      conditions.push({ type: 'ScalingActive', status: 'True', reason: 'ValidMetricFound', message: `the HPA was able to successfully calculate a replica count from ${computed.from}` });
      const recommendations = (this.recommendations.get(key) ?? []).filter((r) => r.at > now - Math.max(this.opts.downscaleStabilizationMs, 3_600_000));
      const events = (this.scaleEvents.get(key) ?? []).filter((e) => e.at > now - 3_600_000);
      const normalized = normalizeWithBehavior({
        now,
        currentReplicas: current,
        desiredReplicas: computed.replicas,
        minReplicas: min,
        maxReplicas: max,
        behavior: hpa.spec.behavior,
        recommendations,
        scaleEvents: events,
        downscaleStabilizationSeconds: this.opts.downscaleStabilizationMs / 1000,
      });
      this.recommendations.set(key, [...recommendations, { at: now, replicas: computed.replicas }]);
      desired = normalized.replicas;
      rescaleReason = computed.reason;
      conditions.push(
        normalized.limited
          ? { type: 'ScalingLimited', status: 'True', reason: normalized.limited.reason, message: normalized.limited.message }
          : { type: 'ScalingLimited', status: 'False', reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' },
      );
    }
    let lastScaleTime = hpa.status?.lastScaleTime;
    if (desired !== current) {
      try {
        await this.ctx.client.request({ method: 'PUT', path: scalePath, body: { ...scale, spec: { ...(scale.spec ?? {}), replicas: desired } } });
      } catch (err) {
        conditions[0] = { type: 'AbleToScale', status: 'False', reason: 'FailedUpdateScale', message: `the HPA controller was unable to update the target scale: ${(err as Error).message}` };
        this.recorder.event(hpa, 'Warning', 'FailedRescale', 'Scale', `New size: ${desired}; reason: ${rescaleReason}; error: ${(err as Error).message}`);
        await this.writeStatus(hpa, { currentReplicas: current, desiredReplicas: desired, currentMetrics }, conditions);
        throw err;
      }
      this.scaleEvents.set(key, [...(this.scaleEvents.get(key) ?? []), { at: now, change: desired - current }]);
      lastScaleTime = formatTime(now);
      conditions[0] = { type: 'AbleToScale', status: 'True', reason: 'SucceededRescale', message: `the HPA controller was able to update the target scale to ${desired}` };
      this.recorder.event(hpa, 'Normal', 'SuccessfulRescale', 'Scale', `New size: ${desired}; reason: ${rescaleReason}`);
      this.logger.info('rescaled', { hpa: key, from: current, to: desired, reason: rescaleReason });
    }
    await this.writeStatus(hpa, { currentReplicas: current, desiredReplicas: desired, currentMetrics, ...(lastScaleTime ? { lastScaleTime } : {}) }, conditions);
  }

  /**
   * The largest replica count the metrics ask for, with every metric's current value (upstream
   * computeReplicasForMetrics): a metric that cannot be read is skipped, unless none can be or
   * the others would scale down (then the first failure is the answer).
   */
  private async computeReplicas(hpa: HorizontalPodAutoscaler, scale: Scale, current: number, namespace: string, now: number): Promise<{ replicas: number; metrics: MetricStatus[]; reason: string; from: string }> {
    const selectorText = scale.status?.selector;
    if (!selectorText) throw new MetricsUnavailableError('the scale target has no selector');
    const selector = parseLabelSelector(selectorText);
    const target: ScaleTargetState = { namespace, selectorText, pods: this.cache.pods.list().filter((p) => p.metadata.namespace === namespace && selector.matches(p.metadata.labels ?? {})), current, statusReplicas: scale.status?.replicas ?? current, now };
    let best: MetricReplicas | undefined;
    const metrics: MetricStatus[] = [];
    let failure: Error | undefined;
    for (const spec of hpa.spec.metrics?.length ? hpa.spec.metrics : DEFAULT_METRICS) {
      try {
        const r = await this.metricReplicas(spec, target);
        metrics.push(r.status);
        if (!best || r.replicas > best.replicas) best = r;
      } catch (err) {
        failure ??= err as Error;
      }
    }
    if (!best || (failure && best.replicas < current)) throw failure ?? new MetricsUnavailableError('no metrics');
    return { replicas: best.replicas, metrics, reason: best.reason, from: best.name };
  }

  /** Per metric source type: the replicas its source asks for, undefined when the spec lacks that source. */
  private readonly replicasBySourceType: Readonly<Record<string, (spec: MetricSpec, t: ScaleTargetState) => Promise<MetricReplicas> | undefined>> = {
    Resource: (spec, t) => spec.resource && this.resourceMetricReplicas(spec.resource, t),
    Pods: (spec, t) => spec.pods && this.podsMetricReplicas(spec.pods, t),
    Object: (spec, t) => spec.object && this.objectMetricReplicas(spec.object, t),
    External: (spec, t) => spec.external && this.externalMetricReplicas(spec.external, t),
  };

  /** The replicas one metric asks for. */
  private async metricReplicas(spec: MetricSpec, t: ScaleTargetState): Promise<MetricReplicas> {
    if (!Object.hasOwn(this.replicasBySourceType, spec.type)) throw new MetricsUnavailableError(`unknown metric source type "${spec.type}"`, 'InvalidMetricSourceType');
    const replicas = this.replicasBySourceType[spec.type](spec, t);
    if (!replicas) throw new MetricsUnavailableError(`metric type ${spec.type} has no ${spec.type.toLowerCase()} source`, 'InvalidMetricSourceType');
    return replicas;
  }

  private async resourceMetricReplicas(source: NonNullable<MetricSpec['resource']>, t: ScaleTargetState): Promise<MetricReplicas> {
    const list = await this.metricsGet<PodMetricsList>(`${METRICS_API}/namespaces/${t.namespace}/pods`, { labelSelector: t.selectorText }, 'FailedGetResourceMetric');
    const resource = source.name;
    const podMetrics = new Map<string, PodMetric>();
    for (const item of list.items) {
      let value = 0;
      for (const c of item.containers) value += amount(resource, c.usage[resource]) ?? 0;
      podMetrics.set(item.metadata.name, { value, timestamp: Date.parse(item.timestamp), windowMs: goDurationMs(item.window) });
    }
    const infos = t.pods.map((p) => podInfo(p, resource));
    const target = source.target;
    const name = `${resource} resource utilization (percentage of request)`;
    if (target.type === 'Utilization') {
      const r = resourceReplicas(t.current, target.averageUtilization ?? 80, resource, infos, podMetrics, t.now, this.opts);
      const status = { type: 'Resource', resource: { name: resource, current: { averageUtilization: r.utilization, averageValue: resource === 'cpu' ? `${Math.round(r.averageValue)}m` : `${Math.round(r.averageValue)}` } } };
      return { replicas: r.replicas, status, name, reason: `${name} ${r.utilization > (target.averageUtilization ?? 80) ? 'above' : 'below'} target` };
    }
    // AverageValue: usage per pod against the target value (upstream GetRawResourceReplicas).
    const targetValue = amount(resource, target.averageValue) ?? 0;
    const values = [...podMetrics.values()].map((m) => m.value);
    if (values.length === 0 || targetValue === 0) throw new MetricsUnavailableError(`did not receive metrics for ${resource}`);
    const sum = values.reduce((a, b) => a + b, 0);
    const average = sum / values.length;
    const ratio = average / targetValue;
    const replicas = Math.abs(1 - ratio) <= this.opts.tolerance ? t.current : Math.ceil(sum / targetValue);
    const status = { type: 'Resource', resource: { name: resource, current: { averageValue: resource === 'cpu' ? `${Math.round(average)}m` : `${Math.round(average)}` } } };
    return { replicas, status, name: `${resource} resource`, reason: `${resource} resource ${ratio > 1 ? 'above' : 'below'} target` };
  }

  /** Pods: the pods' own values from the custom metrics API, averaged against the target. */
  private async podsMetricReplicas(source: NonNullable<MetricSpec['pods']>, t: ScaleTargetState): Promise<MetricReplicas> {
    const query: Record<string, string> = { labelSelector: t.selectorText, ...metricSelector(source.metric) };
    const list = await this.metricsGet<MetricValueList>(`${CUSTOM_METRICS_API}/namespaces/${t.namespace}/pods/*/${encodeURIComponent(source.metric.name)}`, query, 'FailedGetPodsMetric');
    const podMetrics = new Map<string, PodMetric>();
    for (const item of list.items ?? []) if (item.describedObject?.kind === 'Pod') podMetrics.set(item.describedObject.name, { value: milli(item.value), timestamp: Date.parse(item.timestamp), windowMs: (item.windowSeconds ?? 0) * 1000 });
    if (podMetrics.size === 0) throw new MetricsUnavailableError(`unable to get metric ${source.metric.name}: no metrics returned from custom metrics API`, 'FailedGetPodsMetric');
    const r = podsMetricReplicas(t.current, milli(source.target.averageValue), t.pods.map((p) => podInfo(p, '')), podMetrics, t.now, this.opts);
    const name = `pods metric ${source.metric.name}`;
    return { replicas: r.replicas, status: { type: 'Pods', pods: { metric: source.metric, current: { averageValue: formatMilli(r.averageValue) } } }, name, reason: `${name} ${r.averageValue > milli(source.target.averageValue) ? 'above' : 'below'} target` };
  }

  /** Object: one value of a described object from the custom metrics API, against a Value or an AverageValue per replica. */
  private async objectMetricReplicas(source: NonNullable<MetricSpec['object']>, t: ScaleTargetState): Promise<MetricReplicas> {
    const ref = source.describedObject;
    const { group, version } = parseApiVersion(ref.apiVersion ?? 'v1');
    const def = this.ctx.catalog.lookupKind(group, version, ref.kind);
    if (!def) throw new MetricsUnavailableError(`unable to get metric ${source.metric.name}: ${ref.kind} in ${ref.apiVersion} is not a known resource`, 'FailedGetObjectMetric');
    const groupResource = group ? `${def.resource}.${group}` : def.resource;
    const objectPath = def.scope === 'Namespaced' ? `namespaces/${t.namespace}/${groupResource}/${ref.name}` : `${groupResource}/${ref.name}`;
    const list = await this.metricsGet<MetricValueList>(`${CUSTOM_METRICS_API}/${objectPath}/${encodeURIComponent(source.metric.name)}`, metricSelector(source.metric), 'FailedGetObjectMetric');
    const item = list.items?.[0];
    if (!item) throw new MetricsUnavailableError(`unable to get metric ${source.metric.name}: no metrics returned from custom metrics API`, 'FailedGetObjectMetric');
    const usage = milli(item.value);
    const name = `${ref.kind} metric ${source.metric.name}`;
    const metric = { metric: source.metric, describedObject: ref };
    if (source.target.type === 'AverageValue') {
      const r = averageValueReplicas(t.statusReplicas, usage, milli(source.target.averageValue), this.opts);
      return { replicas: r.replicas, status: { type: 'Object', object: { ...metric, current: { averageValue: formatMilli(r.averageValue) } } }, name, reason: `${name} ${r.replicas > t.statusReplicas ? 'above' : 'below'} target` };
    }
    const targetValue = milli(source.target.value);
    const replicas = valueReplicas(t.current, usage, targetValue, readyPods(t.pods), this.opts);
    return { replicas, status: { type: 'Object', object: { ...metric, current: { value: formatMilli(usage) } } }, name, reason: `${name} ${usage > targetValue ? 'above' : 'below'} target` };
  }

  /** External: the sum of the external metrics API's values, against a Value or an AverageValue per replica. */
  private async externalMetricReplicas(source: NonNullable<MetricSpec['external']>, t: ScaleTargetState): Promise<MetricReplicas> {
    const selector = source.metric.selector ? labelSelectorObjectToString(source.metric.selector) : '';
    const list = await this.metricsGet<MetricValueList>(`${EXTERNAL_METRICS_API}/namespaces/${t.namespace}/${encodeURIComponent(source.metric.name)}`, selector ? { labelSelector: selector } : {}, 'FailedGetExternalMetric');
    if (!list.items?.length) throw new MetricsUnavailableError(`unable to get external metric ${t.namespace}/${source.metric.name}: no metrics returned from external metrics API`, 'FailedGetExternalMetric');
    const usage = list.items.reduce((sum, item) => sum + milli(item.value), 0);
    const name = `external metric ${source.metric.name}`;
    if (source.target.type === 'AverageValue') {
      const r = averageValueReplicas(t.statusReplicas, usage, milli(source.target.averageValue), this.opts);
      return { replicas: r.replicas, status: { type: 'External', external: { metric: source.metric, current: { averageValue: formatMilli(r.averageValue) } } }, name, reason: `${name} ${r.replicas > t.statusReplicas ? 'above' : 'below'} target` };
    }
    const targetValue = milli(source.target.value);
    const replicas = valueReplicas(t.current, usage, targetValue, readyPods(t.pods), this.opts);
    return { replicas, status: { type: 'External', external: { metric: source.metric, current: { value: formatMilli(usage) } } }, name, reason: `${name} ${usage > targetValue ? 'above' : 'below'} target` };
  }

  /** A read from a metrics API; its failure is a MetricsUnavailableError with `reason`. */
  private async metricsGet<T>(path: string, query: Record<string, string>, reason: string): Promise<T> {
    try {
      return await this.ctx.client.request<T>({ method: 'GET', path, query });
    } catch (err) {
      throw new MetricsUnavailableError(`unable to get metrics from ${path}: ${(err as Error).message}`, reason);
    }
  }

  private async writeStatus(hpa: HorizontalPodAutoscaler, fields: Partial<NonNullable<HorizontalPodAutoscaler['status']>>, conditions: Condition[]): Promise<void> {
    const previous = hpa.status?.conditions ?? [];
    const stamped = conditions.map((c) => {
      const prev = previous.find((p) => p.type === c.type);
      return { ...c, lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : formatTime(Date.now()) };
    });
    const status = { desiredReplicas: 0, ...hpa.status, ...fields, observedGeneration: hpa.metadata.generation, conditions: stamped };
    if (JSON.stringify(status) === JSON.stringify(hpa.status)) return;
    try {
      await this.ctx.client.resource<HorizontalPodAutoscaler>(HPAS, hpa.metadata.namespace).updateStatus({ ...hpa, status });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
