import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Outcome of one new connection (TCP) or flow (UDP). */
export type ConnectionResult = 'forwarded' | 'dropped' | 'backend_unreachable';

/** The proxy's Prometheus metrics (upstream kubeproxy_* names with the brand word replaced). */
export class ProxyMetrics {
  readonly syncDuration: Histogram<string>;
  readonly lastSync: Gauge<string>;
  readonly connections: Counter<'protocol' | 'result'>;
  readonly active: Gauge<'protocol'>;
  readonly frontends: Gauge<'protocol'>;
  readonly bindErrors: Counter<string>;

  constructor(registry: Registry) {
    this.syncDuration = new Histogram({
      name: 'orchproxy_sync_proxy_rules_duration_seconds',
      help: 'Time to apply the listeners and routes of one service.',
      buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1],
      registers: [registry],
    });
    this.lastSync = new Gauge({ name: 'orchproxy_sync_proxy_rules_last_timestamp_seconds', help: 'The last time a service sync completed.', registers: [registry] });
    this.connections = new Counter({ name: 'orchproxy_connections_total', help: 'New connections (TCP) and flows (UDP) by outcome.', labelNames: ['protocol', 'result'], registers: [registry] });
    this.active = new Gauge({ name: 'orchproxy_active_connections', help: 'Open proxied connections (TCP) and flows (UDP).', labelNames: ['protocol'], registers: [registry] });
    this.frontends = new Gauge({ name: 'orchproxy_frontends', help: 'Addresses the proxy listens on.', labelNames: ['protocol'], registers: [registry] });
    this.bindErrors = new Counter({ name: 'orchproxy_bind_errors_total', help: 'Failed attempts to listen on a service address.', registers: [registry] });
  }
}
