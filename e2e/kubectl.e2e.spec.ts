import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { POD_CONTROLLERS, defaultServiceAccount, startGateway, type GatewayProcess } from './support/gateway';
import { kubectlSync } from './support/kubectl';


const MANIFESTS = `apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data:
  color: blue
---
apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: shop
type: Opaque
stringData:
  password: hunter2
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  selector:
    app: web
  ports:
  - port: 80
    targetPort: 8080
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: example/web:1
`;

describe('kubectl against a real gateway', () => {
  let gw: GatewayProcess;
  let dir: string;
  const kubectl = (...args: string[]) => kubectlSync({ kubeconfig: gw.kubeconfig, cacheDir: join(dir, 'cache') }, args);

  beforeAll(async () => {
    gw = await startGateway({ controllers: POD_CONTROLLERS });
    dir = mkdtempSync(join(tmpdir(), 'orch-kubectl-'));
    writeFileSync(join(dir, 'all.yaml'), MANIFESTS);
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('api-resources lists every resource with its short names', () => {
    const r = kubectl('api-resources', '--no-headers');
    expect(r.code).toBe(0);
    const lines = r.out.trim().split('\n');
    const byName = new Map(lines.map((l) => [l.split(/\s+/)[0], l]));
    for (const [name, short] of [
      ['pods', 'po'],
      ['deployments', 'deploy'],
      ['customresourcedefinitions', 'crd,crds'],
      ['horizontalpodautoscalers', 'hpa'],
      ['priorityclasses', 'pc'],
    ]) {
      expect(byName.get(name)).toContain(short);
    }
    expect(lines.length).toBeGreaterThanOrEqual(55);
  });

  it('create -f, get -o json|yaml, get as a table', () => {
    const created = kubectl('create', '--validate=false', '-f', join(dir, 'all.yaml'));
    expect(created.err).toBe('');
    expect(created.code).toBe(0);
    expect(created.out).toContain('deployment.apps/web created');
    const json = JSON.parse(kubectl('get', 'cm', 'settings', '-n', 'shop', '-o', 'json').out);
    expect(json.data).toEqual({ color: 'blue' });
    expect(kubectl('get', 'secret', 'creds', '-n', 'shop', '-o', 'yaml').out).toContain('kind: Secret');
    const table = kubectl('get', 'deploy', '-n', 'shop');
    expect(table.code).toBe(0);
    expect(table.out).toMatch(/NAME\s+/);
    expect(table.out).toContain('web');
  });

  it('get pods prints the usual columns', async () => {
    await defaultServiceAccount(gw.admin, 'shop');
    writeFileSync(join(dir, 'pod.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p1\n  namespace: shop\nspec:\n  containers:\n  - name: c\n    image: busybox\n');
    expect(kubectl('create', '--validate=false', '-f', join(dir, 'pod.yaml')).code).toBe(0);
    const out = kubectl('get', 'pods', '-n', 'shop').out;
    expect(out).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\n/);
    expect(out).toMatch(/p1\s+0\/1\s+Pending\s+0\s+\d+s/);
    expect(kubectl('get', 'pods', '-n', 'shop', '-o', 'wide').out).toMatch(/IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES/);
  });

  it('apply --validate=false creates and then updates', () => {
    writeFileSync(join(dir, 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: shop\ndata:\n  k: v1\n');
    const first = kubectl('apply', '--validate=false', '-f', join(dir, 'cm.yaml'));
    expect(first.err).toBe('');
    expect(first.out).toContain('configmap/applied created');
    const json = JSON.parse(kubectl('get', 'cm', 'applied', '-n', 'shop', '-o', 'json').out);
    expect(json.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).toBeDefined();
  });

  it('merge and JSON patches, scale', () => {
    expect(kubectl('patch', 'cm', 'settings', '-n', 'shop', '--type', 'merge', '-p', '{"data":{"size":"L"}}').code).toBe(0);
    expect(kubectl('patch', 'cm', 'settings', '-n', 'shop', '--type', 'json', '-p', '[{"op":"replace","path":"/data/color","value":"red"}]').code).toBe(0);
    const json = JSON.parse(kubectl('get', 'cm', 'settings', '-n', 'shop', '-o', 'json').out);
    expect(json.data).toEqual({ color: 'red', size: 'L' });
    const scaled = kubectl('scale', 'deploy', 'web', '-n', 'shop', '--replicas=5');
    expect(scaled.err).toBe('');
    expect(scaled.out).toContain('deployment.apps/web scaled');
    expect(kubectl('get', 'deploy', 'web', '-n', 'shop', '-o', 'jsonpath={.spec.replicas}').out).toBe('5');
  });

  it('cordon, then drain evicts the pods on the node', async () => {
    writeFileSync(
      join(dir, 'node.yaml'),
      'apiVersion: v1\nkind: Node\nmetadata:\n  name: worker-1\n---\n' +
        ['d1', 'd2'].map((n) => `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${n}\n  namespace: shop\nspec:\n  nodeName: worker-1\n  containers:\n  - name: c\n    image: x\n`).join('---\n'),
    );
    expect(kubectl('create', '--validate=false', '-f', join(dir, 'node.yaml')).code).toBe(0);
    const cordon = kubectl('cordon', 'worker-1');
    expect(cordon.err).toBe('');
    expect(cordon.out).toContain('node/worker-1 cordoned');
    expect(kubectl('get', 'node', 'worker-1', '-o', 'jsonpath={.spec.unschedulable}').out).toBe('true');
    const drain = kubectl('drain', 'worker-1', '--force', '--grace-period=0', '--timeout=30s');
    expect(drain.code).toBe(0);
    expect(drain.out).toContain('pod/d1 evicted');
    expect(drain.out).toContain('node/worker-1 drained');
    expect(kubectl('get', 'pods', '-n', 'shop', '--field-selector=spec.nodeName=worker-1', '-o', 'name').out.trim()).toBe('');
    const metrics = (await gw.admin.get('/metrics')).text;
    expect(metrics).toMatch(/apiserver_request_total\{[^}]*resource="pods"[^}]*subresource="eviction"[^}]*code="201"/);
  });

  it('get of a big collection: whole (a streamed list), in chunks (--chunk-size) and as a table agree', async () => {
    expect((await gw.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'many' } })).status).toBe(201);
    // 120 objects of 2 KiB: one list is several body chunks.
    for (let i = 0; i < 120; i++) {
      const r = await gw.admin.post('/api/v1/namespaces/many/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${String(i).padStart(3, '0')}` }, data: { i: String(i), pad: 'p'.repeat(2048) } });
      expect(r.status).toBe(201);
    }
    const summary = (out: string) => (JSON.parse(out).items as { metadata: { name: string; resourceVersion: string }; data: { i: string } }[]).map((o) => [o.metadata.name, o.metadata.resourceVersion, o.data.i]);
    const whole = kubectl('get', 'cm', '-n', 'many', '-o', 'json', '--chunk-size=0');
    const chunked = kubectl('get', 'cm', '-n', 'many', '-o', 'json', '--chunk-size=7');
    const pages = kubectl('get', 'cm', '-n', 'many', '-o', 'json');
    for (const r of [whole, chunked, pages]) expect(r.code).toBe(0);
    expect(summary(whole.out)).toHaveLength(120);
    expect(summary(chunked.out)).toEqual(summary(whole.out));
    expect(summary(pages.out)).toEqual(summary(whole.out));
    const table = kubectl('get', 'cm', '-n', 'many', '--chunk-size=7', '--no-headers');
    expect(table.out.trim().split('\n').map((l) => l.split(/\s+/)[0])).toEqual(summary(whole.out).map(([name]) => name));
  });

  it('edit through $EDITOR sends the change back', () => {
    const r = spawnSync('kubectl', ['--kubeconfig', gw.kubeconfig, '--cache-dir', join(dir, 'cache'), 'edit', 'cm', 'settings', '-n', 'shop'], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, EDITOR: 'sed -i s/color:\\ red/color:\\ green/', KUBE_EDITOR: '' },
    });
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('configmap/settings edited');
    expect(JSON.parse(kubectl('get', 'cm', 'settings', '-n', 'shop', '-o', 'json').out).data.color).toBe('green');
  });

  it('get -w sees ADDED, MODIFIED and DELETED; delete returns when gone', async () => {
    const watcher = spawn('kubectl', ['--kubeconfig', gw.kubeconfig, '--cache-dir', join(dir, 'cache'), 'get', 'cm', '-n', 'shop', '-w', '--output-watch-events', '-o', 'json']);
    let out = '';
    watcher.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const waitFor = async (pred: () => boolean, ms = 15_000) => {
      const end = Date.now() + ms;
      while (!pred() && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    };
    try {
      await waitFor(() => out.includes('"settings"'));
      writeFileSync(join(dir, 'watched.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: watched\n  namespace: shop\ndata:\n  a: "1"\n');
      expect(kubectl('create', '--validate=false', '-f', join(dir, 'watched.yaml')).code).toBe(0);
      await waitFor(() => out.includes('"watched"'));
      expect(kubectl('label', 'cm', 'watched', '-n', 'shop', 'x=y').code).toBe(0);
      const del = kubectl('delete', 'cm', 'watched', '-n', 'shop');
      expect(del.out).toContain('configmap "watched" deleted');
      expect(kubectl('get', 'cm', 'watched', '-n', 'shop').code).not.toBe(0);
      await waitFor(() => /"type":\s*"DELETED"/.test(out));
      const types = [...out.matchAll(/"type":\s*"(ADDED|MODIFIED|DELETED)"[\s\S]*?"name":\s*"([^"]+)"/g)].filter((m) => m[2] === 'watched').map((m) => m[1]);
      expect(types).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    } finally {
      watcher.kill();
    }
  });
});
