import { readFile } from 'node:fs/promises';
import { formatTime } from '@orch/apimachinery';
import type { MachineUsage } from '../node/machine';
import type { CgroupUsage } from '../runtime/sandbox/cgroups';

/** Kernel clock ticks per second (USER_HZ; 100 on every Linux platform Node runs on). */
const CLOCK_TICKS = 100;

/** CPU time and memory of one process, read from /proc. */
export interface ProcessSample {
  cpuNanos: number;
  rssBytes: number;
}

/** CPU and memory of a process from /proc/<pid>/stat and status; undefined when unreadable. */
export async function sampleProcess(pid: number): Promise<ProcessSample | undefined> {
  try {
    const [stat, status] = await Promise.all([readFile(`/proc/${pid}/stat`, 'utf8'), readFile(`/proc/${pid}/status`, 'utf8')]);
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14, 15)
    const rssKb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0);
    return { cpuNanos: (ticks / CLOCK_TICKS) * 1e9, rssBytes: rssKb * 1024 };
  } catch {
    return undefined;
  }
}

/** Busy CPU time of the whole machine in nanoseconds (all cores), from /proc/stat. */
export async function machineCpuNanos(): Promise<number | undefined> {
  try {
    const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0];
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
    return ((total - idle) / CLOCK_TICKS) * 1e9;
  } catch {
    return undefined;
  }
}

/** One container's figures and where they came from (`cgroup`, or the pid sampled). */
async function containerSample(c: ContainerInput): Promise<{ cpuNanos: number; usageBytes: number; workingSetBytes: number; rssBytes: number; source: string } | undefined> {
  const g = await c.usage?.();
  if (g) return { cpuNanos: g.cpuNanos, usageBytes: g.memoryUsageBytes, workingSetBytes: g.workingSetBytes, rssBytes: g.rssBytes, source: 'cgroup' };
  const p = c.pid ? await sampleProcess(c.pid) : undefined;
  return p ? { cpuNanos: p.cpuNanos, usageBytes: p.rssBytes, workingSetBytes: p.rssBytes, rssBytes: p.rssBytes, source: String(c.pid) } : undefined;
}

interface CpuStats {
  time: string;
  usageNanoCores?: number;
  usageCoreNanoSeconds: number;
}

interface MemoryStats {
  time: string;
  availableBytes?: number;
  usageBytes: number;
  workingSetBytes: number;
  rssBytes: number;
}

/** One container of the summary. */
export interface ContainerInput {
  name: string;
  startTime: string;
  pid?: number;
  /** Usage from the container's cgroup (preferred over sampling its main process). */
  usage?: () => Promise<CgroupUsage | undefined>;
  logBytes?: number;
}

/** One pod of the summary. */
export interface PodInput {
  name: string;
  namespace: string;
  uid: string;
  startTime: string;
  containers: ContainerInput[];
}

/**
 * Builds the Summary API answer (`/stats/summary`, upstream stats/v1alpha1): node CPU, memory,
 * file system and process counts; per pod and container CPU and memory from the container's
 * cgroup (every process of it, as the kernel counts), or, without cgroups, of its main
 * process from /proc. Rates (usageNanoCores) come from the previous call's samples.
 */
export class StatsCollector {
  private readonly previous = new Map<string, { at: number; cpuNanos: number }>();

  constructor(private readonly nodeName: string, private readonly startedAt: string) {}

  private cpu(key: string, cpuNanos: number, now: number, time: string): CpuStats {
    const prev = this.previous.get(key);
    this.previous.set(key, { at: now, cpuNanos });
    const rate = prev && now > prev.at ? ((cpuNanos - prev.cpuNanos) / ((now - prev.at) * 1e6)) * 1e9 : undefined;
    return { time, ...(rate !== undefined ? { usageNanoCores: Math.max(0, Math.round(rate)) } : {}), usageCoreNanoSeconds: Math.round(cpuNanos) };
  }

