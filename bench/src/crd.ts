import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBenchGateway } from './gateway-process';
import { call, runLoad, target } from './load';
import type { Row } from './report';

/** A CRD with a structural schema, a default, bounds, an enum and two validation rules. */
const CRD = {
  apiVersion: 'apiextensions.orch.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.bench.example.com' },
  spec: {
    group: 'bench.example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['color'],
                'x-kubernetes-validations': [
                  { rule: 'self.replicas <= self.maxReplicas', message: 'replicas must not exceed maxReplicas' },
                  { rule: "self.color != 'black' || self.replicas == 0", message: 'black widgets have no replicas' },
                ],
                properties: {
                  color: { type: 'string', enum: ['red', 'blue', 'black'] },
                  replicas: { type: 'integer', minimum: 0, default: 1 },
                  maxReplicas: { type: 'integer', maximum: 100, default: 10 },
                  key: { type: 'string', maxLength: 64 },
                },
              },
            },
          },
        },
      },
    ],
  },
};

const widget = (ns: string, name: string) => JSON.stringify({ apiVersion: 'bench.example.com/v1', kind: 'Widget', metadata: { name, namespace: ns }, spec: { color: 'red', key: 'value' } });
const configMap = (ns: string, name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { key: 'value' } });

/**
 * `--only=crd`: a custom resource with a schema and two CEL rules against ConfigMaps on the
 * same gateway in the same run: creates/s and gets/s (64 clients), and the latency of a list
 * of N objects of each.
 */
export async function crdBench(opts: { durationMs: number; concurrency: number; listSize: number }): Promise<Row[]> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-crd-'));
  const gateway = await startBenchGateway(join(dir, 'gw'));
  const rows: Row[] = [];
  try {
    const t = target(gateway.url, gateway.creds, opts.concurrency);
    for (const ns of ['bench', 'lists']) await call(t, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
    const crd = await call(t, 'POST', '/apis/apiextensions.orch.io/v1/customresourcedefinitions', JSON.stringify(CRD));
    if (crd.status !== 201) throw new Error(`CRD create failed: ${crd.status} ${crd.body}`);
    const crs = '/apis/bench.example.com/v1/namespaces';
    for (let i = 0; (await call(t, 'GET', `${crs}/bench/widgets`)).status !== 200; i++) {
      if (i > 300) throw new Error('the custom resource was not served');
      await new Promise((r) => setTimeout(r, 20));
    }
    const cms = '/api/v1/namespaces';
    // Warm both paths up (JIT, caches, the store) before measuring either.
    const warmMs = Math.min(2000, opts.durationMs);
    await runLoad(opts.concurrency, warmMs, async (i) => (await call(t, 'POST', `${cms}/bench/configmaps`, configMap('bench', `warm-${i}`))).status === 201);
    await runLoad(opts.concurrency, warmMs, async (i) => (await call(t, 'POST', `${crs}/bench/widgets`, widget('bench', `warm-${i}`))).status === 201);

    const cmCreates = await runLoad(opts.concurrency, opts.durationMs, async (i) => (await call(t, 'POST', `${cms}/bench/configmaps`, configMap('bench', `c-${i}`))).status === 201);
    const crCreates = await runLoad(opts.concurrency, opts.durationMs, async (i) => (await call(t, 'POST', `${crs}/bench/widgets`, widget('bench', `w-${i}`))).status === 201);
    rows.push({ metric: `custom resource creates/s (schema + 2 CEL rules, ${opts.concurrency} clients)`, orch: crCreates.opsPerSecond, baseline: cmCreates.opsPerSecond, baselineName: 'ConfigMap creates/s, same gateway', unit: '/s', higherIsBetter: true });
    rows.push({ metric: 'custom resource create p99', orch: crCreates.p99Ms, baseline: cmCreates.p99Ms, baselineName: 'ConfigMap create p99', unit: 'ms', higherIsBetter: false });

    const nCm = Math.max(1, cmCreates.ops);
    const nCr = Math.max(1, crCreates.ops);
    const cmGets = await runLoad(opts.concurrency, opts.durationMs, async (i) => (await call(t, 'GET', `${cms}/bench/configmaps/c-${i % nCm}`)).status === 200);
    const crGets = await runLoad(opts.concurrency, opts.durationMs, async (i) => (await call(t, 'GET', `${crs}/bench/widgets/w-${i % nCr}`)).status === 200);
    rows.push({ metric: `custom resource gets/s (${opts.concurrency} clients)`, orch: crGets.opsPerSecond, baseline: cmGets.opsPerSecond, baselineName: 'ConfigMap gets/s, same gateway', unit: '/s', higherIsBetter: true });
    rows.push({ metric: 'custom resource get p99', orch: crGets.p99Ms, baseline: cmGets.p99Ms, baselineName: 'ConfigMap get p99', unit: 'ms', higherIsBetter: false });

    await runLoad(opts.concurrency, 600_000, async (i) => (await call(t, 'POST', `${cms}/lists/configmaps`, configMap('lists', `l-${i}`))).status === 201, opts.listSize);
    await runLoad(opts.concurrency, 600_000, async (i) => (await call(t, 'POST', `${crs}/lists/widgets`, widget('lists', `l-${i}`))).status === 201, opts.listSize);
    const cmList = await runLoad(1, opts.durationMs, async () => (await call(t, 'GET', `${cms}/lists/configmaps`)).status === 200, 30);
    const crList = await runLoad(1, opts.durationMs, async () => (await call(t, 'GET', `${crs}/lists/widgets`)).status === 200, 30);
    rows.push({ metric: `list ${opts.listSize} custom resources p50`, orch: crList.p50Ms, baseline: cmList.p50Ms, baselineName: `list ${opts.listSize} ConfigMaps p50`, unit: 'ms', higherIsBetter: false });
    rows.push({ metric: `list ${opts.listSize} custom resources p99`, orch: crList.p99Ms, baseline: cmList.p99Ms, baselineName: `list ${opts.listSize} ConfigMaps p99`, unit: 'ms', higherIsBetter: false });
  } finally {
    gateway.process.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}
