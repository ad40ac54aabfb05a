import { readFileSync } from 'node:fs';
import https from 'node:https';

export interface LoadResult {
  ops: number;
  seconds: number;
  opsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

/** Percentile (0-100) of a sorted array. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/**
 * Runs `op` from `concurrency` concurrent loops for `durationMs` (bounded in time and
 * count) and reports throughput and latency. `op(i)` gets a global sequence number.
 */
export async function runLoad(concurrency: number, durationMs: number, op: (i: number) => Promise<boolean>, maxOps = 1_000_000): Promise<LoadResult> {
  const latencies: number[] = [];
  let seq = 0;
  let errors = 0;
  const started = performance.now();
  const end = started + durationMs;
  const loop = async () => {
    while (performance.now() < end && seq < maxOps) {
      const i = seq++;
      const t = performance.now();
      const ok = await op(i).catch(() => false);
      if (ok) latencies.push(performance.now() - t);
      else errors++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { ops: latencies.length, seconds, opsPerSecond: latencies.length / seconds, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), errors };
}

export interface HttpsTarget {
  base: string;
  agent: https.Agent;
}

export function target(base: string, creds: { ca?: string; cert?: string; key?: string }, sockets = 64): HttpsTarget {
  return { base, agent: new https.Agent({ keepAlive: true, maxSockets: sockets, ca: creds.ca, cert: creds.cert, key: creds.key, rejectUnauthorized: !!creds.ca }) };
}

/** One HTTPS request (a body is sent as `contentType`); resolves with status and body. */
export function call(t: HttpsTarget, method: string, path: string, body?: string, contentType = 'application/json'): Promise<{ status: number; body: string; retryAfter?: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${t.base}${path}`,
      { method, agent: t.agent, headers: body ? { 'content-type': contentType, accept: 'application/json' } : { accept: 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        const retryAfter = res.headers['retry-after'];
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ...(retryAfter ? { retryAfter } : {}) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

/** CPU seconds (user + system) a process has used (Linux /proc, clock ticks of 100 Hz); NaN where it cannot be read. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Resident set size of a process in MiB (Linux /proc). */
export async function rssMiB(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) / 1024 : NaN;
}

/**
 * Creates the `default` service account of each namespace, as the controller-manager's
 * serviceaccount controller does in a cluster (bench clusters run without it): the
 * ServiceAccount admission plugin refuses a pod whose namespace has none.
 */
export async function createDefaultServiceAccounts(t: HttpsTarget, namespaces: string[]): Promise<void> {
  for (const namespace of namespaces) {
    const r = await call(t, 'POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace } }));
    if (r.status !== 201 && r.status !== 409) throw new Error(`default service account of ${namespace}: ${r.status} ${r.body}`);
  }
}
