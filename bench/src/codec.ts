import https from 'node:https';
import { decodeProtobuf, encodeProtobuf } from '@orch/api';
import { decodeJson } from '@orch/apimachinery';
import { runLoad, type HttpsTarget } from './load';
import type { Row } from './report';

// Protobuf versus JSON: the codec alone (a Pod, a 500-item PodList) and get/list throughput
// of a running gateway asked for each encoding.

/** One result row (the shape main.ts prints): orch = protobuf, baseline = JSON. */

const PROTOBUF = 'application/vnd.orch.protobuf';
const JSON_TYPE = 'application/json';

/** A Pod as a controller and the scheduler leave it: two containers, volumes, status. */
export function benchPod(i: number): Record<string, unknown> {
  const container = (name: string) => ({
    name,
    image: `registry.example/${name}:1.2.${i % 10}`,
    command: ['/bin/server', '--port=8080'],
    ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
    env: [
      { name: 'MODE', value: 'production' },
      { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
    ],
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
    volumeMounts: [{ name: 'config', mountPath: '/etc/config', readOnly: true }],
    readinessProbe: { httpGet: { path: '/readyz', port: 'http' }, periodSeconds: 10 },
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    imagePullPolicy: 'IfNotPresent',
  });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `web-7d9f8c6b5-${i}`,
      generateName: 'web-7d9f8c6b5-',
      namespace: 'bench',
      uid: `3f1c2a9e-0000-4000-8000-${String(i).padStart(12, '0')}`,
      resourceVersion: String(1000 + i),
      creationTimestamp: '2024-05-01T10:00:00Z',
      labels: { app: 'web', 'pod-template-hash': '7d9f8c6b5' },
      annotations: { 'orch.io/restartedAt': '2024-05-01T09:59:00Z' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9f8c6b5', uid: '9b2e7c1d-1111-4000-8000-000000000001', controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      containers: [container('web'), container('sidecar')],
      volumes: [{ name: 'config', configMap: { name: 'web-config', defaultMode: 420 } }],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      nodeName: `node-${i % 50}`,
      schedulerName: 'default-scheduler',
      tolerations: [{ key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
      priority: 0,
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: '2024-05-01T10:00:05Z' },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: '2024-05-01T10:00:00Z' },
      ],
      hostIP: '10.0.0.5',
      podIP: `10.244.1.${i % 250}`,
      startTime: '2024-05-01T10:00:01Z',
      containerStatuses: ['web', 'sidecar'].map((name) => ({
        name,
        ready: true,
        restartCount: 0,
        image: `registry.example/${name}:1.2.${i % 10}`,
        imageID: `registry.example/${name}@sha256:${'ab'.repeat(32)}`,
        state: { running: { startedAt: '2024-05-01T10:00:03Z' } },
      })),
      qosClass: 'Burstable',
    },
  };
}

/**
 * Operations per second of `a` and of `b`, run in alternating slices of about 20 ms for about
 * `ms` each, after a warm-up of a quarter of that (first use builds the codec): on a shared
 * machine both sides see the same load, so their ratio holds even when the rates move.
 */
function opsPerSecondPair(a: () => unknown, b: () => unknown, ms: number): [number, number] {
  const warm = performance.now();
  while (performance.now() - warm < ms / 4) {
    a();
    b();
  }
  const ops = [0, 0];
  const spent = [0, 0];
  const fns = [a, b];
  while (spent[0] < ms || spent[1] < ms) {
    for (const side of [0, 1]) {
      const fn = fns[side];
      const start = performance.now();
      let now = start;
      while (now - start < 20) {
        fn();
        ops[side]++;
        now = performance.now();
      }
      spent[side] += now - start;
    }
  }
  return [ops[0] / (spent[0] / 1000), ops[1] / (spent[1] / 1000)];
}

/**
 * Codec micro-benchmark: encode and decode of one Pod and of a 500-item PodList, protobuf
 * (envelope included) against JSON.stringify/JSON.parse of the same object, plus sizes.
 */
