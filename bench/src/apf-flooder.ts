import * as https from 'node:https';
import { createInterface } from 'node:readline';
import { call, target, type HttpsTarget } from './load';

/** What the flooder process does (bench apf): `concurrency` loops GET `path` as the given client until told to stop. */
export interface FloodJob {
  url: string;
  ca: string;
  cert: string;
  key: string;
  path: string;
  concurrency: number;
  /**
   * A 429 waits its Retry-After (seconds) before the loop goes on, as client-go and kubectl do;
   * otherwise it is retried at once (a client ignoring Retry-After).
   */
  honourRetryAfter: boolean;
  /** At most this many lists started per second, spread evenly over the loops (a client holding its share of the gateway down); unpaced when absent. */
  listsPerSecond?: number;
}

/** What it reports when stopped. */
export interface FloodResult {
  ok: number;
  rejected: number;
  other: number;
  /** CPU seconds (user + system) the flooder process used from `ready` to `stop`. */
  cpuSeconds: number;
  /** Seconds from `ready` to `stop`. */
  seconds: number;
}

/**
 * GETs `path` and reads its whole body without keeping it (no concatenation, no decoding): the
 * gateway sends every byte as to any client, and the flooder, which shares the machine's cores
 * with the gateway and the victim, spends only what receiving them costs (TLS, HTTP).
 */
function readDiscarding(t: HttpsTarget, path: string): Promise<{ status: number; retryAfter?: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(`${t.base}${path}`, { agent: t.agent, headers: { accept: 'application/json' } }, (res) => {
      const retryAfter = res.headers['retry-after'];
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined }));
      res.on('error', reject);
      res.resume();
    });
    req.on('error', reject);
  });
}

/**
 * The flooding client of the priority-and-fairness bench, in a process of its own so that its
 * client work (TLS, reading big lists) does not run on the event loop that times the victim.
 * stdin: the job (one JSON line), then `stop`; stdout: `ready` once its connections are up, then
 * the FloodResult (one JSON line). A 429 is retried at once or after its Retry-After (see FloodJob).
 */
async function main(): Promise<void> {
  const lines = createInterface({ input: process.stdin });
  const next = () => new Promise<string>((resolve) => lines.once('line', resolve));
  const job = JSON.parse(await next()) as FloodJob;
  const flooder = target(job.url, job.cert ? { ca: job.ca, cert: job.cert, key: job.key } : { ca: job.ca }, job.concurrency);
  const result: FloodResult = { ok: 0, rejected: 0, other: 0, cpuSeconds: 0, seconds: 0 };
  let stop = false;
  let cpu = process.cpuUsage();
  let readyAt = 0;
  const stopped = next().then(() => {
    stop = true;
    const used = process.cpuUsage(cpu);
    result.cpuSeconds = (used.user + used.system) / 1e6;
    result.seconds = (performance.now() - readyAt) / 1000;
  });
  // Each loop's connection is set up before the victim starts measuring.
  await Promise.all(Array.from({ length: job.concurrency }, () => call(flooder, 'GET', '/version')));
  cpu = process.cpuUsage();
  readyAt = performance.now();
  process.stdout.write('ready\n');
  // Paced: the next list of all loops starts at the next slot of 1/listsPerSecond s (a loop waits for its slot).
  let nextSlot = performance.now();
  const slot = async () => {
    if (!job.listsPerSecond) return;
    const at = (nextSlot = Math.max(nextSlot + 1000 / job.listsPerSecond, performance.now()));
    const wait = at - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  };
  await Promise.all(
    Array.from({ length: job.concurrency }, async () => {
      while (!stop) {
        await slot();
        if (stop) break;
        const r = await readDiscarding(flooder, job.path).catch(() => ({ status: 0, retryAfter: undefined }));
        if (r.status === 429) {
          result.rejected++;
          if (job.honourRetryAfter) await new Promise((resolve) => setTimeout(resolve, 1000 * Number(r.retryAfter ?? 1)));
        }
        else if (r.status === 200) result.ok++;
        else result.other++;
      }
    }),
  );
  await stopped;
  flooder.agent.destroy();
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
