import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type GatewayProcess } from './support/gateway';
import { kubectlSync } from './support/kubectl';

// Deprecation signals (SPEC Versioning): requests to deprecated versions get the upstream
// Warning text (kubectl prints it), are counted in apiserver_requested_deprecated_apis, and
// versions no longer served answer 404.

const GADGETS = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - {name: v1beta1, served: true, storage: false, deprecated: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
  - {name: v1alpha1, served: true, storage: false, deprecated: true, deprecationWarning: "gadgets v1alpha1 goes away next week", schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`;

describe('deprecation signals', () => {
  let gw: GatewayProcess;
  let dir: string;
  const kubectl = (...args: string[]) => kubectlSync({ kubeconfig: gw.kubeconfig, cacheDir: join(dir, 'cache') }, args);

  beforeAll(async () => {
    gw = await startGateway({ args: ['--runtime-config=storage.orch.io/v1beta1/csistoragecapacities=true'] });
    dir = mkdtempSync(join(tmpdir(), 'orch-deprecation-'));
    writeFileSync(join(dir, 'gadgets.yaml'), GADGETS);
    expect(kubectl('apply', '-f', join(dir, 'gadgets.yaml')).code).toBe(0);
    expect(kubectl('wait', '--for=condition=Established', 'crd/gadgets.example.com', '--timeout=20s').code).toBe(0);
  });
  afterAll(async () => {
    await gw?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each<{ name: string; args: string[]; warning: string }>([
    { name: 'ComponentStatus', args: ['get', 'componentstatuses'], warning: 'Warning: v1 ComponentStatus is deprecated in v1.19+' },
    {
      name: 'a beta served again by --runtime-config, asked by kubectl under its k8s.io name',
      args: ['get', 'csistoragecapacities.v1beta1.storage.k8s.io', '-A'],
      warning: 'Warning: storage.k8s.io/v1beta1 CSIStorageCapacity is deprecated in v1.24+, unavailable in v1.27+; use storage.k8s.io/v1 CSIStorageCapacity',
    },
    { name: 'a deprecated CRD version', args: ['get', 'gadgets.v1beta1.example.com'], warning: 'Warning: example.com/v1beta1 Gadget is deprecated; use example.com/v1 Gadget' },
    { name: 'a CRD version with its own deprecationWarning', args: ['get', 'gadgets.v1alpha1.example.com'], warning: 'Warning: gadgets v1alpha1 goes away next week' },
  ])('kubectl prints the warning: $name', ({ args, warning }) => {
    const r = kubectl(...args);
    expect(r.code).toBe(0);
    expect(r.err.split('\n')).toContain(warning);
  });

  it('no warning for served, not deprecated versions', () => {
    const r = kubectl('get', 'gadgets.v1.example.com,pods,csistoragecapacities.v1.storage.k8s.io');
    expect(r.code).toBe(0);
    expect(r.err).not.toMatch(/Warning/);
  });

  it('warns on writes, errors and watches too', async () => {
    const body = { apiVersion: 'example.com/v1beta1', kind: 'Gadget', metadata: { name: 'g1' } };
    const want = '299 - "example.com/v1beta1 Gadget is deprecated; use example.com/v1 Gadget"';
    const created = await gw.admin.post('/apis/example.com/v1beta1/namespaces/default/gadgets', body);
    expect(created.status).toBe(201);
    expect(created.headers.warning).toBe(want);
    const watch = await gw.admin.get('/apis/example.com/v1beta1/namespaces/default/gadgets?watch=true&timeoutSeconds=1');
    expect(watch.status).toBe(200);
    expect(watch.headers.warning).toBe(want);
    const conflict = await gw.admin.post('/apis/example.com/v1beta1/namespaces/default/gadgets', body);
    expect(conflict.status).toBe(409);
    expect(conflict.headers.warning).toBe(want);
  });

  it('counts the deprecated APIs requested in apiserver_requested_deprecated_apis', async () => {
    const metrics = (await gw.admin.get('/metrics')).text;
    const series = metrics.split('\n').filter((l) => l.startsWith('apiserver_requested_deprecated_apis{'));
    expect(series.sort()).toEqual(
      [
        'apiserver_requested_deprecated_apis{group="",version="v1",resource="componentstatuses",subresource="",removed_release=""} 1',
        'apiserver_requested_deprecated_apis{group="storage.k8s.io",version="v1beta1",resource="csistoragecapacities",subresource="",removed_release="1.27"} 1',
        'apiserver_requested_deprecated_apis{group="example.com",version="v1beta1",resource="gadgets",subresource="",removed_release=""} 1',
        'apiserver_requested_deprecated_apis{group="example.com",version="v1alpha1",resource="gadgets",subresource="",removed_release=""} 1',
      ].sort(),
    );
  });

  it.each([
    '/apis/flowcontrol.apiserver.orch.io/v1beta3/flowschemas',
    '/apis/flowcontrol.apiserver.k8s.io/v1beta2/prioritylevelconfigurations',
    '/apis/autoscaling/v2beta2/namespaces/default/horizontalpodautoscalers',
    '/apis/batch/v1beta1/namespaces/default/cronjobs',
    '/apis/policy/v1beta1/namespaces/default/poddisruptionbudgets',
  ])('a version no longer served answers 404: %s', async (path) => {
    const r = await gw.admin.get(path);
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
  });
});
