import { mkdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Quantity } from '@orch/apimachinery';
import { selfSignedServingCert } from '@orch/auth';
import { EventRecorder, SharedInformerFactory, isNotFound, type RestClient } from '@orch/client';
import type { ComponentContext } from '@orch/component';
import type { Logger } from '@orch/server-common';
import { Counter, Gauge } from 'prom-client';
import { CONFIGMAPS, NODES, PODS, SECRETS, SERVICES, type ConfigMap, type Node, type Pod, type Secret } from './api/types';
import { defaultNodeIp, machineHostname, machineInfo, machineUsage, type MachineInfo, type MachineUsage } from './node/machine';
import { NodeManager } from './node/node-manager';
import { nodeAllocatable, nodeCapacity, parseEvictionThresholds, parseKeyValues, parseTaints, type NodeIdentity } from './node/node-object';
import { PodIpAllocator, defaultPodCidr } from './node/pod-cidr';
import type { NODE_AGENT_FLAGS } from './options';
import { PodWorker } from './pods/pod-worker';
import type { ObjectSource } from './runtime/process/env';
import { loadEntrypointTable } from './runtime/process/entrypoints';
import { hostIsolation, type Isolation } from './runtime/process/isolation';
import type { ServiceLike } from './runtime/process/service-env';
import { ProcessRuntime } from './runtime/process/process-runtime';
import { detectCgroups } from './runtime/sandbox/cgroups';
import { Sandbox } from './runtime/sandbox/sandbox';
import type { Runtime } from './runtime/runtime';
import { SimulatedRuntime } from './runtime/simulated/simulated-runtime';
import { NodeAuth } from './server/auth';
import { startAgentServer } from './server/server';
import { StatsCollector } from './server/stats';

type Ctx = ComponentContext<typeof NODE_AGENT_FLAGS>;

/** Machine figures of every fake node of the simulated runtime. */
const SIMULATED_MACHINE: MachineInfo = {
  numCores: 8,
  memoryCapacityBytes: 32 * 1024 ** 3,
  machineID: '',
  systemUUID: '',
  bootID: '',
  kernelVersion: 'simulated',
  osImage: 'simulated',
  operatingSystem: 'linux',
  architecture: 'amd64',
};
const SIMULATED_USAGE: MachineUsage = {
  memoryAvailableBytes: 30 * 1024 ** 3,
  memoryTotalBytes: 32 * 1024 ** 3,
  fsCapacityBytes: 100 * 1024 ** 3,
  fsAvailableBytes: 90 * 1024 ** 3,
  fsInodes: 6_000_000,
  fsInodesFree: 5_000_000,
  pidsMax: 4_194_304,
  pidsRunning: 300,
};

/** The pod spec field of each kind of container (event fieldPath). */
const CONTAINER_FIELDS = { init: 'initContainers', main: 'containers', ephemeral: 'ephemeralContainers' } as const;

