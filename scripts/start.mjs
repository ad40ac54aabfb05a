#!/usr/bin/env node
// `npm start`: installs what is missing, builds, and runs the local control plane on the
// embedded defaults with state in .orch/ (ORCH_DATA_DIR overrides). Ctrl-C stops everything;
// a restart keeps the state. Extra arguments are passed to the gateway.
//
// Ports (environment, default): ORCH_PORT gateway (6443), ORCH_CONTROLLER_MANAGER_PORT (10257),
// ORCH_SCHEDULER_PORT (10259), ORCH_NODE_AGENT_PORT agent API (10250), ORCH_NODE_AGENT_HEALTHZ_PORT
// (10248), ORCH_PROXY_HEALTHZ_PORT network-proxy health, plain HTTP (10256), ORCH_PROXY_METRICS_PORT
// (10249), ORCH_METRICS_SERVER_PORT metrics API (4443; health on any free port), ORCH_DASHBOARD_PORT the web
// dashboard (8443). Set them all to run a second control plane on the same machine.
// ORCH_NODE_AGENT_RUNTIME picks the node-agent's pod runtime: auto (default: sandbox where the machine allows it,
// else process), sandbox (fails where it cannot run) or process.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GATEWAY_NODE_OPTIONS, serviceEnv } from '../deploy/topology.mjs';
import { ensureInstalled } from './ensure.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
ensureInstalled();
const build = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const dataDir = resolve(process.env.ORCH_DATA_DIR || '.orch');
const portOf = (name, fallback) => {
  const v = process.env[name] || fallback;
  if (!/^\d{1,5}$/.test(v) || Number(v) < 1 || Number(v) > 65535) {
    console.error(`[orch] ${name}=${v}: want a port number`);
    process.exit(2);
  }
  return v;
};
const port = portOf('ORCH_PORT', '6443');
const ports = {
  controllerManager: portOf('ORCH_CONTROLLER_MANAGER_PORT', '10257'),
  scheduler: portOf('ORCH_SCHEDULER_PORT', '10259'),
  nodeAgent: portOf('ORCH_NODE_AGENT_PORT', '10250'),
  nodeAgentHealthz: portOf('ORCH_NODE_AGENT_HEALTHZ_PORT', '10248'),
  proxyHealthz: portOf('ORCH_PROXY_HEALTHZ_PORT', '10256'),
  proxyMetrics: portOf('ORCH_PROXY_METRICS_PORT', '10249'),
  metricsServer: portOf('ORCH_METRICS_SERVER_PORT', '4443'),
  dashboard: portOf('ORCH_DASHBOARD_PORT', '8443'),
};
const server = `https://127.0.0.1:${port}`;
const kubeconfig = join(dataDir, 'admin.kubeconfig');
const componentKubeconfig = (name) => join(dataDir, `${name}.kubeconfig`);
const pki = join(dataDir, 'pki');
// The controller-manager signs service-account tokens and node client certificates with the cluster PKI.
const controllerSigningArgs = [
  `--service-account-private-key-file=${join(pki, 'sa.key')}`,
  `--cluster-signing-cert-file=${join(pki, 'ca.crt')}`,
  `--cluster-signing-key-file=${join(pki, 'ca.key')}`,
];

