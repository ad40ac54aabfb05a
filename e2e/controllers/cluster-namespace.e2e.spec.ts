import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeObject } from '@orch/apimachinery';
import { isNotFound, type RestClient } from '@orch/client';
import { eventually, startClusterControllers, type ClusterControllers } from './cluster-support';

const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };
const core = (resource: string) => ({ group: '', version: 'v1', resource });

interface NamespaceObj extends KubeObject {
  status?: { phase?: string; conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

async function gone(client: RestClient, name: string): Promise<true | undefined> {
  try {
    await client.resource(NAMESPACES).get(name);
    return undefined;
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
}

describe('cluster controllers: namespace, serviceaccount, root-ca-cert-publisher (real gateway + controller-manager)', () => {
  let c: ClusterControllers;
  beforeAll(async () => {
    c = await startClusterControllers(['namespace', 'serviceaccount', 'root-ca-cert-publisher']);
  });
  afterAll(() => c?.stop());

  it('gives a new namespace its default service account and the root CA config map', async () => {
    await c.client.resource(NAMESPACES).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'e2e-fresh' } });
    await eventually('default service account', () => c.client.resource(core('serviceaccounts'), 'e2e-fresh').get('default'));
    const cm = await eventually('orch-root-ca.crt', () => c.client.resource(core('configmaps'), 'e2e-fresh').get('orch-root-ca.crt'));
    expect((cm as { data?: Record<string, string> }).data).toEqual({ 'ca.crt': await readFile(join(c.pkiDir, 'ca.crt'), 'utf8') });
  });

  it('deletes everything in a deleted namespace, then the namespace', async () => {
    const ns = 'e2e-doomed';
    await c.client.resource(NAMESPACES).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await c.client.resource(core('configmaps'), ns).create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { a: '1' } } as KubeObject);
    await c.client.resource(core('secrets'), ns).create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sec' }, type: 'Opaque' } as KubeObject);
    await c.client.resource(core('services'), ns).create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' }, spec: { ports: [{ port: 80 }] } } as KubeObject);
    await c.client.resource({ group: 'apps', version: 'v1', resource: 'deployments' }, ns).create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
    } as KubeObject);
    await c.client.resource(core('pods'), ns).create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'pod' }, spec: { containers: [{ name: 'c', image: 'x' }] } } as KubeObject);

    await c.client.resource(NAMESPACES).delete(ns);
    await eventually('namespace removed', () => gone(c.client, ns), 20_000);
    for (const resource of ['configmaps', 'secrets', 'services', 'pods', 'serviceaccounts']) {
      expect((await c.client.resource(core(resource), ns).list()).items).toEqual([]);
    }
    expect((await c.client.resource({ group: 'apps', version: 'v1', resource: 'deployments' }, ns).list()).items).toEqual([]);
  });

  it('waits for content finalizers, reporting them in the namespace conditions', async () => {
    const ns = 'e2e-held';
    await c.client.resource(NAMESPACES).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const cms = c.client.resource(core('configmaps'), ns);
    await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', finalizers: ['e2e.orch.io/hold'] } });
    await c.client.resource(NAMESPACES).delete(ns);

    const held = await eventually('finalizer condition', async () => {
      const n = (await c.client.resource<NamespaceObj>(NAMESPACES).get(ns)) as NamespaceObj;
      return n.status?.conditions?.find((x) => x.type === 'NamespaceFinalizersRemaining' && x.status === 'True') ? n : undefined;
    });
    expect(held.status?.phase).toBe('Terminating');
    expect(held.status?.conditions?.find((x) => x.type === 'NamespaceFinalizersRemaining')?.message).toBe(
      'Some content in the namespace has finalizers remaining: e2e.orch.io/hold in 1 resource instances',
    );
    expect(held.status?.conditions?.find((x) => x.type === 'NamespaceContentRemaining')).toMatchObject({ status: 'True', reason: 'SomeResourcesRemain' });

    await cms.patch('held', 'merge', { metadata: { finalizers: null } });
    // The controller looks again after its finalizer estimate (15 s, upstream).
    await eventually('namespace removed after the finalizer went', () => gone(c.client, ns), 25_000);
  }, 45_000);
});
