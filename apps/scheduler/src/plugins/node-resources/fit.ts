import { FieldError } from '@orch/apimachinery';
import type { Node, Pod } from '../../framework/api';
import type { CycleState } from '../../framework/cycle-state';
import { ActionType, Events } from '../../framework/events';
import type { ClusterEventWithHint, FilterScorePlugin, PluginRegistration, QueueingHint } from '../../framework/interface';
import { isExtendedResourceName, type Resource } from '../../framework/resource';
import { Status } from '../../framework/status';
import { NodeInfo, PodInfo } from '../../framework/types';
import { NODE_RESOURCES_FIT } from '../names';
import {
  DEFAULT_SCORING_RESOURCES,
  leastRequestedScore,
  mostRequestedScore,
  NodeScorer,
  podRequestFor,
  validateResources,
  weightedScorer,
  type ResourceSpec,
} from './resource-allocation';

export type ScoringStrategyType = 'LeastAllocated' | 'MostAllocated';
export const SCORING_STRATEGIES: readonly ScoringStrategyType[] = ['LeastAllocated', 'MostAllocated'];

export interface NodeResourcesFitArgs {
  /** Extended resources whose requests are not checked. */
  ignoredResources?: string[];
  /** Extended resource groups (the part before `/`) not checked. */
  ignoredResourceGroups?: string[];
  scoringStrategy?: { type?: ScoringStrategyType; resources?: ResourceSpec[] };
}

/** One resource the node lacks for the pod (upstream InsufficientResource). */
export interface InsufficientResource {
  resourceName: string;
  reason: string;
  requested: number;
  used: number;
  capacity: number;
}

/**
 * upstream fitsRequest: every resource the pod requests (and one more pod slot) is available
 * on the node; returns what is missing. Ignored extended resources are not checked.
 */
export function fitsRequest(
  request: Resource,
  node: NodeInfo,
  ignored: ReadonlySet<string> = new Set(),
  ignoredGroups: ReadonlySet<string> = new Set(),
): InsufficientResource[] {
  const out: InsufficientResource[] = [];
  const alloc = node.allocatable;
  const used = node.requested;
  if (node.pods.length + 1 > alloc.allowedPodNumber) {
    out.push({ resourceName: 'pods', reason: 'Too many pods', requested: 1, used: node.pods.length, capacity: alloc.allowedPodNumber });
  }
  if (request.isZero()) return out;
  if (request.milliCPU > 0 && request.milliCPU > alloc.milliCPU - used.milliCPU) {
    out.push({ resourceName: 'cpu', reason: 'Insufficient cpu', requested: request.milliCPU, used: used.milliCPU, capacity: alloc.milliCPU });
  }
  if (request.memory > 0 && request.memory > alloc.memory - used.memory) {
    out.push({ resourceName: 'memory', reason: 'Insufficient memory', requested: request.memory, used: used.memory, capacity: alloc.memory });
  }
  if (request.ephemeralStorage > 0 && request.ephemeralStorage > alloc.ephemeralStorage - used.ephemeralStorage) {
    out.push({
      resourceName: 'ephemeral-storage',
      reason: 'Insufficient ephemeral-storage',
      requested: request.ephemeralStorage,
      used: used.ephemeralStorage,
      capacity: alloc.ephemeralStorage,
    });
  }
  for (const [name, qty] of request.scalar ?? []) {
    if (qty === 0) continue;
    if (isExtendedResourceName(name) && (ignored.has(name) || ignoredGroups.has(name.split('/')[0]))) continue;
    const capacity = alloc.scalar?.get(name) ?? 0;
    const inUse = used.scalar?.get(name) ?? 0;
    if (qty > capacity - inUse) out.push({ resourceName: name, reason: `Insufficient ${name}`, requested: qty, used: inUse, capacity });
  }
  return out;
}

/** True when cpu, memory, ephemeral storage and the pod slot fit and no scalar resource is requested (the common case, without allocation). */
function fitsFast(request: Resource, node: NodeInfo): boolean {
  const alloc = node.allocatable;
  const used = node.requested;
  return (
    request.scalar === undefined &&
    node.pods.length + 1 <= alloc.allowedPodNumber &&
    request.milliCPU <= alloc.milliCPU - used.milliCPU &&
    request.memory <= alloc.memory - used.memory &&
    request.ephemeralStorage <= alloc.ephemeralStorage - used.ephemeralStorage
  );
}

const PRE_FILTER_KEY = `PreFilter${NODE_RESOURCES_FIT}`;
const PRE_SCORE_KEY = `PreScore${NODE_RESOURCES_FIT}`;

