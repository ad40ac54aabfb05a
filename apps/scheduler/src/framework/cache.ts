import { LABEL_REGION, LABEL_ZONE, podKey, podRef, type Node, type Pod } from './api';
import type { Snapshot } from './snapshot';
import { NodeInfo, normalizedImageName, PodInfo } from './types';

/** upstream GetZoneKey: region and zone of a node ("" when it has neither). */
export function zoneKey(node: Node): string {
  const labels = node.metadata.labels ?? {};
  const region = labels[LABEL_REGION] ?? '';
  const zone = labels[LABEL_ZONE] ?? '';
  return region === '' && zone === '' ? '' : `${region}:\u0000:${zone}`;
}

/** Node names by zone; `list()` interleaves zones so filtering visits zones evenly (upstream nodeTree). */
export class NodeTree {
  private readonly tree = new Map<string, string[]>();
  private readonly zones: string[] = [];
  numNodes = 0;

  add(node: Node): void {
    const zone = zoneKey(node);
    const name = node.metadata.name ?? '';
    let names = this.tree.get(zone);
    if (!names) {
      this.tree.set(zone, (names = []));
      this.zones.push(zone);
    }
    if (names.includes(name)) return;
    names.push(name);
    this.numNodes++;
  }

  remove(node: Node): void {
    const zone = zoneKey(node);
    const names = this.tree.get(zone);
    const i = names?.indexOf(node.metadata.name ?? '') ?? -1;
    if (!names || i < 0) return;
    names.splice(i, 1);
    this.numNodes--;
    if (names.length === 0) {
      this.tree.delete(zone);
      this.zones.splice(this.zones.indexOf(zone), 1);
    }
  }

  /** Moves the node when its zone labels changed. */
  update(oldNode: Node | undefined, newNode: Node): void {
    if (oldNode && zoneKey(oldNode) === zoneKey(newNode)) return;
    if (oldNode) this.remove(oldNode);
    this.add(newNode);
  }

  /** All names, one per zone in turn. */
  list(): string[] {
    const out: string[] = [];
    const lists = this.zones.map((z) => this.tree.get(z)!);
    for (let i = 0; out.length < this.numNodes; i++) {
      for (const names of lists) if (i < names.length) out.push(names[i]);
    }
    return out;
  }
}

interface Item {
  info: NodeInfo;
  prev?: Item;
  next?: Item;
}

interface PodState {
  pod: Pod;
  assumed: boolean;
  bindingFinished: boolean;
}

/**
 * The scheduler's incremental view of the cluster (upstream internal/cache): NodeInfos kept up
 * to date from node and pod events, plus "assumed" pods placed by the scheduler before their
 * binding is confirmed. NodeInfos form a list ordered by last change, so `updateSnapshot`
 * copies only those changed since the snapshot's generation. Feeds one Snapshot.
 */
export class SchedulerCache {
  private readonly nodes = new Map<string, Item>();
  private head?: Item;
  private readonly nodeTree = new NodeTree();
  private readonly pods = new Map<string, PodState>();
  private readonly imageNodes = new Map<string, Set<string>>();
  private imagesChanged = false;

  // ---------------------------------------------------------------- pods

  /**
   * Places `pi` (whose `spec.nodeName` is set) on its node before binding, so the next cycles
   * see its resources. Throws if the pod is already in the cache.
   */
  assumePod(pi: PodInfo): void {
    if (this.pods.has(pi.key)) throw new Error(`pod ${podRef(pi.pod)} is in the cache, so can't be assumed`);
    this.addPodInfo(pi);
    this.pods.set(pi.key, { pod: pi.pod, assumed: true, bindingFinished: false });
  }

  /** The bind call for an assumed pod returned. */
  finishBinding(pod: Pod): void {
    const s = this.pods.get(podKey(pod));
    if (s?.assumed) s.bindingFinished = true;
  }

  /** Undoes `assumePod` (binding failed). No-op unless the pod is still assumed. */
  forgetPod(pod: Pod): void {
    const key = podKey(pod);
    const s = this.pods.get(key);
    if (!s?.assumed) return;
    this.removePodFromNode(key, s.pod.spec.nodeName ?? '');
    this.pods.delete(key);
  }

  isAssumedPod(pod: Pod): boolean {
    return this.pods.get(podKey(pod))?.assumed ?? false;
  }

  /** The cached pod object (assumed or confirmed). */
  getPod(key: string): Pod | undefined {
    return this.pods.get(key)?.pod;
  }

  /**
   * A bound pod was observed: confirms an assumed pod (moving it if it landed on another
   * node) or adds it. Observing an already cached pod updates it (idempotent on relists).
   */
  addPod(pod: Pod): void {
    const key = podKey(pod);
    const s = this.pods.get(key);
    if (s) {
      this.replacePod(key, s.pod, pod);
      s.pod = pod;
      s.assumed = false;
      return;
    }
    this.addPodInfo(new PodInfo(pod));
    this.pods.set(key, { pod, assumed: false, bindingFinished: false });
  }

  /** A cached bound pod changed. Unknown pods are added. */
  updatePod(_oldPod: Pod, newPod: Pod): void {
    this.addPod(newPod);
  }

  /** A bound pod was deleted. */
  removePod(pod: Pod): void {
    const key = podKey(pod);
    const s = this.pods.get(key);
    if (!s) return;
    this.removePodFromNode(key, s.pod.spec.nodeName ?? '');
    this.pods.delete(key);
  }

