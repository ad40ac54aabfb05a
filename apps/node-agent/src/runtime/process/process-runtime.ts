import { constants as fsConstants } from 'node:fs';
import { access, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { coreV1 } from '@orch/api';
import { Quantity, formatTime, parseTime } from '@orch/apimachinery';
import type { Logger } from '@orch/server-common';
import { DEFAULT_TERMINATION_GRACE_SECONDS, type Container, type ContainerStateTerminated, type Pod, type Service } from '../../api/types';
import type { PodIpAllocator } from '../../node/pod-cidr';
import type { StreamOptions, StreamTarget } from '../../streaming/remote-command';
import { StreamError, podKey, type ContainerKind, type PodRuntimeState, type Runtime, type SyncResult } from '../runtime';
import type { Cgroup, CgroupDriver, CgroupLimits, CgroupUsage } from '../sandbox/cgroups';
import { ContainerRecord, type LaunchSpec } from './container';
import { ContainerConfigError, containerEnv, expandVars, type ObjectSource, type PodFacts } from './env';
import { hostIsolation, type Isolation } from './isolation';
import type { LogWriterOptions } from './logs';
import { commandLine, type EntrypointTable } from './entrypoints';
import { SpawnError, exitCodeOf, spawnProcess } from './spawn';
import { serviceLinkEnv } from './service-env';
import { VolumeError, containerRoot, materializeVolumes } from './volumes';
import { leftoverInstances, readExitCode, shimAlive, signalGroup, type InstanceState } from './shim';

export interface ProcessRuntimeOptions {
  /** `<root-dir>`; pods live in `<root-dir>/pods/<uid>`. */
  rootDir: string;
  nodeName: string;
  hostIP: string;
  ips: PodIpAllocator;
  source: ObjectSource;
  /** A service-account token for the pod (TokenRequest), or undefined when none can be had. */
  token(pod: Pod, audience: string | undefined, expirationSeconds: number): Promise<string | undefined>;
  rootCaPem: string;
  nodeAllocatable(): Record<string, string>;
  /** What images run when a container names no command (--image-entrypoints). */
  entrypoints: EntrypointTable;
  /** The Services whose link variables containers get (the informer's cache; see service-env.ts). */
  services?: () => readonly Service[];
  /** The gateway's host and port: ORCH_SERVICE_HOST / ORCH_SERVICE_PORT while the `default/orch` Service is not known. */
  gateway?: { host: string; port: string };
  log: LogWriterOptions;
  backoff: { initialMs: number; maxMs: number };
  /** Volumes of running pods are refreshed this often. */
  syncFrequencyMs: number;
  logger: Logger;
  /** Called with the pod key whenever something of the pod changed (exit, probe, ...). */
  onChange(key: string): void;
  /** Records an Event about a container of a pod. */
  event(pod: Pod, container: string, kind: ContainerKind, type: 'Normal' | 'Warning', reason: string, action: string, note: string): void;
  /** How containers are isolated (default: plain host processes). */
  isolation?: Isolation;
  /** Control groups for limits and usage, when the machine gives the agent some. */
  cgroups?: CgroupDriver;
}

/** One pod in the process runtime. */
interface PodRecord {
  uid: string;
  key: string;
  namespace: string;
  name: string;
  dir: string;
  ip: string;
  startTime: string;
  sandboxReady: boolean;
  volumes?: Map<string, string>;
  volumesSyncedAt: number;
  containers: Map<string, ContainerRecord>;
  /** Containers may not be (re)started any more: the pod is being stopped. */
  terminating: boolean;
  failed?: { reason: string; message: string };
  pod: Pod;
}

const recordKey = (kind: ContainerKind, name: string) => `${kind}/${name}`;

/** Quantities of a container's resources as cgroup limits (requests default to limits, as the API does). */
export function cgroupLimits(c: Container): CgroupLimits {
  const q = (v: string | number | undefined) => {
    if (v === undefined) return undefined;
    try {
      return Quantity.parse(String(v));
    } catch {
      return undefined;
    }
  };
  const cpuLimit = q(c.resources?.limits?.cpu);
  const cpuRequest = q(c.resources?.requests?.cpu) ?? cpuLimit;
  const mem = q(c.resources?.limits?.memory);
  return {
    ...(cpuLimit && !cpuLimit.isZero() ? { cpuLimitMillis: cpuLimit.milliValue() } : {}),
    ...(cpuRequest && !cpuRequest.isZero() ? { cpuRequestMillis: cpuRequest.milliValue() } : {}),
    ...(mem && !mem.isZero() ? { memoryLimitBytes: Math.ceil(mem.asApproximateFloat()) } : {}),
  };
}

/** Whether `name` is an executable file in one of the `PATH` directories (the host's binaries are the containers'). */
async function findInPath(name: string, path: string): Promise<boolean> {
  if (!name) return false;
  for (const dir of path.split(':').filter(Boolean)) {
    try {
      await access(join(dir, name), fsConstants.X_OK);
      return true;
    } catch {
      // next
    }
  }
  return false;
}

/** Joins the cgroups listed before `--` (pid files), then runs the rest. */
const JOIN_CGROUPS = 'while [ "$#" -gt 0 ] && [ "$1" != -- ]; do echo $$ > "$1" || exit 126; shift; done; shift; exec "$@"';


/** A container instance an earlier agent started (shim.ts), by container key. */
type Leftovers = Map<string, { runDir: string; state: InstanceState }>;

/**
 * Runs pods as host processes (the `process` runtime). Per pod: an address from the node's
 * loopback range, `<root-dir>/pods/<uid>` with volumes materialized as files, container roots
 * with the mounts, and one process group per container. Init containers run one at a time,
 * in order; then every container starts; restarts follow restartPolicy with back-off;
 * probes decide readiness and kill unhealthy containers.
 */
export class ProcessRuntime implements Runtime {
  private readonly isolation: Isolation;
  /** The cgroup of each container (`<uid>/<kind>/<name>`), once it started. */
  private readonly groups = new Map<string, Cgroup>();
  private readonly pods = new Map<string, PodRecord>();
  /** Instances an earlier agent left, by pod uid, until their pod is synced (adopted) or known gone (killed). */
  private readonly leftovers = new Map<string, Leftovers>();

  constructor(private readonly opts: ProcessRuntimeOptions) {
    this.isolation = opts.isolation ?? hostIsolation;
  }

  get name(): 'process' | 'sandbox' {
    return this.isolation.name;
  }

  podCidr(): string {
    return this.opts.ips.cidr;
  }

  podUids(): string[] {
    return [...this.pods.keys()];
  }

  /** The container record of a pod (for logs and stats). */
  container(uid: string, name: string): ContainerRecord | undefined {
    const rec = this.pods.get(uid);
    return rec?.containers.get(recordKey('main', name)) ?? rec?.containers.get(recordKey('init', name)) ?? rec?.containers.get(recordKey('ephemeral', name));
  }

  private cgroupPath(uid: string, kind: ContainerKind, name: string): string[] {
    return [`pod${uid}`, `${kind}-${name}`];
  }

  /** CPU and memory of a container from its cgroup (undefined without cgroups or before it started). */
  async containerUsage(uid: string, name: string): Promise<CgroupUsage | undefined> {
    const cr = this.container(uid, name);
    return cr ? this.groups.get(`${uid}/${cr.kind}/${name}`)?.usage() : undefined;
  }

  /** Whether container stats come from cgroups. */
  get hasCgroups(): boolean {
    return !!this.opts.cgroups;
  }

  /**
   * Finds the container instances an earlier agent started (after a crash or kill -9 of that
   * agent they keep running): the first sync of their pod adopts the running ones, and
   * removeUnknownPodDirs kills those of pods no longer bound here. Returns how many still run.
   */
  async findLeftovers(): Promise<number> {
    const podsDir = join(this.opts.rootDir, 'pods');
    let running = 0;
    for (const uid of await readdir(podsDir).catch(() => [] as string[])) {
      const found = await leftoverInstances(join(podsDir, uid));
      if (found.size === 0) continue;
      this.leftovers.set(uid, found);
      for (const l of found.values()) {
        if (!shimAlive(l.state)) continue;
        running++;
        // Its address is taken before any pod syncs: a pod synced first (one created while no
        // agent ran) would otherwise get it, and the adopted container would listen on an
        // address its probes and Endpoints no longer use.
        if (l.state.podIP && l.state.podIP !== this.opts.hostIP) this.opts.ips.allocate(uid, l.state.podIP);
      }
    }
    return running;
  }

  /** Kills the leftover instances of a pod (SIGTERM, SIGKILL after graceSeconds) and forgets them. */
  private async killLeftovers(uid: string, graceSeconds: number): Promise<void> {
    const left = [...(this.leftovers.get(uid)?.values() ?? [])].filter((l) => shimAlive(l.state));
    this.leftovers.delete(uid);
    if (left.length === 0) return;
    for (const l of left) signalGroup(l.state.shimPid, graceSeconds > 0 ? 'SIGTERM' : 'SIGKILL');
    const deadline = Date.now() + graceSeconds * 1000;
    while (left.some((l) => shimAlive(l.state)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    for (const l of left) if (shimAlive(l.state)) signalGroup(l.state.shimPid, 'SIGKILL');
  }

  /** Removes the directories of pods the agent does not know (after a restart), killing what they left running. */
  async removeUnknownPodDirs(keep: ReadonlySet<string>): Promise<void> {
    const podsDir = join(this.opts.rootDir, 'pods');
    for (const uid of await readdir(podsDir).catch(() => [] as string[])) {
      if (keep.has(uid) || this.pods.has(uid)) continue;
      await this.killLeftovers(uid, 0);
      this.opts.ips.release(uid);
      await this.isolation.releasePod(uid, join(podsDir, uid));
      await this.opts.cgroups?.remove([`pod${uid}`]);
      await rm(join(podsDir, uid), { recursive: true, force: true });
    }
  }

  /**
   * Adopts the pod's instances an earlier agent left (once, at its first sync after a
   * restart): running ones continue as they are; one that ended while no agent ran is
   * recorded with the exit code its shim wrote, and restarts as its policy says.
   */
  private async adoptLeftovers(rec: PodRecord, facts: PodFacts): Promise<void> {
    const left = this.leftovers.get(rec.uid);
    if (!left) return;
    this.leftovers.delete(rec.uid);
    for (const { spec, kind } of this.allContainers(rec.pod)) {
      const l = left.get(recordKey(kind, spec.name));
      if (!l) continue;
      const cr = this.record(rec, spec, kind);
      if (shimAlive(l.state)) {
        cr.adopt(l.state, await this.adoptedLaunchSpec(rec, cr, facts), { podIP: rec.ip, ports: spec.ports ?? [] });
        this.opts.logger.info('adopted a running container started by an earlier agent', { pod: rec.key, container: spec.name, pid: l.state.pid, restartCount: l.state.restartCount });
        continue;
      }
      const code = readExitCode(l.runDir);
      const ended: ContainerStateTerminated = {
        exitCode: code ?? 137,
        reason: code === 0 ? 'Completed' : 'Error',
        ...(code === undefined ? { message: 'the container ended while no node agent ran; its exit code is unknown' } : {}),
        startedAt: l.state.startedAt,
        finishedAt: formatTime(new Date()),
        containerID: `process://${l.state.pid}`,
      };
      cr.restore(l.state.restartCount, cr.lastTerminated, ended);
    }
  }

  async syncPod(pod: Pod): Promise<SyncResult> {
    const rec = await this.ensureRecord(pod);
    rec.pod = pod;
    if (rec.terminating || rec.failed) return {};
    const deadline = this.deadlineMs(rec);
    if (deadline !== undefined && deadline <= 0) {
      rec.failed = { reason: 'DeadlineExceeded', message: `Pod was active on the node longer than the specified deadline` };
      for (const c of rec.containers.values()) c.kill(pod.spec.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_SECONDS);
      return {};
    }
    const facts = this.facts(rec);
    if (!rec.volumes || Date.now() - rec.volumesSyncedAt >= this.opts.syncFrequencyMs) {
      try {
        const { paths, unsupported } = await materializeVolumes({ pod, facts, source: this.opts.source, podDir: rec.dir, rootCaPem: this.opts.rootCaPem, token: (aud, exp) => this.opts.token(pod, aud, exp) });
        if (unsupported.length && !rec.volumes) this.opts.logger.warn('volume types not supported by the process runtime; using empty directories', { pod: rec.key, volumes: unsupported });
        rec.volumes = paths;
        rec.volumesSyncedAt = Date.now();
        rec.sandboxReady = true;
        await this.adoptLeftovers(rec, facts);
      } catch (err) {
        if (!(err instanceof VolumeError) || rec.volumes) throw err;
        for (const c of this.allContainers(pod)) this.record(rec, c.spec, c.kind).waiting = { reason: 'ContainerCreating', message: err.message };
        this.opts.logger.warn('cannot set up volumes; retrying', { pod: rec.key, err: err.message });
        return { requeueAfterMs: 5_000 };
      }
    }
    const policy = pod.spec.restartPolicy ?? 'Always';
    let requeue: number | undefined = deadline;
    const wait = (ms: number | undefined) => {
      if (ms !== undefined) requeue = requeue === undefined ? ms : Math.min(requeue, ms);
    };

    // Init containers: one at a time, in order, each to a successful end.
    for (const c of pod.spec.initContainers ?? []) {
      const cr = this.record(rec, c, 'init');
      if (cr.running) return { requeueAfterMs: requeue };
      const end = cr.exited;
      if (end?.exitCode === 0) continue;
      if (end && policy === 'Never') return {};
      wait(await this.start(rec, cr, facts));
      return { requeueAfterMs: requeue };
    }

    for (const c of pod.spec.containers) {
      const cr = this.record(rec, c, 'main');
      if (cr.running) {
        const why = cr.unhealthy;
        if (why) {
          const probe = why.startsWith('Startup') ? c.startupProbe : c.livenessProbe;
          this.opts.logger.info('killing unhealthy container; it will be restarted', { pod: rec.key, container: c.name, reason: why });
          this.opts.event(pod, c.name, 'main', 'Normal', 'Killing', 'KillContainer', `Container ${c.name} ${why.startsWith('Startup') ? 'failed startup probe' : 'failed liveness probe'}, will be restarted`);
          cr.kill(probe?.terminationGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_SECONDS);
        }
        continue;
      }
      const end = cr.exited;
      if (end && !(policy === 'Always' || (policy === 'OnFailure' && end.exitCode !== 0))) continue;
      wait(await this.start(rec, cr, facts));
    }

    // Ephemeral containers start once, when added, and are never restarted.
    for (const c of pod.spec.ephemeralContainers ?? []) {
      const cr = this.record(rec, c, 'ephemeral');
      if (cr.everStarted || cr.waiting?.reason === 'CreateContainerConfigError') continue;
      wait(await this.start(rec, cr, facts));
    }
    return { requeueAfterMs: requeue };
  }

  /** Starts (or restarts, after back-off) a container; returns how long to wait when in back-off. */
  private async start(rec: PodRecord, cr: ContainerRecord, facts: PodFacts): Promise<number | undefined> {
    const pod = rec.pod;
    const launch = async (): Promise<LaunchSpec> => this.launchSpec(rec, cr, facts);
    try {
      const d = await cr.tryStart(launch, { podIP: rec.ip, ports: cr.spec.ports ?? [] }, this.opts.backoff, `${pod.metadata.name}_${pod.metadata.namespace}(${rec.uid})`);
      return d.started ? undefined : d.waitMs;
    } catch (err) {
      if (!(err instanceof ContainerConfigError || err instanceof VolumeError)) throw err;
      cr.waiting = { reason: 'CreateContainerConfigError', message: err.message };
      this.opts.event(pod, cr.name, cr.kind, 'Warning', 'Failed', 'StartContainer', `Error: ${err.message}`);
      return 10_000;
    }
  }

  /** The launch spec of a container being adopted (for its probes); without its env when that cannot be built now. */
  private async adoptedLaunchSpec(rec: PodRecord, cr: ContainerRecord, facts: PodFacts): Promise<LaunchSpec> {
    try {
      return await this.launchSpec(rec, cr, facts);
    } catch (err) {
      if (!(err instanceof ContainerConfigError || err instanceof VolumeError)) throw err;
      const root = await containerRoot(rec.pod, rec.dir, cr.spec, rec.volumes ?? new Map(), cr.kind);
      return { command: cr.spec.command ?? [], env: {}, cwd: cr.spec.workingDir || root, root };
    }
  }

  private async launchSpec(rec: PodRecord, cr: ContainerRecord, facts: PodFacts): Promise<LaunchSpec> {
    const c = cr.spec;
    const line = commandLine(c, this.opts.entrypoints);
    const pod = rec.pod;
    await this.isolation.preparePod(pod, rec.dir, rec.ip);
    const target = cr.kind === 'ephemeral' ? (c as coreV1.EphemeralContainer).targetContainerName : undefined;
    const targetPid = target ? this.container(rec.uid, target)?.live?.pid : undefined;
    const view = await this.isolation.container({
      pod,
      podDir: rec.dir,
      podIP: rec.ip,
      kind: cr.kind,
      container: c,
      volumes: rec.volumes ?? new Map(),
      sharePidWith: targetPid !== undefined ? await this.isolation.namespacePid(targetPid) : undefined,
    });
    const base: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: view.root,
      HOSTNAME: pod.spec.hostname ?? pod.metadata.name ?? '',
      POD_NAME: pod.metadata.name ?? '',
      POD_NAMESPACE: pod.metadata.namespace ?? '',
      POD_UID: rec.uid,
      POD_IP: rec.ip,
      NODE_NAME: this.opts.nodeName,
      HOST_IP: this.opts.hostIP,
      ORCH_CONTAINER_ROOT: view.root,
      ...(c.tty ? { TERM: 'xterm' } : {}),
      ...(this.opts.gateway ? { ORCH_SERVICE_HOST: this.opts.gateway.host, ORCH_SERVICE_PORT: this.opts.gateway.port } : {}),
      // Service links (upstream): ORCH_SERVICE_HOST / KUBERNETES_SERVICE_HOST from the API Services, and the pod namespace's Services.
      ...serviceLinkEnv(pod, this.opts.services?.() ?? []),
    };
    const env = await containerEnv(pod, c, facts, this.opts.source, base);
    const lookup = (n: string) => env[n];
    const command = line.map((a) => expandVars(a, lookup));
    const { argv, cwd } = await view.launch(command);
    const spec: LaunchSpec = { command: argv, env, cwd, root: view.root, terminationLog: view.terminationLog };
    const cgroups = this.opts.cgroups;
    if (!cgroups) return spec;
    const group = await cgroups.ensure(this.cgroupPath(rec.uid, cr.kind, c.name), cgroupLimits(c));
    this.groups.set(`${rec.uid}/${cr.kind}/${c.name}`, group);
    const oomBefore = await group.oomKills();
    return {
      ...spec,
      command: ['sh', '-c', JOIN_CGROUPS, 'orch-join', ...group.procsFiles, '--', ...argv],
      // An OOM kill in the container's cgroup names the end, whatever process the kernel chose.
      exitReason: async (exitCode) => ((await group.oomKills()) > oomBefore ? { reason: 'OOMKilled', exitCode } : undefined),
    };
  }

  /**
   * Runs a command beside a running container: the container's environment, its working
   * directory, its namespaces (sandbox) and its cgroup. The process ends when the client
   * leaves (SIGKILL to its group).
   */
  async exec(uid: string, name: string, command: string[], opts: StreamOptions): Promise<StreamTarget> {
    const { cr, live } = this.liveContainer(uid, name);
    if (!command[0]?.includes('/') && !(await findInPath(command[0] ?? '', live.launch.env.PATH ?? ''))) {
      return { done: Promise.resolve({ error: `failed to exec in container: exec: ${JSON.stringify(command[0] ?? '')}: executable file not found in $PATH` }), abort: () => undefined };
    }
    let where: { argv: string[]; cwd: string };
    try {
      where = await this.isolation.exec(live.pid, live.launch.cwd, command, opts.tty);
    } catch (err) {
      throw new StreamError(400, `container ${name} is not running: ${(err as Error).message}`);
    }
    const join = this.opts.cgroups ? await this.opts.cgroups.ensure(this.cgroupPath(uid, cr.kind, name), cgroupLimits(cr.spec)) : undefined;
    const argv = join ? ['sh', '-c', JOIN_CGROUPS, 'orch-join', ...join.procsFiles, '--', ...where.argv] : where.argv;
    let proc;
    try {
      proc = await spawnProcess(argv, { env: live.launch.env, cwd: where.cwd, stdin: opts.stdin, tty: opts.tty ? { columns: 80, rows: 24 } : undefined });
    } catch (err) {
      if (!(err instanceof SpawnError)) throw err;
      return { done: Promise.resolve({ error: `failed to exec in container: ${err.message}` }), abort: () => undefined };
    }
    return {
      stdin: proc.stdin,
      stdout: proc.stdout,
      stderr: proc.stderr,
      resize: (size) => proc.resize(size.width, size.height),
      done: proc.exited.then((e) => ({ exitCode: exitCodeOf(e) })),
      abort: () => proc.signal('SIGKILL'),
    };
  }

  async attach(uid: string, name: string, opts: StreamOptions): Promise<StreamTarget> {
    const { cr } = this.liveContainer(uid, name);
    if (opts.stdin && !cr.spec.stdin) throw new StreamError(400, `container ${name} of this pod does not keep stdin open (stdin: true is not set)`);
    return cr.attach(opts);
  }

  private liveContainer(uid: string, name: string): { cr: ContainerRecord; live: NonNullable<ContainerRecord['live']> } {
    const cr = this.container(uid, name);
    if (!cr) throw new StreamError(404, `container not found (${JSON.stringify(name)})`);
    const live = cr.live;
    if (!live) throw new StreamError(400, `container ${name} is not running`);
    return { cr, live };
  }

  private record(rec: PodRecord, c: Container, kind: ContainerKind): ContainerRecord {
    const k = recordKey(kind, c.name);
    let cr = rec.containers.get(k);
    if (!cr) {
      cr = new ContainerRecord(c, kind, join(rec.dir, 'logs', c.name), this.opts.log, {
        changed: () => this.opts.onChange(rec.key),
        event: (type, reason, action, note) => this.opts.event(rec.pod, c.name, kind, type, reason, action, note),
        runDir: join(rec.dir, 'run', k.replace('/', '-')),
      });
      this.restore(rec.pod, cr);
      rec.containers.set(k, cr);
    }
    return cr;
  }

  /**
   * Continues from what an earlier agent reported: restart counts and last terminations;
   * finished init containers stay done; a container of a `Never` pod that had started is
   * reported as ended (it was stopped with the earlier agent), others restart.
   */
  private restore(pod: Pod, cr: ContainerRecord): void {
    const list = cr.kind === 'init' ? pod.status?.initContainerStatuses : cr.kind === 'ephemeral' ? pod.status?.ephemeralContainerStatuses : pod.status?.containerStatuses;
    const s = list?.find((x) => x.name === cr.name);
    if (!s) return;
    const { state = {}, lastState = {} } = s;
    if (!state.running && !state.terminated && !lastState.terminated) return;
    const ended = state.terminated;
    if (ended && (cr.init ? ended.exitCode === 0 : true)) {
      cr.restore(s.restartCount, lastState.terminated, ended);
      return;
    }
    if (state.running && (pod.spec.restartPolicy ?? 'Always') === 'Never') {
      const gone: ContainerStateTerminated = { exitCode: 137, reason: 'Error', message: 'the node agent restarted while the container was running', startedAt: state.running.startedAt, finishedAt: formatTime(new Date()) };
      cr.restore(s.restartCount, lastState.terminated, gone);
      return;
    }
    const prior: ContainerStateTerminated = { exitCode: 137, reason: 'Error', message: 'stopped with the node agent', finishedAt: formatTime(new Date()) };
    // The next start counts as a restart of the instance the earlier agent ran.
    cr.restore(s.restartCount, lastState.terminated, state.running ? { ...prior, startedAt: state.running.startedAt } : undefined);
  }

  private async ensureRecord(pod: Pod): Promise<PodRecord> {
    const uid = pod.metadata.uid ?? '';
    let rec = this.pods.get(uid);
    if (rec) return rec;
    const dir = join(this.opts.rootDir, 'pods', uid);
    await mkdir(join(dir, 'run'), { recursive: true });
    // Host-network pods share the node's address (upstream: podIP = hostIP); adopted
    // containers keep the address they listen on (findLeftovers reserved it for their pod).
    const ip = pod.spec.hostNetwork ? this.opts.hostIP : this.opts.ips.allocate(uid, pod.status?.podIP);
    rec = {
      uid,
      key: podKey(pod),
      namespace: pod.metadata.namespace ?? '',
      name: pod.metadata.name ?? '',
      dir,
      ip,
      startTime: pod.status?.startTime ?? formatTime(new Date()),
      sandboxReady: false,
      volumesSyncedAt: 0,
      containers: new Map(),
      terminating: false,
      pod,
    };
    this.pods.set(uid, rec);
    return rec;
  }

  private facts(rec: PodRecord): PodFacts {
    return { podIP: rec.ip, hostIP: this.opts.hostIP, nodeName: this.opts.nodeName, nodeAllocatable: this.opts.nodeAllocatable() };
  }

  /** Milliseconds left before activeDeadlineSeconds, if the pod has one. */
  private deadlineMs(rec: PodRecord): number | undefined {
    const d = rec.pod.spec.activeDeadlineSeconds;
    if (d === undefined) return undefined;
    return parseTime(rec.startTime) + d * 1000 - Date.now();
  }

  private allContainers(pod: Pod): { spec: Container; kind: ContainerKind }[] {
    return [...(pod.spec.initContainers ?? []).map((spec) => ({ spec, kind: 'init' as const })), ...pod.spec.containers.map((spec) => ({ spec, kind: 'main' as const }))];
  }

  async killPod(uid: string, graceSeconds: number): Promise<boolean> {
    const rec = this.pods.get(uid);
    if (!rec) {
      await this.killLeftovers(uid, graceSeconds); // deleted while no agent ran
      return true;
    }
    rec.terminating = true;
    let running = false;
    for (const c of rec.containers.values()) {
      if (!c.running) continue;
      running = true;
      if (!c.stopping) this.opts.event(rec.pod, c.name, c.kind, 'Normal', 'Killing', 'KillContainer', `Stopping container ${c.name}`);
      c.kill(graceSeconds);
    }
    return !running;
  }

  async removePod(uid: string): Promise<void> {
    const rec = this.pods.get(uid);
    if (rec) {
      for (const c of rec.containers.values()) {
        c.kill(0);
        await c.waitExit();
        c.dispose();
      }
      this.pods.delete(uid);
    }
    await this.isolation.releasePod(uid, join(this.opts.rootDir, 'pods', uid));
    await this.opts.cgroups?.remove([`pod${uid}`]);
    for (const k of [...this.groups.keys()]) if (k.startsWith(`${uid}/`)) this.groups.delete(k);
    this.opts.ips.release(uid);
    await rm(join(this.opts.rootDir, 'pods', uid), { recursive: true, force: true });
  }

  podState(uid: string): PodRuntimeState | undefined {
    const rec = this.pods.get(uid);
    if (!rec) return undefined;
    const policy = rec.pod.spec.restartPolicy ?? 'Always';
    return {
      uid,
      namespace: rec.namespace,
      name: rec.name,
      podIP: rec.ip,
      hostIP: this.opts.hostIP,
      startTime: rec.startTime,
      sandboxReady: rec.sandboxReady,
      containers: [...rec.containers.values()].map((c) => {
        const end = c.exited;
        const restarts = !rec.terminating && !!end && c.kind !== 'ephemeral' && (policy === 'Always' || (policy === 'OnFailure' && end.exitCode !== 0)) && !(c.init && end.exitCode === 0);
        return c.state(restarts);
      }),
      ...(rec.failed ? { failed: rec.failed } : {}),
    };
  }

  /**
   * A clean stop of the agent: every container is stopped (SIGTERM, SIGKILL after the grace),
   * then each pod's sandbox (its namespace holder) and cgroups are released, so no process of
   * the agent's pods outlives it. Pod directories stay: a restarted agent runs the pods again.
   */
  async shutdown(graceMs: number): Promise<void> {
    const leftoverUids = [...this.leftovers.keys()];
    await Promise.all(leftoverUids.map((uid) => this.killLeftovers(uid, 0)));
    const all: ContainerRecord[] = [];
    for (const rec of this.pods.values()) {
      rec.terminating = true;
      const grace = Math.min(rec.pod.spec.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_SECONDS, Math.floor(graceMs / 1000));
      for (const c of rec.containers.values()) {
        c.kill(grace);
        all.push(c);
      }
    }
    await Promise.race([Promise.all(all.map((c) => c.waitExit())), new Promise((r) => setTimeout(r, graceMs + 2000).unref())]);
    for (const c of all) c.dispose();
    for (const uid of new Set([...this.pods.keys(), ...leftoverUids])) {
      await this.isolation.releasePod(uid, join(this.opts.rootDir, 'pods', uid));
      await this.opts.cgroups?.remove([`pod${uid}`]);
    }
  }
}
