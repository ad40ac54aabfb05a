import { normalizeWithBehavior, type NormalizeInput } from './behavior';
import { MetricsUnavailableError, averageValueReplicas, podsMetricReplicas, resourceReplicas, valueReplicas, type PodInfo, type PodMetric } from './replica-calculator';

const NOW = 10_000_000;
const LONG_AGO = NOW - 3_600_000;

/** A pod started long ago, ready, requesting `request` milli-cores. */
const pod = (name: string, request = 100, over: Partial<PodInfo> = {}): PodInfo => ({ name, request, phase: 'Running', deleting: false, ready: { status: 'True', lastTransitionTime: LONG_AGO }, startTime: LONG_AGO, ...over });
const metrics = (entries: Record<string, number>): Map<string, PodMetric> => new Map(Object.entries(entries).map(([n, v]) => [n, { value: v, timestamp: NOW - 1000, windowMs: 15_000 }]));

describe('resourceReplicas (upstream replica calculator)', () => {
  it.each<{ name: string; current: number; target: number; pods: PodInfo[]; usage: Record<string, number>; want: number; utilization?: number }>([
    { name: 'scales up in proportion to utilization', current: 2, target: 50, pods: [pod('a'), pod('b')], usage: { a: 100, b: 100 }, want: 4, utilization: 100 },
    { name: 'scales down in proportion', current: 4, target: 50, pods: [pod('a'), pod('b'), pod('c'), pod('d')], usage: { a: 10, b: 10, c: 10, d: 10 }, want: 1, utilization: 10 },
    { name: 'within tolerance: no change', current: 3, target: 50, pods: [pod('a'), pod('b'), pod('c')], usage: { a: 52, b: 53, c: 54 }, want: 3 },
    // 400m over a, b is 200% (ratio 4); with c counted as idle 133% (ratio 2.67): ceil(2.67 * 3) = 8.
    { name: 'a missing pod counts as idle when scaling up', current: 3, target: 50, pods: [pod('a'), pod('b'), pod('c')], usage: { a: 200, b: 200 }, want: 8 },
    { name: 'a missing pod counts as fully used when scaling down', current: 3, target: 50, pods: [pod('a'), pod('b'), pod('c')], usage: { a: 10, b: 10 }, want: 3 },
    // b is unready: its 900m do not count; scaling up counts it as idle: 100m of 200m is the target.
    { name: 'an unready pod is counted as idle when scaling up', current: 2, target: 50, pods: [pod('a'), pod('b', 100, { ready: { status: 'False', lastTransitionTime: NOW - 1000 }, startTime: NOW - 2000 })], usage: { a: 100, b: 900 }, want: 2 },
    { name: 'a pod being deleted is ignored', current: 2, target: 50, pods: [pod('a'), pod('b', 100, { deleting: true })], usage: { a: 100, b: 1000 }, want: 2 },
    // b became ready 5 s ago: its sample (window 15 s) still covers start-up and is ignored.
    { name: 'a sample from before readiness (initialization period) is ignored', current: 2, target: 50, pods: [pod('a'), pod('b', 100, { startTime: NOW - 60_000, ready: { status: 'True', lastTransitionTime: NOW - 5_000 } })], usage: { a: 100, b: 800 }, want: 2 },
    { name: 'the same sample once a window has passed', current: 2, target: 50, pods: [pod('a'), pod('b', 100, { startTime: NOW - 60_000, ready: { status: 'True', lastTransitionTime: NOW - 30_000 } })], usage: { a: 100, b: 800 }, want: 18 },
  ])('$name', ({ current, target, pods, usage, want, utilization }) => {
    const r = resourceReplicas(current, target, 'cpu', pods, metrics(usage), NOW);
    expect(r.replicas).toBe(want);
    if (utilization !== undefined) expect(r.utilization).toBe(utilization);
  });

  it.each<{ name: string; pods: PodInfo[]; usage: Record<string, number> }>([
    { name: 'no metrics at all', pods: [pod('a')], usage: {} },
    { name: 'a pod without a cpu request', pods: [pod('a', undefined as unknown as number, { request: undefined })], usage: { a: 10 } },
  ])('fails when $name', ({ pods, usage }) => {
    expect(() => resourceReplicas(1, 50, 'cpu', pods, metrics(usage), NOW)).toThrow(MetricsUnavailableError);
  });
});

