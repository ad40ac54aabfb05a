import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { selfSignedServingCert } from '@orch/auth';
import { eventually as eventuallyEvery } from '@orch/testing';
import { ApiClient } from './support/api-client';
import { startLocalPlane, type LocalPlane } from './support/local-plane';
import { kubectlAsync } from './support/kubectl';

// The metrics API through aggregation on the plane `npm start` runs: the metrics server (an
// extension API server process with its own CA) registers itself, `kubectl top` reads it, it
// checks the gateway's front-proxy identity itself, and the HorizontalPodAutoscaler controller
// scales a Deployment whose pods really burn CPU — and, from a custom and external metrics
// extension server, on Pods, Object and External metrics.

/** Each pod burns about 80% of a core in 100 ms slices; its request is 100m, so ~80% of it... times 8. */
const BURN = 'setInterval(()=>{const t=Date.now();while(Date.now()-t<80){}},100)';

const MANIFESTS = `apiVersion: apps/v1
kind: Deployment
metadata: {name: burn, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: burn}}
  template:
    metadata: {labels: {app: burn}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: burn
        image: orch/node
        command: ["node", "-e", "${BURN}"]
        resources: {requests: {cpu: 100m}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: burn, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: burn}
  minReplicas: 1
  maxReplicas: 3
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
`;

/** A Deployment of idle pods autoscaled on a Pods, an Object and an External metric at once. */
const SINK = `apiVersion: apps/v1
kind: Deployment
metadata: {name: sink, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: sink}}
  template:
    metadata: {labels: {app: sink}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: sink
        image: orch/node
        command: ["node", "-e", "setInterval(()=>{},1<<30)"]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: sink, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: sink}
  minReplicas: 1
  maxReplicas: 4
  metrics:
  - type: Pods
    pods: {metric: {name: requests_per_second}, target: {type: AverageValue, averageValue: 100m}}
  - type: Object
    object:
      metric: {name: queue_length}
      describedObject: {apiVersion: apps/v1, kind: Deployment, name: sink}
      target: {type: AverageValue, averageValue: "1"}
  - type: External
    external:
      metric: {name: backlog, selector: {matchLabels: {queue: main}}}
      target: {type: AverageValue, averageValue: "1"}
`;

/**
 * A custom and external metrics API server (what prometheus-adapter serves), registered under
 * the stock names custom.metrics.k8s.io/v1beta2 and external.metrics.k8s.io/v1beta1; it accepts
 * only the gateway's front-proxy certificate and answers with `values`.
 */
async function startCustomMetricsServer(plane: LocalPlane, values: { podRequests: string; queueLength: string; backlog: string }, seen: string[]): Promise<Server> {
  const cm = (await plane.admin.get('/api/v1/namespaces/orch-system/configmaps/extension-apiserver-authentication')).json;
  const proxyCa = new X509Certificate(cm.data['requestheader-client-ca-file']);
  const cert = await selfSignedServingCert(['127.0.0.1', 'custom-metrics.default.svc'], 'custom-metrics');
  const json = (res: import('node:http').ServerResponse, body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const server = createServer({ cert: cert.certPem, key: cert.keyPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    void (async () => {
      const der = (req.socket as import('node:tls').TLSSocket).getPeerCertificate()?.raw;
      if (!der || !new X509Certificate(der).checkIssued(proxyCa)) return void res.writeHead(401).end();
      const url = new URL(req.url ?? '/', 'https://x');
      seen.push(`${req.headers['x-remote-user']} ${url.pathname}${url.search}`);
      const custom = '/apis/custom.metrics.k8s.io/v1beta2';
      const external = '/apis/external.metrics.k8s.io/v1beta1';
      if (url.pathname === custom) return json(res, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'custom.metrics.k8s.io/v1beta2', resources: [{ name: 'pods/requests_per_second', singularName: '', namespaced: true, kind: 'MetricValueList', verbs: ['get'] }, { name: 'deployments.apps/queue_length', singularName: '', namespaced: true, kind: 'MetricValueList', verbs: ['get'] }] });
      if (url.pathname === external) return json(res, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'external.metrics.k8s.io/v1beta1', resources: [{ name: 'backlog', singularName: '', namespaced: true, kind: 'ExternalMetricValueList', verbs: ['get'] }] });
      if (url.pathname === `${custom}/namespaces/default/pods/*/requests_per_second`) {
        const pods = (await plane.admin.get(`/api/v1/namespaces/default/pods?labelSelector=${encodeURIComponent(url.searchParams.get('labelSelector') ?? '')}`)).json.items as { metadata: { name: string } }[];
        const items = pods.map((p) => ({ describedObject: { kind: 'Pod', namespace: 'default', name: p.metadata.name, apiVersion: '/v1' }, metric: { name: 'requests_per_second', selector: null }, timestamp: now(), windowSeconds: 60, value: values.podRequests }));
        return json(res, { kind: 'MetricValueList', apiVersion: 'custom.metrics.k8s.io/v1beta2', metadata: {}, items });
      }
      if (url.pathname === `${custom}/namespaces/default/deployments.apps/sink/queue_length`) {
        return json(res, { kind: 'MetricValueList', apiVersion: 'custom.metrics.k8s.io/v1beta2', metadata: {}, items: [{ describedObject: { kind: 'Deployment', namespace: 'default', name: 'sink', apiVersion: 'apps/v1' }, metric: { name: 'queue_length', selector: null }, timestamp: now(), windowSeconds: 60, value: values.queueLength }] });
      }
      if (url.pathname === `${external}/namespaces/default/backlog` && url.searchParams.get('labelSelector') === 'queue=main') {
        return json(res, { kind: 'ExternalMetricValueList', apiVersion: 'external.metrics.k8s.io/v1beta1', metadata: {}, items: [{ metricName: 'backlog', metricLabels: { queue: 'main' }, timestamp: now(), value: values.backlog }] });
      }
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound' }));
    })().catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  expect((await plane.admin.post('/api/v1/namespaces/default/services', { metadata: { name: 'custom-metrics' }, spec: { ports: [{ name: 'https', port: 443, targetPort: port }] } })).status).toBe(201);
  expect((await plane.admin.post('/api/v1/namespaces/default/endpoints', { metadata: { name: 'custom-metrics' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port }] }] })).status).toBe(201);
  const caBundle = Buffer.from(cert.caPem).toString('base64');
  for (const [group, version] of [['custom.metrics.k8s.io', 'v1beta2'], ['external.metrics.k8s.io', 'v1beta1']]) {
    const apiService = { metadata: { name: `${version}.${group}` }, spec: { group, version, service: { namespace: 'default', name: 'custom-metrics', port: 443 }, caBundle, groupPriorityMinimum: 100, versionPriority: 200 } };
    expect((await plane.admin.post('/apis/apiregistration.k8s.io/v1/apiservices', apiService)).status).toBe(201);
  }
  return server;
}

