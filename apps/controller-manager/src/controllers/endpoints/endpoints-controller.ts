import { ApiError, NAMESPACE_INDEX, objectKey, splitObjectKey, unwrapTombstone, type ResourceClient, type SharedInformer } from '@orch/client';
import type { ControllerContext, ControllerDescriptor } from '../../framework/controller';
import { selectorMatches, serviceSelector } from '../cluster-common/labels';
import { QueueController, ignoreNotFound } from '../../framework/queue-controller';
import { ENDPOINTS, PODS, SERVICES } from '../../framework/resources';
import type { Endpoints, Pod, Service } from '../../framework/api';
import { desiredEndpoints } from './subsets';

/** Keys of the services in `pod`'s namespace whose selector matches it (upstream GetPodServiceMemberships). */
export function podServiceKeys(services: SharedInformer<Service>, pod: Pod): string[] {
  return services
    .byIndex(NAMESPACE_INDEX, pod.metadata.namespace ?? '')
    .filter((svc) => {
      const sel = serviceSelector(svc);
      return sel !== undefined && selectorMatches(sel, pod.metadata.labels);
    })
    .map((svc) => objectKey(svc));
}

/** Registers pod handlers that enqueue the services selecting the old and new pod. */
export function enqueueServicesOfPods(pods: SharedInformer<Pod>, services: SharedInformer<Service>, add: (key: string) => void): void {
  const each = (pod: Pod) => podServiceKeys(services, pod).forEach(add);
  pods.addEventHandler({
    onAdd: each,
    onUpdate: (oldPod, newPod) => {
      each(oldPod);
      each(newPod);
    },
    onDelete: (obj) => each(unwrapTombstone(obj)),
  });
}

/**
 * Endpoints controller (upstream endpoint controller): keeps one Endpoints object per
 * service with a selector, named after it, holding the addresses of the selected pods
 * (see `desiredEndpoints`), and deletes it when the service goes away. Services without a
 * selector are left alone (their Endpoints are written by users).
 */
export class EndpointsController extends QueueController {
  private readonly services: SharedInformer<Service>;
  private readonly pods: SharedInformer<Pod>;
  private readonly endpoints: SharedInformer<Endpoints>;
  private readonly epClient: ResourceClient<Endpoints>;

  constructor(ctx: ControllerContext) {
    super('endpoint', ctx);
    this.epClient = ctx.client.resource<Endpoints>(ENDPOINTS);
    this.services = this.informer<Service>(SERVICES);
    this.pods = this.informer<Pod>(PODS);
    this.endpoints = this.informer<Endpoints>(ENDPOINTS);
    this.enqueueOn(this.services, (svc) => objectKey(svc));
    this.enqueueOn(this.endpoints, (ep) => objectKey(ep));
    enqueueServicesOfPods(this.pods, this.services, (key) => this.queue.add(key));
  }

  protected async sync(key: string): Promise<void> {
    const { namespace = '', name } = splitObjectKey(key);
    const svc = this.services.get(key);
    if (!svc) {
      if (this.endpoints.get(key)) await ignoreNotFound(this.epClient.inNamespace(namespace).delete(name));
      return;
    }
    const selector = serviceSelector(svc);
    if (!selector) return;
    const pods = this.pods.byIndex(NAMESPACE_INDEX, namespace).filter((p) => selectorMatches(selector, p.metadata.labels));
    const current = this.endpoints.get(key);
    const desired = desiredEndpoints(svc, pods, current);
    if (!desired) return;
    try {
      if (current) await this.epClient.update(desired);
      else await this.epClient.create(desired);
    } catch (err) {
      // A terminating namespace refuses new content; the namespace controller is removing it all.
      if (err instanceof ApiError && err.code === 403 && !current) return;
      throw err;
    }
  }
}

export const endpointsController: ControllerDescriptor = { name: 'endpoint', serviceAccount: 'endpoint-controller', create: (ctx) => new EndpointsController(ctx) };
