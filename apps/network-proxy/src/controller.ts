import { readWellKnown } from '@orch/api';
import { enqueueOnEvents, ItemExponentialFailureRateLimiter, RateLimitingQueue, runWorkers, type SharedInformer, type SharedInformerFactory } from '@orch/client';
import type { Logger } from '@orch/server-common';
import type { ProxyMetrics } from './metrics';
import { HEADLESS_LABEL, SERVICE_NAME_LABEL, SERVICE_PROXY_NAME_LABEL, type EndpointSlice, type Service } from './model';
import { planService, type PlanOptions } from './plan';
import type { Proxier } from './proxier';

/** Objects handed to a custom proxy or belonging to headless services are not watched (upstream kube-proxy). */
export const PROXY_LABEL_SELECTOR = `!${SERVICE_PROXY_NAME_LABEL},!${HEADLESS_LABEL}`;
const SERVICE_INDEX = 'service';

const SERVICES = { group: '', version: 'v1', resource: 'services' };
const ENDPOINT_SLICES = { group: 'discovery.orch.io', version: 'v1', resource: 'endpointslices' };

/**
 * Keeps the proxier in step with Services and EndpointSlices (through the gateway): event
 * handlers only enqueue the service key `namespace/name`; `sync(key)` reads the service and
 * its slices from the caches, plans its frontends and applies them. Level-triggered and
 * idempotent; a sync that could not bind an address is retried with backoff.
 */
export class ProxyController {
  /** Failed syncs (an address that cannot be bound yet) retry after 1 s, doubling up to a minute. */
  private readonly queue = new RateLimitingQueue<string>(new ItemExponentialFailureRateLimiter<string>(1000, 60_000));
  private readonly services: SharedInformer<Service>;
  private readonly slices: SharedInformer<EndpointSlice>;

  constructor(
    informers: SharedInformerFactory,
    private readonly proxier: Proxier,
    private readonly plan: PlanOptions,
    private readonly logger: Logger,
    private readonly metrics: ProxyMetrics,
  ) {
    this.services = informers.informerFor<Service>(SERVICES, { labelSelector: PROXY_LABEL_SELECTOR });
    this.slices = informers.informerFor<EndpointSlice>(ENDPOINT_SLICES, { labelSelector: PROXY_LABEL_SELECTOR });
    this.slices.addIndexer(SERVICE_INDEX, (s) => {
      // Slices written by stock tools may carry only the upstream kubernetes.io/service-name.
      const svc = readWellKnown(s.metadata.labels, SERVICE_NAME_LABEL);
      return svc ? [`${s.metadata.namespace ?? ''}/${svc}`] : [];
    });
    enqueueOnEvents(this.services, this.queue, (s) => `${s.metadata.namespace ?? ''}/${s.metadata.name}`);
    enqueueOnEvents(this.slices, this.queue, (s) => {
      const svc = readWellKnown(s.metadata.labels, SERVICE_NAME_LABEL);
      return svc ? `${s.metadata.namespace ?? ''}/${svc}` : undefined;
    });
  }

  /** Both caches have synced (the proxy is ready). */
  synced(): boolean {
    return this.services.hasSynced() && this.slices.hasSynced();
  }

  /** Waits for the caches, then syncs keys until signal aborts (the listeners stay: the proxier's owner closes them). */
  async run(signal: AbortSignal): Promise<void> {
    const ok = (await Promise.all([this.services.waitForSync(signal), this.slices.waitForSync(signal)])).every(Boolean);
    try {
      if (!ok) return;
      this.logger.info('caches synced, programming services');
      await runWorkers(this.queue, 1, (key) => this.sync(key), { signal, logger: this.logger });
    } finally {
      this.queue.shutDown();
    }
  }

  /** Applies one service: its frontends from the cached service and slices (none when it is gone). */
  async sync(key: string): Promise<void> {
    const started = performance.now();
    const svc = this.services.get(key);
    const eligible = svc && !svc.metadata.labels?.[SERVICE_PROXY_NAME_LABEL];
    const specs = eligible ? planService(svc, this.slices.byIndex(SERVICE_INDEX, key), this.plan) : [];
    try {
      await this.proxier.syncService(key, specs);
    } finally {
      this.metrics.syncDuration.observe((performance.now() - started) / 1000);
      this.metrics.lastSync.setToCurrentTime();
    }
  }
}
