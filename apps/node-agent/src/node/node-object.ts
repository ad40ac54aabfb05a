import type { coreV1 } from '@orch/api';
import { Quantity, formatTime } from '@orch/apimachinery';
import type { Node, NodeStatus, Taint } from '../api/types';
import { goArch, goOs, type MachineInfo, type MachineUsage } from './machine';

export const LABEL_ARCH = 'orch.io/arch';
export const LABEL_OS = 'orch.io/os';
export const LABEL_HOSTNAME = 'orch.io/hostname';

export const TAINT_MEMORY_PRESSURE = 'node.orch.io/memory-pressure';
export const TAINT_DISK_PRESSURE = 'node.orch.io/disk-pressure';
export const TAINT_PID_PRESSURE = 'node.orch.io/pid-pressure';

/** Version the agent reports as `nodeInfo.kubeletVersion` (the gateway's version). */
export const AGENT_VERSION = 'v1.32.0';

/** One `--eviction-hard` threshold: the signal is under pressure below `quantity` or `percent` of capacity. */
export interface EvictionThreshold {
  signal: 'memory.available' | 'nodefs.available' | 'pid.available';
  quantity?: Quantity;
  percent?: number;
}

/** Parses `memory.available<100Mi`, `nodefs.available<10%`, ... (upstream eviction-hard syntax). */
export function parseEvictionThresholds(items: readonly string[]): EvictionThreshold[] {
  return items.map((item) => {
    const m = /^(memory\.available|nodefs\.available|pid\.available)<(.+)$/.exec(item.trim());
    if (!m) throw new Error(`--eviction-hard ${JSON.stringify(item)}: want <memory.available|nodefs.available|pid.available><<quantity or percent>`);
    const signal = m[1] as EvictionThreshold['signal'];
    if (m[2].endsWith('%')) {
      const percent = Number(m[2].slice(0, -1));
      if (!Number.isFinite(percent) || percent < 0 || percent > 100) throw new Error(`--eviction-hard ${JSON.stringify(item)}: bad percentage`);
      return { signal, percent };
    }
    return { signal, quantity: Quantity.parse(m[2]) };
  });
}

/** Parses `key=value` lists (`--node-labels`, `--system-reserved`). */
export function parseKeyValues(items: readonly string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new Error(`${flag} ${JSON.stringify(item)}: want key=value`);
    out[item.slice(0, eq).trim()] = item.slice(eq + 1).trim();
  }
  return out;
}

