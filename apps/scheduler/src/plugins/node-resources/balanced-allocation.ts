import { FieldError } from '@orch/apimachinery';
import type { CycleState } from '../../framework/cycle-state';
import { MAX_NODE_SCORE, type PluginRegistration, type PreScorePlugin, type ScorePlugin } from '../../framework/interface';
import { Status } from '../../framework/status';
import type { NodeInfo, PodInfo } from '../../framework/types';
import { NODE_RESOURCES_BALANCED_ALLOCATION } from '../names';
import { DEFAULT_SCORING_RESOURCES, NodeScorer, podRequestFor, validateResources, type ResourceSpec } from './resource-allocation';

export interface BalancedAllocationArgs {
  resources?: ResourceSpec[];
}

/**
 * upstream balancedResourceScorer: (1 − standard deviation of the used fractions) × 100, so
 * nodes whose resources are used evenly score higher. Fractions are capped at 1.
 */
export function balancedScore(requested: ArrayLike<number>, allocatable: ArrayLike<number>): number {
  let n = 0;
  let total = 0;
  let first = 0;
  let second = 0;
  for (let i = 0; i < requested.length; i++) {
    if (allocatable[i] === 0) continue;
    const f = Math.min(requested[i] / allocatable[i], 1);
    if (n === 0) first = f;
    else if (n === 1) second = f;
    total += f;
    n++;
  }
  let std = 0;
  if (n === 2) std = Math.abs((first - second) / 2);
  else if (n > 2) {
    const mean = total / n;
    let sum = 0;
    for (let i = 0; i < requested.length; i++) {
      if (allocatable[i] === 0) continue;
      const d = Math.min(requested[i] / allocatable[i], 1) - mean;
      sum += d * d;
    }
    std = Math.sqrt(sum / n);
  }
  return Math.trunc((1 - std) * MAX_NODE_SCORE);
}

const PRE_SCORE_KEY = `PreScore${NODE_RESOURCES_BALANCED_ALLOCATION}`;

/** Score: favors nodes whose cpu/memory (or configured resources) stay balanced with the pod (upstream NodeResourcesBalancedAllocation). */
export class BalancedAllocation implements PreScorePlugin, ScorePlugin {
  readonly name = NODE_RESOURCES_BALANCED_ALLOCATION;
  private readonly resources: readonly ResourceSpec[];
  private readonly scorer: NodeScorer;

  constructor(args: BalancedAllocationArgs = {}) {
    this.resources = args.resources?.length ? args.resources : DEFAULT_SCORING_RESOURCES;
    this.scorer = new NodeScorer(this.resources, true, balancedScore);
  }

  /** Skips best-effort pods (no requests of the scored resources). */
  preScore(state: CycleState, pod: PodInfo): Status {
    const requests = this.resources.map((r) => podRequestFor(pod, r.name, true));
    if (requests.every((r) => r === 0)) return Status.skip();
    state.writeImmutable(PRE_SCORE_KEY, requests);
    return Status.success();
  }

  score(state: CycleState, pod: PodInfo, nodeInfo: NodeInfo): number {
    const requests = state.readImmutable<readonly number[]>(PRE_SCORE_KEY) ?? this.resources.map((r) => podRequestFor(pod, r.name, true));
    return this.scorer.score(nodeInfo, requests);
  }
}

export function validateBalancedAllocationArgs(args: unknown, path: string): FieldError[] {
  if (typeof args !== 'object' || args === null) return [FieldError.typeInvalid(path, args, 'must be an object')];
  return validateResources((args as BalancedAllocationArgs).resources, `${path}.resources`);
}

export const balancedAllocationRegistration: PluginRegistration = {
  factory: (args) => new BalancedAllocation((args ?? {}) as BalancedAllocationArgs),
  validateArgs: validateBalancedAllocationArgs,
};
