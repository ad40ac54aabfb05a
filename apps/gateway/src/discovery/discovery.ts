import type { Catalog, ResourceDef } from '@orch/api';
import { groupVersionString } from '@orch/api';

/** Content type that makes kubectl read aggregated discovery (notes/kubectl-wire.md §1). */
export const AGGREGATED_DISCOVERY_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
export const AGGREGATED_DISCOVERY_V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';

/** The gateway's version (SPEC: 1.32). */
export const VERSION_INFO = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-orch',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-11-21T00:00:00Z',
  goVersion: `node${process.versions.node}`,
  compiler: 'tsc',
  platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
};

function scopeNamespaced(r: ResourceDef): boolean {
  return r.scope === 'Namespaced';
}

/** APIResourceList entries of one group/version, subresources as `<resource>/<sub>` entries. */
function apiResources(resources: ResourceDef[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const r of resources) {
    const entry: Record<string, unknown> = {
      name: r.resource,
      singularName: r.singular,
      namespaced: scopeNamespaced(r),
      kind: r.kind,
      verbs: r.verbs,
    };
    if (r.shortNames.length) entry.shortNames = r.shortNames;
    if (r.categories.length) entry.categories = r.categories;
    out.push(entry);
    for (const s of r.subresources) {
      const sub: Record<string, unknown> = { name: `${r.resource}/${s.name}`, singularName: '', namespaced: scopeNamespaced(r), kind: s.kind, verbs: s.verbs };
      // kubectl drain uses evictions only when group and version are non-empty.
      if (s.group !== undefined) sub.group = s.group;
      if (s.version !== undefined) sub.version = s.version;
      out.push(sub);
    }
  }
  return out;
}

/**
 * Discovery documents derived from the catalog (legacy and aggregated). Rebuilt when the
 * catalog changes (CRDs); cheap to call.
 */
export class Discovery {
  constructor(private readonly catalog: Catalog) {}

  /** GET /api */
  apiVersions(): Record<string, unknown> {
    return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '' }] };
  }

  /** GET /apis */
  apiGroupList(): Record<string, unknown> {
    return { kind: 'APIGroupList', apiVersion: 'v1', groups: this.catalog.groups().filter((g) => g.name !== '').map((g) => this.groupEntry(g.name, g.versions)) };
  }

  /** GET /apis/<group>, or undefined when the group is not served. */
  apiGroup(name: string): Record<string, unknown> | undefined {
    const g = this.catalog.groups().find((x) => x.name === name);
    return g && name !== '' ? { kind: 'APIGroup', apiVersion: 'v1', ...this.groupEntry(g.name, g.versions) } : undefined;
  }

  private groupEntry(name: string, versions: string[]): Record<string, unknown> {
    const vs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
    return { name, versions: vs, preferredVersion: vs[0] };
  }

  /** GET /api/v1 or /apis/<group>/<version>, or undefined when not served. */
  apiResourceList(group: string, version: string): Record<string, unknown> | undefined {
    const resources = this.catalog.resourcesOf(group, version);
    if (resources.length === 0) return undefined;
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: groupVersionString({ group: resources[0].group, version }), resources: apiResources(resources) };
  }

  /**
   * Aggregated discovery (apidiscovery v2 / v2beta1): `/api` (core only) or `/apis` (named
   * groups), with every version's resources and subresources inline.
   */
  aggregated(core: boolean, apiVersion: 'v2' | 'v2beta1'): Record<string, unknown> {
    const items = this.catalog
      .groups()
      .filter((g) => (core ? g.name === '' : g.name !== ''))
      .map((g) => ({
        metadata: { name: g.name, creationTimestamp: null },
        versions: g.versions.map((v) => ({
          version: v,
          freshness: 'Current',
          resources: this.catalog.resourcesOf(g.name, v).map((r) => {
            const entry: Record<string, unknown> = {
              resource: r.resource,
              responseKind: { group: r.group, version: r.version, kind: r.kind },
              scope: r.scope,
              singularResource: r.singular,
              verbs: r.verbs,
            };
            if (r.shortNames.length) entry.shortNames = r.shortNames;
            if (r.categories.length) entry.categories = r.categories;
            if (r.subresources.length) {
              entry.subresources = r.subresources.map((s) => ({
                subresource: s.name,
                responseKind: { group: s.group ?? r.group, version: s.version ?? r.version, kind: s.kind },
                verbs: s.verbs,
              }));
            }
            return entry;
          }),
        })),
      }));
    return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${apiVersion}`, metadata: {}, items };
  }
}