/** Parses `--register-with-taints` items `key[=value]:Effect`. */
export function parseTaints(items: readonly string[]): Taint[] {
  return items.map((item) => {
    const m = /^([^=:]+)(?:=([^:]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(item.trim());
    if (!m) throw new Error(`--register-with-taints ${JSON.stringify(item)}: want key[=value]:NoSchedule|PreferNoSchedule|NoExecute`);
    return { key: m[1], ...(m[2] ? { value: m[2] } : {}), effect: m[3] as Taint['effect'] };
  });
}

/** Which pressure conditions hold for `usage`. */
export interface Pressures {
  memory: boolean;
  disk: boolean;
  pid: boolean;
}

/** upstream eviction manager's signal check, for the hard thresholds. */
export function pressuresFor(usage: MachineUsage, thresholds: readonly EvictionThreshold[]): Pressures {
  const under = (available: number, capacity: number, t: EvictionThreshold) =>
    t.percent !== undefined ? available < (capacity * t.percent) / 100 : available < (t.quantity?.value() ?? 0);
  const out: Pressures = { memory: false, disk: false, pid: false };
  for (const t of thresholds) {
    if (t.signal === 'memory.available') out.memory ||= under(usage.memoryAvailableBytes, usage.memoryTotalBytes, t);
    if (t.signal === 'nodefs.available') out.disk ||= under(usage.fsAvailableBytes, usage.fsCapacityBytes, t);
    if (t.signal === 'pid.available') out.pid ||= under(usage.pidsMax - usage.pidsRunning, usage.pidsMax, t);
  }
  return out;
}

const CONDITIONS: { type: string; key?: keyof Pressures; ok: [string, string]; bad: [string, string] }[] = [
  { type: 'MemoryPressure', key: 'memory', ok: ['KubeletHasSufficientMemory', 'node agent has sufficient memory available'], bad: ['KubeletHasInsufficientMemory', 'node agent has insufficient memory available'] },
  { type: 'DiskPressure', key: 'disk', ok: ['KubeletHasNoDiskPressure', 'node agent has no disk pressure'], bad: ['KubeletHasDiskPressure', 'node agent has disk pressure'] },
  { type: 'PIDPressure', key: 'pid', ok: ['KubeletHasSufficientPID', 'node agent has sufficient PID available'], bad: ['KubeletHasInsufficientPID', 'node agent has insufficient PID available'] },
  { type: 'Ready', ok: ['KubeletReady', 'node agent is posting ready status'], bad: ['KubeletNotReady', 'node agent is not ready'] },
];

/**
 * The four node conditions for `pressures` (Ready is True whenever the agent posts). A
 * condition keeps its lastTransitionTime from `previous` while its status is unchanged;
 * lastHeartbeatTime is `now`.
 */
export function nodeConditions(previous: readonly coreV1.NodeCondition[] | undefined, pressures: Pressures, now: Date): coreV1.NodeCondition[] {
  const ts = formatTime(now);
  return CONDITIONS.map((c) => {
    const bad = c.key ? pressures[c.key] : false;
    // Ready is True when healthy; pressure conditions are True when under pressure.
    const status = c.key ? (bad ? 'True' : 'False') : 'True';
    const [reason, message] = bad ? c.bad : c.ok;
    const prev = previous?.find((p) => p.type === c.type);
    return { type: c.type, status, lastHeartbeatTime: ts, lastTransitionTime: prev?.status === status && prev.lastTransitionTime ? prev.lastTransitionTime : ts, reason, message };
  });
}

/**
 * The node's taints with the pressure taints (NoSchedule) set exactly for the pressures that
 * hold; other taints are kept in order. Returns undefined when nothing changes.
 */
export function withPressureTaints(taints: readonly Taint[] | undefined, pressures: Pressures, now: Date): Taint[] | undefined {
  const want: [string, boolean][] = [
    [TAINT_MEMORY_PRESSURE, pressures.memory],
    [TAINT_DISK_PRESSURE, pressures.disk],
    [TAINT_PID_PRESSURE, pressures.pid],
  ];
  const current = taints ?? [];
  let out = [...current];
  for (const [key, on] of want) {
    const has = out.some((t) => t.key === key && t.effect === 'NoSchedule');
    if (on && !has) out.push({ key, effect: 'NoSchedule', timeAdded: formatTime(now) });
    if (!on && has) out = out.filter((t) => !(t.key === key && t.effect === 'NoSchedule'));
  }
  return out.length === current.length && out.every((t, i) => t === current[i]) ? undefined : out;
}

/** Capacity from machine facts: cpu, memory (Ki), ephemeral-storage (Ki), pods. */
export function nodeCapacity(info: MachineInfo, usage: MachineUsage, maxPods: number): Record<string, string> {
  return {
    cpu: String(info.numCores),
    memory: `${Math.floor(info.memoryCapacityBytes / 1024)}Ki`,
    'ephemeral-storage': `${Math.floor(usage.fsCapacityBytes / 1024)}Ki`,
    pods: String(maxPods),
  };
}

/**
 * upstream allocatable: capacity minus `--system-reserved` and the hard eviction threshold of
 * memory (and nodefs when given as a quantity); never below zero.
 */
export function nodeAllocatable(capacity: Record<string, string>, reserved: Record<string, string>, thresholds: readonly EvictionThreshold[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(capacity)) {
    let q = Quantity.parse(value);
    if (reserved[name]) q = q.sub(Quantity.parse(reserved[name]));
    const signal = name === 'memory' ? 'memory.available' : name === 'ephemeral-storage' ? 'nodefs.available' : undefined;
    const t = signal && thresholds.find((x) => x.signal === signal);
    if (t) q = q.sub(t.quantity ?? Quantity.fromValue(Math.floor((Quantity.parse(value).value() * (t.percent ?? 0)) / 100)));
    out[name] = q.sign() < 0 ? '0' : q.toString();
  }
  return out;
}

export interface NodeIdentity {
  name: string;
  hostname: string;
  nodeIp: string;
  port: number;
  podCidr: string;
  labels: Record<string, string>;
  taints: Taint[];
}

/** The Node object the agent registers (upstream initialNode): labels, taints, pod CIDR. */
export function initialNode(id: NodeIdentity): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: id.name,
      labels: { ...id.labels, [LABEL_ARCH]: goArch(), [LABEL_OS]: goOs(), [LABEL_HOSTNAME]: id.hostname },
    },
    spec: { podCIDR: id.podCidr, podCIDRs: [id.podCidr], ...(id.taints.length ? { taints: id.taints } : {}) },
  };
}

/** The status part the agent owns: capacity, allocatable, conditions, addresses, endpoint, nodeInfo. */
export function nodeStatus(
  id: NodeIdentity,
  info: MachineInfo,
  facts: { capacity: Record<string, string>; allocatable: Record<string, string>; conditions: coreV1.NodeCondition[]; runtime: string },
): NodeStatus {
  return {
    capacity: facts.capacity,
    allocatable: facts.allocatable,
    conditions: facts.conditions,
    addresses: [
      { type: 'InternalIP', address: id.nodeIp },
      { type: 'Hostname', address: id.hostname },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: id.port } },
    nodeInfo: {
      machineID: info.machineID,
      systemUUID: info.systemUUID,
      bootID: info.bootID,
      kernelVersion: info.kernelVersion,
      osImage: info.osImage,
      containerRuntimeVersion: `${facts.runtime}://${process.version}`,
      kubeletVersion: AGENT_VERSION,
      kubeProxyVersion: '',
      operatingSystem: info.operatingSystem,
      architecture: info.architecture,
    },
  };
}
