import { FieldError } from '@orch/apimachinery';
import { MAX_NODE_SCORE } from '../../framework/interface';
import { CPU, EPHEMERAL_STORAGE, isScalarResourceName, MEMORY } from '../../framework/resource';
import type { NodeInfo, PodInfo } from '../../framework/types';

/** A resource and its weight in a scoring strategy. */
export interface ResourceSpec {
  name: string;
  weight: number;
}

export const DEFAULT_SCORING_RESOURCES: readonly ResourceSpec[] = [
  { name: CPU, weight: 1 },
  { name: MEMORY, weight: 1 },
];

/**
 * The pod's request of `name` for scoring (upstream calculatePodResourceRequest): with
 * `useRequested` false, cpu/memory use the non-zero defaults for containers without requests.
 */
export function podRequestFor(pod: PodInfo, name: string, useRequested: boolean): number {
  if (!useRequested && name === CPU) return pod.nonZeroCPU;
  if (!useRequested && name === MEMORY) return pod.nonZeroMemory;
  return pod.requests.get(name);
}

/**
 * upstream calculateResourceAllocatableRequest: [allocatable, requested incl. the pod] of one
 * resource on the node; [0, 0] for a scalar resource the pod does not request (not scored).
 */
export function allocatableAndRequested(node: NodeInfo, name: string, podRequest: number, useRequested: boolean): [number, number] {
  if (podRequest === 0 && isScalarResourceName(name)) return [0, 0];
  const requested = useRequested ? node.requested : node.nonZeroRequested;
  switch (name) {
    case CPU:
      return [node.allocatable.milliCPU, requested.milliCPU + podRequest];
    case MEMORY:
      return [node.allocatable.memory, requested.memory + podRequest];
    case EPHEMERAL_STORAGE:
      return [node.allocatable.ephemeralStorage, node.requested.ephemeralStorage + podRequest];
    default: {
      const alloc = node.allocatable.scalar?.get(name);
      return alloc === undefined ? [0, 0] : [alloc, node.requested.get(name) + podRequest];
    }
  }
}

/** Scores requested vs allocatable vectors (same order as the strategy's resources) into [0, 100]. */
export type ResourceScorer = (requested: ArrayLike<number>, allocatable: ArrayLike<number>) => number;

/** upstream leastRequestedScore: the free fraction × 100 (0 when over capacity). */
export function leastRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.floor(((capacity - requested) * MAX_NODE_SCORE) / capacity);
}

/** upstream mostRequestedScore: the used fraction × 100, capped at capacity. */
export function mostRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0) return 0;
  return Math.floor((Math.min(requested, capacity) * MAX_NODE_SCORE) / capacity);
}

/** The weighted mean of `perResource` over resources the node has. */
export function weightedScorer(resources: readonly ResourceSpec[], perResource: (req: number, cap: number) => number): ResourceScorer {
  return (requested, allocatable) => {
    let score = 0;
    let weightSum = 0;
    for (let i = 0; i < requested.length; i++) {
      if (allocatable[i] === 0) continue;
      score += perResource(requested[i], allocatable[i]) * resources[i].weight;
      weightSum += resources[i].weight;
    }
    return weightSum === 0 ? 0 : Math.floor(score / weightSum);
  };
}

/**
 * Scores nodes for one pod without allocating per node: the vectors are reused for every
 * node (the scheduler scores one node at a time).
 */
export class NodeScorer {
  private readonly requested: Float64Array;
  private readonly allocatable: Float64Array;

  constructor(
    private readonly resources: readonly ResourceSpec[],
    private readonly useRequested: boolean,
    private readonly scorer: ResourceScorer,
  ) {
    this.requested = new Float64Array(resources.length);
    this.allocatable = new Float64Array(resources.length);
  }

  /** The node's score for a pod requesting `podRequests` (aligned with the resources). */
  score(node: NodeInfo, podRequests: readonly number[]): number {
    const used = this.useRequested ? node.requested : node.nonZeroRequested;
    for (let i = 0; i < this.resources.length; i++) {
      const name = this.resources[i].name;
      let alloc: number;
      let req: number;
      if (name === CPU) {
        alloc = node.allocatable.milliCPU;
        req = used.milliCPU + podRequests[i];
      } else if (name === MEMORY) {
        alloc = node.allocatable.memory;
        req = used.memory + podRequests[i];
      } else {
        [alloc, req] = allocatableAndRequested(node, name, podRequests[i], this.useRequested);
      }
      this.allocatable[i] = alloc;
      this.requested[i] = alloc === 0 ? 0 : req;
    }
    return this.scorer(this.requested, this.allocatable);
  }
}

/** Validates a list of scored resources (names unique, weights 1–100). */
export function validateResources(resources: unknown, path: string): FieldError[] {
  if (resources === undefined) return [];
  if (!Array.isArray(resources)) return [FieldError.typeInvalid(path, resources, 'must be a list')];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  resources.forEach((r: ResourceSpec, i) => {
    if (!r || typeof r.name !== 'string' || !r.name) errs.push(FieldError.required(`${path}[${i}].name`));
    else if (seen.has(r.name)) errs.push(FieldError.duplicate(`${path}[${i}].name`, r.name));
    else seen.add(r.name);
    if (!Number.isInteger(r?.weight) || r.weight < 1 || r.weight > 100) {
      errs.push(FieldError.invalid(`${path}[${i}].weight`, r?.weight, `resource weight of ${r?.name} should be in range [1, 100]`));
    }
  });
  return errs;
}
