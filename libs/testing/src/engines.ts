import { join } from 'node:path';
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
  /** SIGSTOP: the process stays, its sockets stay open, nothing is answered (a hung server). */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
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
    pause: () => process.kill(proc.pid, 'SIGSTOP'),
    resume: () => process.kill(proc.pid, 'SIGCONT'),
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

/** Starts nats-server on a free loopback port (or `port`, e.g. for a restart); with jetstream, its store is a temp dir. */
export async function startNats(opts: { jetstream?: boolean; port?: number } = {}): Promise<NatsServer> {
  const bin = await ensureBinary('nats-server', 'nats-server');
  const storeDir = opts.jetstream ? await tempDir('nats-') : undefined;
  try {
    return await withPortRetry(async () => {
      const port = opts.port ?? (await freePort());
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

/** Starts redis-server on a free loopback port (or `port`, e.g. for a restart), without persistence. */
export async function startRedis(opts: { port?: number } = {}): Promise<RedisServer> {
  const bin = await ensureBinary('redis-server', 'redis-server');
  return withPortRetry(async () => {
    const port = opts.port ?? (await freePort());
    const proc = await startProcess({
      cmd: bin,
      args: ['--save', '', '--appendonly', 'no', '--port', String(port), '--bind', '127.0.0.1'],
      readyProbe: tcpProbe(port, { send: 'PING\r\n', expect: '+PONG' }),
    });
    return { ...asServer(proc, undefined), url: `redis://127.0.0.1:${port}`, port };
  });
}

export interface EtcdCluster {
  members: EtcdServer[];
  /** Client URLs of every member. */
  endpoints: string[];
  /** Starts member i again on its data dir and ports (after stop or kill9). */
  restart(i: number): Promise<EtcdServer>;
  stop(): Promise<void>;
}

/**
 * Starts an etcd cluster of `size` members on free loopback ports, each with a temp data dir
 * (removed by stop()). Members can be killed and restarted one by one (quorum faults).
 */
export async function startEtcdCluster(size = 3): Promise<EtcdCluster> {
  const bin = await ensureBinary('etcd', 'etcd-server');
  const root = await tempDir('etcd-cluster-');
  const specs = await Promise.all(
    Array.from({ length: size }, async (_, i) => ({ name: `m${i}`, clientPort: await freePort(), peerPort: await freePort(), dataDir: join(root, `m${i}`) })),
  );
  const initialCluster = specs.map((m) => `${m.name}=http://127.0.0.1:${m.peerPort}`).join(',');
  const startMember = async (i: number, state: 'new' | 'existing'): Promise<EtcdServer> => {
    const m = specs[i];
    const endpoint = `http://127.0.0.1:${m.clientPort}`;
    const peer = `http://127.0.0.1:${m.peerPort}`;
    const proc = await startProcess({
      cmd: bin,
      args: [
        `--name=${m.name}`,
        `--data-dir=${m.dataDir}`,
        `--listen-client-urls=${endpoint}`,
        `--advertise-client-urls=${endpoint}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=${initialCluster}`,
        `--initial-cluster-state=${state}`,
        '--initial-cluster-token=orch-test',
        '--logger=zap',
        '--log-level=warn',
      ],
      // A member is healthy only once the cluster has a leader (quorum).
      readyProbe: httpProbe(`${endpoint}/health`, '"health":"true"'),
      timeoutMs: 30_000,
    });
    return { ...asServer(proc, undefined), endpoint, clientPort: m.clientPort, dataDir: m.dataDir };
  };
  // Members of a new cluster wait for each other: start them together.
  const members = await Promise.all(specs.map((_, i) => startMember(i, 'new')));
  const cluster: EtcdCluster = {
    members,
    endpoints: members.map((m) => m.endpoint),
    restart: async (i) => (cluster.members[i] = await startMember(i, 'existing')),
    stop: async () => {
      await Promise.all(cluster.members.map((m) => m.stop()));
      await removeDir(root);
    },
  };
  return cluster;
}
