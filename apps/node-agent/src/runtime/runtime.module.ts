import { Inject, Injectable, Module, type BeforeApplicationShutdown, type DynamicModule, type OnApplicationShutdown, type OnModuleInit, type Provider } from '@nestjs/common';
import { resolve } from 'node:path';
import { Quantity } from '@orch/apimachinery';
import { EventRecorder } from '@orch/client';
import { COMPONENT_CONTEXT } from '@orch/component';
import type { Logger } from '@orch/server-common';
import { Gauge } from 'prom-client';
import { AgentInformers } from '../informers';
import { NodeMachine } from '../node/machine';
import { nodeAllocatable, nodeCapacity } from '../node/node-object';
import { PodIpAllocator, defaultPodCidr } from '../node/pod-cidr';
import { NodeAgentOptions, type NodeAgentContext } from '../options';
import { PodQueue } from '../pods/pod-worker';
import { apiObjectSource, tokenSource } from './api-sources';
import { loadEntrypointTable } from './process/entrypoints';
import type { ObjectSource } from './process/env';
import { hostIsolation, type Isolation } from './process/isolation';
import { ProcessRuntime } from './process/process-runtime';
import type { Runtime } from './runtime';
import { detectCgroups, type CgroupDriver } from './sandbox/cgroups';
import { Sandbox } from './sandbox/sandbox';
import { SimulatedRuntime } from './simulated/simulated-runtime';

/** Injection token of the pod runtime `--runtime` chose (a {@link Runtime}). */
export const RUNTIME = Symbol('Runtime');
/** Injection tokens of the process runtime's parts: how containers are isolated, and their cgroups (undefined without). */
export const ISOLATION = Symbol('Isolation');
export const CGROUPS = Symbol('Cgroups');

/** The pod spec field of each kind of container (event fieldPath). */
const CONTAINER_FIELDS = { init: 'initContainers', main: 'containers', ephemeral: 'ephemeralContainers' } as const;

/** The volume manager's sources: config maps and secrets read through the gateway. */
@Injectable()
export class VolumeSources implements ObjectSource {
  private readonly source: ObjectSource;

  constructor(@Inject(COMPONENT_CONTEXT) ctx: NodeAgentContext) {
    this.source = apiObjectSource(ctx.client);
  }

  configMap(namespace: string, name: string) {
    return this.source.configMap(namespace, name);
  }

  secret(namespace: string, name: string) {
    return this.source.secret(namespace, name);
  }
}

/** The token manager: service-account tokens of pods (TokenRequest, see {@link tokenSource}). */
@Injectable()
export class PodTokens {
  readonly token: ReturnType<typeof tokenSource>;

  constructor(@Inject(COMPONENT_CONTEXT) ctx: NodeAgentContext) {
    this.token = tokenSource(ctx.client, ctx.logger);
  }
}

/**
 * The isolation of the process runtimes: `sandbox` (fails when the machine cannot), `process`,
 * or `auto`, which takes the sandbox where it works and says why when it falls back.
 */
function chooseIsolation(options: NodeAgentOptions, logger: Logger): Isolation {
  if (options.runtime === 'process') return hostIsolation;
  const f = options.flags;
  const maskedPaths = [...f['sandbox-masked-paths'], ...(f.kubeconfig ? [resolve(f.kubeconfig)] : [])];
  const { sandbox, reason } = Sandbox.create({ rootDir: options.rootDir, maskedPaths, logger: logger.with({ runtime: 'sandbox' }) });
  if (sandbox) {
    logger.info('sandbox runtime: each pod in its own mount, PID, IPC and UTS namespaces, the host file system read-only');
    return sandbox;
  }
  if (options.runtime === 'sandbox') throw new Error(`--runtime=sandbox is not possible on this machine: ${reason}`);
  logger.warn(`the sandbox runtime is not possible on this machine (${reason}): using the process runtime, where pods run as plain host processes`);
  return hostIsolation;
}

