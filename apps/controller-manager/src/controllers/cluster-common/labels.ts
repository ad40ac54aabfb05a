import type { Service } from '../../framework/api';

/** Set on Endpoints and EndpointSlices of headless services (SPEC well-known labels). */
export const HEADLESS_LABEL = 'service.orch.io/headless';
/** The owning service of an EndpointSlice. */
export const SERVICE_NAME_LABEL = 'orch.io/service-name';
/** The controller managing an EndpointSlice. */
export const MANAGED_BY_LABEL = 'endpointslice.orch.io/managed-by';
/** `"true"` on Endpoints stops mirroring them to EndpointSlices. */
export const SKIP_MIRROR_LABEL = 'endpointslice.orch.io/skip-mirror';
/** `truncated` on Endpoints of services with more than 1000 addresses. */
export const OVER_CAPACITY_ANNOTATION = 'endpoints.orch.io/over-capacity';
/** Node label giving the zone published on EndpointSlice endpoints. */
export const ZONE_LABEL = 'topology.orch.io/zone';

/** upstream helper.IsServiceIPSet: a cluster IP is allocated (not '' and not `None`). */
export function isServiceIPSet(svc: Service): boolean {
  const ip = svc.spec?.clusterIP;
  return !!ip && ip !== 'None';
}

/** The service's selector as a label map, or undefined when it has none (selector-less service). */
export function serviceSelector(svc: Service): Record<string, string> | undefined {
  const sel = svc.spec?.selector;
  return sel === null || sel === undefined ? undefined : sel;
}

/** True when every key/value of `selector` is in `labels` (an empty selector matches all). */
export function selectorMatches(selector: Record<string, string>, labels: Record<string, string> | undefined): boolean {
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}
