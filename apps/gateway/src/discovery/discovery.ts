import type { Catalog, ResourceDef } from '@orch/api';
import { compareVersionPriority, groupVersionString, upstreamGroup } from '@orch/api';

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

/**
 * How a group is declared: under its own name, or (compatibility option) under its upstream
 * `*.k8s.io` name, where resources carry no short names and no categories so that short names,
 * `kubectl get all` and the other categories resolve to the primary (`orch`) brand only.
 */
interface Brand {
  /** The group name clients see. */
  name: string;
  /** Short names and categories are listed (the primary brand). */
  primary: boolean;
}

/** A group name as declared under `brand`: the served group itself becomes the brand's name. */
function branded(group: string | undefined, served: string, brand: Brand): string | undefined {
  return group === served ? brand.name : group !== undefined && !brand.primary ? (upstreamGroup(group) ?? group) : group;
}

/** APIResourceList entries of one group/version, subresources as `<resource>/<sub>` entries. */
function apiResources(resources: ResourceDef[], brand: Brand): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const r of resources) {
    const entry: Record<string, unknown> = {
      name: r.resource,
      singularName: r.singular,
      namespaced: scopeNamespaced(r),
      kind: r.kind,
      verbs: r.verbs,
    };
    if (brand.primary && r.shortNames.length) entry.shortNames = r.shortNames;
    if (brand.primary && r.categories.length) entry.categories = r.categories;
    out.push(entry);
    for (const s of r.subresources) {
      const sub: Record<string, unknown> = { name: `${r.resource}/${s.name}`, singularName: '', namespaced: scopeNamespaced(r), kind: s.kind, verbs: s.verbs };
      // kubectl drain uses evictions only when group and version are non-empty.
      if (s.group !== undefined) sub.group = branded(s.group, r.group, brand);
      if (s.version !== undefined) sub.version = s.version;
      out.push(sub);
    }
  }
  return out;
}

export interface DiscoveryOptions {
  /**
   * Compatibility option (--k8s-group-aliases): every `*.orch.io` group is also declared under
   * its `*.k8s.io` name, after all primary groups (clients that pick the first group serving a
   * resource pick the `orch` one).
   */
  k8sAliases: boolean;
  /**
   * The APIServices' ordering (upstream aggregator): a group's groupPriorityMinimum (highest
   * first) and a version's versionPriority (highest first, then by version level). Groups
   * without one keep the catalog's order among themselves.
   */
  priorities?: GroupPriorities;
  /**
   * Group versions registered by an APIService whose extension server is not Available (so not
   * in the catalog): upstream still lists them in `/apis` and `/apis/<group>`, and in aggregated
   * discovery with no resources and freshness `Stale` (clients then report an incomplete list).
   */
  unavailable?: () => readonly { group: string; version: string }[];
}

/** Discovery order from the APIServices (undefined: no APIService names the group or version). */
export interface GroupPriorities {
  group(group: string): number | undefined;
  version(group: string, version: string): number | undefined;
}

/** Upstream's groupPriorityMinimum of the gateway's own groups (automanaged APIServices). */
export const BUILT_IN_GROUP_PRIORITY = 18000;

/**
 * Discovery documents derived from the catalog (legacy and aggregated). Rebuilt when the
 * catalog changes (CRDs); cheap to call.
 */
export class Discovery {
  constructor(
    private readonly catalog: Catalog,
    private readonly options: DiscoveryOptions = { k8sAliases: true },
  ) {}

