import type { ControllerRevision } from '../../framework/api';
import { byRevisionNumber, newRevision, nextRevisionNumber, revisionDecision, revisionsToPrune, templateOf } from './revisions';

const owner = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db', namespace: 'ns', uid: 'u1' } };
const template = (image: string) => ({ metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'main', image }] } });
const rev = (image: string, revision: number): ControllerRevision => newRevision(owner, owner, template(image), revision);

describe('ControllerRevision history', () => {
  it('names a revision <owner>-<hash>, labels it, and round-trips its template', () => {
    const r = rev('db:v1', 1);
    expect(r.metadata.name).toMatch(/^db-[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(r.metadata.labels).toMatchObject({ app: 'db', 'controller.orch.io/hash': r.metadata.name?.slice(3) });
    expect(r.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'StatefulSet', uid: 'u1', controller: true });
    expect(templateOf(r)).toEqual(template('db:v1'));
  });

  it.each([
    { name: 'no history: create', history: [] as [string, number][], candidate: 'db:v1', want: 'create' },
    { name: 'latest is equal: reuse', history: [['db:v1', 1], ['db:v2', 2]] as [string, number][], candidate: 'db:v2', want: 'reuse' },
    { name: 'an older one is equal: bump (rollback)', history: [['db:v1', 1], ['db:v2', 2]] as [string, number][], candidate: 'db:v1', want: 'bump' },
    { name: 'nothing equal: create', history: [['db:v1', 1]] as [string, number][], candidate: 'db:v3', want: 'create' },
  ])('$name', ({ history, candidate, want }) => {
    const revisions = history.map(([image, n]) => rev(image, n));
    expect(revisionDecision(revisions, rev(candidate, nextRevisionNumber(revisions))).action).toBe(want);
  });

  it.each([
    { name: 'keeps the limit of unused revisions', limit: 1, live: ['v4'], want: ['v1', 'v2'] },
    { name: 'live revisions are never pruned', limit: 0, live: ['v1', 'v4'], want: ['v2', 'v3'] },
    { name: 'nothing beyond the limit', limit: 5, live: [], want: [] },
  ])('revisionsToPrune: $name', ({ limit, live, want }) => {
    const revisions = ['v1', 'v2', 'v3', 'v4'].map((v, i) => ({ ...rev(`db:${v}`, i + 1), metadata: { ...rev(`db:${v}`, i + 1).metadata, name: v } }));
    expect(revisionsToPrune(revisions, new Set(live), limit).map((r) => r.metadata.name)).toEqual(want);
    expect([...revisions].reverse().sort(byRevisionNumber)[0].metadata.name).toBe('v1');
  });
});