/** The components of the local profile, in start order; each runs only once it is built. */
const components = [
  {
    name: 'gateway',
    main: 'dist/apps/gateway/src/main.js',
    // Service cluster IPs from a loopback range: the network-proxy can listen on them without root.
    // Bootstrap tokens let more machines join (`node-agent join`, see deploy/systemd/README.md).
    // The Services in front of the API (default/orch, default/kubernetes) use the secure port: the
    // userspace network-proxy binds their cluster IPs without root.
    args: [`--secure-port=${port}`, '--bind-address=127.0.0.1', `--data-dir=${dataDir}`, '--service-cluster-ip-range=127.96.0.0/16', `--api-service-port=${port}`, '--enable-bootstrap-token-auth', '--write-component-kubeconfigs', '--authorization-mode=Node,RBAC', '--enable-admission-plugins=NodeRestriction', ...process.argv.slice(2)],
    env: { NODE_OPTIONS: GATEWAY_NODE_OPTIONS },
  },
  // Each component runs with its own client certificate (written by the gateway into the data dir).
  // The bootstrap signer and token cleaner are on, as kubeadm runs them: `node-agent join` works.
  {
    name: 'controller-manager',
    main: 'dist/apps/controller-manager/src/main.js',
    args: [`--kubeconfig=${componentKubeconfig('controller-manager')}`, '--controllers=*,bootstrapsigner,tokencleaner', `--secure-port=${ports.controllerManager}`, ...controllerSigningArgs],
  },
  { name: 'scheduler', main: 'dist/apps/scheduler/src/main.js', args: [`--kubeconfig=${componentKubeconfig('scheduler')}`, `--secure-port=${ports.scheduler}`] },
  // Its HTTPS API trusts the cluster CA (the gateway's client certificate) and asks the gateway about tokens and permissions.
  // Pods run in the sandbox runtime where the machine allows namespaces (root, util-linux), else as plain
  // processes (the agent says which and why at start-up); the data dir (CA key, credentials) is hidden from them.
  {
    name: 'node-agent',
    main: 'dist/apps/node-agent/src/main.js',
    args: [
      `--runtime=${process.env.ORCH_NODE_AGENT_RUNTIME || 'auto'}`,
      `--sandbox-masked-paths=${dataDir}`,
      `--kubeconfig=${componentKubeconfig('node-agent')}`,
      `--root-dir=${join(dataDir, 'node-agent')}`,
      `--client-ca-file=${join(dataDir, 'pki', 'ca.crt')}`,
      '--node-ip=127.0.0.1',
      '--address=127.0.0.1',
      `--port=${ports.nodeAgent}`,
      `--secure-port=${ports.nodeAgentHealthz}`,
      '--anonymous-auth=false',
      '--authentication-token-webhook',
      '--authorization-mode=Webhook',
    ],
  },
  // Node ports on loopback only: the local profile does not expose services to the network.
  {
    name: 'network-proxy',
    main: 'dist/apps/network-proxy/src/main.js',
    args: [
      `--kubeconfig=${componentKubeconfig('network-proxy')}`,
      '--nodeport-addresses=127.0.0.0/8',
      `--healthz-bind-address=127.0.0.1:${ports.proxyHealthz}`,
      `--metrics-bind-address=127.0.0.1:${ports.proxyMetrics}`,
    ],
  },
  // The resource metrics API (kubectl top, the HPA controller): an extension server the gateway
  // proxies to; it registers its Service, Endpoints and APIService itself (--register).
  {
    name: 'metrics-server',
    main: 'dist/apps/metrics-server/src/main.js',
    args: [
      `--kubeconfig=${componentKubeconfig('metrics-server')}`,
      `--secure-port=${ports.metricsServer}`,
      '--bind-address=127.0.0.1',
      `--cert-dir=${join(dataDir, 'metrics-server')}`,
      // Registration (Service, Endpoints, APIService) with the admin's credentials; the server runs as itself.
      '--register',
      `--registration-kubeconfig=${kubeconfig}`,
    ],
  },
  // The web dashboard: no kubeconfig (it acts with each user's own token), a serving certificate
  // of its own that the gateway issues from the cluster CA (--write-component-kubeconfigs).
  {
    name: 'dashboard',
    main: 'dist/apps/dashboard/src/main.js',
    args: [
      `--server=${server}`,
      `--certificate-authority=${join(pki, 'ca.crt')}`,
      `--tls-cert-file=${join(pki, 'dashboard.crt')}`,
      `--tls-private-key-file=${join(pki, 'dashboard.key')}`,
      `--secure-port=${ports.dashboard}`,
      '--bind-address=127.0.0.1',
    ],
  },
];

const children = [];
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

function run(c) {
  const child = spawn(process.execPath, [c.main, ...c.args], { stdio: ['ignore', 'pipe', 'pipe'], env: serviceEnv(c, { ...process.env, ORCH_DATA_DIR: dataDir }) });
  prefixLines(c.name, child.stdout, process.stdout);
  prefixLines(c.name, child.stderr, process.stderr);
  child.on('exit', (code, signal) => {
    if (stopping) return;
    console.error(`[orch] ${c.name} exited (${signal ?? code}); stopping the control plane`);
    void stop(1);
  });
  children.push(child);
  return child;
}

async function waitReady() {
  for (let i = 0; i < 300; i++) {
    const r = spawnSync('node', ['-e', `require('https').get('${server}/readyz',{rejectUnauthorized:false},r=>process.exit(r.statusCode===200?0:1)).on('error',()=>process.exit(1))`]);
    if (r.status === 0) return true;
    await new Promise((res) => setTimeout(res, 200));
  }
  return false;
}

const exitedOf = (c) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', r)));

/**
 * How long the components get to stop: the node agent stops its containers within its
 * --shutdown-grace-period (10 s by default), SIGKILL included, before it exits.
 */
const COMPONENT_STOP_MS = 15_000;

/** Stops the components first (they release leases through the gateway), then the gateway. */
async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(code), COMPONENT_STOP_MS + 5000).unref();
  const [gateway, ...rest] = children;
  for (const c of rest) c.kill('SIGTERM');
  await Promise.race([Promise.all(rest.map(exitedOf)), new Promise((r) => setTimeout(r, COMPONENT_STOP_MS))]);
  gateway?.kill('SIGTERM');
  if (gateway) await exitedOf(gateway);
  process.exit(code);
}

process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

run(components[0]);
if (!(await waitReady())) {
  console.error('[orch] the gateway did not become ready');
  void stop(1);
} else {
  for (const c of components.slice(1)) if (existsSync(c.main)) run(c);
  console.log(`[orch] control plane up at ${server}`);
  console.log(`[orch] kubectl --kubeconfig ${kubeconfig} get namespaces`);
  const k = `kubectl --kubeconfig ${kubeconfig}`;
  console.log(`[orch] dashboard at https://127.0.0.1:${ports.dashboard} (certificate from the cluster CA ${join(pki, 'ca.crt')}); an admin login token:`);
  console.log(`[orch]   ${k} -n orch-system create serviceaccount dashboard-admin; ${k} create clusterrolebinding dashboard-admin --clusterrole=cluster-admin --serviceaccount=orch-system:dashboard-admin; ${k} -n orch-system create token dashboard-admin`);
}
