import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parse } from 'yaml';
import { ensureBinary, reapSandboxHolders, removeDir, tempDir } from '@orch/testing';
import { ApiClient } from './support/api-client';
import { startGateway } from './support/gateway';

const ROOT = join(__dirname, '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface PlannedService {
  name: string;
  component: string;
  args: string[];
  env?: Record<string, string>;
}

/** The Node flags orch gives every process of the gateway binary (deploy/node-options.json). */
const GATEWAY_NODE_OPTIONS = (JSON.parse(readFileSync(join(ROOT, 'deploy', 'node-options.json'), 'utf8')) as { gateway: string[] }).gateway.join(' ');
/** The NODE_OPTIONS of the user who runs start:ha below: they come after the gateway's own, so they win. */
const USER_NODE_OPTIONS = '--max-semi-space-size=16';

/** The distinct flags of a command line, in order (`--a=b` → `--a`; repeated ones once). */
const flagNames = (args: string[]) => [...new Set(args.filter((a) => a.startsWith('-')).map((a) => a.split('=')[0]))];

describe('one topology for start:ha and docker compose', () => {
  it('docker-compose.yml and deploy/haproxy.cfg are what scripts/compose.mjs generates from deploy/topology.mjs', () => {
    const r = spawnSync(process.execPath, ['scripts/compose.mjs', '--check'], { cwd: ROOT, encoding: 'utf8' });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  });

  it('docker-compose config accepts the compose file', async () => {
    const bin = await ensureBinary('docker-compose', 'docker-compose');
    const r = spawnSync(bin, ['-f', 'docker-compose.yml', 'config', '-q'], { cwd: ROOT, encoding: 'utf8' });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  });

  it('compose runs the same components with the same flags as start:ha, plus the load balancer', () => {
    const r = spawnSync(process.execPath, ['scripts/start-ha.mjs', '--plan'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ORCH_HA_PORTS: 'free' } });
    expect(r.status).toBe(0);
    const plan = JSON.parse(r.stdout) as PlannedService[];
    const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, { command: string[]; image: string; environment?: Record<string, string> }> };
    expect(Object.keys(compose.services).sort()).toEqual([...plan.map((s) => s.name), 'haproxy'].sort());
    const components = plan.map((s) => s.component);
    expect(components.filter((c) => c === 'gateway')).toHaveLength(3);
    expect(components.filter((c) => c === 'etcd')).toHaveLength(3);
    for (const c of ['controller-manager', 'scheduler', 'watch-pump']) expect(components.filter((x) => x === c)).toHaveLength(2);
    for (const c of ['nats', 'redis', 'init', 'node-agent', 'network-proxy']) expect(components).toContain(c);
    for (const s of plan) {
      const [entry, ...args] = compose.services[s.name].command;
      const entries: Record<string, RegExp> = { init: /init\.js$/, redis: /redis-server/, nats: /nats-server/, 'watch-pump': /gateway\/src\/main\.js$/ };
      expect({ service: s.name, entry }).toEqual({ service: s.name, entry: expect.stringMatching(entries[s.component] ?? new RegExp(s.component)) });
      // Behind HAProxy in TCP mode every client arrives from one address, so compose's gateways
      // run without the per-source authentication failure limit (deploy/topology.mjs, README).
      const composeOnly = s.component === 'gateway' ? ['--authentication-failure-limit'] : [];
      expect({ service: s.name, flags: flagNames(args) }).toEqual({ service: s.name, flags: [...flagNames(s.args), ...composeOnly] });
      expect({ service: s.name, environment: compose.services[s.name].environment }).toEqual({ service: s.name, environment: s.env });
    }
    // Every process of the gateway binary, and only those, runs with the gateway's Node flags.
    expect(plan.filter((s) => s.env?.NODE_OPTIONS === GATEWAY_NODE_OPTIONS).map((s) => s.component).sort()).toEqual(['gateway', 'gateway', 'gateway', 'watch-pump', 'watch-pump']);
    // The engines the gateways are told to use are the ones in the topology.
    const gw = plan.find((s) => s.name === 'gateway-0')!;
    expect(flagNames(gw.args)).toEqual(expect.arrayContaining(['--nats-url', '--redis-url', '--etcd-servers', '--storage-backend', '--watch-pump']));
    // The pump runs in its own processes (the gateways do not campaign), from the gateway's entry.
    expect(gw.args).toContain('--watch-pump=false');
    for (const p of plan.filter((s) => s.component === 'watch-pump')) expect({ service: p.name, command: compose.services[p.name].command.slice(0, 2) }).toEqual({ service: p.name, command: ['dist/apps/gateway/src/main.js', 'watch-pump'] });
  });
});

