// The scale-out topology, described once. `npm run start:ha` (scripts/start-ha.mjs) runs it as
// processes on this machine; docker-compose.yml and deploy/haproxy.cfg are generated from it
// (scripts/compose.mjs; a test checks the committed files are current). A target only says
// where things are (host names, ports, paths): services, components and flags come from here.

import { readFileSync } from 'node:fs';

/**
 * The Node flags of every process of the gateway binary (gateways and watch pumps), from
 * deploy/node-options.json: the one place npm start, start:ha, compose and the bench take them from.
 */
export const GATEWAY_NODE_OPTIONS = JSON.parse(readFileSync(new URL('./node-options.json', import.meta.url), 'utf8')).gateway.join(' ');

/**
 * The environment of a service's process: the launcher's `base` with the service's own `env` over
 * it, except NODE_OPTIONS, where the service's flags go ahead of base's: a user's NODE_OPTIONS wins
 * where both set a flag (Node applies the last).
 * @param {{ env?: Record<string, string> }} service
 * @param {NodeJS.ProcessEnv} base
 */
export function serviceEnv(service, base) {
  const env = { ...base, ...service.env };
  if (service.env?.NODE_OPTIONS && base.NODE_OPTIONS) env.NODE_OPTIONS = `${service.env.NODE_OPTIONS} ${base.NODE_OPTIONS}`;
  return env;
}

export const ETCD_MEMBERS = 3;
/** Service cluster IPs from a loopback range: the userspace network-proxy can listen on them without root. */
const SERVICE_RANGE = '127.96.0.0/16';
export const GATEWAYS = 3;

/** Default host ports of the local profile (start:ha); compose uses each image's default port in its own network namespace. */
export const LOCAL_PORTS = {
  'etcd-0': [2379, 2380],
  'etcd-1': [22379, 22380],
  'etcd-2': [32379, 32380],
  nats: [4222, 8222],
  redis: [6379],
  'gateway-0': [6443],
  'gateway-1': [6444],
  'gateway-2': [6445],
  'watch-pump-0': [10262],
  'watch-pump-1': [10272],
  'controller-manager-0': [10257],
  'controller-manager-1': [10267],
  'scheduler-0': [10259],
  'scheduler-1': [10269],
  'node-agent': [10250, 10248],
  'network-proxy': [10256, 10249],
};

/**
 * @typedef {object} Target
 * @property {'local'|'compose'} name
 * @property {string} listen          address servers bind
 * @property {(service: string) => string} host   how others reach a service
 * @property {(service: string, i?: number) => number} port   the i-th port of a service
 * @property {string} dataDir         state root (kubeconfigs, PKI, per-service dirs)
 * @property {string} server          API URL written into kubeconfigs (load balancer or gateway-0)
 * @property {string[]} sans          names and addresses in the serving certificate
 * @property {string} nodeName        the node-agent's node name
 * @property {string} nodeIp          the node-agent's --node-ip ('' = its first non-loopback address)
 */

/**
 * @typedef {object} Service
 * @property {string} name
 * @property {'etcd'|'nats'|'redis'|'init'|'gateway'|'watch-pump'|'controller-manager'|'scheduler'|'node-agent'|'network-proxy'} component
 * @property {string[]} args
 * @property {string[]} after   services that must be up (ready) first
 * @property {string} [health]  URL answering 200 when the service is ready
 * @property {Record<string, string>} [env]  environment of its process (a launcher puts the user's own NODE_OPTIONS after this one's)
 */

const join = (...parts) => parts.join('/').replace(/\/+/g, '/');

