import { readFile, readdir, statfs } from 'node:fs/promises';
import { arch, cpus, freemem, hostname, networkInterfaces, platform, release, totalmem, version } from 'node:os';

/** Go's GOARCH for Node's `process.arch` (the value of the orch.io/arch label). */
export function goArch(nodeArch: string = arch()): string {
  const map: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64', loong64: 'loong64', mips: 'mips', mipsel: 'mipsle' };
  return map[nodeArch] ?? nodeArch;
}

/** Go's GOOS for Node's `process.platform` (the value of the orch.io/os label). */
export function goOs(nodePlatform: string = platform()): string {
  return nodePlatform === 'win32' ? 'windows' : nodePlatform;
}

/** The machine's host name as a node name: lower case (upstream lowercases it too). */
export function machineHostname(): string {
  return hostname().toLowerCase();
}

/** First non-internal IPv4 address of the machine, else 127.0.0.1. */
export function defaultNodeIp(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

/** Static facts about the machine (upstream cAdvisor MachineInfo, reduced). */
export interface MachineInfo {
  numCores: number;
  memoryCapacityBytes: number;
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  osImage: string;
  operatingSystem: string;
  architecture: string;
}

/** Usage figures that change (memory, the root-dir file system, process ids). */
export interface MachineUsage {
  memoryAvailableBytes: number;
  memoryTotalBytes: number;
  fsCapacityBytes: number;
  fsAvailableBytes: number;
  fsInodes: number;
  fsInodesFree: number;
  pidsMax: number;
  pidsRunning: number;
}

async function readTrimmed(path: string): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return '';
  }
}

/** Reads machine facts from the OS (Linux /etc and /proc where present). */
export async function machineInfo(): Promise<MachineInfo> {
  const osRelease = await readTrimmed('/etc/os-release');
  const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(osRelease)?.[1];
  return {
    numCores: cpus().length,
    memoryCapacityBytes: totalmem(),
    machineID: (await readTrimmed('/etc/machine-id')) || hostname(),
    systemUUID: (await readTrimmed('/sys/class/dmi/id/product_uuid')) || (await readTrimmed('/etc/machine-id')) || hostname(),
    bootID: await readTrimmed('/proc/sys/kernel/random/boot_id'),
    kernelVersion: release(),
    osImage: pretty ?? version(),
    operatingSystem: goOs(),
    architecture: goArch(),
  };
}

/** `MemAvailable` from /proc/meminfo (what upstream's memory.available uses), else `os.freemem()`. */
async function memoryAvailable(): Promise<number> {
  const meminfo = await readTrimmed('/proc/meminfo');
  const kb = /^MemAvailable:\s+(\d+) kB$/m.exec(meminfo)?.[1];
  return kb ? Number(kb) * 1024 : freemem();
}

async function pidCounts(): Promise<{ max: number; running: number }> {
  const max = Number(await readTrimmed('/proc/sys/kernel/pid_max')) || 32768;
  try {
    const entries = await readdir('/proc');
    return { max, running: entries.filter((e) => /^\d+$/.test(e)).length };
  } catch {
    return { max, running: 0 };
  }
}

/** Current usage; `dir` selects the file system (the agent's root dir, upstream nodefs). */
export async function machineUsage(dir: string): Promise<MachineUsage> {
  const [memAvail, fs, pids] = await Promise.all([memoryAvailable(), statfs(dir), pidCounts()]);
  return {
    memoryAvailableBytes: memAvail,
    memoryTotalBytes: totalmem(),
    fsCapacityBytes: fs.blocks * fs.bsize,
    fsAvailableBytes: fs.bavail * fs.bsize,
    fsInodes: fs.files,
    fsInodesFree: fs.ffree,
    pidsMax: pids.max,
    pidsRunning: pids.running,
  };
}

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

/** The machine the agent reports on: its facts, and its usage read afresh on each call. */
export class NodeMachine {
  /** When the agent started (the node's stats `startTime`). */
  readonly startedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');

  private constructor(
    readonly info: MachineInfo,
    readonly usage: () => Promise<MachineUsage>,
  ) {}

  /** This machine (usage of the file system holding `rootDir`), or the fixed figures of a simulated node. */
  static async detect(simulated: boolean, rootDir: string): Promise<NodeMachine> {
    if (simulated) return new NodeMachine(SIMULATED_MACHINE, async () => SIMULATED_USAGE);
    return new NodeMachine(await machineInfo(), () => machineUsage(rootDir));
  }

  /** The facts of one node: a simulated node gets its name as machine, system and boot id. */
  infoFor(node: string, simulated: boolean): MachineInfo {
    return simulated ? { ...this.info, machineID: node, systemUUID: node, bootID: node } : this.info;
  }
}
