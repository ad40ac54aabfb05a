/**
 * The idle client of the watch-load benchmark, in a process of its own (so that its sockets
 * cost the measured reader nothing): opens watches, each its own TLS connection, reads each
 * answer's status line and then nothing more, ever (the socket is paused: the kernel's buffers
 * fill and the gateway's writes push back).
 *
 * Protocol: config as JSON in ORCH_IDLE_WATCHES; the process sends `{ ready: { opened,
 * refused } }` once every watch has its status line, and on the message `stop` answers
 * `{ done: { ended } }` (connections the gateway ended meanwhile), then exits.
 */
import tls from 'node:tls';

export interface IdleWatchesConfig {
  host: string;
  port: number;
  path: string;
  watches: number;
  ca: string;
  cert: string;
  key: string;
}

export interface IdleWatchesReady {
  opened: number;
  refused: number;
}

/** Opens one watch; resolves with its status code once the status line arrived, the socket paused. */
function openIdle(cfg: IdleWatchesConfig, sockets: tls.TLSSocket[], onEnded: () => void): Promise<number> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: cfg.host, port: cfg.port, ca: cfg.ca, cert: cfg.cert, key: cfg.key }, () => {
      socket.write(`GET ${cfg.path} HTTP/1.1\r\nhost: ${cfg.host}:${cfg.port}\r\naccept: application/json\r\n\r\n`);
    });
    sockets.push(socket);
    let status = 0;
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      status = Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 0);
      resolve(status);
    });
    socket.on('close', () => {
      if (status === 200) onEnded();
      resolve(status);
    });
    socket.on('error', () => undefined);
  });
}

async function main(): Promise<void> {
  const cfg = JSON.parse(process.env.ORCH_IDLE_WATCHES ?? '{}') as IdleWatchesConfig;
  const sockets: tls.TLSSocket[] = [];
  let ended = 0;
  let opened = 0;
  let refused = 0;
  // A hundred TLS handshakes at a time (the gateway's accept queue and the machine's 2 cores).
  for (let i = 0; i < cfg.watches; i += 100) {
    const batch = await Promise.all(Array.from({ length: Math.min(100, cfg.watches - i) }, () => openIdle(cfg, sockets, () => ended++)));
    opened += batch.filter((status) => status === 200).length;
    refused += batch.filter((status) => status !== 200).length;
  }
  const ready: IdleWatchesReady = { opened, refused };
  process.send!({ ready });
  process.on('message', (msg) => {
    if (msg !== 'stop') return;
    for (const s of sockets) s.destroy();
    process.send!({ done: { ended } }, () => process.exit(0));
  });
}

if (require.main === module) void main().catch((err: Error) => process.send!({ error: err.message }));