/**
 * The serving certificate `gateway init` writes carries every name a replica requires (its API
 * Services' addresses and names) besides the --tls-san names: a replica started on that PKI keeps
 * it. Before, the first replica reissued it without the load balancer's name (compose: kubectl and
 * the node-agent through https://haproxy:6443 failed the host name check).
 */
describe('gateway init', () => {
  it('writes a serving certificate the replicas keep, with the load balancer names in it', async () => {
    const dir = await tempDir('orch-init-');
    try {
      const range = '--service-cluster-ip-range=127.96.0.0/16';
      const init = spawnSync(process.execPath, [join(ROOT, 'dist/apps/gateway/src/init.js'), `--data-dir=${dir}`, `--pki-dir=${join(dir, 'pki')}`, '--tls-san=lb.example', range], { encoding: 'utf8' });
      expect(init.stderr).toBe('');
      const before = readFileSync(join(dir, 'pki', 'serving.crt'), 'utf8');
      const gw = await startGateway({ args: [`--pki-dir=${join(dir, 'pki')}`, range] });
      await gw.stop();
      const after = readFileSync(join(dir, 'pki', 'serving.crt'), 'utf8');
      expect(new X509Certificate(after).subjectAltName).toContain('DNS:lb.example');
      expect(after).toBe(before);
    } finally {
      await removeDir(dir);
    }
  });
});

interface Topology {
  server: string;
  services: { name: string; component: string; pid?: number; ports: number[] }[];
}

/**
 * `npm run start:ha` end to end: a stock client-node informer on one gateway stays exact while
 * writes go through another and the leading watch pump, NATS, Redis, a gateway and an etcd member fail in turn (the
 * profile's supervisor restarts what dies, as compose would).
 */