export async function codecBench(msPerCase = 1000): Promise<Row[]> {
  const pod = benchPod(0);
  const list = { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '5000' }, items: Array.from({ length: 500 }, (_, i) => benchPod(i)) };
  const rows: Row[] = [];
  for (const [name, obj] of [
    ['Pod', pod],
    ['PodList (500 Pods)', list],
  ] as const) {
    const pb = encodeProtobuf(obj);
    const json = Buffer.from(JSON.stringify(obj));
    const ms = name === 'Pod' ? msPerCase : msPerCase * 2;
    const [encode, stringify] = opsPerSecondPair(() => encodeProtobuf(obj), () => Buffer.from(JSON.stringify(obj)), ms);
    rows.push({ metric: `${name} encode/s`, orch: encode, baseline: stringify, baselineName: 'JSON.stringify', unit: '/s', higherIsBetter: true });
    const [decode, parse] = opsPerSecondPair(() => decodeProtobuf(pb), () => JSON.parse(json.toString('utf8')), ms);
    rows.push({ metric: `${name} decode/s`, orch: decode, baseline: parse, baselineName: 'JSON.parse', unit: '/s', higherIsBetter: true });
    rows.push({ metric: `${name} size`, orch: pb.length / 1024, baseline: json.length / 1024, baselineName: 'JSON', unit: 'KiB', higherIsBetter: false });
    await new Promise((r) => setImmediate(r));
  }
  const body = duplicateKeysBody(1024 * 1024);
  const [decodeJsonRate, parseRate] = opsPerSecondPair(() => decodeJson(body), () => JSON.parse(body.toString('utf8')), msPerCase * 2);
  rows.push({ metric: '1 MiB list with duplicate keys: request decode/s', orch: decodeJsonRate, baseline: parseRate, baselineName: 'JSON.parse', unit: '/s', higherIsBetter: true });
  return rows;
}

/** A List body of about `bytes` whose every item repeats a label key (the request decoder reports each duplicate). */
function duplicateKeysBody(bytes: number): Buffer {
  const items: string[] = [];
  for (let i = 0, size = 0; size < bytes; i++) {
    items.push(`{"metadata":{"name":"pod-${i}","labels":{"app":"web","tier":"front","app":"api"}},"spec":{"containers":[{"name":"c","image":"img:${i}","args":["--a","--b"]}]}}`);
    size += items[i].length + 1;
  }
  return Buffer.from(`{"kind":"List","items":[${items.join(',')}]}`);
}

/** GET `path` with an Accept header; true for a 200 whose body was read completely. */
function getAs(t: HttpsTarget, path: string, accept: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const req = https.get(`${t.base}${path}`, { agent: t.agent, headers: { accept } }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => resolve(res.statusCode === 200 && String(res.headers['content-type']).startsWith(accept)));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** Rounds of each encoding in protobufHttpBench, alternating. */
const HTTP_ROUNDS = 5;

/**
 * get and list throughput of a running gateway with `Accept: application/vnd.orch.protobuf`
 * against `application/json`, on objects the caller created (`getPath` one object,
 * `listPath` a collection), in alternating rounds.
 */
export async function protobufHttpBench(t: HttpsTarget, opts: { getPath: string; listPath: string; concurrency: number; durationMs: number }): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [what, path, concurrency] of [
    ['gets/s', opts.getPath, opts.concurrency],
    ['lists/s', opts.listPath, Math.max(1, Math.floor(opts.concurrency / 8))],
  ] as const) {
    // Alternating rounds: both encodings see the same load on a shared machine.
    const totals = { pb: { ops: 0, seconds: 0 }, json: { ops: 0, seconds: 0 } };
    for (let round = 0; round < HTTP_ROUNDS; round++) {
      for (const [side, accept] of [['pb', PROTOBUF], ['json', JSON_TYPE]] as const) {
        const r = await runLoad(concurrency, opts.durationMs / HTTP_ROUNDS, () => getAs(t, path, accept));
        totals[side].ops += r.ops;
        totals[side].seconds += r.seconds;
      }
    }
    const rate = (side: keyof typeof totals) => totals[side].ops / totals[side].seconds;
    rows.push({ metric: `${what} protobuf (${concurrency} clients, ${path})`, orch: rate('pb'), baseline: rate('json'), baselineName: 'same requests as JSON', unit: '/s', higherIsBetter: true });
  }
  return rows;
}
