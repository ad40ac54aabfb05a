import { MANDATORY_FLOW_SCHEMAS, SUGGESTED_FLOW_SCHEMAS } from './bootstrap';
import { classify, flowKey, orderFlowSchemas } from './classifier';
import { classificationKey, levelMaxSeats, requestSeats } from './flow-control';
import { QueueSet, RECENT_FLOW_MS, RequestRejected, dealHand, type Seat } from './queue-set';
import type { RequestDigest } from './types';

const ORDERED = orderFlowSchemas([...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS]);

const digest = (user: string, groups: string[], over: Partial<RequestDigest> = {}): RequestDigest => ({
  user: { username: user, groups: [...groups, 'system:authenticated'] },
  isResourceRequest: true,
  verb: 'list',
  apiGroup: '',
  resource: 'pods',
  subresource: '',
  namespace: 'default',
  path: '/api/v1/namespaces/default/pods',
  ...over,
});

describe('classification by FlowSchema', () => {
  it.each<{ name: string; d: RequestDigest; schema: string; flow?: string }>([
    { name: 'system:masters is exempt', d: digest('admin', ['system:masters']), schema: 'exempt' },
    { name: 'a node', d: digest('system:node:n1', ['system:nodes']), schema: 'system-nodes', flow: 'system:node:n1' },
    { name: 'a node renewing its lease', d: digest('system:node:n1', ['system:nodes'], { verb: 'update', apiGroup: 'coordination.orch.io', resource: 'leases', namespace: 'orch-node-lease' }), schema: 'system-node-high' },
    { name: 'a node on the k8s.io spelling', d: digest('system:node:n1', ['system:nodes'], { verb: 'update', apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'orch-node-lease' }), schema: 'system-node-high' },
    { name: 'the controller-manager', d: digest('system:orch-controller-manager', []), schema: 'kube-controller-manager', flow: 'default' },
    { name: 'the controller-manager electing its leader', d: digest('system:orch-controller-manager', [], { verb: 'update', apiGroup: 'coordination.orch.io', resource: 'leases', namespace: 'orch-system' }), schema: 'system-leader-election' },
    { name: 'a service account', d: digest('system:serviceaccount:apps:bot', ['system:serviceaccounts', 'system:serviceaccounts:apps']), schema: 'service-accounts' },
    { name: 'an orch-system service account', d: digest('system:serviceaccount:orch-system:x', ['system:serviceaccounts']), schema: 'kube-system-service-accounts' },
    { name: 'any user', d: digest('alice', []), schema: 'global-default', flow: 'alice' },
    { name: 'anonymous probes', d: { ...digest('system:anonymous', []), user: { username: 'system:anonymous', groups: ['system:unauthenticated'] }, isResourceRequest: false, verb: 'get', path: '/readyz' }, schema: 'probes' },
    { name: 'anonymous elsewhere', d: { ...digest('system:anonymous', []), user: { username: 'system:anonymous', groups: ['system:unauthenticated'] }, isResourceRequest: false, verb: 'get', path: '/version' }, schema: 'global-default' },
  ])('$name', ({ d, schema, flow }) => {
    const fs = classify(ORDERED, d)!;
    expect(fs.metadata.name).toBe(schema);
    if (flow !== undefined) expect(flowKey(fs, d)).toBe(`${schema}\u0000${flow}`);
  });

  it('falls through to catch-all when the suggested schemas are gone, and skips unusable ones', () => {
    expect(classify(orderFlowSchemas(MANDATORY_FLOW_SCHEMAS), digest('alice', []))?.metadata.name).toBe('catch-all');
    expect(classify(ORDERED, digest('alice', []), (fs) => fs.metadata.name !== 'global-default')?.metadata.name).toBe('catch-all');
  });
});

