import type { CycleState, StateData } from '../framework/cycle-state';
import { MAX_NODE_SCORE, type PreFilterPlugin } from '../framework/interface';
import { Status } from '../framework/status';
import type { NodeInfo, PodInfo } from '../framework/types';

/**
 * upstream helper.DefaultNormalizeScore: scales scores in place to [0, maxPriority] relative
 * to the highest one (integer division); `reverse` turns high raw scores into low ones.
 */
export function defaultNormalizeScore(scores: number[], reverse: boolean, maxPriority = MAX_NODE_SCORE): void {
  let max = 0;
  for (const s of scores) if (s > max) max = s;
  if (max === 0) {
    if (reverse) scores.fill(maxPriority);
    return;
  }
  for (let i = 0; i < scores.length; i++) {
    const s = Math.trunc((maxPriority * scores[i]) / max);
    scores[i] = reverse ? maxPriority - s : s;
  }
}

export interface CachedCount {
  generation: number;
  count: number;
}

/**
 * Memoizes per-node results keyed by a string (e.g. namespace + selector) across scheduling
 * cycles. A node's entry stays valid while its NodeInfo generation is unchanged, so after the
 * first pod of a workload only changed nodes are recounted. At most `maxKeys` keys are kept
 * (least recently used dropped); entries of NodeInfos no longer referenced are collected.
 */
export class NodeCountCache {
  private readonly byKey = new Map<string, WeakMap<object, CachedCount>>();

  constructor(private readonly maxKeys = 64) {}

  /** The entries for `key`, marking it most recently used. */
  forKey(key: string): WeakMap<object, CachedCount> {
    let m = this.byKey.get(key);
    if (m) {
      this.byKey.delete(key);
    } else {
      m = new WeakMap();
      if (this.byKey.size >= this.maxKeys) this.byKey.delete(this.byKey.keys().next().value!);
    }
    this.byKey.set(key, m);
    return m;
  }
}

/** The count cached for `node` under its current generation, if any. */
export function lookupCount(entries: WeakMap<object, CachedCount>, node: { generation: number }): number | undefined {
  const e = entries.get(node);
  return e !== undefined && e.generation === node.generation ? e.count : undefined;
}

/** Caches `count` for `node` under its current generation; returns `count`. */
export function storeCount(entries: WeakMap<object, CachedCount>, node: { generation: number }, count: number): number {
  entries.set(node, { generation: node.generation, count });
  return count;
}

/** The Error status of a Filter or Score that finds no state its PreFilter or PreScore should have written. */
export function stateNotFound(key: string): Status {
  return Status.error(`reading ${key} from cycle state: not found`);
}

/** PreFilter state that counts existing pods: `pod` appears on (delta 1) or leaves (−1) `node` while `podToSchedule` is being placed. */
export interface PodCountingState extends StateData {
  updateWithPod(podToSchedule: PodInfo, pod: PodInfo, node: NodeInfo, delta: 1 | -1): void;
}

/**
 * The AddPod and RemovePod extensions (preemption's what-if runs) of a plugin whose PreFilter
 * wrote a {@link PodCountingState} under `key`: each updates that state, if written, by one pod.
 */
export function podCountingExtensions(key: string): Required<Pick<PreFilterPlugin, 'addPod' | 'removePod'>> {
  const update = (delta: 1 | -1) => (state: CycleState, podToSchedule: PodInfo, pod: PodInfo, nodeInfo: NodeInfo) => {
    state.read<PodCountingState>(key)?.updateWithPod(podToSchedule, pod, nodeInfo, delta);
    return Status.success();
  };
  return { addPod: update(1), removePod: update(-1) };
}
