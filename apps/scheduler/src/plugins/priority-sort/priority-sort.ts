import type { PluginFactory, QueueSortPlugin } from '../../framework/interface';
import type { QueuedPodInfo } from '../../framework/types';
import { PRIORITY_SORT } from '../names';

/** upstream PrioritySort.Less: higher priority first, then the pod queued earlier. */
export function priorityLess(a: QueuedPodInfo, b: QueuedPodInfo): boolean {
  const pa = a.podInfo.priority;
  const pb = b.podInfo.priority;
  return pa > pb || (pa === pb && a.timestamp < b.timestamp);
}

/** QueueSort by `spec.priority`, then queue timestamp. */
export class PrioritySort implements QueueSortPlugin {
  readonly name = PRIORITY_SORT;
  less(a: QueuedPodInfo, b: QueuedPodInfo): boolean {
    return priorityLess(a, b);
  }
}

export const newPrioritySort: PluginFactory = () => new PrioritySort();