// Classifications are remembered by this key: two requests that classification could tell apart never share one.
describe('classificationKey', () => {
  const base = digest('alice', ['dev']);
  it.each<{ name: string; d: RequestDigest }>([
    { name: 'another user', d: digest('bob', ['dev']) },
    { name: 'another group', d: digest('alice', ['ops']) },
    { name: 'one more group', d: digest('alice', ['dev', 'ops']) },
    { name: 'a user name and group split elsewhere', d: digest('alice1', ['1:dev']) },
    { name: 'another verb', d: { ...base, verb: 'get' } },
    { name: 'another group of the resource', d: { ...base, apiGroup: 'apps' } },
    { name: 'another resource', d: { ...base, resource: 'secrets' } },
    { name: 'a subresource', d: { ...base, subresource: 'status' } },
    { name: 'another namespace', d: { ...base, namespace: 'kube-system' } },
    { name: 'cluster scope', d: { ...base, namespace: '' } },
    { name: 'a non-resource request', d: { ...base, isResourceRequest: false } },
  ])('$name has a key of its own', ({ d }) => {
    expect(classificationKey(d)).toBeDefined();
    expect(classificationKey(d)).not.toBe(classificationKey(base));
  });

  it('is the same for the same request, leaves out what classification does not read, and is not made for huge users', () => {
    expect(classificationKey(digest('alice', ['dev']))).toBe(classificationKey(base));
    expect(classificationKey({ ...base, limit: 5, path: '/api/v1/pods' })).toBe(classificationKey(base));
    const paths = (path: string) => classificationKey({ ...base, isResourceRequest: false, path });
    expect(paths('/healthz')).not.toBe(paths('/readyz'));
    expect(classificationKey(digest('alice', Array.from({ length: 200 }, (_, i) => `group-${i}`)))).toBeUndefined();
  });
});

describe('shuffle sharding', () => {
  it('deals the same distinct hand to a flow every time', () => {
    const hand = dealHand('global-default\u0000alice', 128, 6);
    expect(new Set(hand).size).toBe(6);
    expect(hand.every((q) => q >= 0 && q < 128)).toBe(true);
    expect(dealHand('global-default\u0000alice', 128, 6)).toEqual(hand);
    expect(dealHand('global-default\u0000bob', 128, 6)).not.toEqual(hand);
  });
});

