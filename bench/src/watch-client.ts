/**
 * One process of the scale benchmark's watchers (spawned with IPC by scale.ts, so that the
 * watchers' TLS and parsing are spread over several processes and measured apart from the
 * gateways). Each watch is its own HTTPS connection; for every event received it records the
 * `seq` the writer put into the object and the wall-clock time it arrived (the writer's
 * process compares it with when it sent the write and when etcd's change feed showed it).
 *
 * Protocol: config as JSON in ORCH_WATCH_CLIENT; the process sends `{ ready }` once every
 * watch has its response headers, and on the message `stop` answers `{ done }` with its
 * deliveries and CPU time, then exits.
 */
import https from 'node:https';

export interface WatchClientConfig {
  /** One entry per watch: the gateway URL and the watch path. */
  watches: { url: string; path: string }[];
  ca: string;
  cert: string;
  key: string;
}

export interface WatchClientReport {
  /** Per delivery: the event's seq and the wall-clock ms it arrived at. */
  seqs: number[];
  arrivals: number[];
  /** CPU seconds (user + system) this process used while watching. */
  cpuSeconds: number;
}

const SEQ = Buffer.from('"seq":"');

/** Wall-clock milliseconds with sub-millisecond precision (comparable across processes). */
export const wallClockMs = () => performance.timeOrigin + performance.now();

function main(): void {
  const cfg = JSON.parse(process.env.ORCH_WATCH_CLIENT ?? '{}') as WatchClientConfig;
  const seqs: number[] = [];
  const arrivals: number[] = [];
  const agents = new Map<string, https.Agent>();
  const agentFor = (url: string) => {
    let agent = agents.get(url);
    if (!agent) agents.set(url, (agent = new https.Agent({ keepAlive: true, maxSockets: cfg.watches.length, ca: cfg.ca, cert: cfg.cert, key: cfg.key })));
    return agent;
  };
  let cpuAtReady = process.cpuUsage();
  let open = 0;
  const requests = cfg.watches.map(({ url, path }) => {
    const req = https.get(`${url}${path}`, { agent: agentFor(url) }, (res) => {
      if (res.statusCode !== 200) {
        process.send!({ error: `${url}${path}: HTTP ${res.statusCode}` });
        return;
      }
      if (++open === cfg.watches.length) {
        cpuAtReady = process.cpuUsage();
        process.send!({ ready: true });
      }
      // Lines are never split across the marker search: keep the partial tail between chunks.
      let tail: Buffer = Buffer.alloc(0);
      res.on('data', (chunk: Buffer) => {
        const now = wallClockMs();
        const buf = tail.length ? Buffer.concat([tail, chunk]) : chunk;
        let from = 0;
        for (let nl = buf.indexOf(10, from); nl >= 0; from = nl + 1, nl = buf.indexOf(10, from)) {
          const at = buf.indexOf(SEQ, from);
          if (at < 0 || at > nl) continue;
          const start = at + SEQ.length;
          seqs.push(Number(buf.toString('latin1', start, buf.indexOf(34, start))));
          arrivals.push(now);
        }
        tail = buf.subarray(from);
      });
    });
    req.on('error', (err) => {
      process.send!({ error: `${url}${path}: ${err.message}` });
    });
    return req;
  });
  process.on('message', (msg) => {
    if (msg !== 'stop') return;
    const cpu = process.cpuUsage(cpuAtReady);
    for (const r of requests) r.destroy();
    for (const a of agents.values()) a.destroy();
    const report: WatchClientReport = { seqs, arrivals, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
    process.send!({ done: report }, () => process.exit(0));
  });
}

if (require.main === module) main();