/** @param {Target} t @returns {Service[]} */
export function services(t) {
  const dir = (name) => join(t.dataDir, name);
  const pki = dir('pki');
  const kubeconfig = (component) => `--kubeconfig=${join(t.dataDir, `${component}.kubeconfig`)}`;
  const etcd = Array.from({ length: ETCD_MEMBERS }, (_, i) => `etcd-${i}`);
  const peer = (m) => `http://${t.host(m)}:${t.port(m, 1)}`;
  const client = (m) => `http://${t.host(m)}:${t.port(m, 0)}`;
  const gateways = Array.from({ length: GATEWAYS }, (_, i) => `gateway-${i}`);
  const https = (s, i = 0) => `https://${t.host(s)}:${t.port(s, i)}`;
  const engines = [`--etcd-servers=${etcd.map(client).join(',')}`, `--nats-url=nats://${t.host('nats')}:${t.port('nats')}`, `--redis-url=redis://${t.host('redis')}:${t.port('redis')}`];
  const signing = [`--service-account-private-key-file=${join(pki, 'sa.key')}`, `--cluster-signing-cert-file=${join(pki, 'ca.crt')}`, `--cluster-signing-key-file=${join(pki, 'ca.key')}`];
  return [
    ...etcd.map((m) => ({
      name: m,
      component: 'etcd',
      args: [
        `--name=${m}`,
        `--data-dir=${dir(m)}`,
        `--listen-client-urls=http://${t.listen}:${t.port(m, 0)}`,
        `--advertise-client-urls=${client(m)}`,
        `--listen-peer-urls=http://${t.listen}:${t.port(m, 1)}`,
        `--initial-advertise-peer-urls=${peer(m)}`,
        `--initial-cluster=${etcd.map((o) => `${o}=${peer(o)}`).join(',')}`,
        '--initial-cluster-state=new',
        '--initial-cluster-token=orch-ha',
        '--logger=zap',
        '--log-level=warn',
      ],
      after: [],
      health: `${client(m)}/health`,
    })),
    { name: 'nats', component: 'nats', args: ['-a', t.listen, '-p', String(t.port('nats')), '-m', String(t.port('nats', 1))], after: [], health: `http://${t.host('nats')}:${t.port('nats', 1)}/healthz` },
    { name: 'redis', component: 'redis', args: ['--bind', t.listen, '--port', String(t.port('redis')), '--save', '', '--appendonly', 'no', '--protected-mode', 'no'], after: [] },
    // The PKI and every kubeconfig, once, before any replica.
    {
      name: 'init',
      component: 'init',
      args: [`--data-dir=${t.dataDir}`, `--pki-dir=${pki}`, `--server=${t.server}`, `--node-name=${t.nodeName}`, `--service-cluster-ip-range=${SERVICE_RANGE}`, ...t.sans.map((s) => `--tls-san=${s}`)],
      after: [],
    },
    ...gateways.map((g) => ({
      name: g,
      component: 'gateway',
      args: [
        `--secure-port=${t.port(g)}`,
        `--bind-address=${t.listen}`,
        `--data-dir=${dir(g)}`,
        `--pki-dir=${pki}`,
        '--storage-backend=etcd',
        ...engines,
        // The watch pump runs in the watch-pump services, never behind a replica's requests.
        '--watch-pump=false',
        `--service-cluster-ip-range=${SERVICE_RANGE}`,
        '--enable-bootstrap-token-auth',
        '--authorization-mode=Node,RBAC',
        '--enable-admission-plugins=NodeRestriction',
        `--advertise-url=${t.server}`,
        // Behind HAProxy in TCP mode every client, the components included, arrives from its
        // address: a per-source failure limit would refuse them all together (README).
        ...(t.name === 'compose' ? ['--authentication-failure-limit=0'] : []),
      ],
      after: [...etcd, 'nats', 'redis', 'init'],
      health: `${https(g)}/readyz`,
      env: { NODE_OPTIONS: GATEWAY_NODE_OPTIONS },
    })),
    // The watch pump (etcd's change feed → NATS) in processes of its own: one leads (Lease
    // orch-system/orch-watch-pump), the other stands by and continues where it stopped.
    ...[0, 1].map((i) => ({
      name: `watch-pump-${i}`,
      component: 'watch-pump',
      args: ['watch-pump', `--secure-port=${t.port(`watch-pump-${i}`)}`, `--bind-address=${t.listen}`, `--pki-dir=${pki}`, '--storage-backend=etcd', ...engines],
      after: [...etcd, 'nats', 'redis', 'init'],
      health: `${https(`watch-pump-${i}`)}/readyz`,
      env: { NODE_OPTIONS: GATEWAY_NODE_OPTIONS },
    })),
    // Two of each: one leads (Lease in orch-system), the other stands by.
    ...[0, 1].map((i) => ({
      name: `controller-manager-${i}`,
      component: 'controller-manager',
      args: [kubeconfig('controller-manager'), `--secure-port=${t.port(`controller-manager-${i}`)}`, `--bind-address=${t.listen}`, ...signing],
      after: gateways,
      health: `${https(`controller-manager-${i}`)}/healthz`,
    })),
    ...[0, 1].map((i) => ({
      name: `scheduler-${i}`,
      component: 'scheduler',
      args: [kubeconfig('scheduler'), `--secure-port=${t.port(`scheduler-${i}`)}`, `--bind-address=${t.listen}`],
      after: gateways,
      health: `${https(`scheduler-${i}`)}/healthz`,
    })),
    {
      name: 'node-agent',
      component: 'node-agent',
      args: [
        kubeconfig('node-agent'),
        `--hostname-override=${t.nodeName}`,
        `--node-ip=${t.nodeIp}`,
        `--root-dir=${dir('node-agent')}`,
        `--client-ca-file=${join(pki, 'ca.crt')}`,
        `--address=${t.listen}`,
        `--port=${t.port('node-agent', 0)}`,
        `--secure-port=${t.port('node-agent', 1)}`,
        `--bind-address=${t.listen}`,
        '--anonymous-auth=false',
        '--authentication-token-webhook',
        '--authorization-mode=Webhook',
      ],
      after: gateways,
      health: `${https('node-agent', 1)}/healthz`,
    },
    {
      name: 'network-proxy',
      component: 'network-proxy',
      // Node ports on loopback: the proxy shares the node-agent's network (its pods' loopback addresses).
      // Health is plain HTTP, as upstream kube-proxy's (load balancers probe it).
      args: [kubeconfig('network-proxy'), `--healthz-bind-address=${t.listen}:${t.port('network-proxy', 0)}`, `--metrics-bind-address=${t.listen}:${t.port('network-proxy', 1)}`, '--nodeport-addresses=127.0.0.0/8'],
      after: gateways,
      health: `http://${t.host('network-proxy')}:${t.port('network-proxy', 0)}/healthz`,
    },
  ];
}

/** Flag names of an argument list (`--a=b` → `--a`, `-p 1` → `-p`). */
export function flagNames(args) {
  return args.filter((a) => a.startsWith('-')).map((a) => a.split('=')[0]);
}
