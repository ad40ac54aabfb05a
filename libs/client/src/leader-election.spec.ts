import { formatMicroTime } from '@orch/apimachinery';
import { LeaderElector, type Lease, type LeaderElectionConfig } from './leader-election';
import { RestClient } from './rest';
import { ApiPeer } from '@orch/testing';
import { memoryLogger, waitFor } from '@orch/testing';

const LEASES = 'coordination.orch.io/v1/leases';
const MICRO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const ago = (ms: number) => formatMicroTime((Date.now() - ms) * 1000);

describe('LeaderElector', () => {
  let peer: ApiPeer;
  let client: RestClient;
  let log: ReturnType<typeof memoryLogger>;
  const stops: AbortController[] = [];
  const runs: Promise<void>[] = [];

  beforeEach(async () => {
    peer = await ApiPeer.start();
    client = new RestClient({ server: peer.url }, { component: 'test', timeoutMs: 2000 });
    log = memoryLogger();
  });
  afterEach(async () => {
    for (const s of stops.splice(0)) s.abort();
    await Promise.all(runs.splice(0));
    client.close();
    await peer.stop();
  });

  const lease = (): Lease => peer.stored(LEASES)[0] as Lease;

  /** Starts a candidate with short timings; returns its state. */
  function candidate(identity: string, extra: Partial<LeaderElectionConfig> = {}) {
    const state = { leading: false, started: 0, stopped: 0, leaders: [] as string[], signal: undefined as AbortSignal | undefined };
    const stop = new AbortController();
    const elector = new LeaderElector({
      client,
      namespace: 'orch-system',
      name: 'orch-test',
      identity,
      leaseDurationMs: 1000,
      renewDeadlineMs: 500,
      retryPeriodMs: 50,
      logger: log,
      onStartedLeading: (signal) => {
        state.leading = true;
        state.started++;
        state.signal = signal;
        signal.addEventListener('abort', () => (state.leading = false));
      },
      onStoppedLeading: () => state.stopped++,
      onNewLeader: (id) => state.leaders.push(id),
      ...extra,
    });
    stops.push(stop);
    const done = elector.run(stop.signal);
    runs.push(done);
    return { state, stop, elector, done };
  }

  it('creates the lease when none exists and renews it', async () => {
    const a = candidate('a');
    await waitFor(() => a.state.leading, 'leading');
    const first = lease();
    expect(first.metadata).toMatchObject({ name: 'orch-test', namespace: 'orch-system' });
    expect(first.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 1, leaseTransitions: 0 });
    expect(first.spec?.acquireTime).toMatch(MICRO);
    expect(first.spec?.renewTime).toMatch(MICRO);
    expect(a.elector.isLeader()).toBe(true);
    expect(a.state.leaders).toEqual(['a']);
    await waitFor(() => lease().spec?.renewTime !== first.spec?.renewTime, 'renewal');
    expect(lease().spec?.acquireTime).toBe(first.spec?.acquireTime);
    expect(peer.requestsTo('POST', '/apis/coordination.orch.io/v1/namespaces/orch-system/leases')).toHaveLength(1);
  });

  // An existing lease decides whether a new candidate may take it.
  it.each([
    { name: 'held by another and fresh', spec: { holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: ago(0), leaseTransitions: 3 }, want: { leads: false, holder: 'other', transitions: 3 } },
    { name: 'held by another, expired', spec: { holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: ago(20_000), acquireTime: ago(60_000), leaseTransitions: 3 }, want: { leads: true, holder: 'me', transitions: 4 } },
    { name: 'held by another, expiring within the window', spec: { holderIdentity: 'other', leaseDurationSeconds: 1, renewTime: ago(800), leaseTransitions: 0 }, want: { leads: true, holder: 'me', transitions: 1 } },
    { name: 'released (no holder)', spec: { leaseDurationSeconds: 1, renewTime: ago(0), leaseTransitions: 2 }, want: { leads: true, holder: 'me', transitions: 3 } },
    { name: 'held by me before a restart', spec: { holderIdentity: 'me', leaseDurationSeconds: 15, renewTime: ago(0), acquireTime: '2024-01-02T03:04:05.123456Z', leaseTransitions: 5 }, want: { leads: true, holder: 'me', transitions: 5, acquireTime: '2024-01-02T03:04:05.123456Z' } },
  ])('existing lease $name', async ({ spec, want }) => {
    peer.put(LEASES, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'orch-test', namespace: 'orch-system' }, spec } as Lease);
    const me = candidate('me');
    if (want.leads) await waitFor(() => me.state.leading, 'leading');
    else await new Promise((r) => setTimeout(r, 300));
    expect({ leads: me.state.leading, holder: lease().spec?.holderIdentity, transitions: lease().spec?.leaseTransitions }).toEqual({
      leads: want.leads,
      holder: want.holder,
      transitions: want.transitions,
    });
    if (want.acquireTime) expect(lease().spec?.acquireTime).toBe(want.acquireTime);
    expect(me.state.leaders[0]).toBe(spec.holderIdentity ?? 'me');
  });

  it('elects exactly one of two candidates; release on stop hands over at once', async () => {
    const a = candidate('a', { releaseOnCancel: true });
    await waitFor(() => a.state.leading, 'a leads');
    const b = candidate('b', { releaseOnCancel: true });
    await new Promise((r) => setTimeout(r, 200));
    expect(b.state.leading).toBe(false);
    expect(b.elector.getLeader()).toBe('a');
    a.stop.abort();
    await a.done;
    expect({ leading: a.state.leading, stopped: a.state.stopped, aborted: a.state.signal?.aborted }).toEqual({ leading: false, stopped: 1, aborted: true });
    const t0 = Date.now();
    await waitFor(() => b.state.leading, 'b takes over');
    expect(Date.now() - t0).toBeLessThan(900); // sooner than the 1 s lease would expire
    expect(lease().spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    expect(b.state.leaders).toEqual(['a', 'b']);
  });

  it('releases on stop even when a renewal it did not see landed (its observed lease is stale)', async () => {
    const a = candidate('a', { releaseOnCancel: true, retryPeriodMs: 400, renewDeadlineMs: 500 });
    await waitFor(() => a.state.leading, 'a leads');
    // A renewal cut short by the stop lands on the server without the elector seeing its answer.
    const leases = client.resource<Lease>({ group: 'coordination.orch.io', version: 'v1', resource: 'leases' }, 'orch-system');
    const current = await leases.get('orch-test');
    await leases.update({ ...current, spec: { ...current.spec, renewTime: ago(0) } });
    a.stop.abort();
    await a.done;
    expect(lease().spec?.holderIdentity).toBeUndefined();
    expect(log.lines.join('\n')).not.toMatch(/could not release/);
  });

  it('keeps the holder on stop without releaseOnCancel', async () => {
    const a = candidate('a');
    await waitFor(() => a.state.leading);
    a.stop.abort();
    await a.done;
    expect(lease().spec?.holderIdentity).toBe('a');
    expect(a.state.stopped).toBe(1);
  });

  it('steps down when renewals fail past the renew deadline', async () => {
    const a = candidate('a');
    await waitFor(() => a.state.leading);
    peer.intercept((r) => (r.path.includes('/leases') ? { status: 500, body: { kind: 'Status', code: 500, message: 'store down' } } : undefined));
    const t0 = Date.now();
    await a.done;
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(400);
    expect(took).toBeLessThan(1000); // before the 1 s lease runs out for others
    expect({ aborted: a.state.signal?.aborted, stopped: a.state.stopped, leader: a.elector.isLeader() }).toEqual({ aborted: true, stopped: 1, leader: false });
    expect(log.lines.some((l) => l.includes('failed to renew lease'))).toBe(true);
  });

  it('steps down at once when the lease was taken by another holder', async () => {
    const a = candidate('a');
    await waitFor(() => a.state.leading);
    peer.put(LEASES, { ...lease(), spec: { ...lease().spec, holderIdentity: 'usurper', renewTime: ago(0), leaseDurationSeconds: 15 } } as Lease);
    await a.done;
    expect(a.state.signal?.aborted).toBe(true);
    expect(a.state.leaders).toEqual(['a', 'usurper']);
    expect(log.lines.some((l) => l.includes('now held by usurper'))).toBe(true);
  });

  it.each([
    { name: 'lease not longer than renew deadline', cfg: { leaseDurationMs: 1000, renewDeadlineMs: 1000 }, want: /leaseDurationMs must be greater/ },
    { name: 'renew deadline too short for retries', cfg: { renewDeadlineMs: 2000, retryPeriodMs: 2000 }, want: /renewDeadlineMs must be greater/ },
    { name: 'empty identity', cfg: { identity: '' }, want: /identity/ },
    { name: 'zero retry period', cfg: { retryPeriodMs: 0 }, want: /retryPeriodMs/ },
  ])('rejects $name', ({ cfg, want }) => {
    expect(() => new LeaderElector({ client, namespace: 'n', name: 'l', identity: 'x', onStartedLeading: () => undefined, ...cfg })).toThrow(want);
  });
});
