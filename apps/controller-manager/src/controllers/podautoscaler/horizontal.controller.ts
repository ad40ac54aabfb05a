import { parseApiVersion } from '@orch/api';
import { Quantity, parseLabelSelector, type KubeObject } from '@orch/apimachinery';
import { isNotFound, unwrapTombstone, type SharedInformer } from '@orch/client';
import type { ControllerContext } from '../../controller';
import { QueueController } from '../cluster-common/queue-controller';
import type { Pod } from '../cluster-common/types';
import { normalizeWithBehavior, type Behavior, type Recommendation, type ScaleEvent } from './behavior';
import { MetricsUnavailableError, resourceReplicas, type CalculatorOptions, type PodInfo, type PodMetric } from './replica-calculator';

const HPAS = { group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers' };
const PODS = { group: '', version: 'v1', resource: 'pods' };
/** The resource metrics API the autoscaler reads (served by the metrics server through aggregation). */
const METRICS_API = '/apis/metrics.orch.io/v1beta1';

interface MetricTarget {
  type: 'Utilization' | 'AverageValue' | 'Value';
  averageUtilization?: number;
  averageValue?: string;
}

interface MetricSpec {
  type: string;
  resource?: { name: string; target: MetricTarget };
}

interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime?: string;
}

interface HorizontalPodAutoscaler extends KubeObject {
  spec: {
    scaleTargetRef: { apiVersion?: string; kind: string; name: string };
    minReplicas?: number;
    maxReplicas: number;
    metrics?: MetricSpec[];
    behavior?: Behavior;
  };
  status?: {
    observedGeneration?: number;
    lastScaleTime?: string;
    currentReplicas?: number;
    desiredReplicas?: number;
    currentMetrics?: unknown[];
    conditions?: Condition[];
  };
}