  /** GET /api */
  apiVersions(): Record<string, unknown> {
    return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '' }] };
  }

  /** Every declared named group: the served ones, then their `*.k8s.io` names. */
  private namedGroups(): { served: string; brand: Brand; versions: string[] }[] {
    const groups = this.ordered(this.servedGroups());
    const primary = groups.map((g) => ({ served: g.name, brand: { name: g.name, primary: true }, versions: g.versions }));
    if (!this.options.k8sAliases) return primary;
    const aliases = groups.flatMap((g) => {
      const alias = upstreamGroup(g.name);
      return alias ? [{ served: g.name, brand: { name: alias, primary: false }, versions: g.versions }] : [];
    });
    return [...primary, ...aliases];
  }

  /** The catalog's named groups plus the group versions of unavailable APIServices. */
  private servedGroups(): { name: string; versions: string[] }[] {
    const groups = this.catalog.groups().filter((g) => g.name !== '');
    for (const { group, version } of this.options.unavailable?.() ?? []) {
      const known = groups.find((g) => g.name === group);
      if (!known) groups.push({ name: group, versions: [version] });
      else if (!known.versions.includes(version)) known.versions = [...known.versions, version].sort(compareVersionPriority);
    }
    return groups;
  }

  /** The group version is registered but its extension server is unavailable. */
  private isStale(served: string, version: string): boolean {
    return (this.options.unavailable?.() ?? []).some((gv) => gv.group === served && gv.version === version);
  }

  /** Groups and their versions in the APIServices' priority order (stable: ties keep the catalog's order). */
  private ordered(groups: { name: string; versions: string[] }[]): { name: string; versions: string[] }[] {
    const p = this.options.priorities;
    if (!p) return groups;
    const groupPriority = (name: string) => p.group(name) ?? BUILT_IN_GROUP_PRIORITY;
    return groups
      .map((g) => ({ name: g.name, versions: [...g.versions].sort((a, b) => (p.version(g.name, b) ?? 0) - (p.version(g.name, a) ?? 0) || compareVersionPriority(a, b)) }))
      .sort((a, b) => groupPriority(b.name) - groupPriority(a.name));
  }

  /** The declared group named `name` (served or alias), if any. */
  private namedGroup(name: string): { served: string; brand: Brand; versions: string[] } | undefined {
    return name === '' ? undefined : this.namedGroups().find((g) => g.brand.name === name);
  }

  /** GET /apis */
  apiGroupList(): Record<string, unknown> {
    return { kind: 'APIGroupList', apiVersion: 'v1', groups: this.namedGroups().map((g) => this.groupEntry(g.brand.name, g.versions)) };
  }

  /** GET /apis/<group>, or undefined when the group is not served. */
  apiGroup(name: string): Record<string, unknown> | undefined {
    const g = this.namedGroup(name);
    return g ? { kind: 'APIGroup', apiVersion: 'v1', ...this.groupEntry(g.brand.name, g.versions) } : undefined;
  }

  private groupEntry(name: string, versions: string[]): Record<string, unknown> {
    const vs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
    return { name, versions: vs, preferredVersion: vs[0] };
  }

  /** GET /api/v1 or /apis/<group>/<version>, or undefined when not served. */
  apiResourceList(group: string, version: string): Record<string, unknown> | undefined {
    const g = group === '' ? { served: '', brand: { name: '', primary: true } } : this.namedGroup(group);
    if (!g) return undefined;
    const resources = this.catalog.resourcesOf(g.served, version);
    if (resources.length === 0) return undefined;
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: groupVersionString({ group: g.brand.name, version }), resources: apiResources(resources, g.brand) };
  }

  /**
   * Aggregated discovery (apidiscovery v2 / v2beta1): `/api` (core only) or `/apis` (named
   * groups, then their `*.k8s.io` names), with every version's resources and subresources inline.
   */
  aggregated(core: boolean, apiVersion: 'v2' | 'v2beta1'): Record<string, unknown> {
    const groups = core ? this.catalog.groups().filter((g) => g.name === '').map((g) => ({ served: '', brand: { name: '', primary: true }, versions: g.versions })) : this.namedGroups();
    const items = groups.map((g) => ({
      metadata: { name: g.brand.name, creationTimestamp: null },
      versions: g.versions.map((v) => ({
        version: v,
        freshness: this.isStale(g.served, v) ? 'Stale' : 'Current',
        resources: this.catalog.resourcesOf(g.served, v).map((r) => {
          const entry: Record<string, unknown> = {
            resource: r.resource,
            responseKind: { group: g.brand.name, version: r.version, kind: r.kind },
            scope: r.scope,
            singularResource: r.singular,
            verbs: r.verbs,
          };
          if (g.brand.primary && r.shortNames.length) entry.shortNames = r.shortNames;
          if (g.brand.primary && r.categories.length) entry.categories = r.categories;
          if (r.subresources.length) {
            entry.subresources = r.subresources.map((s) => ({
              subresource: s.name,
              responseKind: { group: branded(s.group ?? r.group, r.group, g.brand), version: s.version ?? r.version, kind: s.kind },
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