describe('metrics API and autoscaling on npm start', () => {
  let plane: LocalPlane;
  const kubectl = (...args: string[]) => kubectlAsync({ kubeconfig: plane.kubeconfig, cacheDir: join(plane.dataDir, 'kubectl-cache') }, args);
  /** Retries `probe` every second (the metrics pipeline has scrape and sync periods). */
  const eventually = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000) => eventuallyEvery(what, probe, timeoutMs, 1000);

  beforeAll(async () => {
    plane = await startLocalPlane();
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it('registers the metrics API: the APIService is Available and kubectl sees its resources', async () => {
    await eventually('APIService available', async () => {
      const a = (await plane.admin.get('/apis/apiregistration.orch.io/v1/apiservices/v1beta1.metrics.orch.io')).json;
      return a?.status?.conditions?.find((c: { type: string; status: string }) => c.type === 'Available' && c.status === 'True') ? true : undefined;
    });
    const r = await kubectl('api-resources', '--api-group=metrics.k8s.io');
    expect(r.out).toMatch(/^nodes\s+metrics\.k8s\.io\/v1beta1\s+false\s+NodeMetrics$/m);
    expect(r.out).toMatch(/^pods\s+metrics\.k8s\.io\/v1beta1\s+true\s+PodMetrics$/m);
  }, 180_000);

  it('kubectl top nodes shows the node agent\'s CPU and memory', async () => {
    const out = await eventually('kubectl top nodes', async () => {
      const r = await kubectl('top', 'nodes', '--no-headers');
      return r.code === 0 && /\S+\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%/.test(r.out) ? r.out : undefined;
    });
    expect(out.trim().split('\n')).toHaveLength(1);
  }, 180_000);

  it('authenticates the gateway itself: identity headers need the front-proxy certificate', async () => {
    const port = plane.env.ORCH_METRICS_SERVER_PORT;
    const pki = join(plane.dataDir, 'pki');
    const ca = await readFile(join(plane.dataDir, 'metrics-server', 'ca.crt'), 'utf8');
    const url = `https://127.0.0.1:${port}`;
    const path = '/apis/metrics.k8s.io/v1beta1/nodes';
    const forged = new ApiClient(url, { ca });
    expect((await forged.get(path, { headers: { 'x-remote-user': 'admin', 'x-remote-group': 'system:masters' } })).status).toBe(401);
    const proxy = new ApiClient(url, { ca, cert: await readFile(join(pki, 'front-proxy-client.crt'), 'utf8'), key: await readFile(join(pki, 'front-proxy-client.key'), 'utf8') });
    // The gateway's certificate with an anonymous caller: authorized by a SubjectAccessReview as that caller.
    expect((await proxy.get(path, { headers: { 'x-remote-user': 'system:anonymous', 'x-remote-group': 'system:unauthenticated' } })).status).toBe(403);
    expect((await proxy.get(path, { headers: { 'x-remote-user': 'admin', 'x-remote-group': 'system:masters' } })).status).toBe(200);
    forged.close();
    proxy.close();
  });

  it('an HPA scales a CPU-burning Deployment up, and kubectl top pods shows its pods', async () => {
    writeFileSync(join(plane.dataDir, 'burn.yaml'), MANIFESTS);
    expect((await kubectl('apply', '-f', join(plane.dataDir, 'burn.yaml'))).code).toBe(0);
    const replicas = await eventually(
      'the HPA scales the deployment up',
      async () => {
        const d = (await plane.admin.get('/apis/apps/v1/namespaces/default/deployments/burn')).json;
        return (d?.spec?.replicas ?? 0) > 1 ? d.spec.replicas : undefined;
      },
      180_000,
    );
    expect(replicas).toBeGreaterThan(1);
    const hpa = (await plane.admin.get('/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/burn')).json;
    expect(hpa.status.currentMetrics[0].resource.current.averageUtilization).toBeGreaterThan(50);
    expect(hpa.status.conditions.map((c: { type: string }) => c.type)).toEqual(['AbleToScale', 'ScalingActive', 'ScalingLimited']);
    const events = (await plane.admin.get('/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dburn')).json.items.map((e: { reason: string }) => e.reason);
    expect(events).toContain('SuccessfulRescale');
    const top = await eventually('kubectl top pods', async () => {
      const r = await kubectl('top', 'pods', '-l', 'app=burn', '--no-headers');
      return r.code === 0 && /^burn-\S+\s+\d+m\s+\d+Mi\s*$/m.test(r.out) ? r.out : undefined;
    });
    expect(top).toMatch(/^burn-\S+\s+\d+m\s+\d+Mi\s*$/m);
    const get = await kubectl('get', 'hpa', 'burn', '--no-headers');
    expect(get.out).toMatch(/^burn\s+Deployment\/burn\s+cpu: \d+%\/50%\s+1\s+3\s+\d+/);
  }, 300_000);

  it('an HPA on Pods, Object and External metrics from a custom metrics server scales on each (the largest wins)', async () => {
    // Each metric at its target asks for the current count: 100m per pod, 1 per replica, 1 per replica.
    const values = { podRequests: '100m', queueLength: '1', backlog: '1' };
    const seen: string[] = [];
    const server = await startCustomMetricsServer(plane, values, seen);
    try {
      writeFileSync(join(plane.dataDir, 'sink.yaml'), SINK);
      expect((await kubectl('apply', '-f', join(plane.dataDir, 'sink.yaml'))).code).toBe(0);
      const hpaPath = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/sink';
      const status = async () => (await plane.admin.get(hpaPath)).json.status ?? {};
      const scaledTo = (n: number, what: string) =>
        eventually(what, async () => {
          const d = (await plane.admin.get('/apis/apps/v1/namespaces/default/deployments/sink')).json;
          return d?.spec?.replicas === n ? true : undefined;
        });
      // All three read and reported; nothing to change yet.
      const first = await eventually('the three metrics in status', async () => {
        const s = await status();
        return s.currentMetrics?.length === 3 ? s : undefined;
      });
      expect(first.currentMetrics).toEqual([
        { type: 'Pods', pods: { metric: { name: 'requests_per_second' }, current: { averageValue: '100m' } } },
        { type: 'Object', object: { metric: { name: 'queue_length' }, describedObject: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'sink' }, current: { averageValue: '1' } } },
        { type: 'External', external: { metric: { name: 'backlog', selector: { matchLabels: { queue: 'main' } } }, current: { averageValue: '1' } } },
      ]);
      expect(first.desiredReplicas).toBe(1);
      // External: a backlog of 2 for 1 per replica asks 2.
      values.backlog = '2';
      await scaledTo(2, 'the External metric scales to 2');
      // Object: a queue of 3 for 1 per replica asks 3.
      values.queueLength = '3';
      await scaledTo(3, 'the Object metric scales to 3');
      // Pods: 3 pods at 200m each for 100m asks 6, capped at maxReplicas 4 (once every pod reports).
      await eventually('three pods running', async () => {
        const pods = (await plane.admin.get('/api/v1/namespaces/default/pods?labelSelector=app%3Dsink')).json.items as { status?: { phase?: string } }[];
        return pods.filter((p) => p.status?.phase === 'Running').length === 3 ? true : undefined;
      });
      values.podRequests = '200m';
      await scaledTo(4, 'the Pods metric scales to 4 (maxReplicas)');
      // The scale is written before the status that says why: wait for that status write.
      const limited = await eventually('ScalingLimited in status', async () => {
        const c = ((await status()).conditions ?? []).find((x: { type: string; status?: string }) => x.type === 'ScalingLimited');
        return c?.status === 'True' ? c : undefined;
      });
      expect(limited).toMatchObject({ status: 'True', reason: 'TooManyReplicas' });
      // The gateway forwarded the autoscaler's own identity (its service account) and the metric selector.
      const hpa = 'system:serviceaccount:orch-system:horizontal-pod-autoscaler';
      expect(seen).toContain(`${hpa} /apis/external.metrics.k8s.io/v1beta1/namespaces/default/backlog?labelSelector=queue%3Dmain`);
      expect(seen.some((s) => s.startsWith(`${hpa} /apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/requests_per_second?labelSelector=app%3Dsink`))).toBe(true);
    } finally {
      server.close();
      server.closeAllConnections();
    }
  }, 300_000);
});
