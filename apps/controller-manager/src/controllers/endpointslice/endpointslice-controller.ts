import { NAMESPACE_INDEX, objectKey, splitObjectKey } from '@orch/client';
import type { ControllerContext, ControllerDescriptor } from '../../framework/controller';
import { ZONE_LABEL, selectorMatches, serviceSelector } from '../cluster-common/labels';
import { QueueController } from '../../framework/queue-controller';
import { ENDPOINTSLICES, NODES, PODS, SERVICES } from '../../framework/resources';
import { ManagedSlices } from '../cluster-common/slice-writer';
import { reconcileSlices } from '../cluster-common/slices';
import type { EndpointSlice } from '../../framework/api';
import { enqueueServicesOfPods } from '../endpoints/endpoints-controller';
import { ENDPOINTSLICE_CONTROLLER_NAME, desiredGroups, serviceSliceTemplate } from './desired';

/**
 * EndpointSlice controller (upstream endpointslice-controller): for every service with a
 * selector (not ExternalName) keeps EndpointSlices labelled `orch.io/service-name` and
 * `endpointslice.orch.io/managed-by: endpointslice-controller.orch.io`, owned by the
 * service, of at most 100 endpoints each, one set per port list. Slices of a deleted service
 * are deleted (the garbage collector would too).
 */
export class EndpointSliceController extends QueueController {
  private readonly cache = this.informersOf({ services: SERVICES, pods: PODS, nodes: NODES });
  private readonly slices: ManagedSlices;

  constructor(ctx: ControllerContext) {
    super('endpointslice', ctx);
    const sliceInformer = this.informer<EndpointSlice>(ENDPOINTSLICES);
    this.slices = new ManagedSlices(ctx.client, sliceInformer, ENDPOINTSLICE_CONTROLLER_NAME, (key) => this.queue.add(key));
    this.enqueueOn(this.cache.services, (svc) => objectKey(svc));
    enqueueServicesOfPods(this.cache.pods, this.cache.services, (key) => this.queue.add(key));
    // A node's zone is published on its endpoints: a zone change re-syncs every service.
    this.cache.nodes.addEventHandler({
      onUpdate: (oldNode, node) => {
        if (oldNode.metadata.labels?.[ZONE_LABEL] !== node.metadata.labels?.[ZONE_LABEL]) for (const key of this.cache.services.keys()) this.queue.add(key);
      },
    });
  }

  protected async sync(key: string): Promise<void> {
    const { namespace = '' } = splitObjectKey(key);
    const svc = this.cache.services.get(key);
    if (!svc) {
      await this.slices.deleteAll(key);
      return;
    }
    const selector = serviceSelector(svc);
    if (svc.spec?.type === 'ExternalName' || !selector) return;
    if (!this.slices.expectationsMet(key)) return;
    const pods = this.cache.pods.byIndex(NAMESPACE_INDEX, namespace).filter((p) => selectorMatches(selector, p.metadata.labels));
    const desired = desiredGroups(svc, pods, (node) => this.cache.nodes.get(node)?.metadata.labels?.[ZONE_LABEL]);
    const plan = reconcileSlices(this.slices.of(key), desired, serviceSliceTemplate(svc, ENDPOINTSLICE_CONTROLLER_NAME, this.ctx.options.k8sCompatibility));
    await this.slices.apply(key, plan);
  }
}

export const endpointSliceController: ControllerDescriptor = { name: 'endpointslice', serviceAccount: 'endpointslice-controller', create: (ctx) => new EndpointSliceController(ctx) };
