#!/usr/bin/env node
// `npm run start:ha`: the scale-out topology of deploy/topology.mjs on this machine, without
// Docker: etcd x3, nats-server, redis-server (installed from Debian packages when missing),
// three gateways on 6443, 6444 and 6445 sharing one PKI, two watch pumps, two controller-managers, two
// schedulers, a node-agent and the network-proxy. State in ORCH_DATA_DIR (default .orch-ha/),
// admin kubeconfig in $ORCH_DATA_DIR/admin.kubeconfig. A process that dies is restarted (as
// compose does); Ctrl-C stops everything. ORCH_HA_PORTS=free picks free ports instead of the
// defaults (tests); `--plan` prints the services as JSON and exits. The running topology
// (ports, pids) is written to $ORCH_DATA_DIR/topology.json.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { LOCAL_PORTS, serviceEnv, services } from '../deploy/topology.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
const planOnly = process.argv.includes('--plan');
const dataDir = resolve(process.env.ORCH_DATA_DIR || '.orch-ha');

/** Free ports picked the way the test harness picks them (below the ephemeral range); tests only, after a build. */
async function freePortPicker() {
  const ports = await import(pathToFileURL(join(root, 'dist/libs/testing/src/ports.js')).href);
  return (ports.default ?? ports).freePort;
}

const ports = {};
const freePort = process.env.ORCH_HA_PORTS === 'free' ? await freePortPicker() : undefined;
for (const [name, list] of Object.entries(LOCAL_PORTS)) ports[name] = freePort ? await Promise.all(list.map(() => freePort())) : list;

/** @type {import('../deploy/topology.mjs').Target} */
const target = {
  name: 'local',
  listen: '127.0.0.1',
  host: () => '127.0.0.1',
  port: (service, i = 0) => ports[service][i],
  dataDir,
  // No load balancer on one machine: kubeconfigs name the first replica; clients may use any of the three.
  server: `https://127.0.0.1:${ports['gateway-0'][0]}`,
  sans: ['127.0.0.1', 'localhost'],
  nodeName: hostname().toLowerCase(),
  nodeIp: '127.0.0.1',
};
const plan = services(target);
if (planOnly) {
  console.log(JSON.stringify(plan, null, 2));
  process.exit(0);
}

const { ensureInstalled } = await import('./ensure.mjs');
ensureInstalled({ debian: true });
const build = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
mkdirSync(dataDir, { recursive: true, mode: 0o700 });

/** How each component runs here. */
const COMMANDS = {
  etcd: ['etcd'],
  nats: ['nats-server'],
  redis: ['redis-server'],
  init: [process.execPath, 'dist/apps/gateway/src/init.js'],
  gateway: [process.execPath, 'dist/apps/gateway/src/main.js'],
  'watch-pump': [process.execPath, 'dist/apps/gateway/src/main.js'],
  'controller-manager': [process.execPath, 'dist/apps/controller-manager/src/main.js'],
  scheduler: [process.execPath, 'dist/apps/scheduler/src/main.js'],
  'node-agent': [process.execPath, 'dist/apps/node-agent/src/main.js'],
  'network-proxy': [process.execPath, 'dist/apps/network-proxy/src/main.js'],
};
const SBIN = ['/usr/sbin', '/usr/local/sbin', '/sbin'];

const running = new Map();
let stopping = false;

function prefixLines(name, stream, out) {
  let buf = '';
  stream.on('data', (d) => {
    buf += d.toString();
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      out.write(`[${name}] ${buf.slice(0, nl)}\n`);
      buf = buf.slice(nl + 1);
    }
  });
}

function writeTopology() {
  const out = { server: target.server, dataDir, services: plan.map((s) => ({ name: s.name, component: s.component, pid: running.get(s.name)?.pid, ports: ports[s.name] ?? [], health: s.health })) };
  writeFileSync(join(dataDir, 'topology.json'), JSON.stringify(out, null, 2));
}

/** Starts a service; unless we are stopping, a service that exits is started again after a second. */
function run(s, onExit) {
  const [cmd, ...pre] = COMMANDS[s.component];
  const env = serviceEnv(s, { ...process.env, ORCH_DATA_DIR: dataDir, PATH: [process.env.PATH, ...SBIN].join(':') });
  const child = spawn(cmd, [...pre, ...s.args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  prefixLines(s.name, child.stdout, process.stdout);
  prefixLines(s.name, child.stderr, process.stderr);
  running.set(s.name, child);
  writeTopology();
  child.on('exit', (code, signal) => {
    if (running.get(s.name) === child) running.delete(s.name);
    if (onExit) return onExit(code);
    if (stopping) return;
    console.error(`[orch-ha] ${s.name} exited (${signal ?? code}); restarting it`);
    setTimeout(() => !stopping && run(s), 1000);
  });
  return child;
}

function healthy(url) {
  return new Promise((res) => {
    const get = url.startsWith('https:') ? httpsGet : httpGet;
    const req = get(url, { rejectUnauthorized: false, timeout: 1000 }, (r) => (r.resume(), res(r.statusCode === 200)));
    req.on('error', () => res(false));
    req.on('timeout', () => req.destroy());
  });
}

async function waitHealthy(s) {
  if (!s.health) return true;
  for (let i = 0; i < 600 && !stopping; i++) {
    if (await healthy(s.health)) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

const exited = (c) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', r)));

/** Stops in reverse start order: components (they release their Leases), gateways, then the engines. */
async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(code), 20_000).unref();
  for (const group of [['controller-manager', 'scheduler', 'node-agent', 'network-proxy'], ['gateway'], ['nats', 'redis', 'etcd']]) {
    const children = plan.filter((s) => group.includes(s.component)).map((s) => running.get(s.name)).filter(Boolean);
    for (const c of children) c.kill('SIGTERM');
    await Promise.race([Promise.all(children.map(exited)), new Promise((r) => setTimeout(r, 8000))]);
  }
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

// Start each service once everything it comes after is healthy; init runs to completion.
const up = new Map();
const started = (name) => up.get(name) ?? Promise.reject(new Error(`unknown service ${name}`));
for (const s of plan) {
  up.set(
    s.name,
    (async () => {
      await Promise.all(s.after.map(started));
      if (s.component === 'init') {
        const code = await new Promise((r) => run(s, r));
        if (code !== 0) throw new Error(`init failed (exit ${code})`);
        return;
      }
      run(s);
      if (!(await waitHealthy(s))) throw new Error(`${s.name} did not become healthy (${s.health})`);
    })(),
  );
}
try {
  await Promise.all(up.values());
  writeTopology();
  console.log(`[orch-ha] up: gateways ${plan.filter((s) => s.component === 'gateway').map((s) => `https://127.0.0.1:${ports[s.name][0]}`).join(' ')}`);
  console.log(`[orch-ha] kubectl --kubeconfig ${join(dataDir, 'admin.kubeconfig')} get namespaces`);
} catch (err) {
  console.error(`[orch-ha] ${err.message}`);
  void stop(1);
}
