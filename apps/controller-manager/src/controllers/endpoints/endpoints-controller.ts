import { ApiError, NAMESPACE_INDEX, objectKey, splitObjectKey, visitOnEvents, type SharedInformer } from '@orch/client';
import type { ControllerContext, ControllerDescriptor } from '../../framework/controller';
import { selectorMatches, serviceSelector } from '../cluster-common/labels';
import { QueueController, ignoreNotFound } from '../../framework/queue-controller';
import { ENDPOINTS, PODS, SERVICES } from '../../framework/resources';
import type { Pod, Service } from '../../framework/api';
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
  visitOnEvents(pods, (pod) => podServiceKeys(services, pod).forEach(add));
}

/**
 * Endpoints controller (upstream endpoint controller): keeps one Endpoints object per
 * service with a selector, named after it, holding the addresses of the selected pods
 * (see `desiredEndpoints`), and deletes it when the service goes away. Services without a
 * selector are left alone (their Endpoints are written by users).
 */
export class EndpointsController extends QueueController {
  private readonly cache = this.informersOf({ services: SERVICES, pods: PODS, endpoints: ENDPOINTS });
  private readonly api = this.clientsOf({ endpoints: ENDPOINTS });

  constructor(ctx: ControllerContext) {
    super('endpoint', ctx);
    this.enqueueOn(this.cache.services, (svc) => objectKey(svc));
    this.enqueueOn(this.cache.endpoints, (ep) => objectKey(ep));
    enqueueServicesOfPods(this.cache.pods, this.cache.services, (key) => this.queue.add(key));
  }

  protected async sync(key: string): Promise<void> {
    const { namespace = '', name } = splitObjectKey(key);
    const svc = this.cache.services.get(key);
    if (!svc) {
      if (this.cache.endpoints.get(key)) await ignoreNotFound(this.api.endpoints.inNamespace(namespace).delete(name));
      return;
    }
    const selector = serviceSelector(svc);
    if (!selector) return;
    const pods = this.cache.pods.byIndex(NAMESPACE_INDEX, namespace).filter((p) => selectorMatches(selector, p.metadata.labels));
    const current = this.cache.endpoints.get(key);
    const desired = desiredEndpoints(svc, pods, current);
    if (!desired) return;
    try {
      if (current) await this.api.endpoints.update(desired);
      else await this.api.endpoints.create(desired);
    } catch (err) {
      // A terminating namespace refuses new content; the namespace controller is removing it all.
      if (err instanceof ApiError && err.code === 403 && !current) return;
      throw err;
    }
  }
}

export const endpointsController: ControllerDescriptor = { name: 'endpoint', serviceAccount: 'endpoint-controller', create: (ctx) => new EndpointsController(ctx) };
