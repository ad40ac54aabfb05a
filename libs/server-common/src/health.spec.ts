import { HealthChecks, HealthQuery } from './health';

const fail = (reason: string) => () => {
  throw new Error(reason);
};

/** ping, log, etcd (healthy or not), a post-start hook, and a readyz-only informer-sync. */
function registry(opts: { etcdDown?: boolean; shuttingDown?: boolean } = {}): HealthChecks {
  const h = new HealthChecks()
    .add('log', () => undefined)
    .add('etcd', opts.etcdDown ? fail('etcd: context deadline exceeded') : async () => undefined)
    .add('poststarthook/start-informers', () => undefined)
    .add('informer-sync', () => undefined, { endpoints: ['readyz'] });
  if (opts.shuttingDown) h.markShuttingDown();
  return h;
}

const HEALTHY_LINES = ['[+]ping ok', '[+]log ok', '[+]etcd ok', '[+]poststarthook/start-informers ok'];

describe('HealthChecks.handle', () => {
  it.each<{ name: string; setup?: Parameters<typeof registry>[0]; path: string; query?: HealthQuery; want: { status: number; body: string } }>([
    // healthy, not verbose
    { name: 'healthz ok', path: '/healthz', want: { status: 200, body: 'ok' } },
    { name: 'livez ok', path: '/livez', want: { status: 200, body: 'ok' } },
    { name: 'readyz ok', path: '/readyz', want: { status: 200, body: 'ok' } },
    // verbose: one line per check, last line names the endpoint
    { name: 'healthz verbose', path: '/healthz', query: 'verbose', want: { status: 200, body: [...HEALTHY_LINES, 'healthz check passed', ''].join('\n') } },
    { name: 'livez verbose', path: '/livez', query: 'verbose', want: { status: 200, body: [...HEALTHY_LINES, 'livez check passed', ''].join('\n') } },
    {
      name: 'readyz verbose has readyz-only checks and shutdown last',
      path: '/readyz',
      query: 'verbose',
      want: { status: 200, body: [...HEALTHY_LINES, '[+]informer-sync ok', '[+]shutdown ok', 'readyz check passed', ''].join('\n') },
    },
    { name: 'verbose=false is still verbose (presence counts)', path: '/livez', query: 'verbose=false', want: { status: 200, body: [...HEALTHY_LINES, 'livez check passed', ''].join('\n') } },
    // exclude
    {
      name: 'exclude with verbose',
      path: '/healthz',
      query: 'verbose&exclude=etcd',
      want: { status: 200, body: ['[+]ping ok', '[+]log ok', '[+]etcd excluded: ok', '[+]poststarthook/start-informers ok', 'healthz check passed', ''].join('\n') },
    },
    {
      name: 'exclude repeated',
      path: '/livez',
      query: 'verbose&exclude=etcd&exclude=log',
      want: { status: 200, body: ['[+]ping ok', '[+]log excluded: ok', '[+]etcd excluded: ok', '[+]poststarthook/start-informers ok', 'livez check passed', ''].join('\n') },
    },
    {
      name: 'exclude unknown names warns, sorted and quoted',
      path: '/livez',
      query: 'verbose&exclude=zz&exclude=etcd&exclude=aa',
      want: {
        status: 200,
        body: ['[+]ping ok', '[+]log ok', '[+]etcd excluded: ok', '[+]poststarthook/start-informers ok', 'warn: some health checks cannot be excluded: no matches for "aa","zz"', 'livez check passed', ''].join('\n'),
      },
    },
    { name: 'exclude unknown without verbose is plain ok', path: '/livez', query: 'exclude=nope', want: { status: 200, body: 'ok' } },
    // failing checks: 500, always verbose, reason withheld
    {
      name: 'failing check, not verbose',
      setup: { etcdDown: true },
      path: '/healthz',
      want: { status: 500, body: ['[+]ping ok', '[+]log ok', '[-]etcd failed: reason withheld', '[+]poststarthook/start-informers ok', 'healthz check failed', ''].join('\n') },
    },
    {
      name: 'failing check on livez names livez',
      setup: { etcdDown: true },
      path: '/livez',
      query: 'verbose',
      want: { status: 500, body: ['[+]ping ok', '[+]log ok', '[-]etcd failed: reason withheld', '[+]poststarthook/start-informers ok', 'livez check failed', ''].join('\n') },
    },
    { name: 'failing check excluded', setup: { etcdDown: true }, path: '/readyz', query: 'exclude=etcd', want: { status: 200, body: 'ok' } },
    // per-check paths
    { name: 'single check ok', path: '/livez/etcd', want: { status: 200, body: 'ok' } },
    { name: 'single check with slash in name', path: '/readyz/poststarthook/start-informers', want: { status: 200, body: 'ok' } },
    { name: 'single check failing shows its reason', setup: { etcdDown: true }, path: '/readyz/etcd', want: { status: 500, body: 'internal server error: etcd: context deadline exceeded\n' } },
    { name: 'single check on healthz', path: '/healthz/ping', want: { status: 200, body: 'ok' } },
    { name: 'unknown single check', path: '/livez/nope', want: { status: 404, body: '404 page not found\n' } },
    { name: 'readyz-only check is not on livez', path: '/livez/informer-sync', want: { status: 404, body: '404 page not found\n' } },
    { name: 'shutdown is a readyz check only', path: '/livez/shutdown', want: { status: 404, body: '404 page not found\n' } },
    { name: 'not a health path', path: '/healthzz', want: { status: 404, body: '404 page not found\n' } },
    // shutting down: readyz fails, liveness does not
    {
      name: 'readyz while shutting down',
      setup: { shuttingDown: true },
      path: '/readyz',
      want: { status: 500, body: [...HEALTHY_LINES, '[+]informer-sync ok', '[-]shutdown failed: reason withheld', 'readyz check failed', ''].join('\n') },
    },
    { name: 'readyz/shutdown while shutting down', setup: { shuttingDown: true }, path: '/readyz/shutdown', want: { status: 500, body: 'internal server error: process is shutting down\n' } },
    { name: 'livez while shutting down', setup: { shuttingDown: true }, path: '/livez', want: { status: 200, body: 'ok' } },
    // parsed query records (Fastify style) and URLSearchParams
    {
      name: 'query record with repeated exclude',
      path: '/healthz',
      query: { verbose: '', exclude: ['etcd', 'log'] },
      want: { status: 200, body: ['[+]ping ok', '[+]log excluded: ok', '[+]etcd excluded: ok', '[+]poststarthook/start-informers ok', 'healthz check passed', ''].join('\n') },
    },
    { name: 'URLSearchParams', path: '/healthz', query: new URLSearchParams('exclude=etcd'), want: { status: 200, body: 'ok' } },
  ])('$name', async ({ setup, path, query, want }) => {
    const r = await registry(setup).handle(path, query);
    expect({ status: r.status, body: r.body }).toEqual(want);
    expect(r.contentType).toBe('text/plain; charset=utf-8');
  });

  describe('livez grace period', () => {
    let now = 0;
    const h = new HealthChecks({ livezGracePeriodMs: 10_000, now: () => now }).add('etcd', fail('down'), { livezGrace: true });
    it.each([
      { name: 'livez passes within the grace period', at: 9_999, path: '/livez', want: 200 },
      { name: 'single livez check passes within the grace period', at: 9_999, path: '/livez/etcd', want: 200 },
      { name: 'readyz is not delayed', at: 9_999, path: '/readyz', want: 500 },
      { name: 'healthz is not delayed', at: 9_999, path: '/healthz', want: 500 },
      { name: 'livez fails after the grace period', at: 10_000, path: '/livez', want: 500 },
    ])('$name', async ({ at, path, want }) => {
      now = at;
      expect((await h.handle(path)).status).toBe(want);
    });
  });

  it('logs the withheld reasons', async () => {
    const lines: { msg: string; fields?: Record<string, unknown> }[] = [];
    const log = (msg: string, fields?: Record<string, unknown>) => lines.push({ msg, fields });
    const logger = { error: log, warn: log, info: log, debug: log, with: () => logger };
    await new HealthChecks({ logger }).add('etcd', fail('connection refused')).handle('/readyz');
    expect(lines).toEqual([{ msg: 'readyz check failed', fields: { failures: '[-]etcd failed: connection refused' } }]);
  });

  it.each([
    { name: 'duplicate', add: (h: HealthChecks) => h.add('ping', () => undefined), want: 'health check "ping" is already registered' },
    { name: 'reserved shutdown', add: (h: HealthChecks) => h.add('shutdown', () => undefined), want: 'health check "shutdown" is already registered' },
    { name: 'empty name', add: (h: HealthChecks) => h.add('', () => undefined), want: 'invalid health check name ""' },
  ])('add rejects $name', ({ add, want }) => {
    expect(() => add(new HealthChecks())).toThrow(want);
  });
});
