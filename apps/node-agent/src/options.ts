import { resolve } from 'node:path';
import type { COMPONENT_FLAGS, ComponentContext } from '@orch/component';
import type { FlagDefs, FlagValues } from '@orch/server-common';
import type { Taint } from './api/types';
import { defaultNodeIp, machineHostname } from './node/machine';
import { parseEvictionThresholds, parseKeyValues, parseTaints, type EvictionThreshold } from './node/node-object';

/**
 * Every node-agent flag besides the component ones (`--kubeconfig`, `--secure-port` for the
 * health port, ...), declared once; `--help` is generated from this table. Names follow
 * upstream's kubelet where one exists.
 */
export const NODE_AGENT_FLAGS = {
  'root-dir': { type: 'string', default: '/var/lib/orch-node-agent', description: 'Directory for the agent\'s files: pod directories (volumes, logs), client certificates, kubeconfig.' },
  'hostname-override': { type: 'string', default: '', description: 'The node name and orch.io/hostname label instead of the machine host name (in the simulated runtime: the prefix of the fake node names).' },
  'node-ip': { type: 'string', default: '', description: 'IP address of the node (InternalIP, HOST_IP of pods, where the gateway reaches the agent). Default: the first non-loopback IPv4 address, else 127.0.0.1.' },
  address: { type: 'string', default: '0.0.0.0', description: 'The IP address the agent\'s HTTPS API listens on.' },
  port: { type: 'int', default: 10250, description: 'The port of the agent\'s HTTPS API (logs, stats, pods, metrics).' },
  'tls-cert-file': { type: 'string', default: '', description: 'Serving certificate of the HTTPS API (default: a self-signed one made at start-up).' },
  'tls-private-key-file': { type: 'string', default: '', description: 'Private key matching --tls-cert-file.' },
  'client-ca-file': { type: 'string', default: '', description: 'Enables client certificate authentication on the HTTPS API with this CA bundle.' },
  'anonymous-auth': { type: 'bool', default: true, description: 'Allows requests no authenticator claims (user system:anonymous); false answers them 401.' },
  'authentication-token-webhook': { type: 'bool', default: false, description: 'Authenticates bearer tokens with the TokenReview API of the gateway.' },
  'authentication-token-webhook-cache-ttl': { type: 'duration', default: 120_000, description: 'How long TokenReview answers are cached.' },
  'authorization-mode': { type: 'string', default: 'AlwaysAllow', description: 'AlwaysAllow or Webhook (SubjectAccessReview through the gateway).' },
  'authorization-webhook-cache-authorized-ttl': { type: 'duration', default: 300_000, description: 'How long allowed SubjectAccessReview answers are cached.' },
  'authorization-webhook-cache-unauthorized-ttl': { type: 'duration', default: 30_000, description: 'How long denied SubjectAccessReview answers are cached.' },
  'image-entrypoints': {
    type: 'string',
    default: '',
    description:
      'YAML or JSON file mapping image repositories to {entrypoint: [...], cmd: [...]}: what a container without command runs in the process runtime (added to the built-in busybox, alpine, debian, ubuntu, python, node, nginx, redis, postgres).',
  },
  runtime: {
    type: 'string',
    default: 'process',
    description:
      'Pod runtime: process (containers run as host processes), sandbox (host processes in their own mount, PID, IPC and UTS namespaces, volumes at their mountPath, the host read-only; needs root), auto (sandbox where the machine allows it, else process) or simulated (fake nodes, pods run at once; for scale tests). Memory and CPU limits are enforced with cgroups wherever the agent may write them.',
  },
  'sandbox-masked-paths': { type: 'stringSlice', default: [], description: 'Host paths the sandbox hides from containers besides --root-dir (directories holding machine credentials, for instance).' },
  'streaming-connection-idle-timeout': { type: 'duration', default: 4 * 3600_000, description: 'exec, attach and port-forward connections without traffic for this long are closed.' },
  'stream-creation-timeout': { type: 'duration', default: 30_000, description: 'How long a client has to open its streams after an exec, attach or port-forward upgrade.' },
  'simulated-nodes': { type: 'int', default: 1, description: 'Number of fake nodes served by the simulated runtime (named <hostname-override>-<i>).' },
  'pod-cidr': { type: 'string', default: '', description: 'Loopback /24 for pod IPs (default 127.<a>.<b>.0/24 in 127.128.0.0/9, derived from the node name).' },
  'max-pods': { type: 'int', default: 110, description: 'Number of pods the node can run (capacity "pods").' },
  'node-labels': { type: 'stringSlice', default: [], description: 'Labels added when registering the node (key=value, comma separated).' },
  'register-with-taints': { type: 'stringSlice', default: [], description: 'Taints added when registering the node (key=value:Effect, comma separated).' },
  'system-reserved': { type: 'stringSlice', default: [], description: 'Resources held back from allocatable for the system (cpu=100m,memory=200Mi,...).' },
  'eviction-hard': { type: 'stringSlice', default: ['memory.available<100Mi', 'nodefs.available<10%', 'pid.available<5%'], description: 'Thresholds that set the pressure conditions (memory.available, nodefs.available, pid.available).' },
  'node-status-update-frequency': { type: 'duration', default: 10_000, description: 'How often node status is computed and posted when it changed.' },
  'node-status-report-frequency': { type: 'duration', default: 300_000, description: 'How often node status is posted when nothing changed.' },
  'node-lease-duration-seconds': { type: 'int', default: 40, description: 'Duration of the node Lease; it is renewed every quarter of it.' },
  'sync-frequency': { type: 'duration', default: 60_000, description: 'Maximum period between syncs of a running pod (config map and secret volumes are refreshed then).' },
  'pod-workers': { type: 'int', default: 8, description: 'Pods synced concurrently.' },
  'container-log-max-size': { type: 'string', default: '10Mi', description: 'Size at which a container log file is rotated.' },
  'container-log-max-files': { type: 'int', default: 5, description: 'Log files (current and rotated) kept per container instance.' },
  'restart-backoff-initial': { type: 'duration', default: 10_000, description: 'First back-off before restarting a crashed container again (doubles per crash).' },
  'restart-backoff-max': { type: 'duration', default: 300_000, description: 'Longest back-off between container restarts.' },
  'shutdown-grace-period': { type: 'duration', default: 10_000, description: 'On SIGTERM, how long the agent gives its containers to stop before SIGKILL.' },
  'node-logs-dir': { type: 'string', default: '/var/log', description: 'Directory served by /logs/.' },
  // join / TLS bootstrap
  'bootstrap-kubeconfig': { type: 'string', default: '', description: 'Kubeconfig with a bootstrap token: when --kubeconfig does not exist, a client certificate is requested with it (CSR) and --kubeconfig is written.' },
  'cert-dir': { type: 'string', default: '', description: 'Directory of the client certificate obtained by TLS bootstrap (default <root-dir>/pki).' },
  server: { type: 'string', default: '', description: 'join: the gateway URL, https://HOST:6443.' },
  token: { type: 'string', default: '', description: 'join: the bootstrap token <id>.<secret>.' },
  'discovery-token-ca-cert-hash': { type: 'stringSlice', default: [], description: 'join: sha256:<hex> pins of the cluster CA public key; without one the CA is trusted because the token verifies the cluster-info signature.' },
  'bootstrap-timeout': { type: 'duration', default: 300_000, description: 'join: how long to wait for cluster-info to be signed and the certificate to be issued.' },
} satisfies FlagDefs;