/**
 * Filter: the node has room for the pod's requests (cpu, memory, ephemeral-storage, extended
 * resources, pod count). Score: LeastAllocated (spread) or MostAllocated (bin-pack) over the
 * configured resources, using non-zero defaults for unset cpu/memory (upstream NodeResourcesFit).
 */
export class NodeResourcesFit implements FilterScorePlugin {
  readonly name = NODE_RESOURCES_FIT;
  private readonly ignored: ReadonlySet<string>;
  private readonly ignoredGroups: ReadonlySet<string>;
  readonly strategy: ScoringStrategyType;
  private readonly resources: readonly ResourceSpec[];
  private readonly scorer: NodeScorer;

  constructor(args: NodeResourcesFitArgs = {}) {
    this.ignored = new Set(args.ignoredResources ?? []);
    this.ignoredGroups = new Set(args.ignoredResourceGroups ?? []);
    this.strategy = args.scoringStrategy?.type ?? 'LeastAllocated';
    this.resources = args.scoringStrategy?.resources?.length ? args.scoringStrategy.resources : DEFAULT_SCORING_RESOURCES;
    this.scorer = new NodeScorer(this.resources, false, weightedScorer(this.resources, this.strategy === 'MostAllocated' ? mostRequestedScore : leastRequestedScore));
  }

  preFilter(state: CycleState, pod: PodInfo): Status {
    state.writeImmutable(PRE_FILTER_KEY, pod.requests);
    return Status.success();
  }

  filter(state: CycleState, pod: PodInfo, nodeInfo: NodeInfo): Status {
    const request = state.readImmutable<Resource>(PRE_FILTER_KEY) ?? pod.requests;
    if (fitsFast(request, nodeInfo)) return Status.success();
    const missing = fitsRequest(request, nodeInfo, this.ignored, this.ignoredGroups);
    return missing.length ? Status.unschedulable(...missing.map((m) => m.reason)) : Status.success();
  }

  preScore(state: CycleState, pod: PodInfo): Status {
    state.writeImmutable(PRE_SCORE_KEY, this.resources.map((r) => podRequestFor(pod, r.name, false)));
    return Status.success();
  }

  score(state: CycleState, pod: PodInfo, nodeInfo: NodeInfo): number {
    const requests = state.readImmutable<readonly number[]>(PRE_SCORE_KEY) ?? this.resources.map((r) => podRequestFor(pod, r.name, false));
    return this.scorer.score(nodeInfo, requests);
  }

  eventsToRegister(): ClusterEventWithHint[] {
    const nodeHint = (pod: Pod, _old: unknown, newObj: unknown): QueueingHint => {
      return fitsRequest(new PodInfo(pod).requests, new NodeInfo(newObj as Node), this.ignored, this.ignoredGroups).length === 0 ? 'Queue' : 'QueueSkip';
    };
    return [
      { event: Events.AssignedPodDelete },
      { event: { resource: 'Pod', action: ActionType.UpdatePodScaleDown, label: 'AssignedPodScaleDown' } },
      { event: Events.NodeAdd, hint: nodeHint },
      { event: { resource: 'Node', action: ActionType.UpdateNodeAllocatable, label: 'NodeAllocatableChange' }, hint: nodeHint },
      { event: { resource: 'UnscheduledPod', action: ActionType.UpdatePodScaleDown, label: 'PodScaleDown' } },
    ];
  }
}

/** Validates NodeResourcesFitArgs (upstream ValidateNodeResourcesFitArgs). */
export function validateNodeResourcesFitArgs(args: unknown, path: string): FieldError[] {
  if (typeof args !== 'object' || args === null) return [FieldError.typeInvalid(path, args, 'must be an object')];
  const a = args as NodeResourcesFitArgs;
  const errs: FieldError[] = [];
  (a.ignoredResourceGroups ?? []).forEach((g, i) => {
    if (g.includes('/')) errs.push(FieldError.invalid(`${path}.ignoredResourceGroups[${i}]`, g, 'resource group name can\'t contain "/"'));
  });
  const type = a.scoringStrategy?.type;
  if (type !== undefined && !SCORING_STRATEGIES.includes(type)) errs.push(FieldError.notSupported(`${path}.scoringStrategy.type`, type, [...SCORING_STRATEGIES]));
  errs.push(...validateResources(a.scoringStrategy?.resources, `${path}.scoringStrategy.resources`));
  return errs;
}

export const nodeResourcesFitRegistration: PluginRegistration = {
  factory: (args) => new NodeResourcesFit((args ?? {}) as NodeResourcesFitArgs),
  validateArgs: validateNodeResourcesFitArgs,
};
