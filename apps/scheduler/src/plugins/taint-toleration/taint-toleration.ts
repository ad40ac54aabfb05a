import { doNotScheduleTaint, findUntoleratedTaint, taintToleratedBy, type Taint, type Toleration } from '../../framework/api';
import type { CycleState } from '../../framework/cycle-state';
import { ActionType, Events } from '../../framework/events';
import type { ClusterEventWithHint, EnqueueExtensions, FilterPlugin, PluginFactory, PreScorePlugin, ScorePlugin } from '../../framework/interface';
import { Status } from '../../framework/status';
import type { NodeInfo, PodInfo } from '../../framework/types';
import { defaultNormalizeScore, stateNotFound } from '../helper';
import { TAINT_TOLERATION } from '../names';

/** The rejection reason for `taint`, as upstream words it. */
export function untoleratedTaintReason(taint: Taint): string {
  return `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`;
}

/** The first NoSchedule/NoExecute taint of the node the pod does not tolerate. */
export function untoleratedTaint(node: NodeInfo, tolerations: readonly Toleration[] | undefined): Taint | undefined {
  return findUntoleratedTaint(node.taints, tolerations, doNotScheduleTaint);
}

/** Number of PreferNoSchedule taints not tolerated by `tolerations` (already restricted to PreferNoSchedule/empty effect). */
export function countIntolerablePreferNoSchedule(taints: readonly Taint[], tolerations: readonly Toleration[]): number {
  let n = 0;
  for (const t of taints) if (t.effect === 'PreferNoSchedule' && !taintToleratedBy(t, tolerations)) n++;
  return n;
}

const PRE_SCORE_KEY = `PreScore${TAINT_TOLERATION}`;

/**
 * Filter: rejects nodes with an untolerated NoSchedule/NoExecute taint. Score: fewer
 * untolerated PreferNoSchedule taints score higher (upstream TaintToleration).
 */
export class TaintToleration implements FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions {
  readonly name = TAINT_TOLERATION;

  filter(_state: CycleState, pod: PodInfo, nodeInfo: NodeInfo): Status {
    const taint = untoleratedTaint(nodeInfo, pod.pod.spec.tolerations);
    return taint ? Status.unresolvable(untoleratedTaintReason(taint)) : Status.success();
  }

  preScore(state: CycleState, pod: PodInfo): Status {
    const tolerations = (pod.pod.spec.tolerations ?? []).filter((t) => !t.effect || t.effect === 'PreferNoSchedule');
    state.writeImmutable(PRE_SCORE_KEY, tolerations);
    return Status.success();
  }

  score(state: CycleState, _pod: PodInfo, nodeInfo: NodeInfo): number | Status {
    const tolerations = state.readImmutable<readonly Toleration[]>(PRE_SCORE_KEY);
    if (!tolerations) return stateNotFound(PRE_SCORE_KEY);
    return countIntolerablePreferNoSchedule(nodeInfo.taints, tolerations);
  }

  normalizeScore(_state: CycleState, _pod: PodInfo, _nodes: readonly NodeInfo[], scores: number[]): Status {
    defaultNormalizeScore(scores, true);
    return Status.success();
  }

  eventsToRegister(): ClusterEventWithHint[] {
    return [
      { event: Events.NodeAdd },
      { event: { resource: 'Node', action: ActionType.UpdateNodeTaint, label: 'NodeTaintChange' } },
      { event: { resource: 'UnscheduledPod', action: ActionType.UpdatePodTolerations, label: 'PodTolerationChange' } },
    ];
  }
}

export const newTaintToleration: PluginFactory = () => new TaintToleration();
