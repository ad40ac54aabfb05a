import { useEffect, useState } from 'preact/hooks';
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

/** Built-in resources the workload and overview views use without waiting for discovery. */
export const CORE = {
  pods: { group: '', version: 'v1', resource: 'pods', namespaced: true, kind: 'Pod' },
  nodes: { group: '', version: 'v1', resource: 'nodes', namespaced: false, kind: 'Node' },
  namespaces: { group: '', version: 'v1', resource: 'namespaces', namespaced: false, kind: 'Namespace' },
  events: { group: '', version: 'v1', resource: 'events', namespaced: true, kind: 'Event' },
  services: { group: '', version: 'v1', resource: 'services', namespaced: true, kind: 'Service' },
  endpoints: { group: '', version: 'v1', resource: 'endpoints', namespaced: true, kind: 'Endpoints' },
  deployments: { group: 'apps', version: 'v1', resource: 'deployments', namespaced: true, kind: 'Deployment' },
  statefulsets: { group: 'apps', version: 'v1', resource: 'statefulsets', namespaced: true, kind: 'StatefulSet' },
  daemonsets: { group: 'apps', version: 'v1', resource: 'daemonsets', namespaced: true, kind: 'DaemonSet' },
  replicasets: { group: 'apps', version: 'v1', resource: 'replicasets', namespaced: true, kind: 'ReplicaSet' },
  jobs: { group: 'batch', version: 'v1', resource: 'jobs', namespaced: true, kind: 'Job' },
  cronjobs: { group: 'batch', version: 'v1', resource: 'cronjobs', namespaced: true, kind: 'CronJob' },
} satisfies Record<string, ResourceRef>;

export const WORKLOADS: ResourceRef[] = [CORE.deployments, CORE.statefulsets, CORE.daemonsets, CORE.jobs, CORE.cronjobs, CORE.replicasets, CORE.pods];
