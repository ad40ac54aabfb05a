import { podKey, type Pod } from '../framework/api';
import type { PodNominator } from '../framework/framework';
import type { PodInfo } from '../framework/types';

/**
 * Pods nominated to nodes by preemption (upstream nominator): the space freed for them is
 * kept while they wait, by having later filters count them on that node.
 */
export class Nominator implements PodNominator {
  private readonly byNode = new Map<string, PodInfo[]>();
  private readonly nodeOf = new Map<string, string>();

  /**
   * Records `pi` as nominated to `nodeName` (undefined: its `status.nominatedNodeName`; "":
   * none); replaces an earlier nomination.
   */
  add(pi: PodInfo, nodeName?: string): void {
    this.delete(pi.key);
    const node = nodeName ?? pi.pod.status?.nominatedNodeName;
    if (!node) return;
    this.nodeOf.set(pi.key, node);
    const list = this.byNode.get(node);
    if (list) list.push(pi);
    else this.byNode.set(node, [pi]);
  }

  /** Forgets the pod's nomination, if any. */
  delete(key: string): void {
    const node = this.nodeOf.get(key);
    if (node === undefined) return;
    this.nodeOf.delete(key);
    const rest = (this.byNode.get(node) ?? []).filter((p) => p.key !== key);
    if (rest.length) this.byNode.set(node, rest);
    else this.byNode.delete(node);
  }

  /**
   * upstream UpdateNominatedPod: refreshes the pod object; keeps a scheduler-made nomination
   * when neither version of the pod states one (the status update may not have landed yet).
   */
  update(oldPod: Pod, pi: PodInfo): void {
    let keep: string | undefined;
    if (!oldPod.status?.nominatedNodeName && !pi.pod.status?.nominatedNodeName) keep = this.nodeOf.get(podKey(oldPod));
    this.delete(podKey(oldPod));
    this.add(pi, keep);
  }

  nominatedPodsForNode(nodeName: string): readonly PodInfo[] {
    return this.byNode.get(nodeName) ?? [];
  }

  isEmpty(): boolean {
    return this.nodeOf.size === 0;
  }
}
