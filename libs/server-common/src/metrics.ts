import { collectDefaultMetrics, Counter, Registry, type Metric } from 'prom-client';

/**
 * A registry with the default process metrics (`process_cpu_seconds_total`,
 * `process_resident_memory_bytes`, `nodejs_*`, ...). Create one per process and pass it to
 * the helpers below and to the component server.
 */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Renders a registry in the Prometheus text exposition format. */
export async function renderMetrics(registry: Registry): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

/** Labels of one API request, as upstream's `apiserver_request_*` metrics carry them. */
export interface RequestLabels {
  verb: string;
  /** Sorted, comma-joined dryRun values (`All`), empty when not a dry run. */
  dry_run?: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  /** `cluster`, `namespace`, `resource`, or empty for non-resource requests. */
  scope: string;
  /** `apiserver`, or the component that served it. */
  component: string;
}

/** Upstream buckets of `apiserver_request_duration_seconds`. */
export const REQUEST_DURATION_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

const DURATION_LABELS = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;
const TOTAL_LABELS = [...DURATION_LABELS, 'code'] as const;
type DurationLabels = Record<(typeof DURATION_LABELS)[number], string>;
type TotalLabels = Record<(typeof TOTAL_LABELS)[number], string>;

export interface HttpRequestMetrics {
  total: Counter<(typeof TOTAL_LABELS)[number]>;
  /** Counts one finished request with its HTTP status code and records its duration. */
  observe(labels: RequestLabels, code: number, durationSeconds: number): void;
  /** Counts one finished long-running request (watch, proxy) without recording its duration, as upstream does. */
  count(labels: RequestLabels, code: number): void;
}

/** The requests of one label set and code not yet added to the prom-client counter. */
interface CodeCount {
  labels: TotalLabels;
  pending: number;
}

/** One label set of the request metrics: its labels, built once, and its running counts. */
interface RequestSeries {
  labels: DurationLabels;
  codes: Map<number, CodeCount>;
  /** Observations per bucket of REQUEST_DURATION_BUCKETS (not cumulative); the last is +Inf only. */
  buckets: number[];
  sum: number;
  count: number;
}

/**
 * Registers upstream's `apiserver_request_total` counter and
 * `apiserver_request_duration_seconds` histogram on `registry`. Call once per registry.
 *
 * A request finds its label set (by verb and resource, then comparing the other labels) and adds to
 * plain numbers: prom-client hashes and validates the labels on every `inc`/`observe`, which
 * was ~8 % of a get. The counter is brought up to date when it is scraped; the histogram is
 * rendered from the series directly, in prom-client's format (metrics.spec checks the text is
 * the same as prom-client's own counter and histogram fed the same requests).
 */
export function httpRequestMetrics(registry: Registry): HttpRequestMetrics {
  /** Every label set in the order first seen (prom-client renders its series in that order). */
  const series: RequestSeries[] = [];
  /** The label sets by verb and resource; the few of one verb and resource are told apart by comparing their other labels. */
  const byVerb = new Map<string, Map<string, RequestSeries[]>>();
  /**
   * The (label set, code) pairs counted since the last scrape, in the order first counted: added
   * in that order, new series land in prom-client's counter in the order it would have seen them.
   */
  const pending: CodeCount[] = [];
  const total = new Counter({
    name: 'apiserver_request_total',
    help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
    labelNames: TOTAL_LABELS,
    registers: [registry],
    collect() {
      for (const c of pending) {
        this.inc(c.labels, c.pending);
        c.pending = 0;
      }
      pending.length = 0;
    },
  });
  registry.registerMetric(durationHistogram(series, () => byVerb.clear()) as unknown as Metric);

  function resolve(labels: RequestLabels): RequestSeries {
    const { verb, group, version, resource, subresource, scope, component } = labels;
    const dryRun = labels.dry_run ?? '';
    let byResource = byVerb.get(verb);
    if (!byResource) byVerb.set(verb, (byResource = new Map()));
    let candidates = byResource.get(resource);
    if (!candidates) byResource.set(resource, (candidates = []));
    for (const s of candidates) {
      const l = s.labels;
      if (l.group === group && l.version === version && l.subresource === subresource && l.scope === scope && l.dry_run === dryRun && l.component === component) return s;
    }
    // Upstream's label order, so series read the same as kube-apiserver's.
    const l = { verb, dry_run: dryRun, group, version, resource, subresource, scope, component };
    const s: RequestSeries = { labels: l, codes: new Map(), buckets: new Array<number>(REQUEST_DURATION_BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
    candidates.push(s);
    series.push(s);
    return s;
  }
  function countCode(s: RequestSeries, code: number): void {
    let c = s.codes.get(code);
    if (!c) {
      c = { labels: { ...s.labels, code: String(code) }, pending: 0 };
      s.codes.set(code, c);
    }
    if (c.pending++ === 0) pending.push(c);
  }
  return {
    total,
    observe(labels, code, durationSeconds) {
      if (!Number.isFinite(durationSeconds)) throw new TypeError(`duration is not a finite number: ${durationSeconds}`);
      const s = resolve(labels);
      countCode(s, code);
      let b = 0;
      while (b < REQUEST_DURATION_BUCKETS.length && durationSeconds > REQUEST_DURATION_BUCKETS[b]) b++;
      s.buckets[b]++;
      s.sum += durationSeconds;
      s.count++;
    },
    count(labels, code) {
      countCode(resolve(labels), code);
    },
  };
}

const DURATION_NAME = 'apiserver_request_duration_seconds';

/**
 * `apiserver_request_duration_seconds` as a metric the registry renders: the values a
 * prom-client Histogram with REQUEST_DURATION_BUCKETS gives for the same observations
 * (cumulative `_bucket` series with `le`, then `_sum` and `_count`, per label set).
 */
function durationHistogram(series: RequestSeries[], forget: () => void) {
  const bucketName = `${DURATION_NAME}_bucket`;
  const values = () =>
    series
      .filter((s) => s.count > 0)
      .flatMap((s) => {
        let acc = 0;
        const buckets = REQUEST_DURATION_BUCKETS.map((le, i) => {
          acc += s.buckets[i];
          return { labels: { le }, sharedLabels: s.labels, value: acc, metricName: bucketName, exemplar: null };
        });
        return [
          ...buckets,
          { labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: bucketName, exemplar: null },
          { labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${DURATION_NAME}_sum`, exemplar: undefined },
          { labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${DURATION_NAME}_count`, exemplar: undefined },
        ];
      });
  const base = {
    name: DURATION_NAME,
    help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
    type: 'histogram',
    aggregator: 'sum',
  };
  return {
    ...base,
    /** What the registry renders as text (prom-client's Histogram has the same method). */
    getForPromString: async () => ({ ...base, values: values() }),
    /** The JSON form: each value's labels with its label set merged in. */
    get: async () => ({ ...base, values: values().map(({ labels, sharedLabels, ...v }) => ({ ...v, labels: { ...labels, ...sharedLabels } })) }),
    /** As prom-client's: forgets every label set (the counter's pending requests stay). */
    reset(): void {
      series.length = 0;
      forget();
    },
  };
}
