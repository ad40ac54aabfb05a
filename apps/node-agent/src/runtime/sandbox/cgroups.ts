import { access, mkdir, readFile, readdir, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Control groups for containers: memory and CPU limits enforced by the kernel, and the
 * usage figures `/stats/summary` reports. Works with cgroup v1 (memory, cpu and cpuacct
 * hierarchies) and v2 (one unified hierarchy with the memory and cpu controllers), whichever
 * the machine gives the agent. The agent's groups live below its own cgroup, in
 * `<own>/<name>/pod<uid>/<container>`.
 */

/** Limits of one container (upstream: limits → quota and memory max, requests → shares/weight). */
export interface CgroupLimits {
  /** CPU limit in millicores (CFS quota). */
  cpuLimitMillis?: number;
  /** CPU request in millicores (relative weight). */
  cpuRequestMillis?: number;
  /** Memory limit in bytes (no swap beyond it). */
  memoryLimitBytes?: number;
}

/** What a cgroup has used, as the kernel counts it. */
export interface CgroupUsage {
  /** Cumulative CPU time of every process in the group, nanoseconds. */
  cpuNanos: number;
  memoryUsageBytes: number;
  /** Usage minus inactive file cache (what the OOM killer looks at; upstream workingSet). */
  workingSetBytes: number;
  rssBytes: number;
}

/** One container's group. */
export interface Cgroup {
  /** The files a process writes its pid to, to join the group (one per hierarchy). */
  readonly procsFiles: string[];
  usage(): Promise<CgroupUsage | undefined>;
  /** Processes of the group the kernel's OOM killer killed so far. */
  oomKills(): Promise<number>;
  /** Pids in the group. */
  pids(): Promise<number[]>;
}

/** The agent's cgroups, v1 or v2. */
export interface CgroupDriver {
  readonly version: 1 | 2;
  /** Where the agent's groups are (for messages). */
  readonly base: string;
  /** Creates (or updates) the group at `path` (e.g. ['pod<uid>', 'main-web']) with these limits. */
  ensure(path: string[], limits: CgroupLimits): Promise<Cgroup>;
  /** Removes the group at `path` and everything below it, killing processes still in them (see removeTree). */
  remove(path: string[]): Promise<void>;
}

const CFS_PERIOD_US = 100_000;

async function readText(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch(() => undefined);
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** `key value` lines (memory.stat, cpu.stat, memory.events, memory.oom_control) as numbers. */
export function parseKeyValues(text: string | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of (text ?? '').split('\n')) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined && /^-?\d+$/.test(v)) out[k] = Number(v);
  }
  return out;
}

/** A cgroup mount from /proc/self/mountinfo. */
interface CgroupMount {
  version: 1 | 2;
  mountPoint: string;
  /** The mount's root within the hierarchy (fourth field). */
  root: string;
  /** v1 controllers of the hierarchy. */
  controllers: string[];
}

/** Super options of a v1 cgroup mount that are not controllers. */
const MOUNT_OPTIONS = new Set(['rw', 'ro', 'xattr', 'noprefix', 'clone_children', 'cpuset_v2_mode', 'nosuid', 'nodev', 'noexec', 'relatime']);

