import { AffinityIndex } from './affinity-index';
import type { Node, Pod } from './api';
import { NodeInfo, PodInfo } from './types';

/**
 * The cluster as one scheduling cycle sees it (upstream cache.Snapshot): NodeInfos by name and
 * three lists that plugins iterate instead of scanning every pod. Plugins only read it; the
 * cache refreshes it in place between cycles (SchedulerCache.updateSnapshot).
 */
export class Snapshot {
  readonly nodeInfoMap = new Map<string, NodeInfo>();
  /** Nodes with a node object, zones interleaved (upstream nodeTree order). */
  nodeInfoList: NodeInfo[] = [];
  /** Nodes with at least one pod that has pod affinity or anti-affinity. */
  havePodsWithAffinityList: NodeInfo[] = [];
  /** Nodes with at least one pod that has required pod anti-affinity. */
  havePodsWithRequiredAntiAffinityList: NodeInfo[] = [];
  /** Normalized image name → number of nodes that have it. */
  imageNumNodes = new Map<string, number>();
  /** The generation of the newest NodeInfo copied in. */
  generation = 0;
  /** Pods and affinity terms of the listed nodes, by label. */
  readonly affinityIndex = new AffinityIndex();

  /** A snapshot built from objects (upstream NewSnapshot; for tests and one-off use). */
  static fromObjects(nodes: readonly Node[], pods: readonly Pod[] = []): Snapshot {
    const s = new Snapshot();
    for (const n of nodes) s.nodeInfoMap.set(n.metadata.name ?? '', new NodeInfo(n));
    for (const p of pods) {
      const name = p.spec.nodeName;
      if (!name) continue;
      let ni = s.nodeInfoMap.get(name);
      if (!ni) s.nodeInfoMap.set(name, (ni = new NodeInfo()));
      ni.addPod(new PodInfo(p));
    }
    s.rebuildLists();
    for (const ni of s.nodeInfoList) for (const p of ni.pods) s.affinityIndex.addPod(p);
    return s;
  }

  /** Makes `existing` (a NodeInfo of this snapshot) hold `fresh`'s state, keeping the indexes in step. */
  refresh(existing: NodeInfo, fresh: NodeInfo): void {
    if (existing.pods !== fresh.pods) {
      const old = new Set(existing.pods);
      for (const p of fresh.pods) if (!old.delete(p)) this.affinityIndex.addPod(p);
      for (const p of old) this.affinityIndex.removePod(p);
    }
    existing.copyFrom(fresh);
  }

  /** Drops a node and its pods from the snapshot (the lists must be rebuilt after). */
  remove(name: string): void {
    const ni = this.nodeInfoMap.get(name);
    if (!ni) return;
    for (const p of ni.pods) this.affinityIndex.removePod(p);
    this.nodeInfoMap.delete(name);
  }

  get(nodeName: string): NodeInfo | undefined {
    return this.nodeInfoMap.get(nodeName);
  }

  numNodes(): number {
    return this.nodeInfoList.length;
  }

  /** Rebuilds the lists and image counts from the map, in map order. */
  private rebuildLists(): void {
    this.nodeInfoList = [...this.nodeInfoMap.values()].filter((n) => n.node !== undefined);
    this.rebuildAffinityLists();
    this.imageNumNodes = new Map();
    for (const ni of this.nodeInfoList) for (const img of ni.imageSizes.keys()) this.imageNumNodes.set(img, (this.imageNumNodes.get(img) ?? 0) + 1);
  }

  /** Rebuilds only the two affinity lists from nodeInfoList. */
  rebuildAffinityLists(): void {
    this.havePodsWithAffinityList = this.nodeInfoList.filter((n) => n.podsWithAffinity.length > 0);
    this.havePodsWithRequiredAntiAffinityList = this.nodeInfoList.filter((n) => n.podsWithRequiredAntiAffinity.length > 0);
  }
}
