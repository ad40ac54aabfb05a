// Scaling behavior of autoscaling/v2 (upstream horizontal.go normalizeDesiredReplicasWithBehaviors):
// stabilization windows over past recommendations, then rate limits from the scale-up and
// scale-down policies over the scale events within their periods, then min/max replicas.
import type { Behavior, ScalingRules } from '../../framework/api';

/** upstream defaults (GenerateHPAScaleUpRules / GenerateHPAScaleDownRules). */
export const DEFAULT_SCALE_UP: Required<ScalingRules> = {
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: 15 },
    { type: 'Percent', value: 100, periodSeconds: 15 },
  ],
};

export function defaultScaleDown(downscaleStabilizationSeconds: number): Required<ScalingRules> {
  return { stabilizationWindowSeconds: downscaleStabilizationSeconds, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] };
}

export interface Recommendation {
  at: number;
  replicas: number;
}

export interface ScaleEvent {
  at: number;
  /** Replicas added (positive) or removed (negative). */
  change: number;
}

export interface NormalizeInput {
  now: number;
  currentReplicas: number;
  /** What the metrics ask for. */
  desiredReplicas: number;
  minReplicas: number;
  maxReplicas: number;
  behavior?: Behavior;
  /** Past recommendations of this autoscaler (this call's is added by the caller). */
  recommendations: readonly Recommendation[];
  /** Past scale events of this autoscaler. */
  scaleEvents: readonly ScaleEvent[];
  downscaleStabilizationSeconds: number;
}

export interface NormalizeResult {
  replicas: number;
  /** The stabilized recommendation (to remember). */
  recommendation: number;
  /** ScalingLimited condition: reason and message when a limit applied, undefined otherwise. */
  limited?: { reason: string; message: string };
}

function rules(input: NormalizeInput): { up: Required<ScalingRules>; down: Required<ScalingRules> } {
  const down = defaultScaleDown(input.downscaleStabilizationSeconds);
  return {
    up: { ...DEFAULT_SCALE_UP, ...(input.behavior?.scaleUp ?? {}) } as Required<ScalingRules>,
    down: { ...down, ...(input.behavior?.scaleDown ?? {}) } as Required<ScalingRules>,
  };
}

/** Replicas added (or removed, for scale down) within a policy's period. */
function changeWithin(events: readonly ScaleEvent[], now: number, periodSeconds: number, up: boolean): number {
  return events.filter((e) => e.at > now - periodSeconds * 1000 && (up ? e.change > 0 : e.change < 0)).reduce((n, e) => n + Math.abs(e.change), 0);
}

function scaleUpLimit(current: number, events: readonly ScaleEvent[], r: Required<ScalingRules>, now: number): number {
  if (r.selectPolicy === 'Disabled') return current;
  let result = r.selectPolicy === 'Min' ? Infinity : -Infinity;
  for (const p of r.policies) {
    const periodStart = current - changeWithin(events, now, p.periodSeconds, true);
    const proposed = p.type === 'Pods' ? periodStart + p.value : Math.ceil(periodStart * (1 + p.value / 100));
    result = r.selectPolicy === 'Min' ? Math.min(result, proposed) : Math.max(result, proposed);
  }
  return result;
}

function scaleDownLimit(current: number, events: readonly ScaleEvent[], r: Required<ScalingRules>, now: number): number {
  if (r.selectPolicy === 'Disabled') return current;
  let result = r.selectPolicy === 'Min' ? -Infinity : Infinity;
  for (const p of r.policies) {
    const periodStart = current + changeWithin(events, now, p.periodSeconds, false);
    const proposed = p.type === 'Pods' ? periodStart - p.value : Math.ceil(periodStart * (1 - p.value / 100));
    result = r.selectPolicy === 'Min' ? Math.max(result, proposed) : Math.min(result, proposed);
  }
  return result;
}

/** The replicas to set: stabilized, rate-limited by the policies, within min and max (with the ScalingLimited reason). */
export function normalizeWithBehavior(input: NormalizeInput): NormalizeResult {
  const { up, down } = rules(input);
  const now = input.now;
  // Stabilization: scale up to the lowest, down to the highest, recommendation within its window.
  let upRecommendation = input.desiredReplicas;
  let downRecommendation = input.desiredReplicas;
  for (const r of input.recommendations) {
    if (r.at > now - up.stabilizationWindowSeconds * 1000) upRecommendation = Math.min(upRecommendation, r.replicas);
    if (r.at > now - down.stabilizationWindowSeconds * 1000) downRecommendation = Math.max(downRecommendation, r.replicas);
  }
  let recommendation = input.currentReplicas;
  if (recommendation < upRecommendation) recommendation = upRecommendation;
  if (recommendation > downRecommendation) recommendation = downRecommendation;

  const current = input.currentReplicas;
  let replicas = recommendation;
  let limited: NormalizeResult['limited'];
  if (recommendation > current) {
    const limit = Math.max(current, scaleUpLimit(current, input.scaleEvents, up, now));
    const maximum = Math.min(input.maxReplicas, limit);
    if (recommendation > maximum) {
      replicas = maximum;
      limited = maximum === input.maxReplicas ? { reason: 'TooManyReplicas', message: 'the desired replica count is more than the maximum replica count' } : { reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate' };
    }
  } else if (recommendation < current) {
    const limit = Math.min(current, scaleDownLimit(current, input.scaleEvents, down, now));
    const minimum = Math.max(input.minReplicas, limit);
    if (recommendation < minimum) {
      replicas = minimum;
      limited = minimum === input.minReplicas ? { reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' } : { reason: 'ScaleDownLimit', message: 'the desired replica count is decreasing faster than the maximum scale rate' };
    }
  }
  return { replicas, recommendation, limited };
}