/** Parses the cgroup mounts out of /proc/self/mountinfo text. */
export function cgroupMounts(mountinfo: string): CgroupMount[] {
  const out: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const left = line.slice(0, sep).split(' ');
    const [fstype, , superOpts = ''] = line.slice(sep + 3).split(' ');
    const unescape = (s: string) => s.replace(/\\(\d{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
    if (fstype === 'cgroup2') out.push({ version: 2, mountPoint: unescape(left[4]), root: unescape(left[3]), controllers: [] });
    else if (fstype === 'cgroup') out.push({ version: 1, mountPoint: unescape(left[4]), root: unescape(left[3]), controllers: superOpts.split(',').filter((o) => !o.includes('=') && !MOUNT_OPTIONS.has(o)) });
  }
  return out;
}

/** Own cgroup paths from /proc/self/cgroup: by v1 controller, and '' for v2. */
export function ownCgroups(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    if (m[2] === '') out.set('', m[3]);
    else for (const c of m[2].split(',')) out.set(c, m[3]);
  }
  return out;
}

function dirOf(mount: CgroupMount, own: string): string {
  const rel = mount.root !== '/' && own.startsWith(mount.root) ? own.slice(mount.root.length) : own;
  return join(mount.mountPoint, rel);
}

/**
 * Finds writable cgroups for the agent: v2 when the unified hierarchy offers memory and cpu,
 * else v1 memory + cpu + cpuacct. Undefined (with the reason) when the machine has neither
 * or the agent may not write them.
 */
export async function detectCgroups(name: string): Promise<{ driver?: CgroupDriver; reason: string }> {
  const [mountinfo, self] = await Promise.all([readText('/proc/self/mountinfo'), readText('/proc/self/cgroup')]);
  if (!mountinfo || !self) return { reason: 'no /proc/self/mountinfo or /proc/self/cgroup' };
  const mounts = cgroupMounts(mountinfo);
  const own = ownCgroups(self);
  const unified = mounts.find((m) => m.version === 2);
  if (unified && own.has('')) {
    const dir = dirOf(unified, own.get('')!);
    const controllers = (await readText(join(dir, 'cgroup.controllers')))?.trim().split(/\s+/) ?? [];
    if (controllers.includes('memory') && controllers.includes('cpu')) {
      try {
        return { driver: await V2Driver.create(dir, name), reason: '' };
      } catch (err) {
        return { reason: `cgroup v2 at ${dir} is not writable: ${(err as Error).message}` };
      }
    }
  }
  const v1: Record<string, string> = {};
  for (const c of ['memory', 'cpu', 'cpuacct']) {
    const m = mounts.find((x) => x.version === 1 && x.controllers.includes(c));
    if (!m || !own.has(c)) return { reason: `no cgroup v1 ${c} hierarchy and no cgroup v2 with memory and cpu` };
    v1[c] = join(dirOf(m, own.get(c)!), name);
  }
  try {
    for (const d of new Set(Object.values(v1))) await mkdir(d, { recursive: true });
  } catch (err) {
    return { reason: `cgroup v1 is not writable: ${(err as Error).message}` };
  }
  return { driver: new V1Driver(v1.memory, v1.cpu, v1.cpuacct), reason: '' };
}

/** cpu.shares from a request in millicores (upstream MilliCPUToShares: min 2). */
export function cpuShares(millis: number | undefined): number {
  return millis ? Math.max(2, Math.floor((millis * 1024) / 1000)) : 2;
}

/** cgroup v1: memory, cpu and cpuacct hierarchies (exported for tests on fixture directories). */
export class V1Driver implements CgroupDriver {
  readonly version = 1 as const;

  constructor(
    private readonly memory: string,
    private readonly cpu: string,
    private readonly cpuacct: string,
  ) {}

  get base(): string {
    return this.memory;
  }

  private dirs(path: string[]): string[] {
    return [...new Set([this.memory, this.cpu, this.cpuacct])].map((d) => join(d, ...path));
  }

  async ensure(path: string[], limits: CgroupLimits): Promise<Cgroup> {
    for (const d of this.dirs(path)) await mkdir(d, { recursive: true });
    const mem = join(this.memory, ...path);
    const cpu = join(this.cpu, ...path);
    const acct = join(this.cpuacct, ...path);
    if (limits.memoryLimitBytes !== undefined) {
      await writeFile(join(mem, 'memory.limit_in_bytes'), String(limits.memoryLimitBytes));
      // Without a swap limit equal to it, a process over its limit swaps instead of being killed.
      if (await exists(join(mem, 'memory.memsw.limit_in_bytes'))) await writeFile(join(mem, 'memory.memsw.limit_in_bytes'), String(limits.memoryLimitBytes)).catch(() => undefined);
    }
    await writeFile(join(cpu, 'cpu.cfs_period_us'), String(CFS_PERIOD_US));
    await writeFile(join(cpu, 'cpu.cfs_quota_us'), limits.cpuLimitMillis ? String(Math.max(1000, Math.floor((limits.cpuLimitMillis * CFS_PERIOD_US) / 1000))) : '-1');
    await writeFile(join(cpu, 'cpu.shares'), String(cpuShares(limits.cpuRequestMillis)));
    return {
      procsFiles: this.dirs(path).map((d) => join(d, 'cgroup.procs')),
      async usage() {
        const [cpuNs, usage, stat] = await Promise.all([readText(join(acct, 'cpuacct.usage')), readText(join(mem, 'memory.usage_in_bytes')), readText(join(mem, 'memory.stat'))]);
        if (cpuNs === undefined || usage === undefined) return undefined;
        const s = parseKeyValues(stat);
        const used = Number(usage.trim());
        const inactive = s.total_inactive_file ?? s.inactive_file ?? 0;
        return { cpuNanos: Number(cpuNs.trim()), memoryUsageBytes: used, workingSetBytes: Math.max(0, used - inactive), rssBytes: s.total_rss ?? s.rss ?? 0 };
      },
      async oomKills() {
        return parseKeyValues(await readText(join(mem, 'memory.oom_control'))).oom_kill ?? 0;
      },
      pids: () => readPids(join(mem, 'cgroup.procs')),
    };
  }

  async remove(path: string[]): Promise<void> {
    for (const d of this.dirs(path)) await removeTree(d);
  }
}

/** cgroup v2: one unified hierarchy (exported for tests on fixture directories). */
export class V2Driver implements CgroupDriver {
  readonly version = 2 as const;

  private constructor(readonly base: string) {}

  /**
   * Enables memory and cpu for the agent's subtree. A v2 group with processes cannot hand
   * controllers to children, so when the agent's own group holds it, the agent first moves
   * itself into a leaf `<own>/node-agent`.
   */
  static async create(own: string, name: string): Promise<V2Driver> {
    const enable = (dir: string) => writeFile(join(dir, 'cgroup.subtree_control'), '+memory +cpu');
    try {
      await enable(own);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EBUSY') throw err;
      const leaf = join(own, `${name}-self`);
      await mkdir(leaf, { recursive: true });
      await writeFile(join(leaf, 'cgroup.procs'), String(process.pid));
      await enable(own);
    }
    const base = join(own, name);
    await mkdir(base, { recursive: true });
    await enable(base);
    return new V2Driver(base);
  }

  async ensure(path: string[], limits: CgroupLimits): Promise<Cgroup> {
    let dir = this.base;
    for (let i = 0; i < path.length; i++) {
      dir = join(dir, path[i]);
      await mkdir(dir, { recursive: true });
      if (i < path.length - 1) await writeFile(join(dir, 'cgroup.subtree_control'), '+memory +cpu').catch(() => undefined);
    }
    const weight = Math.round(1 + ((cpuShares(limits.cpuRequestMillis) - 2) * 9999) / 262142);
    await writeFile(join(dir, 'cpu.weight'), String(Math.min(10000, Math.max(1, weight))));
    await writeFile(join(dir, 'cpu.max'), limits.cpuLimitMillis ? `${Math.max(1000, Math.floor((limits.cpuLimitMillis * CFS_PERIOD_US) / 1000))} ${CFS_PERIOD_US}` : `max ${CFS_PERIOD_US}`);
    await writeFile(join(dir, 'memory.max'), limits.memoryLimitBytes !== undefined ? String(limits.memoryLimitBytes) : 'max');
    if (limits.memoryLimitBytes !== undefined) await writeFile(join(dir, 'memory.swap.max'), '0').catch(() => undefined);
    const leaf = dir;
    return {
      procsFiles: [join(leaf, 'cgroup.procs')],
      async usage() {
        const [cpu, current, stat] = await Promise.all([readText(join(leaf, 'cpu.stat')), readText(join(leaf, 'memory.current')), readText(join(leaf, 'memory.stat'))]);
        if (cpu === undefined || current === undefined) return undefined;
        const s = parseKeyValues(stat);
        const used = Number(current.trim());
        return { cpuNanos: (parseKeyValues(cpu).usage_usec ?? 0) * 1000, memoryUsageBytes: used, workingSetBytes: Math.max(0, used - (s.inactive_file ?? 0)), rssBytes: s.anon ?? 0 };
      },
      async oomKills() {
        return parseKeyValues(await readText(join(leaf, 'memory.events'))).oom_kill ?? 0;
      },
      pids: () => readPids(join(leaf, 'cgroup.procs')),
    };
  }

  async remove(path: string[]): Promise<void> {
    await removeTree(join(this.base, ...path));
  }
}

async function readPids(file: string): Promise<number[]> {
  return ((await readText(file)) ?? '')
    .split('\n')
    .filter(Boolean)
    .map(Number);
}

/** First wait before retrying the removal of a busy group; doubled up to REMOVE_RETRY_LAST_MS (about 2.5 s in all). */
const REMOVE_RETRY_FIRST_MS = 10;
const REMOVE_RETRY_LAST_MS = 1280;

/**
 * Removes a cgroup directory and its child groups, deepest first. A group the kernel calls busy
 * still holds processes (what is left of a stopped pod: the last processes of a PID namespace
 * are still being ended when its init has exited): they are killed and the removal retried,
 * as runc does, for about 2.5 s; a group still busy then is left.
 */
async function removeTree(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) if (e.isDirectory()) await removeTree(join(dir, e.name));
  for (let waitMs = REMOVE_RETRY_FIRST_MS; ; waitMs *= 2) {
    const err = await rmdir(dir).then(
      () => undefined,
      (e: NodeJS.ErrnoException) => e,
    );
    if (err?.code !== 'EBUSY' || waitMs > REMOVE_RETRY_LAST_MS) return;
    for (const pid of await readPids(join(dir, 'cgroup.procs'))) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await new Promise((r) => setTimeout(r, waitMs));
  }
}