describe('podsMetricReplicas (upstream calcPlainMetricReplicas; values in milli-units)', () => {
  it.each<{ name: string; current: number; target: number; pods: PodInfo[]; usage: Record<string, number>; want: number; average?: number }>([
    { name: 'scales up in proportion to the average', current: 2, target: 100, pods: [pod('a'), pod('b')], usage: { a: 300, b: 100 }, want: 4, average: 200 },
    { name: 'scales down in proportion', current: 4, target: 100, pods: [pod('a'), pod('b'), pod('c'), pod('d')], usage: { a: 20, b: 20, c: 20, d: 20 }, want: 1, average: 20 },
    { name: 'within tolerance: no change', current: 2, target: 100, pods: [pod('a'), pod('b')], usage: { a: 105, b: 105 }, want: 2 },
    // 400 over a, b is 200 each (ratio 2); c missing counts as 0 when scaling up: 133 → ceil(1.33 * 3) = 4.
    { name: 'a missing pod counts as zero when scaling up', current: 3, target: 100, pods: [pod('a'), pod('b'), pod('c')], usage: { a: 200, b: 200 }, want: 4 },
    // 10 each (ratio 0.1); c missing counts as at the target: 40 → ceil(0.4 * 3) = 2.
    { name: 'a missing pod counts as at the target when scaling down', current: 3, target: 100, pods: [pod('a'), pod('b'), pod('c')], usage: { a: 10, b: 10 }, want: 2 },
    // readiness timing is for cpu only: a pod that just became ready counts with its value.
    { name: 'a recently ready pod counts', current: 2, target: 100, pods: [pod('a'), pod('b', undefined, { startTime: NOW - 60_000, ready: { status: 'True', lastTransitionTime: NOW - 5_000 } })], usage: { a: 100, b: 300 }, want: 4 },
    // b is Pending: left out, and counted as 0 when scaling up: (300 + 0) / 2 = 150 → ceil(1.5 * 2) = 3.
    { name: 'a pending pod counts as zero when scaling up', current: 2, target: 100, pods: [pod('a'), pod('b', undefined, { phase: 'Pending' })], usage: { a: 300, b: 900 }, want: 3 },
  ])('$name', ({ current, target, pods, usage, want, average }) => {
    const r = podsMetricReplicas(current, target, pods, metrics(usage), NOW);
    expect(r.replicas).toBe(want);
    if (average !== undefined) expect(r.averageValue).toBe(average);
  });

  it('fails without metrics for any targeted pod', () => {
    expect(() => podsMetricReplicas(1, 100, [pod('a')], metrics({}), NOW)).toThrow(MetricsUnavailableError);
    expect(() => podsMetricReplicas(1, 100, [], metrics({ a: 1 }), NOW)).toThrow(MetricsUnavailableError);
  });
});

describe('Object and External metrics (upstream getUsageRatioReplicaCount, Get*PerPodMetricReplicas)', () => {
  it.each<{ name: string; current: number; usage: number; target: number; ready: number; want: number }>([
    { name: 'Value: the ratio times the ready pods', current: 2, usage: 3000, target: 1000, ready: 2, want: 6 },
    { name: 'Value: within tolerance keeps the count', current: 2, usage: 1050, target: 1000, ready: 2, want: 2 },
    { name: 'Value: only ready pods count', current: 4, usage: 2000, target: 1000, ready: 1, want: 2 },
    { name: 'Value: from zero replicas, the ratio alone', current: 0, usage: 2500, target: 1000, ready: 0, want: 3 },
  ])('$name', ({ current, usage, target, ready, want }) => {
    expect(valueReplicas(current, usage, target, ready)).toBe(want);
  });

  it.each<{ name: string; replicas: number; usage: number; target: number; want: number; average: number }>([
    { name: 'AverageValue: the value over the per-replica target', replicas: 1, usage: 3000, target: 1000, want: 3, average: 3000 },
    { name: 'AverageValue: scales down too', replicas: 4, usage: 1000, target: 1000, want: 1, average: 250 },
    { name: 'AverageValue: within tolerance keeps the count', replicas: 3, usage: 3200, target: 1000, want: 3, average: 1067 },
  ])('$name', ({ replicas, usage, target, want, average }) => {
    expect(averageValueReplicas(replicas, usage, target)).toEqual({ replicas: want, averageValue: average });
  });
});

describe('normalizeWithBehavior (stabilization, rate limits, min/max)', () => {
  const base: NormalizeInput = { now: NOW, currentReplicas: 2, desiredReplicas: 2, minReplicas: 1, maxReplicas: 10, recommendations: [], scaleEvents: [], downscaleStabilizationSeconds: 300 };
  it.each<{ name: string; input: Partial<NormalizeInput>; want: number; limited?: string }>([
    { name: 'scale up within limits', input: { desiredReplicas: 4 }, want: 4 },
    { name: 'scale up capped by the rate (+4 or double per 15 s)', input: { desiredReplicas: 20 }, want: 6, limited: 'ScaleUpLimit' },
    { name: 'scale up capped by max', input: { currentReplicas: 8, desiredReplicas: 20 }, want: 10, limited: 'TooManyReplicas' },
    { name: 'scale up rate: at most double or +4 per 15 s', input: { currentReplicas: 1, desiredReplicas: 9 }, want: 5, limited: 'ScaleUpLimit' },
    { name: 'scale up rate counts recent scale events', input: { currentReplicas: 5, desiredReplicas: 10, scaleEvents: [{ at: NOW - 5000, change: 4 }] }, want: 5, limited: 'ScaleUpLimit' },
    { name: 'scale down is stabilized by the highest recommendation in 5 min', input: { currentReplicas: 6, desiredReplicas: 2, recommendations: [{ at: NOW - 60_000, replicas: 5 }] }, want: 5 },
    { name: 'scale down after the stabilization window', input: { currentReplicas: 6, desiredReplicas: 2, recommendations: [{ at: NOW - 400_000, replicas: 5 }] }, want: 2 },
    { name: 'scale down stops at min', input: { currentReplicas: 3, desiredReplicas: 0, minReplicas: 1 }, want: 1, limited: 'TooFewReplicas' },
    { name: 'a disabled scale-down policy', input: { currentReplicas: 6, desiredReplicas: 2, behavior: { scaleDown: { selectPolicy: 'Disabled', stabilizationWindowSeconds: 0 } } }, want: 6, limited: 'ScaleDownLimit' },
  ])('$name', ({ input, want, limited }) => {
    const r = normalizeWithBehavior({ ...base, ...input });
    expect(r.replicas).toBe(want);
    expect(r.limited?.reason).toBe(limited);
  });
});
