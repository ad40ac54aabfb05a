import { Events } from '../../framework/events';
import type { ClusterEventWithHint, EnqueueExtensions, FilterPlugin, PluginFactory } from '../../framework/interface';
import { Status } from '../../framework/status';
import type { NodeInfo, PodInfo } from '../../framework/types';
import { NODE_NAME } from '../names';

export const ERR_REASON_NODE_NAME = "node(s) didn't match the requested node name";

/** True when the pod names no node or names this one. */
export function fitsNodeName(pod: PodInfo, node: NodeInfo): boolean {
  const want = pod.pod.spec.nodeName;
  return !want || want === node.name;
}

const REJECT = Status.unresolvable(ERR_REASON_NODE_NAME).withPlugin(NODE_NAME);

/** Filter: a pod with `spec.nodeName` fits only that node (upstream NodeName). */
export class NodeName implements FilterPlugin, EnqueueExtensions {
  readonly name = NODE_NAME;

  filter(_state: unknown, pod: PodInfo, nodeInfo: NodeInfo): Status {
    return fitsNodeName(pod, nodeInfo) ? Status.success() : REJECT;
  }

  eventsToRegister(): ClusterEventWithHint[] {
    return [{ event: Events.NodeAdd }];
  }
}

export const newNodeName: PluginFactory = () => new NodeName();
