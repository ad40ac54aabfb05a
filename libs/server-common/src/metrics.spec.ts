import { Counter, Histogram, Registry } from 'prom-client';
import { createMetricsRegistry, httpRequestMetrics, renderMetrics, REQUEST_DURATION_BUCKETS, type HttpRequestMetrics, type RequestLabels } from './metrics';

describe('metrics', () => {
  const registry = createMetricsRegistry();
  const m = httpRequestMetrics(registry);
  const pods = { verb: 'LIST', group: '', version: 'v1', resource: 'pods', subresource: '', scope: 'namespace', component: 'apiserver' };
  m.observe(pods, 200, 0.03);
  m.observe(pods, 200, 0.7);
  m.observe({ ...pods, verb: 'POST', dry_run: 'All', scope: 'namespace' }, 201, 0.01);
  m.total.inc({ verb: 'WATCH', dry_run: '', group: '', version: 'v1', resource: 'pods', subresource: '', scope: 'namespace', component: 'apiserver', code: '200' });

  it('renders the Prometheus text format', async () => {
    const r = await renderMetrics(registry);
    expect(r.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(r.body).toContain('# TYPE apiserver_request_total counter');
    expect(r.body).toContain('# TYPE apiserver_request_duration_seconds histogram');
  });

  it.each([
    // counter: one series per label set and code; empty labels are rendered, not dropped
    { name: 'counter of LIST', want: 'apiserver_request_total{verb="LIST",dry_run="",group="",version="v1",resource="pods",subresource="",scope="namespace",component="apiserver",code="200"} 2' },
    { name: 'counter of dry-run POST', want: 'apiserver_request_total{verb="POST",dry_run="All",group="",version="v1",resource="pods",subresource="",scope="namespace",component="apiserver",code="201"} 1' },
    { name: 'counter of WATCH', want: 'apiserver_request_total{verb="WATCH",dry_run="",group="",version="v1",resource="pods",subresource="",scope="namespace",component="apiserver",code="200"} 1' },
    // histogram: upstream buckets, cumulative
    { name: 'bucket 0.025', want: 'apiserver_request_duration_seconds_bucket{le="0.025",verb="LIST",dry_run="",group="",version="v1",resource="pods",subresource="",scope="namespace",component="apiserver"} 0' },
    { name: 'bucket 0.05', want: 'apiserver_request_duration_seconds_bucket{le="0.05",verb="LIST",dry_run="",group="",version="v1",resource="pods",subresource="",scope="namespace",component="apiserver"} 1' },
    { name: 'bucket 0.8', want: 'apiserver_request_duration_seconds_bucket{le="0.8",verb="LIST",dry_run="",group="",version="v1",resource="pods",subresource="",scope="namespace",component="apiserver"} 2' },
    { name: 'bucket +Inf', want: 'apiserver_request_duration_seconds_bucket{le="+Inf",verb="LIST",dry_run="",group="",version="v1",resource="pods",subresource="",scope="namespace",component="apiserver"} 2' },
    { name: 'count', want: 'apiserver_request_duration_seconds_count{verb="LIST",dry_run="",group="",version="v1",resource="pods",subresource="",scope="namespace",component="apiserver"} 2' },
    // default process metrics
    { name: 'process CPU', want: '# TYPE process_cpu_seconds_total counter' },
    { name: 'resident memory', want: '# TYPE process_resident_memory_bytes gauge' },
  ])('$name', async ({ want }) => {
    expect((await renderMetrics(registry)).body).toContain(`${want}\n`);
  });

  it('uses the upstream buckets', async () => {
    const body = (await renderMetrics(registry)).body;
    const les = [...body.matchAll(/apiserver_request_duration_seconds_bucket\{le="([^"]+)",verb="LIST"/g)].map((x) => x[1]);
    expect(les).toEqual([...REQUEST_DURATION_BUCKETS.map(String), '+Inf']);
  });

  it('does not observe watches in the histogram', async () => {
    expect((await renderMetrics(registry)).body).not.toMatch(/apiserver_request_duration_seconds_count\{verb="WATCH"/);
  });
});

describe('httpRequestMetrics', () => {
  /** prom-client's own counter and histogram with the same names, labels and buckets: what the series must read as. */
  function reference() {
    const registry = new Registry();
    const labelNames = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'];
    const total = new Counter({ name: 'apiserver_request_total', help: HELP_TOTAL, labelNames: [...labelNames, 'code'], registers: [registry] });
    const duration = new Histogram({ name: 'apiserver_request_duration_seconds', help: HELP_DURATION, labelNames, buckets: REQUEST_DURATION_BUCKETS, registers: [registry] });
    const full = (l: RequestLabels) => ({ verb: l.verb, dry_run: l.dry_run ?? '', group: l.group, version: l.version, resource: l.resource, subresource: l.subresource, scope: l.scope, component: l.component });
    return {
      registry,
      observe: (l: RequestLabels, code: number, s: number) => {
        total.inc({ ...full(l), code: String(code) });
        duration.observe(full(l), s);
      },
      count: (l: RequestLabels, code: number) => total.inc({ ...full(l), code: String(code) }),
    };
  }
  const HELP_TOTAL = 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.';
  const HELP_DURATION = 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.';
  const get = { verb: 'GET', group: '', version: 'v1', resource: 'configmaps', subresource: '', scope: 'resource', component: 'apiserver' };
  const requests: Array<[RequestLabels, number, number | 'watch']> = [
    [get, 200, 0.0004],
    [{ ...get, verb: 'POST', scope: 'namespace' }, 201, 0.012],
    [get, 404, 0.005], // on a bucket bound
    [{ ...get, group: 'apps', version: 'v1', resource: 'deployments', subresource: 'scale' }, 200, 0.3],
    [{ ...get, verb: 'WATCH', scope: 'namespace' }, 200, 'watch'],
    [get, 200, 61], // above the last bucket
    [{ ...get, verb: 'PATCH', dry_run: 'All' }, 422, 0.02],
    [{ ...get, resource: 'a"b\\c' }, 403, 0.1], // escaped in the text
    [get, 200, 0.7],
    [{ ...get, verb: 'POST', scope: 'namespace' }, 409, 2.5],
    // The same verb and resource, one other label different: series of their own.
    [{ ...get, scope: 'namespace' }, 200, 0.001],
    [{ ...get, group: 'example.io' }, 200, 0.002],
    [{ ...get, version: 'v2' }, 200, 0.003],
    [{ ...get, subresource: 'status' }, 200, 0.004],
    [{ ...get, dry_run: 'All' }, 200, 0.005],
    [{ ...get, component: 'other' }, 200, 0.006],
    [get, 200, 0.007],
  ];
  const feed = (m: Pick<HttpRequestMetrics, 'observe' | 'count'>, from: number, to: number) => {
    for (const [labels, code, seconds] of requests.slice(from, to)) {
      if (seconds === 'watch') m.count(labels, code);
      else m.observe(labels, code, seconds);
    }
  };

  it.each([
    { name: 'scraped once at the end', scrapes: [requests.length] },
    { name: 'scraped between requests (the counter catches up at each scrape)', scrapes: [1, 3, 6, 6, requests.length] },
  ])('renders the same text as prom-client fed the same requests: $name', async ({ scrapes }) => {
    const want = reference();
    const registry = new Registry();
    const m = httpRequestMetrics(registry);
    let done = 0;
    for (const upTo of scrapes) {
      feed(want, done, upTo);
      feed(m, done, upTo);
      done = upTo;
      expect(await registry.metrics()).toBe(await want.registry.metrics());
    }
  });

  it('gives the same JSON as prom-client', async () => {
    const want = reference();
    const registry = new Registry();
    feed(want, 0, requests.length);
    feed(httpRequestMetrics(registry), 0, requests.length);
    expect(await registry.getMetricsAsJSON()).toEqual(await want.registry.getMetricsAsJSON());
  });

  it('starts again from zero after a reset', async () => {
    const want = reference();
    const registry = new Registry();
    const m = httpRequestMetrics(registry);
    feed(want, 0, 4);
    feed(m, 0, 4);
    await registry.metrics();
    want.registry.resetMetrics();
    registry.resetMetrics();
    feed(want, 4, requests.length);
    feed(m, 4, requests.length);
    expect(await registry.metrics()).toBe(await want.registry.metrics());
  });
});
