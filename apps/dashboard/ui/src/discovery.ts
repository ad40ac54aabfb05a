import { useEffect, useState } from 'preact/hooks';
import { BUILTIN_RESOURCES } from '@orch/api/catalog';
import { request, type ResourceRef } from './api';

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
  verbs?: string[];
}

/** Every listable resource type the gateway serves (built-in, aggregated and CRDs), preferred versions only. */
export interface Discovery {
  resources: ResourceRef[];
  /** `group/Kind` → resource, for owner references. */
  byKind: Map<string, ResourceRef>;
  error?: string;
}

async function discover(): Promise<Discovery> {
  const resources: ResourceRef[] = [];
  const groupVersions: { group: string; version: string }[] = [{ group: '', version: 'v1' }];
  const groups = await request<{ groups: { name: string; preferredVersion: { version: string } }[] }>('/apis');
  for (const g of groups.groups ?? []) groupVersions.push({ group: g.name, version: g.preferredVersion.version });
  const lists = await Promise.all(
    groupVersions.map(async (gv) => {
      try {
        return { gv, list: await request<{ resources: ApiResource[] }>(gv.group ? `/apis/${gv.group}/${gv.version}` : '/api/v1') };
      } catch {
        return { gv, list: { resources: [] } };
      }
    }),
  );
  const byKind = new Map<string, ResourceRef>();
  for (const { gv, list } of lists) {
    for (const r of list.resources ?? []) {
      if (r.name.includes('/') || !r.verbs?.includes('list')) continue;
      const ref = { group: gv.group, version: gv.version, resource: r.name, namespaced: r.namespaced, kind: r.kind };
      resources.push(ref);
      byKind.set(`${gv.group}/${r.kind}`, ref);
    }
  }
  resources.sort((a, b) => (a.group || '~core').localeCompare(b.group || '~core') || a.resource.localeCompare(b.resource));
  return { resources, byKind };
}

let cached: Promise<Discovery> | undefined;

/** The gateway's discovery, loaded once per page. */
export function useDiscovery(): Discovery | undefined {
  const [d, setD] = useState<Discovery>();
  useEffect(() => {
    cached ??= discover().catch((err: Error) => {
      cached = undefined;
      return { resources: [], byKind: new Map(), error: err.message };
    });
    void cached.then(setD);
  }, []);
  return d;
}

/** Built-in resources the workload and overview views use without waiting for discovery, by group. */
const CORE_RESOURCES = {
  '': ['pods', 'nodes', 'namespaces', 'events', 'services', 'endpoints'],
  apps: ['deployments', 'statefulsets', 'daemonsets', 'replicasets'],
  batch: ['jobs', 'cronjobs'],
} as const;

type CoreResource = (typeof CORE_RESOURCES)[keyof typeof CORE_RESOURCES][number];

/** The references of {@link CORE_RESOURCES}, from the resource catalog (each one's first enabled version). */
export const CORE = Object.fromEntries(
  Object.entries(CORE_RESOURCES).flatMap(([group, resources]) =>
    resources.map((resource) => {
      const def = BUILTIN_RESOURCES.find((r) => r.group === group && r.resource === resource && r.enabledByDefault);
      if (!def) throw new Error(`the resource catalog has no ${group}/${resource}`);
      return [resource, { group, version: def.version, resource, namespaced: def.scope === 'Namespaced', kind: def.kind }];
    }),
  ),
) as Record<CoreResource, ResourceRef>;

export const WORKLOADS: ResourceRef[] = [CORE.deployments, CORE.statefulsets, CORE.daemonsets, CORE.jobs, CORE.cronjobs, CORE.replicasets, CORE.pods];
