import { ensureBinary } from './binaries';
import { freePort } from './ports';
import { httpProbe, RunningProcess, startProcess, tcpProbe } from './process';
import { removeDir, tempDir } from './temp';

/** A server process started for a test. */
export interface TestServer {
  pid: number;
  /** SIGTERM, then SIGKILL after a grace period; resolves once the process is gone. */
  stop(): Promise<void>;
  /** SIGKILL; resolves once the process is gone. */
  kill9(): Promise<void>;
  /** Recent stdout and stderr, for failure messages. */
  output(): string;
}

export interface EtcdServer extends TestServer {
  /** `http://127.0.0.1:PORT` */
  endpoint: string;
  clientPort: number;
  dataDir: string;
}

export interface NatsServer extends TestServer {
  /** `nats://127.0.0.1:PORT` */
  url: string;
  port: number;
  /** JetStream store directory (set when started with jetstream). */
  storeDir?: string;
}

export interface RedisServer extends TestServer {
  /** `redis://127.0.0.1:PORT` */
  url: string;
  port: number;
}

const PORT_ATTEMPTS = 3;

/** Runs start again (with new ports) when it lost a race for a free port. */
async function withPortRetry<T>(start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= PORT_ATTEMPTS || !/address already in use/i.test(String(err))) throw err;
    }
  }
}

/**
 * Wraps a started process as a TestServer; `ownedDir` (a directory this module created)
 * is removed once the process is gone, whether stopped or killed.
 */
function asServer(proc: RunningProcess, ownedDir: string | undefined): TestServer {
  const cleanup = async () => {
    if (ownedDir) await removeDir(ownedDir);
  };
  return {
    pid: proc.pid,
    stop: async () => {
      await proc.stop();
      await cleanup();
    },
    kill9: async () => {
      await proc.kill9();
      await cleanup();
    },
    output: proc.output,
  };
}

/**
 * Starts a single-member etcd on free loopback ports. A dataDir you pass is kept (so a
 * test can restart etcd on the same data); otherwise a temp dir is used and removed when
 * the server stops or is killed. clientPort pins the client port (e.g. for a restart).
 */
export async function startEtcd(opts: { dataDir?: string; clientPort?: number } = {}): Promise<EtcdServer> {
  const bin = await ensureBinary('etcd', 'etcd-server');
  const ownedDir = opts.dataDir ? undefined : await tempDir('etcd-');
  const dataDir = opts.dataDir ?? ownedDir!;
  try {
    return await withPortRetry(async () => {
      const clientPort = opts.clientPort ?? (await freePort());
      const peerPort = await freePort();
      const endpoint = `http://127.0.0.1:${clientPort}`;
      const peer = `http://127.0.0.1:${peerPort}`;
      const proc = await startProcess({
        cmd: bin,
        args: [
          '--name=orch-test',
          `--data-dir=${dataDir}`,
          `--listen-client-urls=${endpoint}`,
          `--advertise-client-urls=${endpoint}`,
          `--listen-peer-urls=${peer}`,
          `--initial-advertise-peer-urls=${peer}`,
          `--initial-cluster=orch-test=${peer}`,
          '--logger=zap',
          '--log-level=warn',
        ],
        readyProbe: httpProbe(`${endpoint}/health`, '"health":"true"'),
      });
      return { ...asServer(proc, ownedDir), endpoint, clientPort, dataDir };
    });
  } catch (err) {
    if (ownedDir) await removeDir(ownedDir);
    throw err;
  }
}

/** Starts nats-server on a free loopback port; with jetstream, its store is a temp dir. */
export async function startNats(opts: { jetstream?: boolean } = {}): Promise<NatsServer> {
  const bin = await ensureBinary('nats-server', 'nats-server');
  const storeDir = opts.jetstream ? await tempDir('nats-') : undefined;
  try {
    return await withPortRetry(async () => {
      const port = await freePort();
      const args = ['-a', '127.0.0.1', '-p', String(port)];
      if (storeDir) args.push('-js', '-sd', storeDir);
      // The server greets every client with INFO once it accepts connections.
      const proc = await startProcess({ cmd: bin, args, readyProbe: tcpProbe(port, { expect: 'INFO' }) });
      return { ...asServer(proc, storeDir), url: `nats://127.0.0.1:${port}`, port, storeDir };
    });
  } catch (err) {
    if (storeDir) await removeDir(storeDir);
    throw err;
  }
}

/** Starts redis-server on a free loopback port, without persistence. */
export async function startRedis(): Promise<RedisServer> {
  const bin = await ensureBinary('redis-server', 'redis-server');
  return withPortRetry(async () => {
    const port = await freePort();
    const proc = await startProcess({
      cmd: bin,
      args: ['--save', '', '--appendonly', 'no', '--port', String(port), '--bind', '127.0.0.1'],
      readyProbe: tcpProbe(port, { send: 'PING\r\n', expect: '+PONG' }),
    });
    return { ...asServer(proc, undefined), url: `redis://127.0.0.1:${port}`, port };
  });
}
