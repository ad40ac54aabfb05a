import { TAINT_NODE_UNSCHEDULABLE, taintToleratedBy, type Taint } from '../../framework/api';
import { ActionType, Events } from '../../framework/events';
import type { ClusterEventWithHint, EnqueueExtensions, FilterPlugin, PluginFactory } from '../../framework/interface';
import { Status } from '../../framework/status';
import type { NodeInfo, PodInfo } from '../../framework/types';
import { NODE_UNSCHEDULABLE } from '../names';

export const ERR_REASON_UNSCHEDULABLE = 'node(s) were unschedulable';
export const ERR_REASON_UNKNOWN_CONDITION = 'node(s) had unknown conditions';

const UNSCHEDULABLE_TAINT: Taint = { key: TAINT_NODE_UNSCHEDULABLE, effect: 'NoSchedule' };

/** True unless the node is cordoned (`spec.unschedulable`) and the pod does not tolerate `node.orch.io/unschedulable:NoSchedule`. */
export function fitsSchedulable(pod: PodInfo, node: NodeInfo): boolean {
  if (!node.node?.spec?.unschedulable) return true;
  return taintToleratedBy(UNSCHEDULABLE_TAINT, pod.pod.spec.tolerations);
}

const REJECT = Status.unresolvable(ERR_REASON_UNSCHEDULABLE).withPlugin(NODE_UNSCHEDULABLE);
const UNKNOWN = Status.unresolvable(ERR_REASON_UNKNOWN_CONDITION).withPlugin(NODE_UNSCHEDULABLE);

/** Filter: cordoned nodes take only pods tolerating the unschedulable taint (upstream NodeUnschedulable). */
export class NodeUnschedulable implements FilterPlugin, EnqueueExtensions {
  readonly name = NODE_UNSCHEDULABLE;

  filter(_state: unknown, pod: PodInfo, nodeInfo: NodeInfo): Status {
    if (!nodeInfo.node) return UNKNOWN;
    return fitsSchedulable(pod, nodeInfo) ? Status.success() : REJECT;
  }

  eventsToRegister(): ClusterEventWithHint[] {
    return [{ event: Events.NodeAdd }, { event: { resource: 'Node', action: ActionType.UpdateNodeTaint, label: 'NodeTaintChange' } }];
  }
}

export const newNodeUnschedulable: PluginFactory = () => new NodeUnschedulable();
