import type { KubeObject, OwnerReference } from '@orch/apimachinery';

/** Finalizer asking the collector to orphan the dependents, then let the owner go. */
export const ORPHAN_FINALIZER = 'orphan';
/** Finalizer asking the collector to delete blocking dependents first (foreground deletion). */
export const FOREGROUND_FINALIZER = 'foregroundDeletion';

/** Coordinates of an object (upstream objectReference). */
export interface ObjectIdentity {
  apiVersion: string;
  kind: string;
  /** Empty for cluster-scoped objects (and for owners whose scope is not known yet). */
  namespace: string;
  name: string;
  uid: string;
}

/**
 * One object of the ownership graph (upstream node). A virtual node stands for an owner
 * that dependents name but no informer has shown yet; the collector checks whether it exists.
 */
export class GraphNode {
  owners: OwnerReference[] = [];
  readonly dependents = new Set<GraphNode>();
  beingDeleted = false;
  deletingDependents = false;

  constructor(
    public identity: ObjectIdentity,
    public virtual: boolean,
  ) {}

  /** Dependents whose reference to this node has `blockOwnerDeletion: true`. */
  blockingDependents(): GraphNode[] {
    return [...this.dependents].filter((dep) => dep.owners.some((r) => r.uid === this.identity.uid && r.blockOwnerDeletion === true));
  }
}

/** Where the graph sends work (upstream attemptToDelete / attemptToOrphan queues, absentOwnerCache). */
export interface GraphSink {
  attemptToDelete(node: GraphNode): void;
  attemptToOrphan(node: GraphNode): void;
  /** An owner identity verified absent. */
  ownerAbsent(identity: ObjectIdentity): void;
}

/** A change the graph learns: an informer event, or a virtual delete (owner verified absent). */
export type GraphEvent =
  | { type: 'add' | 'update'; obj: KubeObject; old?: KubeObject }
  | { type: 'delete'; obj: KubeObject }
  | { type: 'virtualDelete'; identity: ObjectIdentity };

function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return obj.metadata.finalizers?.includes(finalizer) ?? false;
}

/** Being deleted and holding `finalizer`, while `old` (if any) was not both. */
function deletionStartsWithFinalizer(old: KubeObject | undefined, cur: KubeObject, finalizer: string): boolean {
  if (!cur.metadata.deletionTimestamp || !hasFinalizer(cur, finalizer)) return false;
  return !old || !old.metadata.deletionTimestamp || !hasFinalizer(old, finalizer);
}

export function identityOf(obj: KubeObject): ObjectIdentity {
  return { apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '', uid: obj.metadata.uid ?? '' };
}

/**
 * upstream referencesDiffs: owner references added, removed and changed (same uid, other
 * fields), by uid.
 */
export function referencesDiffs(old: readonly OwnerReference[], cur: readonly OwnerReference[]): { added: OwnerReference[]; removed: OwnerReference[]; changed: { old: OwnerReference; cur: OwnerReference }[] } {
  const oldByUid = new Map(old.map((r) => [r.uid, r]));
  const curUids = new Set(cur.map((r) => r.uid));
  const added: OwnerReference[] = [];
  const changed: { old: OwnerReference; cur: OwnerReference }[] = [];
  for (const r of cur) {
    const o = oldByUid.get(r.uid);
    if (!o) added.push(r);
    else if (JSON.stringify(o) !== JSON.stringify(r)) changed.push({ old: o, cur: r });
  }
  return { added, removed: old.filter((r) => !curUids.has(r.uid)), changed };
}

/**
 * The ownership graph (upstream GraphBuilder.processGraphChanges): nodes by uid, owners and
 * dependents, updated from events in order. It never talks to the API; it tells the sink
 * which nodes need a decision: dependents of deleted owners, virtual owners to verify,
 * owners starting foreground deletion or orphaning, owners unblocked by a dependent.
 */
export class DependencyGraph {
  readonly nodes = new Map<string, GraphNode>();

  constructor(private readonly sink: GraphSink) {}

