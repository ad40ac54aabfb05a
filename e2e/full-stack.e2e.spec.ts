import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { eventually } from '@orch/testing';
import type { ApiClient } from './support/api-client';
import { startLocalPlane, type LocalPlane } from './support/local-plane';

/** How long the local profile may take to converge on a loaded 2-core machine. */
const FULL_STACK_WAIT_MS = 60_000;

/** Each pod serves its own name on POD_IP:8080 and logs every request. */
const SERVER = "require('http').createServer((q,s)=>{console.log('hit '+q.url);s.end(process.env.POD_NAME)}).listen(8080,process.env.POD_IP)";

function manifests(version: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: echo
  namespace: default
spec:
  replicas: 3
  selector:
    matchLabels:
      app: echo
  template:
    metadata:
      labels:
        app: echo
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: echo
        image: orch/node
        command: ["node", "-e", ${JSON.stringify(SERVER)}]
        env:
        - name: VERSION
          value: "${version}"
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        readinessProbe:
          httpGet:
            path: /ready
            port: 8080
          periodSeconds: 1
---
apiVersion: v1
kind: Service
metadata:
  name: echo
  namespace: default
spec:
  type: NodePort
  selector:
    app: echo
  ports:
  - port: 8080
    targetPort: 8080
`;
}

function get(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host, port, path: '/', agent: false, timeout: 3000 }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
  });
}


/** The local profile as users run it: `scripts/start.mjs`, every component a real process. */
describe('full stack from npm start', () => {
  let plane: LocalPlane;
  let admin: ApiClient;
  let kubeconfig: string;
  let dir: string;
  const kubectl = (...args: string[]) => spawnSync('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args], { encoding: 'utf8', timeout: 30_000 });

  beforeAll(async () => {
    // kubectl is part of the toolchain (notes/toolchain.md): missing, the suite fails.
    expect(spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status).toBe(0);
    // npm start with its own data dir and a free port for every component.
    plane = await startLocalPlane();
    admin = plane.admin;
    kubeconfig = plane.kubeconfig;
    dir = plane.dataDir;
    await eventually('a Ready node', async () => ((await admin.get('/api/v1/nodes')).json.items.some((n: any) => n.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True')) ? true : undefined), FULL_STACK_WAIT_MS).catch((err) => {
      throw new Error(`${(err as Error).message}\nnpm start said:\n${plane.output().slice(-6000)}`);
    });
  }, 120_000);

  afterAll(async () => {
    await plane?.stop();
  }, 40_000);

  const readyPods = async () =>
    ((await admin.get('/api/v1/namespaces/default/pods?labelSelector=app%3Decho')).json.items as any[]).filter(
      (p) => !p.metadata.deletionTimestamp && p.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'),
    );

  it('a Deployment of 3 serves through its cluster IP and NodePort; scale 0 refuses, scale 3 serves again', async () => {
    writeFileSync(join(dir, 'app.yaml'), manifests('1'));
    const applied = kubectl('apply', '-f', join(dir, 'app.yaml'));
    expect(applied.stderr).toBe('');
    await eventually('3 ready pods', async () => ((await readyPods()).length === 3 ? true : undefined), 90_000);
    const svc = (await admin.get('/api/v1/namespaces/default/services/echo')).json;
    const clusterIP: string = svc.spec.clusterIP;
    const nodePort: number = svc.spec.ports[0].nodePort;
    expect(clusterIP).toMatch(/^127\.96\./);

    const names = async (host: string, port: number) => {
      const seen = new Set<string>();
      for (let i = 0; i < 30; i++) seen.add(await get(host, port));
      return seen;
    };
    const viaClusterIp = await eventually('cluster IP reaches all 3 pods', async () => {
      const s = await names(clusterIP, 8080);
      return s.size === 3 ? s : undefined;
    }, FULL_STACK_WAIT_MS);
    expect([...viaClusterIp].every((n) => n.startsWith('echo-'))).toBe(true);
    await eventually('NodePort reaches all 3 pods', async () => ((await names('127.0.0.1', nodePort)).size === 3 ? true : undefined), FULL_STACK_WAIT_MS);

    expect(kubectl('scale', 'deploy/echo', '--replicas=0').status).toBe(0);
    await eventually('connections refused at 0 replicas', async () => {
      try {
        await get(clusterIP, 8080);
        return undefined;
      } catch (e) {
        return /ECONNREFUSED/.test(String(e)) ? true : undefined;
      }
    }, FULL_STACK_WAIT_MS);
    expect(kubectl('scale', 'deploy/echo', '--replicas=3').status).toBe(0);
    await eventually('served again at 3 replicas', async () => ((await names(clusterIP, 8080)).size === 3 ? true : undefined), 90_000);
  }, 240_000);

  it('the node agent says which runtime it chose; in the sandbox a pod has its own hostname and cannot read the data directory', async () => {
    // As root on Linux (every machine of this project) the sandbox must be chosen; elsewhere the fallback must say why.
    if (process.platform !== 'linux' || process.getuid?.() !== 0) {
      expect(plane.output()).toMatch(/the sandbox runtime is not possible on this machine \(.+\): using the process runtime/);
      return;
    }
    expect(plane.output()).toContain('sandbox runtime: each pod in its own mount, PID, IPC and UTS namespaces');
    const name: string = (await readyPods())[0].metadata.name;
    const exec = (cmd: string) => kubectl('exec', name, '--', 'sh', '-c', cmd);
    expect(exec('hostname').stdout).toBe(`${name}\n`);
    const key = exec(`cat ${join(plane.dataDir, 'pki', 'ca.key')}`);
    expect(key.status).not.toBe(0);
    expect(key.stdout).toBe('');
  });

  it('kubectl logs -f streams the container log', async () => {
    const pod = (await readyPods())[0].metadata.name;
    const follower = spawn('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), 'logs', '-f', pod]);
    let out = '';
    follower.stdout.on('data', (d) => (out += d));
    try {
      const ip = (await admin.get(`/api/v1/namespaces/default/pods/${pod}`)).json.status.podIP;
      await get(ip, 8080);
      await eventually('the request is in the followed log', async () => (out.includes('hit /') ? true : undefined), 20_000);
      const before = out.split('\n').length;
      await get(ip, 8080);
      await eventually('a new line arrives while following', async () => (out.split('\n').length > before ? true : undefined), 20_000);
    } finally {
      follower.kill();
    }
  }, 60_000);

  it('a rolling update never drops below replicas - maxUnavailable ready pods', async () => {
    let minReady = Infinity;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        minReady = Math.min(minReady, (await readyPods()).length);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    writeFileSync(join(dir, 'app.yaml'), manifests('2'));
    expect(kubectl('apply', '-f', join(dir, 'app.yaml')).status).toBe(0);
    await eventually(
      'rollout complete',
      async () => {
        const d = (await admin.get('/apis/apps/v1/namespaces/default/deployments/echo')).json;
        const s = d.status ?? {};
        return s.observedGeneration >= d.metadata.generation && s.updatedReplicas === 3 && s.availableReplicas === 3 && (s.replicas ?? 0) === 3 ? true : undefined;
      },
      120_000,
    );
    sampling = false;
    await sampler;
    // maxUnavailable 25% of 3 rounds down to 0: three pods stay ready throughout.
    expect(minReady).toBeGreaterThanOrEqual(3);
  }, 180_000);
});
