import { ALL_VERBS, BUILTIN_RESOURCES, canonicalGroup, type Catalog, type ResourceDef, type Verb } from '@orch/api';
import type { RestClient } from './rest';

interface APIGroupList {
  groups?: { name: string; versions?: { groupVersion: string; version: string }[] }[];
}

interface APIResource {
  name: string;
  singularName?: string;
  namespaced: boolean;
  kind: string;
  verbs?: string[];
  shortNames?: string[];
  categories?: string[];
}

/** A group version's discovery document (`/apis/<group>/<version>`), the fields read here. */
export interface APIResourceList {
  groupVersion?: string;
  resources?: APIResource[];
}

const BUILTIN_GROUPS = new Set(BUILTIN_RESOURCES.map((r) => r.group));

/**
 * Keeps a {@link Catalog} in step with what the server serves beyond the built-in API
 * (upstream discovery clients of the garbage collector and the namespace controller): every
 * group version of `/apis` outside the built-in groups (custom resources, aggregated APIs) is
 * read from `/apis/<group>/<version>` and registered; what the server stopped serving is
 * removed. `*.k8s.io` spellings of built-in groups are the built-in groups.
 */
export class CatalogDiscovery {
  private readonly discovered = new Map<string, ResourceDef>();

  constructor(
    private readonly client: RestClient,
    private readonly catalog: Catalog,
  ) {}

  /** Discovered (not built-in) resources, as last refreshed. */
  resources(): ResourceDef[] {
    return [...this.discovered.values()];
  }

  /**
   * Reads discovery and updates the catalog. Resolves true when a resource was added or
   * removed. A group version that fails to load keeps what was known of it (upstream treats
   * partial discovery the same way).
   */
  async refresh(): Promise<boolean> {
    const groups = await this.client.request<APIGroupList>({ method: 'GET', path: '/apis' });
    const next = new Map<string, ResourceDef>();
    const failed = new Set<string>();
    for (const g of groups.groups ?? []) {
      if (BUILTIN_GROUPS.has(g.name) || canonicalGroup(g.name) !== g.name) continue;
      for (const v of g.versions ?? []) {
        try {
          const list = await this.client.request<APIResourceList>({ method: 'GET', path: `/apis/${g.name}/${v.version}` });
          for (const def of resourceDefs(g.name, v.version, list)) next.set(key(def), def);
        } catch {
          failed.add(`${g.name}/${v.version}`);
        }
      }
    }
    for (const [k, def] of this.discovered) if (failed.has(`${def.group}/${def.version}`) && !next.has(k)) next.set(k, def);
    let changed = false;
    for (const [k, def] of this.discovered) {
      if (next.has(k)) continue;
      this.catalog.unregister(def.group, def.version, def.resource);
      changed = true;
    }
    for (const [k, def] of next) {
      const had = this.discovered.get(k);
      if (had && JSON.stringify(had) === JSON.stringify(def)) {
        next.set(k, had);
        continue;
      }
      this.catalog.register(def);
      changed = true;
    }
    this.discovered.clear();
    for (const [k, def] of next) this.discovered.set(k, def);
    return changed;
  }
}

function key(def: ResourceDef): string {
  return `${def.group}/${def.version}/${def.resource}`;
}

/** The catalog entries a group version's discovery document describes (subresources folded into their resource). */
export function resourceDefs(group: string, version: string, list: APIResourceList): ResourceDef[] {
  const entries = list.resources ?? [];
  const subresources = (resource: string) =>
    entries
      .filter((e) => e.name.startsWith(`${resource}/`))
      .map((e) => ({ name: e.name.slice(resource.length + 1), kind: e.kind, verbs: (e.verbs ?? []) as Verb[] }));
  return entries
    .filter((e) => !e.name.includes('/'))
    .map((e) => ({
      group,
      version,
      resource: e.name,
      kind: e.kind,
      listKind: `${e.kind}List`,
      singular: e.singularName || e.kind.toLowerCase(),
      shortNames: e.shortNames ?? [],
      scope: e.namespaced ? 'Namespaced' : 'Cluster',
      verbs: (e.verbs ?? ALL_VERBS) as Verb[],
      subresources: subresources(e.name),
      categories: e.categories ?? [],
      enabledByDefault: true,
      virtual: false,
    }));
}