describe('QueueSet', () => {
  const tick = () => new Promise((r) => setImmediate(r));

  it('admits up to its concurrency, queues the rest, and dispatches fairly between flows', async () => {
    const qs = new QueueSet({ concurrency: 2, queues: 16, handSize: 2, queueLengthLimit: 10 });
    const order: string[] = [];
    const running = await Promise.all([qs.acquire('a', 1000), qs.acquire('a', 1000)]);
    // Flow a queues four more, then flow b one; each releases its seat once dispatched.
    const run = (flow: string, name: string) =>
      qs.acquire(flow, 1000).then((seat) => {
        order.push(name);
        setImmediate(() => seat.release());
      });
    const waiting = [run('a', 'a1'), run('a', 'a2'), run('a', 'a3'), run('a', 'a4'), run('b', 'b')];
    await tick();
    expect(qs.queuedRequests).toBe(5);
    expect(qs.executingRequests).toBe(2);
    for (const seat of running) seat.release();
    await Promise.all(waiting);
    // b did not wait behind a's backlog: it was among the first two dispatched.
    expect(order.slice(0, 2)).toContain('b');
    await tick();
    expect(qs.executingRequests).toBe(0);
  });

  /** Two flows whose queues (of 8, hand size 1) differ, the heavy one's first in index order (where round robin starts). */
  const [heavy, light] = (() => {
    const flows = Array.from({ length: 20 }, (_, i) => `flow-${i}`);
    const q = (f: string) => dealHand(f, 8, 1)[0];
    const h = flows.find((f) => q(f) === 0)!;
    return [h, flows.find((f) => q(f) > 0)!];
  })();

  /** Queues the requests of `flows` (name, flow, ms it runs) on `qs`, recording the order they are dispatched in. */
  const dispatchOrder = (qs: QueueSet, requests: [name: string, flow: string, ms: number][]) => {
    const order: string[] = [];
    const done = requests.map(([name, flow, ms]) =>
      qs.acquire(flow, 10_000).then((seat) => {
        order.push(name);
        // A negative time: done at once (no turn of the event loop, whatever the machine's load).
        if (ms < 0) seat.release();
        else setTimeout(() => seat.release(), ms);
      }),
    );
    return { order, done: Promise.all(done) };
  };

  it('dispatches a light flow’s request before the queued ones of a flow holding the seats', async () => {
    const qs = new QueueSet({ concurrency: 1, queues: 8, handSize: 1, queueLengthLimit: 10 });
    const running = await qs.acquire(heavy, 1000);
    const { order, done } = dispatchOrder(qs, [['h1', heavy, -1], ['h2', heavy, -1], ['h3', heavy, -1], ['l1', light, -1]]);
    await tick();
    running.release();
    await done;
    expect(order[0]).toBe('l1');
  });

  it('shares seat time, not turns: a flow of long requests waits while a flow of short ones catches up', async () => {
    const qs = new QueueSet({ concurrency: 1, queues: 8, handSize: 1, queueLengthLimit: 10 });
    const running = await qs.acquire(heavy, 1000);
    const heavies = Array.from({ length: 3 }, (_, i): [string, string, number] => [`h${i}`, heavy, -1]);
    const lights = Array.from({ length: 5 }, (_, i): [string, string, number] => [`l${i}`, light, -1]);
    const { order, done } = dispatchOrder(qs, [...heavies, ...lights]);
    await new Promise((r) => setTimeout(r, 60));
    running.release();
    await done;
    // The heavy flow used 60 seat-ms; the light one's requests take next to none: all of them go
    // before the heavy flow's next (turn by turn, they would alternate).
    expect(order.slice(0, 5)).toEqual(lights.map(([name]) => name));
  });

  it('gives a light flow the seat a heavy flow’s wider queued request cannot use, at once', async () => {
    const qs = new QueueSet({ concurrency: 4, queues: 8, handSize: 1, queueLengthLimit: 10 });
    const wide = await qs.acquire(heavy, 1000, undefined, 3);
    const next = qs.acquire(heavy, 1000, undefined, 3);
    const get = await qs.acquire(light, 1000);
    expect([qs.executingSeats, qs.queuedRequests]).toEqual([4, 1]);
    get.release();
    wide.release();
    (await next).release();
  });

  it.each<{ name: string; queues: number; limit: number; reason: string }>([
    { name: 'rejects at once without queues (limitResponse Reject)', queues: 0, limit: 0, reason: 'concurrency-limit' },
    { name: 'rejects when the flow’s queue is full', queues: 4, limit: 1, reason: 'queue-full' },
  ])('$name', async ({ queues, limit, reason }) => {
    const qs = new QueueSet({ concurrency: 1, queues, handSize: 1, queueLengthLimit: limit });
    const seat = await qs.acquire('x', 1000);
    if (queues) void qs.acquire('x', 1000).catch(() => undefined);
    await expect(qs.acquire('x', 1000)).rejects.toMatchObject({ reason });
    seat.release();
  });

  // Deviation from upstream (README): while other flows of the level were active within
  // RECENT_FLOW_MS, a flow leaves one seat free for each of them.
  it.each<{ name: string; others: ('running' | 'recent' | 'expired')[]; width: number; runs: number }>([
    { name: 'a lone flow takes every seat', others: [], width: 1, runs: 6 },
    { name: 'a flow leaves one seat free while another runs a request', others: ['running'], width: 1, runs: 5 },
    { name: 'a flow leaves one seat free while another was active recently', others: ['recent'], width: 1, runs: 5 },
    { name: 'three other active flows: a flow leaves three seats free', others: ['running', 'recent', 'recent'], width: 1, runs: 3 },
    { name: 'a flow idle for longer than RECENT_FLOW_MS no longer counts', others: ['expired'], width: 1, runs: 6 },
    { name: 'a flow holding no seat starts one request wider than its limit', others: ['recent', 'recent', 'recent'], width: 4, runs: 1 },
  ])('$name', async ({ others, width, runs }) => {
    const qs = new QueueSet({ concurrency: 6, queues: 16, handSize: 2, queueLengthLimit: 10 });
    const held = await Promise.all(others.map((_, i) => qs.acquire(`other-${i}`, 1000)));
    others.forEach((o, i) => o !== 'running' && held[i].release());
    if (others.includes('expired')) await new Promise((r) => setTimeout(r, RECENT_FLOW_MS + 50));
    const heavy = Array.from({ length: 6 }, () => qs.acquire('heavy', 5000, undefined, width));
    await tick();
    const running = others.filter((o) => o === 'running').length;
    expect([qs.executingRequests - running, qs.queuedRequests]).toEqual([runs, 6 - runs]);
    // Each other active flow finds a free seat for its next request, at once (unless a request
    // wider than the limit took its seat).
    if (width === 1) {
      const next = await Promise.all(others.map((o, i) => (o === 'recent' ? qs.acquire(`other-${i}`, 1000) : undefined)));
      expect(qs.executingRequests - running).toBe(runs + next.filter(Boolean).length);
      for (const s of next) s?.release();
    }
    others.forEach((o, i) => o === 'running' && held[i].release());
    for (const h of heavy) h.then((s) => s.release(), () => undefined);
  });

  it('gives a held flow the reserved seat when the other flow goes idle, without another request', async () => {
    const qs = new QueueSet({ concurrency: 4, queues: 16, handSize: 2, queueLengthLimit: 10 });
    const light = await qs.acquire('light', 1000);
    const heavy = Array.from({ length: 4 }, () => qs.acquire('heavy', 5000));
    await tick();
    expect([qs.executingRequests, qs.queuedRequests]).toEqual([4, 1]);
    const idleFrom = performance.now();
    light.release();
    const seats = await Promise.all(heavy);
    // The last one was dispatched once the light flow had been idle for RECENT_FLOW_MS.
    expect(performance.now() - idleFrom).toBeGreaterThanOrEqual(RECENT_FLOW_MS - 5);
    expect(qs.executingRequests).toBe(4);
    for (const s of seats) s.release();
  });

  // One queue for every flow: a request the limit holds at the head must not hold back others.
  it.each<{ name: string; behind: [string, number][]; startsAtOnce: string[] }>([
    { name: 'another flow’s request behind a held one starts at once', behind: [['light', 1]], startsAtOnce: ['light-0'] },
    { name: 'it passes several requests of the held flow', behind: [['heavy', 1], ['light', 1]], startsAtOnce: ['light-1'] },
    { name: 'the held flow’s own later requests do not pass its first', behind: [['heavy', 1]], startsAtOnce: [] },
    { name: 'a request wider than the free seats still waits for them (no overtaking)', behind: [['light', 2]], startsAtOnce: [] },
  ])('$name; the held request starts first when a seat frees', async ({ behind, startsAtOnce }) => {
    const qs = new QueueSet({ concurrency: 4, queues: 1, handSize: 1, queueLengthLimit: 10 });
    (await qs.acquire('light', 1000)).release();
    // The light flow is active: the heavy one holds at most 3 of the 4 seats.
    const heavy = await Promise.all([1, 2, 3].map(() => qs.acquire('heavy', 1000)));
    const started: string[] = [];
    const seats: Seat[] = [];
    const queued = [['heavy', 1] as [string, number], ...behind].map(([flow, width], i) => {
      const name = i === 0 ? 'held' : `${flow}-${i - 1}`;
      return qs.acquire(flow, 5000, undefined, width).then((seat) => (started.push(name), seats.push(seat)));
    });
    await tick();
    expect(started).toEqual(startsAtOnce);
    heavy[0].release();
    await tick();
    expect(started[startsAtOnce.length]).toBe('held');
    for (const s of heavy.slice(1)) s.release();
    while (seats.length) seats.pop()!.release();
    await Promise.all(queued);
    while (seats.length) seats.pop()!.release();
  });

  it('gives up on a request that waits too long, or whose client went away', async () => {
    const qs = new QueueSet({ concurrency: 1, queues: 4, handSize: 1, queueLengthLimit: 5 });
    const seat = await qs.acquire('x', 1000);
    await expect(qs.acquire('x', 20)).rejects.toBeInstanceOf(RequestRejected);
    const gone = new AbortController();
    const cancelled = qs.acquire('x', 1000, (cancel) => gone.signal.addEventListener('abort', cancel, { once: true }));
    gone.abort();
    await expect(cancelled).rejects.toMatchObject({ reason: 'cancelled' });
    expect(qs.queuedRequests).toBe(0);
    seat.release();
  });
});

