import { labelSelectorFromObject, type KubeObject } from '@orch/apimachinery';
import type { ResourceClient } from '@orch/client';
import { claimDecision, claimObjects } from './claim';
import { peerContext, type PeerContext } from '../../framework/testing/harness';

const owner: KubeObject = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'rs', namespace: 'ns', uid: 'rs-uid' } };
const ref = (uid: string) => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'x', uid, controller: true });
const pod = (meta: Partial<KubeObject['metadata']>): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', ...meta } });

describe('claimDecision (upstream ClaimObject)', () => {
  it.each([
    { name: 'owned by us and matching: keep', obj: pod({ ownerReferences: [ref('rs-uid')] }), matches: true, owner, want: 'keep' },
    { name: 'owned by us, no longer matching: release', obj: pod({ ownerReferences: [ref('rs-uid')] }), matches: false, owner, want: 'release' },
    { name: 'owned by us, not matching, owner deleting: ignore', obj: pod({ ownerReferences: [ref('rs-uid')] }), matches: false, owner: { ...owner, metadata: { ...owner.metadata, deletionTimestamp: 'now' } }, want: 'ignore' },
    { name: 'owned by another controller: ignore', obj: pod({ ownerReferences: [ref('other')] }), matches: true, owner, want: 'ignore' },
    { name: 'matching orphan: adopt', obj: pod({}), matches: true, owner, want: 'adopt' },
    { name: 'orphan with a non-controller owner: adopt', obj: pod({ ownerReferences: [{ ...ref('x'), controller: false }] }), matches: true, owner, want: 'adopt' },
    { name: 'non-matching orphan: ignore', obj: pod({}), matches: false, owner, want: 'ignore' },
    { name: 'orphan being deleted: ignore', obj: pod({ deletionTimestamp: 'now' }), matches: true, owner, want: 'ignore' },
    { name: 'orphan in another namespace: ignore', obj: pod({ namespace: 'other' }), matches: true, owner, want: 'ignore' },
    { name: 'owner being deleted adopts nothing', obj: pod({}), matches: true, owner: { ...owner, metadata: { ...owner.metadata, deletionTimestamp: 'now' } }, want: 'ignore' },
  ])('$name', ({ obj, matches, owner: o, want }) => {
    expect(claimDecision(obj, o, matches)).toBe(want);
  });
});

describe('claimObjects against an API peer', () => {
  let t: PeerContext;
  let pods: ResourceClient;
  beforeEach(async () => {
    t = await peerContext();
    pods = t.client.resource({ group: '', version: 'v1', resource: 'pods' });
  });
  afterEach(() => t.stop());

  it('adopts matching orphans and releases owned pods that stopped matching', async () => {
    const orphan = t.peer.put('/v1/pods', pod({ name: 'orphan', labels: { app: 'web' } }));
    const stray = t.peer.put('/v1/pods', pod({ name: 'stray', labels: { app: 'db' }, ownerReferences: [ref('rs-uid'), { ...ref('other'), controller: false }] }));
    const mine = t.peer.put('/v1/pods', pod({ name: 'mine', labels: { app: 'web' }, ownerReferences: [ref('rs-uid')] }));
    let rechecks = 0;
    const claimed = await claimObjects([orphan, stray, mine], {
      owner,
      ownerType: { apiVersion: 'apps/v1', kind: 'ReplicaSet' },
      selector: labelSelectorFromObject({ matchLabels: { app: 'web' } }),
      client: pods,
      canAdopt: async () => {
        rechecks++;
      },
    });
    expect(claimed.map((p) => p.metadata.name).sort()).toEqual(['mine', 'orphan']);
    expect(rechecks).toBe(1);
    const stored = new Map(t.peer.stored('/v1/pods').map((p) => [p.metadata.name, p]));
    expect(stored.get('orphan')?.metadata.ownerReferences).toEqual([{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs-uid', controller: true, blockOwnerDeletion: true }]);
    expect(stored.get('stray')?.metadata.ownerReferences).toEqual([{ ...ref('other'), controller: false }]);
  });

  it('adopts nothing when the owner cannot adopt', async () => {
    const orphan = t.peer.put('/v1/pods', pod({ name: 'orphan', labels: { app: 'web' } }));
    await expect(
      claimObjects([orphan], {
        owner,
        ownerType: { apiVersion: 'apps/v1', kind: 'ReplicaSet' },
        selector: labelSelectorFromObject({ matchLabels: { app: 'web' } }),
        client: pods,
        canAdopt: async () => {
          throw new Error('owner is being deleted');
        },
      }),
    ).rejects.toThrow(/adopt ns\/orphan: owner is being deleted/);
    expect(t.peer.stored('/v1/pods')[0].metadata.ownerReferences).toBeUndefined();
  });
});
