import type { Pod, StatefulSet } from '../../framework/api';
import { identityMatches, isMemberOf, newStatefulPod, parentAndOrdinal, podClaims } from './identity';
import { planStatefulSet, type RevisionInfo } from './plan';

const ref = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'u', controller: true, blockOwnerDeletion: true };
const template = (image: string) => ({ metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'c', image }] } });
const CUR: RevisionInfo = { name: 'db-cur', template: template('v1') };
const UPD: RevisionInfo = { name: 'db-upd', template: template('v2') };

function set(replicas: number, opts: { parallel?: boolean; partition?: number; onDelete?: boolean } = {}): StatefulSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'ns', uid: 'u' },
    spec: {
      replicas,
      serviceName: 'db-svc',
      selector: { matchLabels: { app: 'db' } },
      template: template('v2'),
      podManagementPolicy: opts.parallel ? 'Parallel' : 'OrderedReady',
      updateStrategy: opts.onDelete ? { type: 'OnDelete' } : { type: 'RollingUpdate', rollingUpdate: opts.partition !== undefined ? { partition: opts.partition } : undefined },
    },
  };
}

/** `db-1:ready:cur`, `db-2:pending:upd`, `db-0:ready:upd:deleting`. */
function pod(spec: string): Pod {
  const [name, state, rev, deleting] = spec.split(':');
  const p = newStatefulPod(set(3), template('v1'), Number(name.split('-')[1]), rev === 'upd' ? UPD.name : CUR.name, ref);
  p.metadata.uid = name;
  if (deleting) p.metadata.deletionTimestamp = 'now';
  p.status = state === 'ready' ? { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } : { phase: state === 'failed' ? 'Failed' : 'Pending' };
  return p;
}

function plan(s: StatefulSet, pods: string[]) {
  const p = planStatefulSet(s, pods.map(pod), CUR, UPD, ref, Date.now(), 0);
  return p.actions.map((a) => `${a.type} ${a.pod.metadata.name}${a.type === 'create' ? `@${a.pod.metadata.labels?.['controller-revision-hash'] === UPD.name ? 'upd' : 'cur'}` : ''}`);
}

describe('planStatefulSet', () => {
  it.each([
    { name: 'OrderedReady creates the first missing ordinal only', set: set(3), pods: [], want: ['create db-0@upd'] },
    { name: 'waits for a predecessor to be ready', set: set(3), pods: ['db-0:pending:upd'], want: [] },
    { name: 'then the next ordinal', set: set(3), pods: ['db-0:ready:upd'], want: ['create db-1@upd'] },
    { name: 'Parallel creates every missing pod', set: set(3, { parallel: true }), pods: ['db-1:pending:upd'], want: ['create db-0@upd', 'create db-2@upd'] },
    { name: 'scale down removes the highest ordinal first', set: set(1), pods: ['db-0:ready:upd', 'db-1:ready:upd', 'db-2:ready:upd'], want: ['delete db-2'] },
    { name: 'scale down waits for a terminating pod', set: set(1), pods: ['db-0:ready:upd', 'db-1:ready:upd', 'db-2:ready:upd:deleting'], want: [] },
    { name: 'Parallel scale down removes all at once', set: set(1, { parallel: true }), pods: ['db-0:ready:upd', 'db-1:ready:upd', 'db-2:ready:upd'], want: ['delete db-2', 'delete db-1'] },
    { name: 'a failed pod is replaced', set: set(1), pods: ['db-0:failed:upd'], want: ['delete db-0', 'create db-0@upd'] },
    { name: 'rolling update starts at the highest ordinal', set: set(3), pods: ['db-0:ready:cur', 'db-1:ready:cur', 'db-2:ready:cur'], want: ['delete db-2'] },
    { name: 'and waits for the updated pod to be ready', set: set(3), pods: ['db-0:ready:cur', 'db-1:ready:cur', 'db-2:pending:upd'], want: [] },
    { name: 'then the next one down', set: set(3), pods: ['db-0:ready:cur', 'db-1:ready:cur', 'db-2:ready:upd'], want: ['delete db-1'] },
    { name: 'a partition keeps lower ordinals', set: set(3, { partition: 2 }), pods: ['db-0:ready:cur', 'db-1:ready:cur', 'db-2:ready:upd'], want: [] },
    { name: 'below the partition new pods get the current revision', set: set(3, { partition: 2 }), pods: ['db-1:ready:cur', 'db-2:ready:upd'], want: ['create db-0@cur'] },
    { name: 'OnDelete never deletes for updates', set: set(2, { onDelete: true }), pods: ['db-0:ready:cur', 'db-1:ready:cur'], want: [] },
  ])('$name', ({ set: s, pods, want }) => {
    expect(plan(s, pods)).toEqual(want);
  });

  it('counts status, adjusted by what it does', () => {
    const p = planStatefulSet(set(3), ['db-0:ready:cur', 'db-1:ready:upd'].map(pod), CUR, UPD, ref, Date.now(), 0);
    expect(p.status).toEqual({ replicas: 3, readyReplicas: 2, availableReplicas: 2, currentReplicas: 1, updatedReplicas: 2 });
  });
});

describe('stateful identity', () => {
  it('gives each pod its name, labels, hostname, subdomain and claims', () => {
    const s = set(3);
    s.spec.volumeClaimTemplates = [{ metadata: { name: 'data' }, spec: { resources: { requests: { storage: '1Gi' } } } }];
    const p = newStatefulPod(s, template('v1'), 2, 'db-abc', ref);
    expect(p.metadata).toMatchObject({ name: 'db-2', labels: { app: 'db', 'statefulset.orch.io/pod-name': 'db-2', 'apps.orch.io/pod-index': '2', 'controller-revision-hash': 'db-abc' } });
    expect(p.spec).toMatchObject({ hostname: 'db-2', subdomain: 'db-svc', volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-db-2' } }] });
    expect(podClaims(s, 'db-2')).toEqual([{ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data-db-2', namespace: 'ns', labels: { app: 'db' } }, spec: { resources: { requests: { storage: '1Gi' } } } }]);
  });

  it.each([
    { name: 'db-2', parent: 'db', ordinal: 2, member: true },
    { name: 'my-db-10', parent: 'my-db', ordinal: 10, member: false },
    { name: 'db', parent: undefined, ordinal: undefined, member: false },
  ])('parentAndOrdinal($name)', ({ name, parent, ordinal, member }) => {
    const p = { ...pod('db-0:ready:cur'), metadata: { ...pod('db-0:ready:cur').metadata, name } };
    expect(parentAndOrdinal(p)).toEqual(parent === undefined ? undefined : { parent, ordinal });
    expect(isMemberOf(set(1), p)).toBe(member);
  });

  it('notices a lost pod-name label', () => {
    const p = pod('db-0:ready:cur');
    expect(identityMatches(set(1), p)).toBe(true);
    delete p.metadata.labels?.['statefulset.orch.io/pod-name'];
    expect(identityMatches(set(1), p)).toBe(false);
  });
});
