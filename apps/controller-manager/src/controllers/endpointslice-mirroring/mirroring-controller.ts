import { objectKey } from '@orch/client';
import type { ControllerContext, ControllerDescriptor } from '../../framework/controller';
import { SKIP_MIRROR_LABEL, serviceSelector } from '../cluster-common/labels';
import { QueueController } from '../../framework/queue-controller';
import { ENDPOINTS, ENDPOINTSLICES, SERVICES } from '../../framework/resources';
import { ManagedSlices } from '../cluster-common/slice-writer';
import { reconcileSlices } from '../cluster-common/slices';
import type { EndpointSlice, Endpoints, Service } from '../../framework/api';
import { MAX_MIRRORED_PER_SUBSET, MIRRORING_CONTROLLER_NAME, mirroredGroups, mirroredSliceTemplate } from './mirror';

/** True when `endpoints` of `svc` are mirrored: a selector-less service, no skip-mirror label. */
export function shouldMirror(svc: Service | undefined, endpoints: Endpoints | undefined): endpoints is Endpoints {
  if (!svc || !endpoints) return false;
  if (serviceSelector(svc) !== undefined) return false;
  return endpoints.metadata.labels?.[SKIP_MIRROR_LABEL] !== 'true';
}

/**
 * EndpointSlice mirroring controller (upstream endpointslicemirroring-controller): Endpoints
 * of services without a selector (written by users) are mirrored into EndpointSlices
 * managed by `endpointslicemirroring-controller.orch.io`, unless labelled
 * `endpointslice.orch.io/skip-mirror: "true"`; mirrored slices go away when mirroring stops
 * applying. Keys are `namespace/name` of the Endpoints (= the service).
 */
export class EndpointSliceMirroringController extends QueueController {
  private readonly cache = this.informersOf({ services: SERVICES, endpoints: ENDPOINTS });
  private readonly slices: ManagedSlices;

  constructor(ctx: ControllerContext) {
    super('endpointslicemirroring', ctx);
    this.slices = new ManagedSlices(ctx.client, this.informer<EndpointSlice>(ENDPOINTSLICES), MIRRORING_CONTROLLER_NAME, (key) => this.queue.add(key));
    this.enqueueOn(this.cache.services, (svc) => objectKey(svc));
    this.enqueueOn(this.cache.endpoints, (ep) => objectKey(ep));
  }

  protected async sync(key: string): Promise<void> {
    const endpoints = this.cache.endpoints.get(key);
    if (!shouldMirror(this.cache.services.get(key), endpoints)) {
      if (this.slices.of(key).length) await this.slices.deleteAll(key);
      return;
    }
    if (!this.slices.expectationsMet(key)) return;
    const { groups, dropped } = mirroredGroups(endpoints);
    if (dropped > 0) {
      this.recorder.event(endpoints, 'Warning', 'EndpointsTruncated', 'Mirroring', `${dropped} addresses were not mirrored: at most ${MAX_MIRRORED_PER_SUBSET} per subset are`);
    }
    await this.slices.apply(key, reconcileSlices(this.slices.of(key), groups, mirroredSliceTemplate(endpoints, this.ctx.options.k8sCompatibility), { maxPerSlice: MAX_MIRRORED_PER_SUBSET, placeholder: false }));
  }
}

export const endpointSliceMirroringController: ControllerDescriptor = { name: 'endpointslicemirroring', serviceAccount: 'endpointslicemirroring-controller', create: (ctx) => new EndpointSliceMirroringController(ctx) };
