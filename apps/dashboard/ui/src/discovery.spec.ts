import { BUILTIN_RESOURCES } from '@orch/api/catalog';
import { collectionPath } from './api';
import { CORE, WORKLOADS } from './discovery';

describe('CORE (the built-in resources the views use before discovery answers)', () => {
  it.each(Object.entries(CORE))('%s is the resource catalog entry', (name, ref) => {
    const def = BUILTIN_RESOURCES.find((r) => r.group === ref.group && r.version === ref.version && r.resource === name);
    expect(def).toMatchObject({ kind: ref.kind, scope: ref.namespaced ? 'Namespaced' : 'Cluster', enabledByDefault: true });
  });

  // As the hand-written table this replaced had them.
  it('keeps the resources, their order, kinds and URLs', () => {
    expect(Object.keys(CORE).join(' ')).toBe('pods nodes namespaces events services endpoints deployments statefulsets daemonsets replicasets jobs cronjobs');
    expect(Object.values(CORE).map((r) => r.kind).join(' ')).toBe('Pod Node Namespace Event Service Endpoints Deployment StatefulSet DaemonSet ReplicaSet Job CronJob');
    expect(Object.values(CORE).map((r) => collectionPath(r, 'ns')).join(' ')).toBe(
      '/api/v1/namespaces/ns/pods /api/v1/nodes /api/v1/namespaces /api/v1/namespaces/ns/events /api/v1/namespaces/ns/services /api/v1/namespaces/ns/endpoints ' +
        '/apis/apps/v1/namespaces/ns/deployments /apis/apps/v1/namespaces/ns/statefulsets /apis/apps/v1/namespaces/ns/daemonsets /apis/apps/v1/namespaces/ns/replicasets ' +
        '/apis/batch/v1/namespaces/ns/jobs /apis/batch/v1/namespaces/ns/cronjobs',
    );
  });

  it('keeps the workload tabs in their order', () => {
    expect(WORKLOADS.map((w) => w.resource)).toEqual(['deployments', 'statefulsets', 'daemonsets', 'jobs', 'cronjobs', 'replicasets', 'pods']);
  });
});
