import { BUILTIN_RESOURCES } from './catalog-data';
import type { GroupVersion, ResourceDef } from './catalog-types';

/** The `*.orch.io` group a `*.k8s.io` group name stands for (compatibility option); other names as they are. */
export function canonicalGroup(group: string): string {
  return group.endsWith('.k8s.io') ? `${group.slice(0, -'.k8s.io'.length)}.orch.io` : group;
}

/**
 * The upstream (`*.k8s.io`) name of an `*.orch.io` group, under which the compatibility option
 * also declares it; undefined for groups without the brand (`apps`, `batch`, core...).
 */
export function upstreamGroup(group: string): string | undefined {
  return group.endsWith('.orch.io') ? `${group.slice(0, -'.orch.io'.length)}.k8s.io` : undefined;
}

export function groupVersionString(gv: GroupVersion): string {
  return gv.group === '' ? gv.version : `${gv.group}/${gv.version}`;
}

export function parseApiVersion(apiVersion: string): GroupVersion {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

export class RuntimeConfigError extends Error {}

/**
 * Parses `--runtime-config` (SPEC Versioning 2): comma-separated `key[=value]`, a missing value
 * meaning true. Keys: `api/all`, `api/ga`, `api/beta`, `api/alpha`, `<group>/<version>`
 * (`v1` or `api/v1` for core), `<group>/<version>/<resource>`.
 */
export function parseRuntimeConfig(spec: string | undefined): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const item of (spec ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = item.indexOf('=');
    const key = eq < 0 ? item : item.slice(0, eq);
    const raw = eq < 0 ? 'true' : item.slice(eq + 1).toLowerCase();
    if (raw !== 'true' && raw !== 'false') throw new RuntimeConfigError(`invalid value ${JSON.stringify(raw)} for runtime-config key ${key}: must be true or false`);
    // `admissionregistration.k8s.io/v1alpha1` names the orch group (stock tools' spelling).
    const [group, ...rest] = key.split('/');
    const canonical = rest.length && group.includes('.') ? [canonicalGroup(group), ...rest].join('/') : key;
    out.set(canonical === 'api/v1' ? 'v1' : canonical, raw === 'true');
  }
  return out;
}

function versionLevel(version: string): 'ga' | 'beta' | 'alpha' {
  return version.includes('alpha') ? 'alpha' : version.includes('beta') ? 'beta' : 'ga';
}

/**
 * The resource catalog: every served group/version/resource, after `--runtime-config`.
 * Lookups accept `*.k8s.io` aliases. Custom resources are added with {@link register}.
 */
export class Catalog {
  private readonly all: ResourceDef[] = [];
  private readonly enabled = new Map<string, ResourceDef>();
  private readonly byKind = new Map<string, ResourceDef>();
  /** Served resources by what they are stored as (see equivalents); rebuilt after a change. */
  private byStorage?: Map<string, ResourceDef[]>;
  private changes = 0;

  /** A number that changes whenever a resource is registered or unregistered: what was derived from the catalog at one generation holds until it changes. */
  get generation(): number {
    return this.changes;
  }

  constructor(
    resources: ResourceDef[] = BUILTIN_RESOURCES,
    private readonly runtimeConfig: Map<string, boolean> = new Map(),
  ) {
    const knownGroupVersions = new Set(resources.map((r) => groupVersionString(r)));
    for (const key of runtimeConfig.keys()) {
      if (key.startsWith('api/')) continue;
      const parts = key.split('/');
      const gv = parts.length === 3 || (parts.length === 2 && !knownGroupVersions.has(key)) ? parts.slice(0, -1).join('/') : key;
      if (!knownGroupVersions.has(gv) && !knownGroupVersions.has(key)) {
        throw new RuntimeConfigError(`unknown api groupVersion ${JSON.stringify(key)} in runtime-config`);
      }
      if (parts.length === 3 || (parts.length === 2 && gv === 'v1' && key !== 'v1')) {
        const res = parts[parts.length - 1];
        if (!resources.some((r) => groupVersionString(r) === gv && r.resource === res)) {
          throw new RuntimeConfigError(`unknown resource ${JSON.stringify(key)} in runtime-config`);
        }
      }
    }
    for (const r of resources) this.register(r);
  }

