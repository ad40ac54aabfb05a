import { generateName } from '@orch/apimachinery';
import { ApiError, splitObjectKey, visitOnEvents, type RestClient, type ResourceClient, type SharedInformer } from '@orch/client';
import { CreateExpectations } from '../../framework/expectations';
import { ignoreNotFound } from '../../framework/queue-controller';
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from './labels';
import { ENDPOINTSLICES } from '../../framework/resources';
import type { SlicePlan } from './slices';
import type { EndpointSlice } from '../../framework/api';

/** Name of the slice index of the controller `managedBy`: `<namespace>/<service>` of its slices. */
function sliceIndexName(managedBy: string): string {
  return `endpointslices-by-service:${managedBy}`;
}

/** The `<namespace>/<service>` a slice managed by `managedBy` belongs to, if it is one. */
function sliceOwnerKey(slice: EndpointSlice, managedBy: string): string | undefined {
  const labels = slice.metadata.labels ?? {};
  const svc = labels[SERVICE_NAME_LABEL];
  return labels[MANAGED_BY_LABEL] === managedBy && svc ? `${slice.metadata.namespace}/${svc}` : undefined;
}

/**
 * The slices of one managing controller, indexed by service, with create expectations:
 * registers the index and handlers (which enqueue the owning service and observe creates)
 * on the shared slice informer.
 */
export class ManagedSlices {
  private readonly client: ResourceClient<EndpointSlice>;
  private readonly index: string;
  private readonly expectations = new CreateExpectations();

  constructor(
    rest: RestClient,
    private readonly informer: SharedInformer<EndpointSlice>,
    managedBy: string,
    enqueue: (serviceKey: string) => void,
  ) {
    this.client = rest.resource<EndpointSlice>(ENDPOINTSLICES);
    this.index = sliceIndexName(managedBy);
    informer.addIndexer(this.index, (s) => {
      const owner = sliceOwnerKey(s, managedBy);
      return owner ? [owner] : [];
    });
    const seen = (s: EndpointSlice) => {
      const owner = sliceOwnerKey(s, managedBy);
      if (!owner) return;
      this.expectations.observe(owner, s.metadata.name ?? '');
      enqueue(owner);
    };
    visitOnEvents(informer, seen, () => false);
  }

  /** False while slices this controller created for `key` are not in the cache yet: do not act. */
  expectationsMet(key: string): boolean {
    return this.expectations.satisfied(key);
  }

  /** The cached slices of service `key` (`namespace/name`). */
  of(key: string): EndpointSlice[] {
    return this.informer.byIndex(this.index, key);
  }

  /**
   * Creates, then updates, then deletes. A new slice is named here (from its generateName) so
   * it is expected before the request: its watch event may arrive before the response.
   */
  async apply(key: string, plan: SlicePlan): Promise<void> {
    const { namespace = '' } = splitObjectKey(key);
    const client = this.client.inNamespace(namespace);
    for (const slice of plan.create) {
      const name = slice.metadata.name ?? generateName(slice.metadata.generateName ?? '');
      this.expectations.expect(key, name);
      try {
        await client.create({ ...slice, metadata: { ...slice.metadata, name } });
      } catch (err) {
        this.expectations.observe(key, name);
        // A terminating namespace refuses new content; the namespace controller removes it all.
        if (err instanceof ApiError && err.code === 403) return;
        throw err;
      }
    }
    for (const slice of plan.update) await client.update(slice);
    for (const slice of plan.delete) await ignoreNotFound(client.delete(slice.metadata.name ?? '', { preconditions: { uid: slice.metadata.uid } }));
  }

  /** Deletes every slice of a service that is gone. */
  async deleteAll(key: string): Promise<void> {
    this.expectations.forget(key);
    await this.apply(key, { create: [], update: [], delete: this.of(key) });
  }
}