/** Config maps and secrets read through the gateway (404 → undefined). */
function apiSource(client: RestClient): ObjectSource {
  const get = async <T>(def: typeof CONFIGMAPS | typeof SECRETS, ns: string, name: string): Promise<T | undefined> => {
    try {
      return (await client.resource(def, ns).get(name)) as T;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  return { configMap: (ns, name) => get<ConfigMap>(CONFIGMAPS, ns, name), secret: (ns, name) => get<Secret>(SECRETS, ns, name) };
}

/**
 * Service-account tokens for pods through the TokenRequest API (`serviceaccounts/<sa>/token`),
 * bound to the pod, cached until 80% of their lifetime. When the gateway does not serve
 * TokenRequest (404/405: an older gateway, or one being upgraded), pods get no token file for
 * now and the agent asks again after a backoff (10 s doubling to 5 min), logging once per outage.
 */
export function tokenSource(
  client: Pick<RestClient, 'request'>,
  logger: Pick<Logger, 'warn' | 'info'>,
  now: () => number = Date.now,
): (pod: Pod, audience: string | undefined, expirationSeconds: number) => Promise<string | undefined> {
  const cache = new Map<string, { token: string; refreshAt: number }>();
  const unserved = { until: 0, backoffMs: 0 };
  return async (pod, audience, expirationSeconds) => {
    const key = `${pod.metadata.uid}/${audience ?? ''}/${expirationSeconds}`;
    const hit = cache.get(key);
    if (hit && hit.refreshAt > now()) return hit.token;
    if (unserved.until > now()) return undefined;
    const ns = pod.metadata.namespace ?? 'default';
    const sa = pod.spec.serviceAccountName || 'default';
    try {
      const tr = await client.request<{ status?: { token?: string; expirationTimestamp?: string } }>({
        method: 'POST',
        path: `/api/v1/namespaces/${encodeURIComponent(ns)}/serviceaccounts/${encodeURIComponent(sa)}/token`,
        body: {
          apiVersion: 'authentication.orch.io/v1',
          kind: 'TokenRequest',
          spec: { audiences: audience ? [audience] : [], expirationSeconds, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: pod.metadata.name, uid: pod.metadata.uid } },
        },
      });
      if (unserved.backoffMs) logger.info('the gateway serves serviceaccounts/token (TokenRequest) again');
      unserved.backoffMs = 0;
      unserved.until = 0;
      const token = tr.status?.token;
      if (!token) return undefined;
      cache.set(key, { token, refreshAt: now() + expirationSeconds * 800 });
      return token;
    } catch (err) {
      const code = (err as { code?: number }).code;
      // A 404 naming the account is about this pod (its service account is gone), not about the API.
      const aboutAccount = (err as { status?: { details?: { kind?: string } } }).status?.details?.kind === 'serviceaccounts';
      if ((code === 404 && !aboutAccount) || code === 405) {
        if (!unserved.backoffMs) logger.warn('the gateway does not serve serviceaccounts/token (TokenRequest): pods get ca.crt and namespace but no token file until it does');
        unserved.backoffMs = Math.min(TOKEN_API_MAX_BACKOFF_MS, unserved.backoffMs ? unserved.backoffMs * 2 : TOKEN_API_FIRST_BACKOFF_MS);
        unserved.until = now() + unserved.backoffMs;
      } else {
        logger.warn('cannot get a service-account token for a pod; its token file is left out for now', { pod: `${ns}/${pod.metadata.name}`, err: (err as Error).message });
      }
      return undefined;
    }
  };
}

const TOKEN_API_FIRST_BACKOFF_MS = 10_000;
const TOKEN_API_MAX_BACKOFF_MS = 5 * 60_000;

/**
 * The isolation of the process runtimes: `sandbox` (fails when the machine cannot), `process`,
 * or `auto`, which takes the sandbox where it works and says why when it falls back.
 */
function chooseIsolation(runtime: 'process' | 'sandbox' | 'auto', rootDir: string, maskedPaths: string[], logger: Logger): Isolation {
  if (runtime === 'process') return hostIsolation;
  const { sandbox, reason } = Sandbox.create({ rootDir, maskedPaths, logger: logger.with({ runtime: 'sandbox' }) });
  if (sandbox) {
    logger.info('sandbox runtime: each pod in its own mount, PID, IPC and UTS namespaces, the host file system read-only');
    return sandbox;
  }
  if (runtime === 'sandbox') throw new Error(`--runtime=sandbox is not possible on this machine: ${reason}`);
  logger.warn(`the sandbox runtime is not possible on this machine (${reason}): using the process runtime, where pods run as plain host processes`);
  return hostIsolation;
}

/** `https://host:port` → host and port for ORCH_SERVICE_HOST / ORCH_SERVICE_PORT. */
function gatewayAddress(server: string): { host: string; port: string } | undefined {
  try {
    const u = new URL(server);
    return { host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port || (u.protocol === 'https:' ? '443' : '80') };
  } catch {
    return undefined;
  }
}

/**
 * The node agent's main loop: HTTPS API, node registration and heartbeat (one node, or N fake
 * ones in the simulated runtime), and the pod worker driving the runtime, until `signal`
 * aborts; then containers are stopped within --shutdown-grace-period.
 */
export async function runAgent(ctx: Ctx, signal: AbortSignal): Promise<void> {
  const f = ctx.flags;
  const logger = ctx.logger;
  if (!['process', 'sandbox', 'auto', 'simulated'].includes(f.runtime)) throw new Error(`--runtime ${JSON.stringify(f.runtime)}: must be process, sandbox, auto or simulated`);
  if (f['authorization-mode'] !== 'AlwaysAllow' && f['authorization-mode'] !== 'Webhook') throw new Error(`--authorization-mode ${JSON.stringify(f['authorization-mode'])}: must be AlwaysAllow or Webhook`);
  const simulated = f.runtime === 'simulated';
  const rootDir = resolve(f['root-dir']);
  await mkdir(join(rootDir, 'pods'), { recursive: true });
  const nodeIp = f['node-ip'] || defaultNodeIp();
  const hostname = f['hostname-override'] || machineHostname();
  const thresholds = parseEvictionThresholds(f['eviction-hard']);
  const reserved = parseKeyValues(f['system-reserved'], '--system-reserved');
  const labels = parseKeyValues(f['node-labels'], '--node-labels');
  const taints = parseTaints(f['register-with-taints']);
  const info = simulated ? SIMULATED_MACHINE : await machineInfo();
  const usage = simulated ? async () => SIMULATED_USAGE : () => machineUsage(rootDir);
  const names = simulated ? Array.from({ length: Math.max(1, f['simulated-nodes']) }, (_, i) => `${f['hostname-override'] || 'sim-node'}-${i}`) : [hostname];
  const nodeNames = new Set(names);
  const startedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');

  const informers = new SharedInformerFactory(ctx.client);
  const pods = informers.informerFor<Pod>(PODS, { fieldSelector: simulated ? 'spec.nodeName!=' : `spec.nodeName=${hostname}` });
  const nodes = informers.informerFor<Node>(NODES, simulated ? {} : { fieldSelector: `metadata.name=${hostname}` });
  // Service link variables of containers (the process runtime): every Service, as the kubelet watches them.
  const services = simulated ? undefined : informers.informerFor<ServiceLike>(SERVICES);

  const statusWrites = new Counter({ name: 'node_agent_pod_status_writes_total', help: 'Pod status writes through pods/status.', registers: [ctx.metrics] });
  let runtime: Runtime;
  let processRuntime: ProcessRuntime | undefined;
  let podCidr = (name: string) => defaultPodCidr(name);
  const allocatable = nodeAllocatable(nodeCapacity(info, await usage(), f['max-pods']), reserved, thresholds);
  const worker: { current?: PodWorker } = {};
  const recorder = new EventRecorder({ client: ctx.client, reportingController: 'orch.io/node-agent', reportingInstance: `node-agent-${hostname}`, logger });
  if (simulated) {
    const sim = new SimulatedRuntime(nodeIp);
    podCidr = (name) => sim.podCidr(name);
    runtime = sim;
  } else {
    const cidr = f['pod-cidr'] || defaultPodCidr(hostname);
    podCidr = () => cidr;
    const isolation = chooseIsolation(f.runtime as 'process' | 'sandbox' | 'auto', rootDir, [...f['sandbox-masked-paths'], ...(f.kubeconfig ? [resolve(f.kubeconfig)] : [])], logger);
    const cgroups = await detectCgroups(`orch-${hostname}`);
    if (cgroups.driver) logger.info('container limits and usage from cgroups', { version: cgroups.driver.version, base: cgroups.driver.base });
    else logger.warn('no cgroups for containers: memory and CPU limits are not enforced and stats come from /proc', { reason: cgroups.reason });
    processRuntime = new ProcessRuntime({
      isolation,
      cgroups: cgroups.driver,
      rootDir,
      nodeName: hostname,
      hostIP: nodeIp,
      ips: new PodIpAllocator(cidr),
      source: apiSource(ctx.client),
      token: tokenSource(ctx.client, logger),
      rootCaPem: ctx.clientConfig.caPem ?? '',
      nodeAllocatable: () => allocatable,
      entrypoints: await loadEntrypointTable(f['image-entrypoints']),
      services: () => services?.list() ?? [],
      gateway: gatewayAddress(ctx.clientConfig.server),
      log: { maxBytes: Quantity.parse(f['container-log-max-size']).value(), maxFiles: Math.max(1, f['container-log-max-files']) },
      backoff: { initialMs: f['restart-backoff-initial'], maxMs: f['restart-backoff-max'] },
      syncFrequencyMs: f['sync-frequency'],
      logger: logger.with({ runtime: 'process' }),
      onChange: (key) => worker.current?.enqueue(key),
      event: (pod, container, kind, type, reason, action, note) =>
        recorder.event(
          { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid, fieldPath: `spec.${CONTAINER_FIELDS[kind]}{${container}}` },
          type,
          reason,
          action,
          note,
        ),
    });
    runtime = processRuntime;
    const running = await processRuntime.findLeftovers();
    if (running) logger.info('found containers an earlier agent started; those of pods still bound here are adopted, the rest stopped', { count: running });
  }
  new Gauge({ name: 'node_agent_running_pods', help: 'Pods the runtime knows.', registers: [ctx.metrics], collect() { this.set(runtime.podUids().length); } });

  const certPem = f['tls-cert-file'] ? await readFile(f['tls-cert-file'], 'utf8') : undefined;
  const keyPem = f['tls-private-key-file'] ? await readFile(f['tls-private-key-file'], 'utf8') : undefined;
  if (!!certPem !== !!keyPem) throw new Error('--tls-cert-file and --tls-private-key-file must be given together');
  const tls = certPem && keyPem ? { certPem, keyPem } : await selfSignedServingCert([...new Set([nodeIp, '127.0.0.1', 'localhost', hostname])], `${hostname}@${Math.floor(Date.now() / 1000)}`);
  const clientCa = f['client-ca-file'] ? await readFile(f['client-ca-file'], 'utf8') : undefined;
  const auth = new NodeAuth({
    clientCaPem: clientCa,
    anonymous: f['anonymous-auth'],
    tokenWebhook: f['authentication-token-webhook'] ? { client: ctx.client, ttlMs: f['authentication-token-webhook-cache-ttl'] } : undefined,
    authorization:
      f['authorization-mode'] === 'Webhook'
        ? { mode: 'Webhook', client: ctx.client, allowTtlMs: f['authorization-webhook-cache-authorized-ttl'], denyTtlMs: f['authorization-webhook-cache-unauthorized-ttl'] }
        : { mode: 'AlwaysAllow' },
  });
  const server = await startAgentServer({
    host: f.address,
    port: f.port,
    tls: { cert: tls.certPem, key: tls.keyPem, ca: clientCa },
    auth,
    logger,
    view: {
      nodeName: names[0],
      pods: () => pods.list(),
      pod: (ns, name) => pods.get(`${ns}/${name}`),
      runtime,
      processRuntime,
      machine: info,
      usage,
      metrics: ctx.metrics,
      health: ctx.health,
      stats: new StatsCollector(names[0], startedAt),
      nodeLogsDir: f['node-logs-dir'],
    },
    streaming: { streamCreationTimeoutMs: f['stream-creation-timeout'], idleTimeoutMs: f['streaming-connection-idle-timeout'] },
  });

  try {
    const managers = names.map(
      (name) =>
        new NodeManager({
          client: ctx.client,
          id: { name, hostname: simulated ? name : hostname, nodeIp, port: server.port, podCidr: podCidr(name), labels, taints } satisfies NodeIdentity,
          info: simulated ? { ...info, machineID: name, systemUUID: name, bootID: name } : info,
          usage,
          cached: () => nodes.get(name),
          thresholds,
          reserved,
          maxPods: f['max-pods'],
          runtime: runtime.name,
          statusUpdateMs: f['node-status-update-frequency'],
          statusReportMs: f['node-status-report-frequency'],
          leaseDurationSeconds: f['node-lease-duration-seconds'],
          jitterStart: simulated && names.length > 1,
          logger,
        }),
    );
    // Register in batches so a thousand fake nodes do not open a thousand connections at once.
    for (let i = 0; i < managers.length && !signal.aborted; i += 50) await Promise.all(managers.slice(i, i + 50).map((m) => m.register(signal)));
    if (signal.aborted) return;
    logger.info('nodes registered', { nodes: names.length, runtime: runtime.name, port: server.port });
    const pw = new PodWorker({
      client: ctx.client,
      runtime,
      informer: pods,
      isMine: (n) => !!n && nodeNames.has(n),
      workers: simulated ? Math.max(f['pod-workers'], 32) : f['pod-workers'],
      resyncMs: f['sync-frequency'],
      logger: logger.with({ loop: 'pods' }),
      statusWrites,
    });
    worker.current = pw;
    informers.start();
    ctx.health.add('pods-synced', () => {
      if (!pods.hasSynced()) throw new Error('pod informer not synced');
    }, { endpoints: ['readyz'] });
    await Promise.all([
      ...managers.map((m) => m.run(signal)),
      pw.run(signal, async (list) => {
        logger.info('pod informer synced', { pods: list.length });
        if (processRuntime) await processRuntime.removeUnknownPodDirs(new Set(list.map((p) => p.metadata.uid ?? '')));
      }),
    ]);
  } finally {
    logger.info('stopping containers', { gracePeriod: f['shutdown-grace-period'] });
    await runtime.shutdown(f['shutdown-grace-period']);
    await recorder.stop();
    await server.close();
    await informers.shutdown();
  }
}