  process(event: GraphEvent): void {
    if (event.type === 'virtualDelete') return this.virtualDelete(event.identity);
    const obj = event.obj;
    const uid = obj.metadata.uid;
    if (!uid) return;
    const existing = this.nodes.get(uid);
    if (event.type === 'delete') {
      if (existing) this.removeAndNotify(existing);
      return;
    }
    const owners = obj.metadata.ownerReferences ?? [];
    if (!existing) {
      const node = new GraphNode(identityOf(obj), false);
      node.owners = [...owners];
      node.beingDeleted = !!obj.metadata.deletionTimestamp;
      node.deletingDependents = node.beingDeleted && hasFinalizer(obj, FOREGROUND_FINALIZER);
      this.nodes.set(uid, node);
      this.addDependentToOwners(node, owners);
      this.processTransitions(event.old, obj, node);
      return;
    }
    if (existing.virtual) {
      // Observed at last: the informer's coordinates replace the guessed ones.
      existing.virtual = false;
      existing.identity = identityOf(obj);
    }
    const { added, removed, changed } = referencesDiffs(existing.owners, owners);
    if (added.length || removed.length || changed.length) {
      this.addUnblockedOwners(removed, changed);
      existing.owners = [...owners];
      this.addDependentToOwners(existing, added);
      for (const ref of removed) this.nodes.get(ref.uid)?.dependents.delete(existing);
    }
    if (obj.metadata.deletionTimestamp) existing.beingDeleted = true;
    this.processTransitions(event.old, obj, existing);
  }

  private addDependentToOwners(node: GraphNode, owners: readonly OwnerReference[]): void {
    for (const ref of owners) {
      let owner = this.nodes.get(ref.uid);
      if (!owner) {
        // An owner no informer has shown (yet): verify it exists.
        owner = new GraphNode({ apiVersion: ref.apiVersion, kind: ref.kind, namespace: node.identity.namespace, name: ref.name, uid: ref.uid }, true);
        this.nodes.set(ref.uid, owner);
        owner.dependents.add(node);
        this.sink.attemptToDelete(owner);
        continue;
      }
      owner.dependents.add(node);
    }
  }

  /** upstream addUnblockedOwnersToDeleteQueue: owners a dependent no longer blocks may finish foreground deletion. */
  private addUnblockedOwners(removed: OwnerReference[], changed: { old: OwnerReference; cur: OwnerReference }[]): void {
    for (const ref of removed) {
      const owner = ref.blockOwnerDeletion ? this.nodes.get(ref.uid) : undefined;
      if (owner) this.sink.attemptToDelete(owner);
    }
    for (const c of changed) {
      const owner = c.old.blockOwnerDeletion && !c.cur.blockOwnerDeletion ? this.nodes.get(c.cur.uid) : undefined;
      if (owner) this.sink.attemptToDelete(owner);
    }
  }

  private processTransitions(old: KubeObject | undefined, cur: KubeObject, node: GraphNode): void {
    if (deletionStartsWithFinalizer(old, cur, ORPHAN_FINALIZER)) {
      this.sink.attemptToOrphan(node);
      return;
    }
    if (deletionStartsWithFinalizer(old, cur, FOREGROUND_FINALIZER)) {
      node.deletingDependents = true;
      for (const dep of node.dependents) this.sink.attemptToDelete(dep);
      this.sink.attemptToDelete(node);
    }
  }

  /**
   * The collector verified `identity` absent. A virtual node (or an observed node with the
   * same coordinates) is removed like a deleted object; an observed node with other
   * coordinates stays, but dependents naming the absent coordinates are re-examined.
   */
  private virtualDelete(identity: ObjectIdentity): void {
    const node = this.nodes.get(identity.uid);
    if (!node) return;
    if (node.virtual || sameIdentity(node.identity, identity)) {
      this.removeAndNotify(node);
      return;
    }
    const matching = [...node.dependents].filter((dep) => dep.owners.some((r) => r.uid === identity.uid && r.kind === identity.kind && r.apiVersion === identity.apiVersion && r.name === identity.name));
    if (!matching.length) return;
    this.sink.ownerAbsent(identity);
    for (const dep of matching) this.sink.attemptToDelete(dep);
  }

  /** upstream removeNode and what follows a delete: dependents and waiting owners get a decision. */
  private removeAndNotify(node: GraphNode): void {
    this.nodes.delete(node.identity.uid);
    for (const ref of node.owners) this.nodes.get(ref.uid)?.dependents.delete(node);
    if (node.dependents.size > 0) this.sink.ownerAbsent(node.identity);
    for (const dep of node.dependents) this.sink.attemptToDelete(dep);
    for (const ref of node.owners) {
      const owner = this.nodes.get(ref.uid);
      if (owner?.deletingDependents) this.sink.attemptToDelete(owner);
    }
  }
}

function sameIdentity(a: ObjectIdentity, b: ObjectIdentity): boolean {
  return a.uid === b.uid && a.apiVersion === b.apiVersion && a.kind === b.kind && a.name === b.name && a.namespace === b.namespace;
}