interface Scale extends KubeObject {
  spec?: { replicas?: number };
  status?: { replicas?: number; selector?: string };
}

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
  private readonly hpas: SharedInformer<HorizontalPodAutoscaler>;
  private readonly pods: SharedInformer<Pod>;
  private readonly recommendations = new Map<string, Recommendation[]>();
  private readonly scaleEvents = new Map<string, ScaleEvent[]>();

  constructor(
    ctx: ControllerContext,
    private readonly opts: AutoscalerOptions,
  ) {
    super('horizontal-pod-autoscaler', ctx);
    this.hpas = this.informer<HorizontalPodAutoscaler>(HPAS);
    this.pods = this.informer<Pod>(PODS);
    // Status writes (this controller's own) do not trigger a sync: autoscalers are looked at every sync period.
    const key = (h: HorizontalPodAutoscaler) => `${h.metadata.namespace}/${h.metadata.name}`;
    this.hpas.addEventHandler({
      onAdd: (h) => this.queue.add(key(h)),
      onUpdate: (old, cur) => old.metadata.generation !== cur.metadata.generation && this.queue.add(key(cur)),
      onDelete: (h) => this.queue.add(key(unwrapTombstone(h))),
    });
  }

  protected async sync(key: string): Promise<void> {
    const namespace = key.slice(0, key.indexOf('/'));
    const hpa = this.hpas.get(key);
    if (!hpa) {
      this.recommendations.delete(key);
      this.scaleEvents.delete(key);
      return;
    }
    try {
      await this.reconcile(key, structuredClone(hpa), namespace);
    } finally {
      // Level-triggered on a period, as upstream: every autoscaler is looked at again.
      if (this.hpas.get(key)) this.queue.addAfter(key, this.opts.syncPeriodMs);
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
    let currentMetrics: unknown[] = [];
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
      let computed: { replicas: number; metrics: unknown[]; reason: string };
      try {
        computed = await this.computeReplicas(hpa, scale, current, namespace, now);
      } catch (err) {
        const reason = err instanceof MetricsUnavailableError ? 'FailedGetResourceMetric' : 'FailedComputeMetricsReplicas';
        conditions.push({ type: 'ScalingActive', status: 'False', reason, message: `the HPA was unable to compute the replica count: ${(err as Error).message}` });
        this.recorder.event(hpa, 'Warning', reason, 'Scale', (err as Error).message);
        await this.writeStatus(hpa, { currentReplicas: current, desiredReplicas: hpa.status?.desiredReplicas ?? current }, conditions);
        return;
      }
      currentMetrics = computed.metrics;
      conditions.push({ type: 'ScalingActive', status: 'True', reason: 'ValidMetricFound', message: 'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)' });
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

  /** The largest replica count any metric asks for, with the current metric values. */
  private async computeReplicas(hpa: HorizontalPodAutoscaler, scale: Scale, current: number, namespace: string, now: number): Promise<{ replicas: number; metrics: unknown[]; reason: string }> {
    const selectorText = scale.status?.selector;
    if (!selectorText) throw new MetricsUnavailableError('the scale target has no selector');
    const selector = parseLabelSelector(selectorText);
    const pods = this.pods.list().filter((p) => p.metadata.namespace === namespace && selector.matches(p.metadata.labels ?? {}));
    const list = await this.ctx.client.request<PodMetricsList>({ method: 'GET', path: `${METRICS_API}/namespaces/${namespace}/pods`, query: { labelSelector: selectorText } });
    let best: { replicas: number; metrics: unknown[]; reason: string } | undefined;
    const metrics: unknown[] = [];
    for (const spec of hpa.spec.metrics?.length ? hpa.spec.metrics : DEFAULT_METRICS) {
      if (spec.type !== 'Resource' || !spec.resource) throw new MetricsUnavailableError(`metric type ${spec.type} is not supported (Resource metrics are)`);
      const resource = spec.resource.name;
      const podMetrics = new Map<string, PodMetric>();
      for (const item of list.items) {
        let value = 0;
        for (const c of item.containers) value += amount(resource, c.usage[resource]) ?? 0;
        podMetrics.set(item.metadata.name, { value, timestamp: Date.parse(item.timestamp), windowMs: goDurationMs(item.window) });
      }
      const infos: PodInfo[] = pods.map((p) => {
        const ready = p.status?.conditions?.find((c) => c.type === 'Ready');
        const startTime = (p.status as { startTime?: string } | undefined)?.startTime;
        return {
          name: p.metadata.name!,
          request: podRequest(p, resource),
          phase: p.status?.phase,
          deleting: !!p.metadata.deletionTimestamp,
          ready: ready ? { status: ready.status, lastTransitionTime: Date.parse((ready as { lastTransitionTime?: string }).lastTransitionTime ?? '') || 0 } : undefined,
          startTime: startTime ? Date.parse(startTime) : undefined,
        };
      });
      const target = spec.resource.target;
      let replicas: number;
      let reason: string;
      if (target.type === 'Utilization') {
        const r = resourceReplicas(current, target.averageUtilization ?? 80, resource, infos, podMetrics, now, this.opts);
        replicas = r.replicas;
        reason = `${resource} resource utilization (percentage of request) ${r.utilization > (target.averageUtilization ?? 80) ? 'above' : 'below'} target`;
        metrics.push({ type: 'Resource', resource: { name: resource, current: { averageUtilization: r.utilization, averageValue: resource === 'cpu' ? `${Math.round(r.averageValue)}m` : `${Math.round(r.averageValue)}` } } });
      } else {
        // AverageValue: usage per pod against the target value (upstream GetRawResourceReplicas).
        const targetValue = amount(resource, target.averageValue) ?? 0;
        const values = [...podMetrics.values()].map((m) => m.value);
        if (values.length === 0 || targetValue === 0) throw new MetricsUnavailableError(`did not receive metrics for ${resource}`);
        const average = values.reduce((a, b) => a + b, 0) / values.length;
        const ratio = average / targetValue;
        replicas = Math.abs(1 - ratio) <= this.opts.tolerance ? current : Math.ceil((values.reduce((a, b) => a + b, 0)) / targetValue);
        reason = `${resource} resource ${ratio > 1 ? 'above' : 'below'} target`;
        metrics.push({ type: 'Resource', resource: { name: resource, current: { averageValue: resource === 'cpu' ? `${Math.round(average)}m` : `${Math.round(average)}` } } });
      }
      if (!best || replicas > best.replicas) best = { replicas, metrics, reason };
    }
    return { ...best!, metrics };
  }

  private async writeStatus(hpa: HorizontalPodAutoscaler, fields: Partial<NonNullable<HorizontalPodAutoscaler['status']>>, conditions: Condition[]): Promise<void> {
    const previous = hpa.status?.conditions ?? [];
    const stamped = conditions.map((c) => {
      const prev = previous.find((p) => p.type === c.type);
      return { ...c, lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : formatTime(Date.now()) };
    });
    const status = { ...(hpa.status ?? {}), ...fields, observedGeneration: hpa.metadata.generation, conditions: stamped };
    if (JSON.stringify(status) === JSON.stringify(hpa.status)) return;
    try {
      await this.ctx.client.resource<HorizontalPodAutoscaler>(HPAS, hpa.metadata.namespace).updateStatus({ ...hpa, status });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
