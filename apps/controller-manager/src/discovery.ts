import type { Catalog } from '@orch/api';
import { CatalogDiscovery, type RestClient, type SharedInformerFactory } from '@orch/client';
import type { Logger } from '@orch/server-common';
import type { ControllerDiscovery } from './framework/controller';

/** Upstream's garbage collector resyncs discovery every 30 s. */
const RESYNC_PERIOD_MS = 30_000;
/** Changes to CRDs and APIServices within this window cause one refresh. */
const DEBOUNCE_MS = 200;

const CRDS = { group: 'apiextensions.orch.io', version: 'v1', resource: 'customresourcedefinitions' };
const API_SERVICES = { group: 'apiregistration.orch.io', version: 'v1', resource: 'apiservices' };

/**
 * The controller-manager's view of the served resources beyond the built-in API: discovery
 * is read at start, every 30 s, and shortly after any CustomResourceDefinition or APIService
 * changes; listeners hear when the catalog changed. Concurrent refreshes share one read.
 */
export class DiscoveryRefresher implements ControllerDiscovery {
  private readonly discovery: CatalogDiscovery;
  private readonly listeners = new Set<() => void>();
  private inFlight?: Promise<boolean>;
  private timer?: NodeJS.Timeout;
  private debounce?: NodeJS.Timeout;

  constructor(
    client: RestClient,
    catalog: Catalog,
    private readonly logger: Logger,
  ) {
    this.discovery = new CatalogDiscovery(client, catalog);
  }

  refresh(): Promise<boolean> {
    this.inFlight ??= this.discovery
      .refresh()
      .then((changed) => {
        if (changed) {
          this.logger.info('discovered resources changed', { resources: this.discovery.resources().map((d) => `${d.resource}.${d.group}/${d.version}`) });
          for (const l of this.listeners) l();
        }
        return changed;
      })
      .catch((err: unknown) => {
        this.logger.warn('discovery failed', { error: (err as Error).message });
        return false;
      })
      .finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Refreshes periodically and on CRD / APIService changes until `signal` aborts. */
  start(informers: SharedInformerFactory, signal: AbortSignal): void {
    const soon = () => {
      clearTimeout(this.debounce);
      this.debounce = setTimeout(() => void this.refresh(), DEBOUNCE_MS);
    };
    for (const gvr of [CRDS, API_SERVICES]) informers.informerFor(gvr).addEventHandler({ onAdd: soon, onUpdate: soon, onDelete: soon });
    this.timer = setInterval(() => void this.refresh(), RESYNC_PERIOD_MS);
    signal.addEventListener(
      'abort',
      () => {
        clearInterval(this.timer);
        clearTimeout(this.debounce);
      },
      { once: true },
    );
  }
}
