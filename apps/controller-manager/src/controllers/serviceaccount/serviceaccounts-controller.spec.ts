import type { Namespace } from '../../framework/api';
import { eventually, startHarness, storedObject, type Harness } from '../../framework/testing/harness';
import { ServiceAccountsController, missingServiceAccounts } from './serviceaccounts-controller';

const ns = (name: string, p: { phase?: 'Active' | 'Terminating'; deleting?: boolean } = {}): Namespace => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, ...(p.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  status: { phase: p.phase ?? 'Active' },
});

describe('missingServiceAccounts', () => {
  it.each([
    { name: 'active namespace without default', input: ns('a'), has: false, want: ['default'] },
    { name: 'active namespace with default', input: ns('a'), has: true, want: [] },
    { name: 'terminating namespace', input: ns('a', { phase: 'Terminating' }), has: false, want: [] },
    { name: 'namespace being deleted', input: ns('a', { deleting: true }), has: false, want: [] },
    { name: 'namespace gone', input: undefined, has: false, want: [] },
  ])('$name', ({ input, has, want }) => {
    expect(missingServiceAccounts(input, () => has)).toEqual(want);
  });
});

describe('ServiceAccountsController against an API peer', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(() => h.stop());

  it('creates default in every active namespace and re-creates it when deleted', async () => {
    h.peer.put('/v1/namespaces', ns('a'));
    h.peer.put('/v1/namespaces', ns('b', { phase: 'Terminating', deleting: true }));
    h.start(new ServiceAccountsController(h.ctx));
    await eventually('default created', () => storedObject(h.peer, '/v1/serviceaccounts', 'default', 'a'));
    h.peer.put('/v1/namespaces', ns('c'));
    await eventually('default created in new namespace', () => storedObject(h.peer, '/v1/serviceaccounts', 'default', 'c'));
    h.peer.remove('/v1/serviceaccounts', 'a', 'default');
    await eventually('default re-created', () => storedObject(h.peer, '/v1/serviceaccounts', 'default', 'a'));
    expect(storedObject(h.peer, '/v1/serviceaccounts', 'default', 'b')).toBeUndefined();
  });
});