describe('work estimation: seats per request (upstream list work estimator)', () => {
  it.each<{ name: string; d: Partial<RequestDigest>; stored: number | undefined; seats: number }>([
    { name: 'a get', d: { verb: 'get' }, stored: 5000, seats: 1 },
    { name: 'a list of 50 objects', d: {}, stored: 50, seats: 1 },
    { name: 'a list of 250 objects', d: {}, stored: 250, seats: 3 },
    { name: 'a list of 5000 objects is capped at 10', d: {}, stored: 5000, seats: 10 },
    { name: 'a paged list counts its limit', d: { limit: 200 }, stored: 5000, seats: 2 },
    { name: 'a limit above the count counts the count', d: { limit: 5000 }, stored: 120, seats: 2 },
    { name: 'a resource of unknown size', d: {}, stored: undefined, seats: 1 },
  ])('$name: $seats', ({ d, stored, seats }) => {
    expect(requestSeats(digest('alice', [], d), stored)).toBe(seats);
  });

  it.each([
    { name: 'a big level: 10 at most', seats: 400, handSize: 6, max: 10 },
    { name: '15% of the level', seats: 40, handSize: 2, max: 6 },
    { name: 'no more than the seats over the hand size', seats: 40, handSize: 8, max: 5 },
    { name: 'a level without queues: 15%', seats: 40, handSize: undefined, max: 6 },
    { name: 'a small level: one seat', seats: 4, handSize: 2, max: 1 },
  ])('max seats of a level: $name', ({ seats, handSize, max }) => {
    expect(levelMaxSeats(seats, handSize)).toBe(max);
  });

  it('a list takes no more than its level allows', () => {
    expect(requestSeats(digest('alice', [], {}), 5000, 1)).toBe(1);
    expect(requestSeats(digest('alice', [], {}), 250, 6)).toBe(3);
  });

  it('a wide request waits for enough free seats; a narrower one behind it does not overtake; width is capped at the concurrency', async () => {
    const qs = new QueueSet({ concurrency: 4, queues: 8, handSize: 1, queueLengthLimit: 10 });
    const small = await qs.acquire('a', 1000);
    const order: string[] = [];
    const wide = qs.acquire('b', 1000, undefined, 10).then((s) => (order.push('wide'), s));
    const after = qs.acquire('b', 1000).then((s) => (order.push('after'), s));
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([]); // 3 seats free, the list needs all 4
    expect(qs.queuedRequests).toBe(2);
    small.release();
    const w = await wide;
    expect([qs.executingRequests, qs.executingSeats]).toEqual([1, 4]);
    w.release();
    (await after).release();
    expect(order).toEqual(['wide', 'after']);
    expect(qs.executingRequests).toBe(0);
  });
});