  async summary(usage: MachineUsage, pods: PodInput[]): Promise<Record<string, unknown>> {
    const now = Date.now();
    const time = formatTime(now);
    const nodeCpu = (await machineCpuNanos()) ?? 0;
    const used = usage.memoryTotalBytes - usage.memoryAvailableBytes;
    const live = new Set<string>(['node']);
    const podStats = [];
    for (const p of pods) {
      let podCpu = 0;
      let podMem = 0;
      const containers = [];
      for (const c of p.containers) {
        const s = await containerSample(c);
        const key = `${p.uid}/${c.name}/${s?.source ?? ''}`;
        live.add(key);
        podCpu += s?.cpuNanos ?? 0;
        podMem += s?.workingSetBytes ?? 0;
        containers.push({
          name: c.name,
          startTime: c.startTime,
          ...(s
            ? {
                cpu: this.cpu(key, s.cpuNanos, now, time),
                memory: { time, usageBytes: s.usageBytes, workingSetBytes: s.workingSetBytes, rssBytes: s.rssBytes },
              }
            : {}),
          logs: { time, usedBytes: c.logBytes ?? 0 },
        });
      }
      live.add(p.uid);
      podStats.push({
        podRef: { name: p.name, namespace: p.namespace, uid: p.uid },
        startTime: p.startTime,
        containers,
        cpu: this.cpu(p.uid, podCpu, now, time),
        memory: { time, usageBytes: podMem, workingSetBytes: podMem, rssBytes: podMem },
      });
    }
    for (const k of this.previous.keys()) if (!live.has(k)) this.previous.delete(k);
    return {
      node: {
        nodeName: this.nodeName,
        startTime: this.startedAt,
        cpu: this.cpu('node', nodeCpu, now, time),
        memory: { time, availableBytes: usage.memoryAvailableBytes, usageBytes: used, workingSetBytes: used, rssBytes: used },
        fs: {
          time,
          availableBytes: usage.fsAvailableBytes,
          capacityBytes: usage.fsCapacityBytes,
          usedBytes: usage.fsCapacityBytes - usage.fsAvailableBytes,
          inodesFree: usage.fsInodesFree,
          inodes: usage.fsInodes,
          inodesUsed: usage.fsInodes - usage.fsInodesFree,
        },
        rlimit: { time, maxpid: usage.pidsMax, curproc: usage.pidsRunning },
        systemContainers: [],
      },
      pods: podStats,
    };
  }
}

interface SummaryShape {
  node: { cpu: CpuStats; memory: MemoryStats };
  pods: { podRef: { name: string; namespace: string }; cpu: CpuStats; memory: MemoryStats; containers: { name: string; cpu?: CpuStats; memory?: MemoryStats }[] }[];
}

/** `/metrics/resource` (upstream resource metrics endpoint) from a summary, Prometheus text format. */
export function resourceMetrics(summary: Record<string, unknown>): string {
  const s = summary as unknown as SummaryShape;
  const ts = Date.now();
  const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  const lines = [
    '# HELP node_cpu_usage_seconds_total Cumulative cpu time consumed by the node in core-seconds',
    '# TYPE node_cpu_usage_seconds_total counter',
    `node_cpu_usage_seconds_total ${s.node.cpu.usageCoreNanoSeconds / 1e9} ${ts}`,
    '# HELP node_memory_working_set_bytes Current working set of the node in bytes',
    '# TYPE node_memory_working_set_bytes gauge',
    `node_memory_working_set_bytes ${s.node.memory.workingSetBytes} ${ts}`,
    '# HELP pod_cpu_usage_seconds_total Cumulative cpu time consumed by the pod in core-seconds',
    '# TYPE pod_cpu_usage_seconds_total counter',
    ...s.pods.map((p) => `pod_cpu_usage_seconds_total{namespace="${esc(p.podRef.namespace)}",pod="${esc(p.podRef.name)}"} ${p.cpu.usageCoreNanoSeconds / 1e9} ${ts}`),
    '# HELP pod_memory_working_set_bytes Current working set of the pod in bytes',
    '# TYPE pod_memory_working_set_bytes gauge',
    ...s.pods.map((p) => `pod_memory_working_set_bytes{namespace="${esc(p.podRef.namespace)}",pod="${esc(p.podRef.name)}"} ${p.memory.workingSetBytes} ${ts}`),
    '# HELP container_cpu_usage_seconds_total Cumulative cpu time consumed by the container in core-seconds',
    '# TYPE container_cpu_usage_seconds_total counter',
    ...s.pods.flatMap((p) =>
      p.containers.filter((c) => c.cpu).map((c) => `container_cpu_usage_seconds_total{container="${esc(c.name)}",namespace="${esc(p.podRef.namespace)}",pod="${esc(p.podRef.name)}"} ${c.cpu!.usageCoreNanoSeconds / 1e9} ${ts}`),
    ),
    '# HELP container_memory_working_set_bytes Current working set of the container in bytes',
    '# TYPE container_memory_working_set_bytes gauge',
    ...s.pods.flatMap((p) =>
      p.containers.filter((c) => c.memory).map((c) => `container_memory_working_set_bytes{container="${esc(c.name)}",namespace="${esc(p.podRef.namespace)}",pod="${esc(p.podRef.name)}"} ${c.memory!.workingSetBytes} ${ts}`),
    ),
    '# HELP scrape_error 1 if there was an error while getting container metrics, 0 otherwise',
    '# TYPE scrape_error gauge',
    'scrape_error 0',
    '',
  ];
  return lines.join('\n');
}