export type NodeAgentFlags = FlagValues<typeof NODE_AGENT_FLAGS & typeof COMPONENT_FLAGS>;

/** The pod runtimes of `--runtime`. */
export const RUNTIMES = ['process', 'sandbox', 'auto', 'simulated'] as const;
export type RuntimeChoice = (typeof RUNTIMES)[number];

/** The authorization modes of the agent's HTTPS API (`--authorization-mode`). */
export const AGENT_AUTHORIZATION_MODES = ['AlwaysAllow', 'Webhook'] as const;

/**
 * The node agent's configuration, the one options provider of its Nest application: the flags
 * as given, plus what is derived from them once (checked, parsed, defaulted). Building it
 * throws the start-up error of a bad flag.
 */
export class NodeAgentOptions {
  readonly runtime: RuntimeChoice;
  /** `--runtime=simulated`: fake nodes, nothing runs. */
  readonly simulated: boolean;
  /** `--root-dir`, absolute. */
  readonly rootDir: string;
  readonly nodeIp: string;
  /** The machine's node name (`--hostname-override` or the host name). */
  readonly hostname: string;
  /** The nodes this agent serves: the machine, or the simulated runtime's fake nodes. */
  readonly nodeNames: readonly string[];
  readonly thresholds: readonly EvictionThreshold[];
  readonly reserved: Record<string, string>;
  readonly labels: Record<string, string>;
  readonly taints: Taint[];

  constructor(readonly flags: NodeAgentFlags) {
    const f = flags;
    if (!(RUNTIMES as readonly string[]).includes(f.runtime)) throw new Error(`--runtime ${JSON.stringify(f.runtime)}: must be process, sandbox, auto or simulated`);
    if (!(AGENT_AUTHORIZATION_MODES as readonly string[]).includes(f['authorization-mode'])) throw new Error(`--authorization-mode ${JSON.stringify(f['authorization-mode'])}: must be AlwaysAllow or Webhook`);
    if (!!f['tls-cert-file'] !== !!f['tls-private-key-file']) throw new Error('--tls-cert-file and --tls-private-key-file must be given together');
    this.runtime = f.runtime as RuntimeChoice;
    this.simulated = this.runtime === 'simulated';
    this.rootDir = resolve(f['root-dir']);
    this.nodeIp = f['node-ip'] || defaultNodeIp();
    this.hostname = f['hostname-override'] || machineHostname();
    this.nodeNames = this.simulated ? Array.from({ length: Math.max(1, f['simulated-nodes']) }, (_, i) => `${f['hostname-override'] || 'sim-node'}-${i}`) : [this.hostname];
    this.thresholds = parseEvictionThresholds(f['eviction-hard']);
    this.reserved = parseKeyValues(f['system-reserved'], '--system-reserved');
    this.labels = parseKeyValues(f['node-labels'], '--node-labels');
    this.taints = parseTaints(f['register-with-taints']);
  }
}

/** What the component runtime gives the node agent's providers (COMPONENT_CONTEXT). */
export type NodeAgentContext = ComponentContext<typeof NODE_AGENT_FLAGS>;
