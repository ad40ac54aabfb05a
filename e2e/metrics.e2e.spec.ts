import { readFile } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually as eventuallyEvery } from '@orch/testing';
import { ApiClient } from './support/api-client';
import { startLocalPlane, type LocalPlane } from './support/local-plane';
import { kubectlAsync } from './support/kubectl';

// The metrics API through aggregation on the plane `npm start` runs: the metrics server (an
// extension API server process with its own CA) registers itself, `kubectl top` reads it, it
// checks the gateway's front-proxy identity itself, and the HorizontalPodAutoscaler controller
// scales a Deployment whose pods really burn CPU.

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
});