/** The cgroups of containers, when the agent may write some (limits are then enforced). */
async function containerCgroups(options: NodeAgentOptions, logger: Logger): Promise<CgroupDriver | undefined> {
  const cgroups = await detectCgroups(`orch-${options.hostname}`);
  if (cgroups.driver) logger.info('container limits and usage from cgroups', { version: cgroups.driver.version, base: cgroups.driver.base });
  else logger.warn('no cgroups for containers: memory and CPU limits are not enforced and stats come from /proc', { reason: cgroups.reason });
  return cgroups.driver;
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

/** What the process runtime is built from (the providers of {@link processRuntimeProviders}). */
interface ProcessRuntimeParts {
  options: NodeAgentOptions;
  ctx: NodeAgentContext;
  machine: NodeMachine;
  informers: AgentInformers;
  queue: PodQueue;
  recorder: EventRecorder;
  sources: VolumeSources;
  tokens: PodTokens;
  isolation: Isolation;
  cgroups: CgroupDriver | undefined;
}

/** The `process` / `sandbox` runtime: real host processes, isolated as {@link ISOLATION} says. */
async function processRuntime(p: ProcessRuntimeParts): Promise<ProcessRuntime> {
  const f = p.options.flags;
  const allocatable = nodeAllocatable(nodeCapacity(p.machine.info, await p.machine.usage(), f['max-pods']), p.options.reserved, p.options.thresholds);
  return new ProcessRuntime({
    isolation: p.isolation,
    cgroups: p.cgroups,
    rootDir: p.options.rootDir,
    nodeName: p.options.hostname,
    hostIP: p.options.nodeIp,
    ips: new PodIpAllocator(f['pod-cidr'] || defaultPodCidr(p.options.hostname)),
    source: p.sources,
    token: p.tokens.token,
    rootCaPem: p.ctx.clientConfig.caPem ?? '',
    nodeAllocatable: () => allocatable,
    entrypoints: await loadEntrypointTable(f['image-entrypoints']),
    services: () => p.informers.services?.list() ?? [],
    gateway: gatewayAddress(p.ctx.clientConfig.server),
    log: { maxBytes: Quantity.parse(f['container-log-max-size']).value(), maxFiles: Math.max(1, f['container-log-max-files']) },
    backoff: { initialMs: f['restart-backoff-initial'], maxMs: f['restart-backoff-max'] },
    syncFrequencyMs: f['sync-frequency'],
    logger: p.ctx.logger.with({ runtime: 'process' }),
    onChange: (key) => p.queue.add(key),
    event: (pod, container, kind, type, reason, action, note) =>
      p.recorder.event(
        { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid, fieldPath: `spec.${CONTAINER_FIELDS[kind]}{${container}}` },
        type,
        reason,
        action,
        note,
      ),
  });
}

/** The providers of the process runtimes: isolation, cgroups, the volume and token managers, and the runtime. */
function processRuntimeProviders(): Provider[] {
  const ctxAndOptions = [NodeAgentOptions, COMPONENT_CONTEXT];
  return [
    VolumeSources,
    PodTokens,
    { provide: ISOLATION, useFactory: (options: NodeAgentOptions, ctx: NodeAgentContext) => chooseIsolation(options, ctx.logger), inject: ctxAndOptions },
    { provide: CGROUPS, useFactory: (options: NodeAgentOptions, ctx: NodeAgentContext) => containerCgroups(options, ctx.logger), inject: ctxAndOptions },
    {
      provide: RUNTIME,
      useFactory: (
        options: NodeAgentOptions,
        ctx: NodeAgentContext,
        machine: NodeMachine,
        informers: AgentInformers,
        queue: PodQueue,
        recorder: EventRecorder,
        sources: VolumeSources,
        tokens: PodTokens,
        isolation: Isolation,
        cgroups: CgroupDriver | undefined,
      ) => processRuntime({ options, ctx, machine, informers, queue, recorder, sources, tokens, isolation, cgroups }),
      inject: [...ctxAndOptions, NodeMachine, AgentInformers, PodQueue, EventRecorder, VolumeSources, PodTokens, ISOLATION, CGROUPS],
    },
  ];
}

/**
 * The runtime's lifecycle: at start, containers an earlier agent left are found (those of pods
 * still bound here are adopted when their pod syncs, the rest stopped); at shutdown, after the
 * pod and node loops ended, every container is stopped within --shutdown-grace-period, then
 * the events still queued are sent.
 */
@Injectable()
class RuntimeLifecycle implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  constructor(
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(NodeAgentOptions) private readonly options: NodeAgentOptions,
    @Inject(COMPONENT_CONTEXT) private readonly ctx: NodeAgentContext,
    @Inject(EventRecorder) private readonly recorder: EventRecorder,
  ) {}

  async onModuleInit(): Promise<void> {
    const runtime = this.runtime;
    new Gauge({ name: 'node_agent_running_pods', help: 'Pods the runtime knows.', registers: [this.ctx.metrics], collect() { this.set(runtime.podUids().length); } });
    if (!(runtime instanceof ProcessRuntime)) return;
    const running = await runtime.findLeftovers();
    if (running) this.ctx.logger.info('found containers an earlier agent started; those of pods still bound here are adopted, the rest stopped', { count: running });
  }

  async beforeApplicationShutdown(): Promise<void> {
    const grace = this.options.flags['shutdown-grace-period'];
    this.ctx.logger.info('stopping containers', { gracePeriod: grace });
    await this.runtime.shutdown(grace);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.recorder.stop();
  }
}

/**
 * The pod runtime `--runtime` chose, for the whole application (global): `simulated` (fake
 * nodes, nothing runs), or real host processes isolated as `process`, `sandbox` or `auto` say,
 * with the volume and token managers they read config maps, secrets and tokens through.
 * Other modules inject {@link RUNTIME}.
 */
@Module({})
export class RuntimeModule {
  static forRoot(options: NodeAgentOptions): DynamicModule {
    const runtime: Provider[] = options.simulated ? [{ provide: RUNTIME, useFactory: () => new SimulatedRuntime(options.nodeIp) }] : processRuntimeProviders();
    const recorder: Provider = {
      provide: EventRecorder,
      useFactory: (ctx: NodeAgentContext) => new EventRecorder({ client: ctx.client, reportingController: 'orch.io/node-agent', reportingInstance: `node-agent-${options.hostname}`, logger: ctx.logger }),
      inject: [COMPONENT_CONTEXT],
    };
    return { module: RuntimeModule, global: true, providers: [recorder, ...runtime, RuntimeLifecycle], exports: [RUNTIME] };
  }
}