  podCount(): number {
    return this.pods.size;
  }

  private replacePod(key: string, oldPod: Pod, newPod: Pod): void {
    this.removePodFromNode(key, oldPod.spec.nodeName ?? '');
    this.addPodInfo(new PodInfo(newPod));
  }

  private addPodInfo(pi: PodInfo): void {
    const name = pi.pod.spec.nodeName ?? '';
    let item = this.nodes.get(name);
    if (!item) this.nodes.set(name, (item = { info: new NodeInfo() }));
    item.info.addPod(pi);
    this.moveToHead(item);
  }

  private removePodFromNode(key: string, nodeName: string): void {
    const item = this.nodes.get(nodeName);
    if (!item || !item.info.removePod(key)) return;
    // A node already deleted from the API lingers only while pods reference it.
    if (!item.info.node && item.info.pods.length === 0) this.removeItem(nodeName, item);
    else this.moveToHead(item);
  }

  // ---------------------------------------------------------------- nodes

  addNode(node: Node): void {
    const name = node.metadata.name ?? '';
    let item = this.nodes.get(name);
    const old = item?.info.node;
    if (!item) this.nodes.set(name, (item = { info: new NodeInfo() }));
    if (old) this.removeImages(old);
    this.nodeTree.update(old, node);
    this.addImages(node);
    item.info.setNode(node);
    this.moveToHead(item);
  }

  updateNode(_oldNode: Node, newNode: Node): void {
    this.addNode(newNode);
  }

  /** The node is gone; its NodeInfo stays while pods still reference it. */
  removeNode(node: Node): void {
    const name = node.metadata.name ?? '';
    const item = this.nodes.get(name);
    if (!item?.info.node) return;
    this.removeImages(item.info.node);
    this.nodeTree.remove(item.info.node);
    item.info.removeNode();
    if (item.info.pods.length === 0) this.removeItem(name, item);
    else this.moveToHead(item);
  }

  nodeCount(): number {
    return this.nodeTree.numNodes;
  }

  private addImages(node: Node): void {
    for (const img of node.status?.images ?? []) {
      for (const n of img.names ?? []) {
        const key = normalizedImageName(n);
        let set = this.imageNodes.get(key);
        if (!set) this.imageNodes.set(key, (set = new Set()));
        set.add(node.metadata.name ?? '');
        this.imagesChanged = true;
      }
    }
  }

  private removeImages(node: Node): void {
    for (const img of node.status?.images ?? []) {
      for (const n of img.names ?? []) {
        const key = normalizedImageName(n);
        const set = this.imageNodes.get(key);
        if (!set) continue;
        set.delete(node.metadata.name ?? '');
        if (set.size === 0) this.imageNodes.delete(key);
        this.imagesChanged = true;
      }
    }
  }

  // ---------------------------------------------------------------- list

  private moveToHead(item: Item): void {
    if (this.head === item) return;
    if (item.prev) item.prev.next = item.next;
    if (item.next) item.next.prev = item.prev;
    item.prev = undefined;
    item.next = this.head;
    if (this.head) this.head.prev = item;
    this.head = item;
  }

  private removeItem(name: string, item: Item): void {
    if (item.prev) item.prev.next = item.next;
    if (item.next) item.next.prev = item.prev;
    if (this.head === item) this.head = item.next;
    item.prev = item.next = undefined;
    this.nodes.delete(name);
  }

  // ---------------------------------------------------------------- snapshot

  /**
   * Brings `snapshot` up to date (upstream UpdateSnapshot): copies the NodeInfos changed since
   * `snapshot.generation` (into the existing objects, so lists stay valid), drops deleted
   * nodes, and rebuilds the lists only when membership or affinity presence changed.
   */
  updateSnapshot(snapshot: Snapshot): void {
    let updateAll = false;
    let updateAffinity = false;
    for (let item = this.head; item; item = item.next) {
      if (item.info.generation <= snapshot.generation) break;
      const node = item.info.node;
      if (!node) continue;
      const name = node.metadata.name ?? '';
      let existing = snapshot.nodeInfoMap.get(name);
      if (!existing) {
        updateAll = true;
        snapshot.nodeInfoMap.set(name, (existing = new NodeInfo()));
      }
      const clone = item.info.clone();
      if ((existing.podsWithAffinity.length > 0) !== (clone.podsWithAffinity.length > 0)) updateAffinity = true;
      if ((existing.podsWithRequiredAntiAffinity.length > 0) !== (clone.podsWithRequiredAntiAffinity.length > 0)) updateAffinity = true;
      snapshot.refresh(existing, clone);
    }
    if (this.head) snapshot.generation = this.head.info.generation;
    if (snapshot.nodeInfoMap.size > this.nodeTree.numNodes) {
      for (const name of [...snapshot.nodeInfoMap.keys()]) if (!this.nodes.get(name)?.info.node) snapshot.remove(name);
      updateAll = true;
    }
    if (updateAll) snapshot.nodeInfoList = this.nodeTree.list().map((n) => snapshot.nodeInfoMap.get(n)!);
    if (updateAll || updateAffinity) snapshot.rebuildAffinityLists();
    if (this.imagesChanged) {
      snapshot.imageNumNodes = new Map([...this.imageNodes].map(([k, v]) => [k, v.size]));
      this.imagesChanged = false;
    }
  }
}