  /** Adds (or replaces) a resource; it is served when runtime-config allows it. */
  register(def: ResourceDef): void {
    const idx = this.all.findIndex((r) => r.group === def.group && r.version === def.version && r.resource === def.resource);
    if (idx >= 0) this.all[idx] = def;
    else this.all.push(def);
    const key = Catalog.key(def.group, def.version, def.resource);
    this.byStorage = undefined;
    this.changes++;
    if (this.isEnabled(def)) {
      this.enabled.set(key, def);
      this.byKind.set(`${def.group}/${def.version}/${def.kind}`, def);
    } else {
      this.enabled.delete(key);
    }
  }

  unregister(group: string, version: string, resource: string): void {
    const def = this.enabled.get(Catalog.key(group, version, resource));
    this.byStorage = undefined;
    this.changes++;
    this.enabled.delete(Catalog.key(group, version, resource));
    if (def) this.byKind.delete(`${def.group}/${def.version}/${def.kind}`);
    const idx = this.all.findIndex((r) => r.group === group && r.version === version && r.resource === resource);
    if (idx >= 0) this.all.splice(idx, 1);
  }

  private isEnabled(def: ResourceDef): boolean {
    const gv = groupVersionString(def);
    const rc = this.runtimeConfig;
    const single = rc.get(`${gv}/${def.resource}`);
    if (single !== undefined) return single;
    const whole = rc.get(gv);
    if (whole !== undefined) return whole;
    const level = rc.get(`api/${versionLevel(def.version)}`);
    if (level !== undefined) return level;
    const all = rc.get('api/all');
    if (all !== undefined) return all;
    return def.enabledByDefault;
  }

  private static key(group: string, version: string, resource: string): string {
    return `${group}/${version}/${resource}`;
  }

  /** The served resource for a URL's group/version/resource, or undefined. */
  lookup(group: string, version: string, resource: string): ResourceDef | undefined {
    return this.enabled.get(Catalog.key(canonicalGroup(group), version, resource));
  }

  /** The served resource for an object's apiVersion and kind, or undefined. */
  lookupKind(group: string, version: string, kind: string): ResourceDef | undefined {
    return this.byKind.get(`${canonicalGroup(group)}/${version}/${kind}`);
  }

  /** Every served resource, in discovery order. */
  resources(): ResourceDef[] {
    return [...this.enabled.values()];
  }

  /**
   * The served resources whose objects are the same objects as `def`'s, `def` first: other
   * versions of its group/resource and resources stored as the same one (events.orch.io
   * Events are core Events). Upstream's equivalent resources (admission matchPolicy
   * Equivalent), keyed by storage as upstream keys them by storage prefix.
   */
  equivalents(def: Pick<ResourceDef, 'group' | 'version' | 'resource' | 'storage'>): ResourceDef[] {
    if (!this.byStorage) {
      this.byStorage = new Map();
      for (const r of this.enabled.values()) {
        const k = Catalog.storageKey(r);
        const list = this.byStorage.get(k);
        if (list) list.push(r);
        else this.byStorage.set(k, [r]);
      }
    }
    const all = this.byStorage.get(Catalog.storageKey(def)) ?? [];
    const self = all.find((r) => r.group === def.group && r.version === def.version && r.resource === def.resource);
    return self ? [self, ...all.filter((r) => r !== self)] : all;
  }

  private static storageKey(def: Pick<ResourceDef, 'group' | 'resource' | 'storage'>): string {
    const s = def.storage ?? def;
    return `${s.group}/${s.resource}`;
  }

  /** Served resources of one group/version. */
  resourcesOf(group: string, version: string): ResourceDef[] {
    const g = canonicalGroup(group);
    return this.resources().filter((r) => r.group === g && r.version === version);
  }

  /** Served groups with their versions (preferred first), in discovery order. */
  groups(): { name: string; versions: string[] }[] {
    const groups = new Map<string, string[]>();
    for (const r of this.enabled.values()) {
      const versions = groups.get(r.group) ?? [];
      if (!versions.includes(r.version)) versions.push(r.version);
      groups.set(r.group, versions);
    }
    return [...groups.entries()].map(([name, versions]) => ({ name, versions: versions.sort(compareVersionPriority) }));
  }

  hasGroupVersion(group: string, version: string): boolean {
    return this.resourcesOf(group, version).length > 0;
  }
}

/** Orders versions as upstream does: GA before beta before alpha, higher numbers first. */
export function compareVersionPriority(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [3, 0, 0, v] as const;
    const level = m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2;
    return [level, -Number(m[1]), -Number(m[3] ?? 0), v] as const;
  };
  const pa = parse(a);
  const pb = parse(b);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return (pa[i] as number) - (pb[i] as number);
  return a.localeCompare(b);
}
