import { useEffect, useState } from 'preact/hooks';
import { ApiError, request } from './api';

/** One reading of the metrics API for a node or pod (a pod's is the sum of its containers). */
export interface UsageSample {
  /** The end of the metrics window (ms since the epoch). */
  at: number;
  cpuMillis: number;
  memoryBytes: number;
}

interface MetricsItem {
  metadata: { name: string; namespace?: string };
  timestamp?: string;
  usage?: { cpu: string; memory: string };
  containers?: { usage: { cpu: string; memory: string } }[];
}

/** A CPU quantity (`250m`, `1`, `123456n`) in millicores. */
export function cpuMillis(q: string | undefined): number | undefined {
  if (!q) return undefined;
  if (q.endsWith('n')) return Number(q.slice(0, -1)) / 1e6;
  if (q.endsWith('u')) return Number(q.slice(0, -1)) / 1e3;
  if (q.endsWith('m')) return Number(q.slice(0, -1));
  return Number(q) * 1000;
}

const SUFFIX: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };

/** A memory quantity (`1234Ki`, `1Gi`, `500M`) in bytes. */
export function bytes(q: string | undefined): number | undefined {
  if (!q) return undefined;
  const m = /^([0-9.]+)([A-Za-z]*)$/.exec(q);
  return m ? Number(m[1]) * (SUFFIX[m[2]] ?? 1) : undefined;
}

/** Samples kept per node or pod: 40 windows are 10 minutes at the metrics server's default 15 s resolution. */
export const HISTORY_SAMPLES = 40;
/** The metrics API has no watch: it is read this often, and a sample is kept only when its window is new. */
const READ_EVERY_MS = 5_000;

/** History per metrics path, then per `namespace/name`: kept across views, so a sparkline does not restart on navigation. */
const histories = new Map<string, Map<string, UsageSample[]>>();

function record(path: string, items: MetricsItem[]): boolean {
  const byName = histories.get(path) ?? new Map<string, UsageSample[]>();
  histories.set(path, byName);
  let changed = false;
  for (const item of items) {
    const usages = item.usage ? [item.usage] : (item.containers ?? []).map((c) => c.usage);
    const sample = {
      at: Date.parse(item.timestamp ?? '') || Date.now(),
      cpuMillis: usages.reduce((sum, u) => sum + (cpuMillis(u.cpu) ?? 0), 0),
      memoryBytes: usages.reduce((sum, u) => sum + (bytes(u.memory) ?? 0), 0),
    };
    const key = `${item.metadata.namespace ?? ''}/${item.metadata.name}`;
    const series = byName.get(key) ?? [];
    if (series.length && series[series.length - 1].at >= sample.at) continue;
    byName.set(key, [...series, sample].slice(-HISTORY_SAMPLES));
    changed = true;
  }
  return changed;
}

/**
 * CPU and memory history from the metrics API at `path` (a NodeMetrics/PodMetrics list or one
 * object), keyed `namespace/name` (`/name` for nodes). `error` is the API's answer when it has
 * none (403 for a user who may not read metrics, 503 while the metrics server is away).
 */
export function useUsageHistory(path: string | undefined): { series: Map<string, UsageSample[]>; error?: ApiError } {
  const [state, setState] = useState<{ series: Map<string, UsageSample[]>; error?: ApiError }>({ series: new Map(histories.get(path ?? '') ?? []) });
  useEffect(() => {
    if (!path) return undefined;
    let stopped = false;
    const read = () =>
      request<MetricsItem & { items?: MetricsItem[] }>(path).then(
        (answer) => {
          const changed = record(path, answer.items ?? [answer]);
          if (!stopped && changed) setState({ series: new Map(histories.get(path)) });
        },
        (err: unknown) => !stopped && setState((s) => ({ series: s.series, error: err instanceof ApiError ? err : new ApiError(0, 'NetworkError', String(err)) })),
      );
    void read();
    const timer = setInterval(read, READ_EVERY_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [path]);
  return state;
}
