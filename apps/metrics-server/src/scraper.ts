import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { coreV1 } from '@orch/api';
import type { RestClient } from '@orch/client';
import type { Logger } from '@orch/server-common';

/** CPU (cores) and memory (bytes) of one thing over one window. */
export interface Usage {
  cpuCores: number;
  memoryBytes: number;
}

export interface NodeSample {
  name: string;
  labels: Record<string, string>;
  /** End of the window (RFC 3339). */
  timestamp: string;
  windowSeconds: number;
  usage: Usage;
}

export interface PodSample {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  timestamp: string;
  windowSeconds: number;
  containers: { name: string; usage: Usage }[];
}

interface CpuStats {
  time: string;
  usageCoreNanoSeconds?: number;
}

/** The part of a node agent's `/stats/summary` (upstream kubelet stats/v1alpha1, not an API kind) read here. */
interface Summary {
  node?: { cpu?: CpuStats; memory?: { workingSetBytes?: number } };
  pods?: { podRef: { name: string; namespace: string }; containers?: { name: string; cpu?: CpuStats; memory?: { workingSetBytes?: number } }[] }[];
}

/** A cumulative CPU counter at a time. */
interface Point {
  at: number;
  cpuNanos: number;
}

/** The rate between two points of a cumulative counter, in cores; undefined without two points or with a reset. */
export function cpuRate(prev: Point | undefined, cur: Point): { cores: number; seconds: number } | undefined {
  if (!prev || cur.at <= prev.at || cur.cpuNanos < prev.cpuNanos) return undefined;
  const seconds = (cur.at - prev.at) / 1000;
  return { cores: (cur.cpuNanos - prev.cpuNanos) / 1e9 / seconds, seconds };
}

/**
 * Scrapes every node agent's `/stats/summary` through the gateway's node proxy every
 * `resolution`, and keeps per node, pod and container the CPU rate between the last two
 * scrapes (from the cumulative usageCoreNanoSeconds) and the last working-set memory (upstream
 * metrics-server). Something seen in only one scrape has no figures yet. Scrapes from the
 * application's bootstrap to its shutdown.
 */
export class Scraper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly points = new Map<string, { point: Point; rate?: { cores: number; seconds: number; timestamp: string } }>();
  private nodes = new Map<string, NodeSample>();
  private pods = new Map<string, PodSample>();
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly client: RestClient,
    private readonly resolutionMs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    const loop = async () => {
      if (this.stopped) return;
      try {
        await this.scrape();
      } catch (err) {
        this.logger.warn('scrape failed', { error: (err as Error).message });
      }
      if (!this.stopped) this.timer = setTimeout(() => void loop(), this.resolutionMs);
    };
    void loop();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  onApplicationBootstrap(): void {
    this.start();
  }

  onApplicationShutdown(): void {
    this.stop();
  }

  nodeMetrics(): NodeSample[] {
    return [...this.nodes.values()];
  }

  podMetrics(): PodSample[] {
    return [...this.pods.values()];
  }

  /** One scrape of every node (in parallel); a node that does not answer keeps no figures. */
  async scrape(): Promise<void> {
    const [nodeList, podList] = await Promise.all([
      this.client.request<coreV1.NodeList>({ method: 'GET', path: '/api/v1/nodes' }),
      this.client.request<coreV1.PodList>({ method: 'GET', path: '/api/v1/pods' }),
    ]);
    const podLabels = new Map(podList.items.map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p.metadata.labels ?? {}]));
    const nodes = new Map<string, NodeSample>();
    const pods = new Map<string, PodSample>();
    const seen = new Set<string>();
    await Promise.all(
      nodeList.items.map(async (node) => {
        const name = node.metadata.name!;
        let summary: Summary;
        try {
          summary = await this.client.request<Summary>({ method: 'GET', path: `/api/v1/nodes/${encodeURIComponent(name)}/proxy/stats/summary`, timeoutMs: Math.max(5000, this.resolutionMs) });
        } catch (err) {
          this.logger.warn('scraping a node failed', { node: name, error: (err as Error).message });
          return;
        }
        const n = this.sample(`node/${name}`, summary.node?.cpu, seen);
        if (n) nodes.set(name, { name, labels: node.metadata.labels ?? {}, timestamp: n.timestamp, windowSeconds: n.seconds, usage: { cpuCores: n.cores, memoryBytes: summary.node?.memory?.workingSetBytes ?? 0 } });
        for (const p of summary.pods ?? []) {
          const key = `${p.podRef.namespace}/${p.podRef.name}`;
          const containers: PodSample['containers'] = [];
          let timestamp = '';
          let windowSeconds = 0;
          for (const c of p.containers ?? []) {
            const s = this.sample(`pod/${key}/${c.name}`, c.cpu, seen);
            if (!s) continue;
            timestamp = s.timestamp;
            windowSeconds = s.seconds;
            containers.push({ name: c.name, usage: { cpuCores: s.cores, memoryBytes: c.memory?.workingSetBytes ?? 0 } });
          }
          if (containers.length) pods.set(key, { namespace: p.podRef.namespace, name: p.podRef.name, labels: podLabels.get(key) ?? {}, timestamp, windowSeconds, containers });
        }
      }),
    );
    for (const k of this.points.keys()) if (!seen.has(k)) this.points.delete(k);
    this.nodes = nodes;
    this.pods = pods;
  }

  private sample(key: string, cpu: CpuStats | undefined, seen: Set<string>): { cores: number; seconds: number; timestamp: string } | undefined {
    if (!cpu || cpu.usageCoreNanoSeconds === undefined) return undefined;
    seen.add(key);
    const at = Date.parse(cpu.time) || Date.now();
    const cur = { at, cpuNanos: cpu.usageCoreNanoSeconds };
    const prev = this.points.get(key);
    // The summary's time has second precision: a scrape within the same second keeps the older point and rate.
    if (prev && prev.point.at === at) return prev.rate;
    const r = cpuRate(prev?.point, cur);
    const rate = r ? { ...r, timestamp: new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z') } : prev?.rate;
    this.points.set(key, { point: cur, rate });
    return rate;
  }
}
