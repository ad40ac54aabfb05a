import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

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

export interface HttpRequestMetrics {
  total: Counter<(typeof TOTAL_LABELS)[number]>;
  duration: Histogram<(typeof DURATION_LABELS)[number]>;
  /** Counts one finished request with its HTTP status code and records its duration. */
  observe(labels: RequestLabels, code: number, durationSeconds: number): void;
}

/**
 * Registers upstream's `apiserver_request_total` counter and
 * `apiserver_request_duration_seconds` histogram on `registry`. Call once per registry.
 * Long-running requests (watch, proxy) belong in the counter only, as upstream does:
 * use `total.inc` for them.
 */
export function httpRequestMetrics(registry: Registry): HttpRequestMetrics {
  const total = new Counter({
    name: 'apiserver_request_total',
    help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
    labelNames: TOTAL_LABELS,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'apiserver_request_duration_seconds',
    help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
    labelNames: DURATION_LABELS,
    buckets: REQUEST_DURATION_BUCKETS,
    registers: [registry],
  });
  return {
    total,
    duration,
    observe(labels, code, durationSeconds) {
      // Upstream's label order, so series read the same as kube-apiserver's.
      const { verb, group, version, resource, subresource, scope, component } = labels;
      const l = { verb, dry_run: labels.dry_run ?? '', group, version, resource, subresource, scope, component };
      total.inc({ ...l, code: String(code) });
      duration.observe(l, durationSeconds);
    },
  };
}
