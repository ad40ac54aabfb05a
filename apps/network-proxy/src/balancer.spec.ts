import { Balancer, hash32, newScheduler, type BackendState, type SchedulerName } from './balancer';
import type { Endpoint } from './model';

const ep = (ip: string, port = 80): Endpoint => ({ ip, port, key: `${ip}:${port}`, ready: true, serving: true, terminating: false, local: true });
const backends = (active: number[]): BackendState[] => active.map((a, i) => ({ endpoint: ep(`10.0.0.${i + 1}`), active: a }));
const names = (bs: BackendState[]) => bs.map((b) => b.endpoint.ip.split('.')[3]);

describe('schedulers: which backend each pick gets', () => {
  const ctx = { clientIP: '192.168.1.7', destIP: '10.96.0.10' };
  it.each([
    { name: 'rr cycles in order', scheduler: 'rr', active: [0, 0, 0], picks: 6, want: ['1', '2', '3', '1', '2', '3'] },
    { name: 'lc prefers the least loaded', scheduler: 'lc', active: [5, 1, 3], picks: 1, want: ['2'] },
    { name: 'lc shares ties round-robin', scheduler: 'lc', active: [0, 0, 0], picks: 3, want: ['1', '2', '3'] },
    { name: 'sed: lowest active + 1', scheduler: 'sed', active: [2, 4, 1], picks: 1, want: ['3'] },
    { name: 'nq: an idle backend first', scheduler: 'nq', active: [3, 0, 1], picks: 1, want: ['2'] },
    { name: 'nq: none idle → shortest expected delay', scheduler: 'nq', active: [3, 2, 4], picks: 1, want: ['2'] },
    { name: 'dh: one destination → one backend', scheduler: 'dh', active: [0, 0, 0], picks: 3, want: Array(3).fill(String((hash32('10.96.0.10') % 3) + 1)) },
    { name: 'sh: one source → one backend', scheduler: 'sh', active: [0, 0, 0], picks: 3, want: Array(3).fill(String((hash32('192.168.1.7') % 3) + 1)) },
    { name: 'random (iptables) uses the random source', scheduler: 'random', active: [0, 0, 0], picks: 3, want: ['3', '3', '3'] },
  ])('$name', ({ scheduler, active, picks, want }) => {
    const s = newScheduler(scheduler as SchedulerName, () => 0.9);
    const bs = backends(active);
    const got: BackendState[] = [];
    for (let i = 0; i < picks; i++) got.push(s.pick(bs, ctx));
    expect(names(got)).toEqual(want);
  });

  it.each([
    { name: 'sh spreads sources', scheduler: 'sh' as const, vary: 'clientIP' as const },
    { name: 'dh spreads destinations', scheduler: 'dh' as const, vary: 'destIP' as const },
  ])('$name over every backend', ({ scheduler, vary }) => {
    const s = newScheduler(scheduler);
    const bs = backends([0, 0, 0, 0]);
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) seen.add(s.pick(bs, { clientIP: '1.1.1.1', destIP: '2.2.2.2', [vary]: `10.1.${i}.${i}` }).endpoint.ip);
    expect(seen.size).toBe(4);
  });
});

describe('Balancer', () => {
  const ctx = (clientIP: string) => ({ clientIP, destIP: '10.96.0.10' });

  it('counts active connections for lc and forgets them on done', () => {
    const b = new Balancer(newScheduler('lc'));
    b.setEndpoints([ep('10.0.0.1'), ep('10.0.0.2')], undefined);
    const first = b.pick(ctx('c1'))!;
    const second = b.pick(ctx('c2'))!;
    expect(first.endpoint.key).not.toBe(second.endpoint.key);
    b.done(first);
    expect(b.pick(ctx('c3'))!.endpoint.key).toBe(first.endpoint.key);
  });

  it('ClientIP affinity pins a client, renews on use, expires after the timeout', () => {
    let now = 0;
    const b = new Balancer(newScheduler('rr'), () => now);
    b.setEndpoints([ep('10.0.0.1'), ep('10.0.0.2'), ep('10.0.0.3')], 10_000);
    const pinned = b.pick(ctx('client'))!.endpoint.key;
    for (let i = 0; i < 5; i++) {
      now += 9_000; // within the timeout of the previous connection
      expect(b.pick(ctx('client'))!.endpoint.key).toBe(pinned);
    }
    expect(b.pick(ctx('other'))!.endpoint.key).not.toBe(pinned);
    now += 10_001;
    const rr = new Set(Array.from({ length: 3 }, () => b.pick(ctx(`fresh-${Math.random()}`))!.endpoint.key));
    expect(rr.size).toBe(3);
  });

  it('affinity follows the endpoint set: a removed backend releases its clients', () => {
    const b = new Balancer(newScheduler('rr'));
    b.setEndpoints([ep('10.0.0.1'), ep('10.0.0.2')], 60_000);
    const pinned = b.pick(ctx('client'))!.endpoint;
    b.setEndpoints([ep(pinned.ip === '10.0.0.1' ? '10.0.0.2' : '10.0.0.1')], 60_000);
    expect(b.pick(ctx('client'))!.endpoint.key).not.toBe(pinned.key);
  });

  it('backends that stay keep their connection counts across updates', () => {
    const b = new Balancer(newScheduler('lc'));
    b.setEndpoints([ep('10.0.0.1'), ep('10.0.0.2')], undefined);
    const busy = b.pick(ctx('a'))!;
    b.setEndpoints([ep('10.0.0.1'), ep('10.0.0.2'), ep('10.0.0.3')], undefined);
    const picks = [b.pick(ctx('b'))!, b.pick(ctx('c'))!].map((x) => x.endpoint.key);
    expect(picks).not.toContain(busy.endpoint.key);
  });

  it('skips excluded backends (failed connects) and reports none left', () => {
    const b = new Balancer(newScheduler('rr'));
    b.setEndpoints([ep('10.0.0.1'), ep('10.0.0.2')], undefined);
    expect(b.pick(ctx('x'), new Set(['10.0.0.1:80']))!.endpoint.key).toBe('10.0.0.2:80');
    expect(b.pick(ctx('x'), new Set(['10.0.0.1:80', '10.0.0.2:80']))).toBeUndefined();
  });
});
