import type { KubeObject } from '@orch/apimachinery';
import { DependencyGraph, referencesDiffs, type GraphEvent } from './graph';

function obj(uid: string, owners: { uid: string; block?: boolean }[] = [], extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: uid, namespace: 'ns', uid, ownerReferences: owners.map((o) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: o.uid, uid: o.uid, blockOwnerDeletion: o.block })), ...extra },
  };
}
const deleting = (uid: string, finalizer: string, owners: { uid: string; block?: boolean }[] = []) => obj(uid, owners, { deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: [finalizer] });

function run(events: GraphEvent[]) {
  const log: string[] = [];
  const graph = new DependencyGraph({
    attemptToDelete: (n) => log.push(`delete ${n.identity.uid}`),
    attemptToOrphan: (n) => log.push(`orphan ${n.identity.uid}`),
    ownerAbsent: (id) => log.push(`absent ${id.uid}`),
  });
  for (const e of events) graph.process(e);
  return { graph, log };
}

describe('DependencyGraph (GraphBuilder.processGraphChanges)', () => {
  it.each([
    { name: 'an owner seen first, then its dependent: nothing to do', events: [{ type: 'add', obj: obj('o') }, { type: 'add', obj: obj('d', [{ uid: 'o' }]) }], want: [] },
    { name: 'a dependent of an unseen owner: verify the virtual owner', events: [{ type: 'add', obj: obj('d', [{ uid: 'o' }]) }], want: ['delete o'] },
    { name: 'the owner goes: its dependents are examined', events: [{ type: 'add', obj: obj('o') }, { type: 'add', obj: obj('d', [{ uid: 'o' }]) }, { type: 'delete', obj: obj('o') }], want: ['absent o', 'delete d'] },
    {
      name: 'foreground deletion starts: dependents and owner are examined',
      events: [{ type: 'add', obj: obj('o') }, { type: 'add', obj: obj('d', [{ uid: 'o', block: true }]) }, { type: 'update', old: obj('o'), obj: deleting('o', 'foregroundDeletion') }],
      want: ['delete d', 'delete o'],
    },
    { name: 'orphan deletion starts: the owner is orphaned', events: [{ type: 'add', obj: obj('o') }, { type: 'update', old: obj('o'), obj: deleting('o', 'orphan') }], want: ['orphan o'] },
    { name: 'already deleting when first seen (restart) counts as a start', events: [{ type: 'add', obj: deleting('o', 'orphan') }], want: ['orphan o'] },
    {
      name: 'a dependent of a foreground-deleting owner goes: the owner is re-examined',
      events: [{ type: 'add', obj: deleting('o', 'foregroundDeletion') }, { type: 'add', obj: obj('d', [{ uid: 'o', block: true }]) }, { type: 'delete', obj: obj('d', [{ uid: 'o', block: true }]) }],
      want: ['delete o', 'delete o'],
    },
    {
      name: 'a blocking reference removed: the owner is re-examined',
      events: [{ type: 'add', obj: obj('o') }, { type: 'add', obj: obj('d', [{ uid: 'o', block: true }]) }, { type: 'update', old: obj('d', [{ uid: 'o', block: true }]), obj: obj('d') }],
      want: ['delete o'],
    },
    {
      name: 'blockOwnerDeletion turned off: the owner is re-examined',
      events: [{ type: 'add', obj: obj('o') }, { type: 'add', obj: obj('d', [{ uid: 'o', block: true }]) }, { type: 'update', old: obj('d', [{ uid: 'o', block: true }]), obj: obj('d', [{ uid: 'o', block: false }]) }],
      want: ['delete o'],
    },
  ] as { name: string; events: GraphEvent[]; want: string[] }[])('$name', ({ events, want }) => {
    expect(run(events).log).toEqual(want);
  });

  it('tracks owners and dependents, and blocking dependents', () => {
    const { graph } = run([{ type: 'add', obj: obj('o') }, { type: 'add', obj: obj('a', [{ uid: 'o', block: true }]) }, { type: 'add', obj: obj('b', [{ uid: 'o' }]) }]);
    const owner = graph.nodes.get('o');
    expect([...(owner?.dependents ?? [])].map((n) => n.identity.uid).sort()).toEqual(['a', 'b']);
    expect(owner?.blockingDependents().map((n) => n.identity.uid)).toEqual(['a']);
  });

  it('a virtual owner becomes observed with the informer coordinates, and a verified-absent one goes', () => {
    const { graph, log } = run([{ type: 'add', obj: obj('d', [{ uid: 'o' }]) }]);
    expect(graph.nodes.get('o')?.virtual).toBe(true);
    graph.process({ type: 'add', obj: { ...obj('o'), kind: 'Secret' } });
    expect(graph.nodes.get('o')).toMatchObject({ virtual: false, identity: { kind: 'Secret' } });
    graph.process({ type: 'add', obj: obj('e', [{ uid: 'x' }]) });
    graph.process({ type: 'virtualDelete', identity: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'x', uid: 'x' } });
    expect(graph.nodes.has('x')).toBe(false);
    expect(log).toEqual(['delete o', 'delete x', 'absent x', 'delete e']);
  });

  it.each([
    { name: 'added and removed', old: ['a', 'b'], cur: ['b', 'c'], want: { added: ['c'], removed: ['a'], changed: [] as string[] } },
    { name: 'changed fields', old: ['a'], cur: ['a*'], want: { added: [], removed: [], changed: ['a'] } },
  ])('referencesDiffs: $name', ({ old, cur, want }) => {
    const r = (s: string) => ({ apiVersion: 'v1', kind: 'X', name: s[0], uid: s[0], blockOwnerDeletion: s.endsWith('*') });
    const d = referencesDiffs(old.map(r), cur.map(r));
    expect({ added: d.added.map((x) => x.uid), removed: d.removed.map((x) => x.uid), changed: d.changed.map((c) => c.cur.uid) }).toEqual(want);
  });
});
