import { compareVersionPriority, upstreamGroup, type Catalog, type ResourceDef } from '@orch/api';
import { Gauge, type Registry } from 'prom-client';
import type { ApiRequest } from '../pipeline/api-request';
import { warningHeader } from '../pipeline/encode';

/** `group/version` as clients write it (`v1` for the core group). */
function groupVersion(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

/**
 * The group a client sees: requests to a `*.k8s.io` alias are answered in that spelling
 * (the served group and every group of the same brand are renamed).
 */
function inBrand(group: string, served: string, requested: string): string {
  return requested !== served && requested === upstreamGroup(served) ? (upstreamGroup(group) ?? group) : group;
}

/**
 * The `Warning` text of a request to `def`, undefined when its version is not deprecated.
 * Built-ins (upstream deprecation.WarningMessage): `<gv> <Kind> is deprecated in v1.19+`,
 * `, unavailable in v1.27+` when removal is planned, `; use <gv> <Kind>` with a replacement.
 * Custom resources (upstream apiextensions defaultDeprecationWarning): the version's
 * deprecationWarning, else `<group>/<version> <Kind> is deprecated` and `; use <group>/<newest>
 * <Kind>` naming the newest served, not deprecated, newer version of the CRD.
 */
export function deprecationWarning(def: ResourceDef, requestedGroup: string, catalog: Catalog): string | undefined {
  const group = (g: string) => inBrand(g, def.group, requestedGroup);
  if (def.custom) {
    if (!def.custom.deprecated) return undefined;
    if (def.custom.deprecationWarning !== undefined) return def.custom.deprecationWarning;
    const message = `${def.group}/${def.version} ${def.kind} is deprecated`;
    const newer = catalog
      .resources()
      .filter((r) => r.custom?.crdUid === def.custom!.crdUid && !r.custom.deprecated && compareVersionPriority(r.version, def.version) < 0)
      .map((r) => r.version)
      .sort(compareVersionPriority);
    return newer.length ? `${message}; use ${def.group}/${newer[0]} ${def.kind}` : message;
  }
  const d = def.deprecation;
  if (!d) return undefined;
  let message = `${groupVersion(group(def.group), def.version)} ${def.kind} is deprecated in v${d.deprecatedIn}+`;
  if (d.removedIn) message += `, unavailable in v${d.removedIn}+`;
  if (d.replacement) message += `; use ${groupVersion(group(d.replacement.group), d.replacement.version)} ${d.replacement.kind}`;
  return message;
}

/** apiserver_requested_deprecated_apis (upstream, STABLE): 1 for each deprecated API requested since start. */
export function requestedDeprecatedApisGauge(registry: Registry): Gauge<'group' | 'version' | 'resource' | 'subresource' | 'removed_release'> {
  return new Gauge({
    name: 'apiserver_requested_deprecated_apis',
    help: 'Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
    labelNames: ['group', 'version', 'resource', 'subresource', 'removed_release'],
    registers: [registry],
  });
}

/**
 * The deprecation stage (after resolve): a request to a deprecated version gets the upstream
 * `Warning` text (sent with the response, errors and watches included) and is recorded in
 * apiserver_requested_deprecated_apis. Other requests pass untouched.
 */
export function deprecationStage(catalog: Catalog, gauge: ReturnType<typeof requestedDeprecatedApisGauge> | undefined): (r: ApiRequest) => void {
  return (r) => {
    const t = r.target;
    if (!t) return;
    const warning = deprecationWarning(t.def, r.info.apiGroup, catalog);
    if (warning === undefined) return;
    t.ctx.warnings.push(warning);
    // Sent now as well, so that an error answer carries it too (the encode stage sends the full list).
    r.reply?.header('warning', warningHeader(t.ctx.warnings));
    gauge?.set({ group: r.info.apiGroup, version: t.def.version, resource: t.def.resource, subresource: t.sub?.name ?? '', removed_release: t.def.deprecation?.removedIn ?? '' }, 1);
  };
}
