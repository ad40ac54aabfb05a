import { createMetricsRegistry, httpRequestMetrics, renderMetrics, REQUEST_DURATION_BUCKETS } from './metrics';

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