describe('npm run start:ha', () => {
  let dir: string;
  let ha: ChildProcess;
  let output = '';
  let topology: Topology;
  const readTopology = async () => (topology = JSON.parse(await readFile(join(dir, 'topology.json'), 'utf8')) as Topology);
  const pidOf = (name: string) => topology.services.find((s) => s.name === name)!.pid!;
  const portOf = (name: string) => topology.services.find((s) => s.name === name)!.ports[0];

  beforeAll(async () => {
    dir = await tempDir('orch-ha-profile-');
    ha = spawn(process.execPath, ['scripts/start-ha.mjs'], { cwd: ROOT, env: { ...process.env, ORCH_DATA_DIR: dir, ORCH_HA_PORTS: 'free', NODE_OPTIONS: USER_NODE_OPTIONS }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    ha.stdout!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
    ha.stderr!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
    const deadline = Date.now() + 240_000;
    while (!output.includes('[orch-ha] up:')) {
      if (Date.now() > deadline || ha.exitCode !== null) throw new Error(`start:ha did not come up:\n${output}`);
      await sleep(200);
    }
    await readTopology();
  }, 260_000);
  afterAll(async () => {
    if (ha && ha.exitCode === null) {
      ha.kill('SIGINT');
      const deadline = Date.now() + 30_000;
      while (ha.exitCode === null && Date.now() < deadline) await sleep(100);
      // Whatever is left of the profile's process group.
      if (ha.exitCode === null) process.kill(-ha.pid!, 'SIGKILL');
    }
    if (dir) await reapSandboxHolders(dir);
    if (dir) await removeDir(dir);
  }, 60_000);

  it('runs under Node,RBAC with a least-privilege identity per component: a Deployment\'s pod is scheduled and runs', async () => {
    await readTopology();
    const pki = join(dir, 'pki');
    const admin = new ApiClient(`https://127.0.0.1:${portOf('gateway-2')}`, { ca: await readFile(join(pki, 'ca.crt'), 'utf8'), cert: await readFile(join(pki, 'admin.crt'), 'utf8'), key: await readFile(join(pki, 'admin.key'), 'utf8') });
    try {
      // Every running gateway was started with Node,RBAC (its real command line).
      for (const g of topology.services.filter((s) => s.component === 'gateway')) {
        expect({ gateway: g.name, args: readFileSync(`/proc/${g.pid}/cmdline`, 'utf8').split('\0') }).toEqual({ gateway: g.name, args: expect.arrayContaining(['--authorization-mode=Node,RBAC']) });
      }
      // Every process of the gateway binary got the gateway's Node flags, the user's own after them (Node applies the last).
      for (const g of topology.services.filter((s) => s.component === 'gateway' || s.component === 'watch-pump')) {
        const nodeOptions = readFileSync(`/proc/${g.pid}/environ`, 'utf8').split('\0').find((v) => v.startsWith('NODE_OPTIONS='));
        expect({ service: g.name, nodeOptions }).toEqual({ service: g.name, nodeOptions: `NODE_OPTIONS=${GATEWAY_NODE_OPTIONS} ${USER_NODE_OPTIONS}` });
      }
      // Each component's kubeconfig carries its own identity, not the admin's.
      const nodeName = hostname().toLowerCase();
      const subjectOf = (component: string) => {
        const kc = parse(readFileSync(join(dir, `${component}.kubeconfig`), 'utf8')) as { users: { user: Record<string, string> }[] };
        return new X509Certificate(Buffer.from(kc.users[0].user['client-certificate-data'], 'base64')).subject.split('\n').sort();
      };
      expect(subjectOf('controller-manager')).toEqual(['CN=system:orch-controller-manager']);
      expect(subjectOf('scheduler')).toEqual(['CN=system:orch-scheduler']);
      expect(subjectOf('network-proxy')).toEqual(['CN=system:orch-proxy']);
      expect(subjectOf('node-agent')).toEqual([`CN=system:node:${nodeName}`, 'O=system:nodes']);
      // Least privilege: what an identity must not do, asked of the cluster's authorizers.
      const allowed = async (user: string, groups: string[], verb: string, resource: string, namespace = 'default') => {
        const r = await admin.post('/apis/authorization.k8s.io/v1/subjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, groups: [...groups, 'system:authenticated'], resourceAttributes: { verb, resource, namespace } } });
        expect(r.status).toBe(201);
        return (r.json as { status: { allowed: boolean } }).status.allowed;
      };
      expect({
        schedulerBindsPods: await allowed('system:orch-scheduler', [], 'create', 'pods/binding'),
        schedulerReadsSecrets: await allowed('system:orch-scheduler', [], 'list', 'secrets'),
        proxyWatchesServices: await allowed('system:orch-proxy', [], 'watch', 'services'),
        proxyCreatesPods: await allowed('system:orch-proxy', [], 'create', 'pods'),
        nodeListsSecrets: await allowed(`system:node:${nodeName}`, ['system:nodes'], 'list', 'secrets'),
        nodeDeletesNamespaces: await allowed(`system:node:${nodeName}`, ['system:nodes'], 'delete', 'namespaces', ''),
      }).toEqual({ schedulerBindsPods: true, schedulerReadsSecrets: false, proxyWatchesServices: true, proxyCreatesPods: false, nodeListsSecrets: false, nodeDeletesNamespaces: false });

      // The components work with those identities: controller-manager (Deployment → ReplicaSet → Pod), scheduler, node-agent.
      const labels = { app: 'ha-identity' };
      const deployment = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'ha-identity', namespace: 'default' },
        spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'none', command: [process.execPath, '-e', 'setInterval(() => {}, 1000)'] }] } } },
      };
      expect((await admin.post('/apis/apps/v1/namespaces/default/deployments', deployment)).status).toBe(201);
      const deadline = Date.now() + 90_000;
      let pods: { spec: { nodeName?: string }; status?: { phase?: string } }[] = [];
      while (!pods.some((p) => p.status?.phase === 'Running')) {
        if (Date.now() > deadline) throw new Error(`the Deployment's pod did not run: ${JSON.stringify(pods)}`);
        await sleep(250);
        pods = ((await admin.get('/api/v1/namespaces/default/pods?labelSelector=app%3Dha-identity')).json as { items: typeof pods }).items;
      }
      expect(pods.find((p) => p.status?.phase === 'Running')!.spec.nodeName).toBe(nodeName);
    } finally {
      admin.close();
    }
  }, 150_000);

  it('a client-node informer on one gateway stays exact while NATS, Redis, a gateway and an etcd member fail in turn', async () => {
    const pki = join(dir, 'pki');
    const creds = { ca: await readFile(join(pki, 'ca.crt'), 'utf8'), cert: await readFile(join(pki, 'admin.crt'), 'utf8'), key: await readFile(join(pki, 'admin.key'), 'utf8') };
    const writer = new ApiClient(`https://127.0.0.1:${portOf('gateway-1')}`, creds);
    expect((await writer.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'inf' } })).status).toBe(201);

    const informer = spawn(process.execPath, [join(__dirname, 'support', 'ha-informer.mjs'), join(dir, 'admin.kubeconfig'), `https://127.0.0.1:${portOf('gateway-0')}`, 'inf'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const lines: string[] = [];
    createInterface({ input: informer.stdout! }).on('line', (l) => lines.push(l));
    let informerErr = '';
    informer.stderr!.on('data', (d: Buffer) => (informerErr += d.toString()));
    try {
      const waitLine = async (prefix: string, from: number) => {
        const deadline = Date.now() + 30_000;
        for (;;) {
          const found = lines.slice(from).find((l) => l.startsWith(prefix));
          if (found) return found;
          if (Date.now() > deadline) throw new Error(`informer printed no ${prefix}: ${lines.join('\n')}\n${informerErr}`);
          await sleep(50);
        }
      };
      await waitLine('READY', 0);
      const dump = async () => {
        const from = lines.length;
        informer.stdin!.write('DUMP\n');
        return JSON.parse((await waitLine('DUMP ', from)).slice(5)) as { items: [string, string][]; errors: number };
      };

      let writing = true;
      let acknowledged = 0;
      const writes = (async () => {
        for (let i = 0; writing; i++) {
          const ops: [string, string, unknown][] = [['POST', '', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}` }, data: { i: String(i) } }]];
          if (i % 3 === 0) ops.push(['PATCH', `/c${i}`, { data: { updated: 'yes' } }]);
          if (i % 4 === 0) ops.push(['DELETE', `/c${i}`, undefined]);
          for (const [method, path, body] of ops) {
            for (let attempt = 0; attempt < 50; attempt++) {
              const r = await writer
                .request(method, `/api/v1/namespaces/inf/configmaps${path}`, body, method === 'PATCH' ? { headers: { 'content-type': 'application/merge-patch+json' } } : {})
                .catch(() => undefined);
              if (r && (r.status < 300 || r.status === 409 || r.status === 404)) {
                acknowledged++;
                break;
              }
              await sleep(200);
            }
          }
          await sleep(10);
        }
      })();
      // Each fault lasts at least 2 s (past the replicas' bus-silence timeout) and 15 acknowledged writes.
      const progress = async (what: string) => {
        const before = acknowledged;
        const started = Date.now();
        const deadline = started + 60_000;
        while (acknowledged < before + 15 || Date.now() - started < 2000) {
          if (Date.now() > deadline) throw new Error(`writes stopped after ${what}`);
          await sleep(50);
        }
      };
      const kill = async (name: string, signal: NodeJS.Signals) => {
        await readTopology();
        process.kill(pidOf(name), signal);
      };
      await progress('start');
      // The leading watch pump dies: the standing-by one continues where it stopped.
      const holder = ((await writer.get('/apis/coordination.orch.io/v1/namespaces/orch-system/leases/orch-watch-pump')).json?.spec?.holderIdentity as string | undefined) ?? '';
      const leadingPump = topology.services.find((s) => s.component === 'watch-pump' && holder.includes(`:watch-pump:${s.ports[0]}_`));
      expect({ holder, leadingPump: leadingPump?.name }).toEqual({ holder, leadingPump: expect.stringMatching(/^watch-pump-/) });
      await kill(leadingPump!.name, 'SIGKILL');
      await progress('the leading watch pump was killed');
      await kill('nats', 'SIGKILL'); // the supervisor starts it again on its port
      await progress('NATS was killed');
      await kill('redis', 'SIGSTOP');
      await progress('Redis hung');
      await kill('redis', 'SIGCONT');
      await kill('gateway-2', 'SIGKILL');
      await progress('a gateway was killed');
      await kill('etcd-1', 'SIGKILL');
      await progress('an etcd member was killed');
      writing = false;
      await writes;

      const marker = await writer.post('/api/v1/namespaces/inf/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'zz-end' } });
      expect(marker.status).toBe(201);
      let cached = await dump();
      const deadline = Date.now() + 30_000;
      while (!cached.items.some(([name]) => name === 'zz-end') && Date.now() < deadline) {
        await sleep(200);
        cached = await dump();
      }
      const list = (await writer.get('/api/v1/namespaces/inf/configmaps')).json as { items: { metadata: { name: string; resourceVersion: string } }[] };
      const want = list.items.map((o): [string, string] => [o.metadata.name, o.metadata.resourceVersion]).sort();
      expect(cached.items).toEqual(want);
      expect(want.length).toBeGreaterThan(30);
    } finally {
      informer.kill('SIGKILL');
      writer.close();
    }
  }, 300_000);
});
