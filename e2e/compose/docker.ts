import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ensureBinary } from '@orch/testing';

/** Runs a command to completion (output captured); throws with its output when it fails. */
export function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; input?: Buffer } = {}): string {
  const r: SpawnSyncReturns<string> = spawnSync(cmd, args, { env: opts.env ?? process.env, cwd: opts.cwd, timeout: opts.timeoutMs ?? 120_000, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, input: opts.input });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`}):\n${(r.stdout ?? '').slice(-4000)}\n${(r.stderr ?? '').slice(-4000)}`);
  return r.stdout;
}

export interface DockerEngine {
  /** The environment of docker and docker-compose commands (DOCKER_HOST when the engine is ours). */
  env: NodeJS.ProcessEnv;
  /** Whether this run started the daemon (then stop() ends it). */
  started: boolean;
  stop(): Promise<void>;
}

const DOCKERD = '/usr/sbin/dockerd';
/** The daemon's state when the suite starts one: kept between runs, so images built once stay cached. */
const STATE = join(tmpdir(), 'orch-e2e-docker');

/**
 * A Docker engine to run compose on: the one the environment points at when it answers,
 * else a dockerd this suite starts (root only) with its state under /tmp/orch-e2e-docker and
 * its own socket. The daemon it starts leaves the host's firewall alone (no iptables rules,
 * no forwarding, no masquerading, no docker0): containers reach each other over compose's
 * own bridge, builds use the host network. Throws with the reason when neither works.
 */
export async function ensureDocker(): Promise<DockerEngine> {
  if (spawnSync('docker', ['version', '--format', '{{.Server.Version}}'], { encoding: 'utf8', timeout: 10_000 }).status === 0) return { env: process.env, started: false, stop: async () => undefined };
  if (!existsSync(DOCKERD)) throw new Error(`no Docker engine answers and ${DOCKERD} is missing (apt-get install docker.io)`);
  if (process.getuid?.() !== 0) throw new Error('no Docker engine answers, and starting dockerd needs root');
  mkdirSync(join(STATE, 'exec'), { recursive: true });
  const socket = join(STATE, 'docker.sock');
  const env = { ...process.env, DOCKER_HOST: `unix://${socket}` };
  // One this suite started before and did not stop (an interrupted run): use it, leave it.
  if (existsSync(socket) && spawnSync('docker', ['version'], { env, timeout: 10_000 }).status === 0) return { env, started: false, stop: async () => undefined };
  const logFile = join(STATE, 'dockerd.log');
  const log = openSync(logFile, 'w');
  const daemon = spawn(
    DOCKERD,
    [
      `--data-root=${join(STATE, 'data')}`,
      `--exec-root=${join(STATE, 'exec')}`,
      `--pidfile=${join(STATE, 'dockerd.pid')}`,
      `--host=unix://${socket}`,
      '--iptables=false',
      '--ip-forward=false',
      '--ip-masq=false',
      '--bridge=none',
      '--containerd-namespace=orch-e2e',
      '--containerd-plugins-namespace=orch-e2e-plugins',
    ],
    { stdio: ['ignore', log, log], detached: true },
  );
  const exited = new Promise<number | null>((resolve) => daemon.once('exit', resolve));
  const stop = async () => {
    if (daemon.exitCode !== null) return;
    daemon.kill('SIGTERM');
    const timer = setTimeout(() => daemon.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  };
  for (let i = 0; i < 120; i++) {
    if (daemon.exitCode !== null) break;
    if (spawnSync('docker', ['version'], { env, timeout: 10_000 }).status === 0) return { env, started: true, stop };
    await new Promise((r) => setTimeout(r, 500));
  }
  await stop();
  throw new Error(`dockerd did not come up (exit ${daemon.exitCode}); its log ends:\n${readFileSync(logFile, 'utf8').slice(-3000)}`);
}

/** The images docker-compose.yml and deploy/Dockerfile name, all from registries. */
export const UPSTREAM_IMAGES = ['node:20-bookworm-slim', 'quay.io/coreos/etcd:v3.5.17', 'nats:2.10-alpine', 'redis:7.0-alpine', 'haproxy:2.8-alpine'];
export const LOCAL_BASE = 'orch-local/debian:bookworm';
export const LOCAL_NODE = 'orch-local/node:20';
export const LOCAL_ENGINES = 'orch-local/engines:bookworm';
/** Debian's bundle of the certificate authorities this machine trusts. */
const HOST_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

const hasImage = (image: string, env: NodeJS.ProcessEnv) => spawnSync('docker', ['image', 'inspect', image], { env, timeout: 30_000 }).status === 0;

/** Whether every upstream image is present or can be pulled (false: no registry reachable). */
export function upstreamImagesAvailable(env: NodeJS.ProcessEnv): boolean {
  return UPSTREAM_IMAGES.every((image) => hasImage(image, env) || spawnSync('docker', ['pull', '-q', image], { env, timeout: 300_000 }).status === 0);
}

/**
 * Stand-ins for the upstream images, made from Debian packages only (where Docker Hub and quay.io
 * are out of reach): a bookworm base from debootstrap (`docker import`), node 20 as
 * node:20-bookworm-slim lays it out (this machine's binary, npm, headers and trusted certificate
 * authorities), and one image with
 * Debian's etcd, nats-server, redis-server and haproxy plus the tools the compose health checks
 * use. Built once per engine (cached by tag).
 */
export async function buildLocalImages(env: NodeJS.ProcessEnv): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'orch-images-'));
  try {
    if (!hasImage(LOCAL_BASE, env)) {
      const debootstrap = await ensureBinary('debootstrap', 'debootstrap');
      const rootfs = join(work, 'rootfs');
      run(debootstrap, ['--variant=minbase', '--include=ca-certificates', 'bookworm', rootfs, 'http://deb.debian.org/debian'], { timeoutMs: 900_000 });
      await rm(join(rootfs, 'var', 'cache', 'apt', 'archives'), { recursive: true, force: true });
      const tar = spawnSync('tar', ['-C', rootfs, '-c', '.'], { maxBuffer: 2 * 1024 * 1024 * 1024, timeout: 300_000 });
      if (tar.status !== 0) throw new Error(`tar of the debootstrap root failed: ${tar.stderr.toString()}`);
      run('docker', ['import', '-', LOCAL_BASE], { env, input: tar.stdout, timeoutMs: 300_000 });
    }
    if (!hasImage(LOCAL_NODE, env)) {
      const ctx = join(work, 'node');
      const prefix = dirname(dirname(process.execPath));
      const npm = [join(prefix, 'lib', 'node_modules', 'npm'), '/usr/lib/node_modules/npm', '/usr/local/lib/node_modules/npm'].find((d) => existsSync(d));
      if (!npm) throw new Error(`npm not found beside ${process.execPath}`);
      mkdirSync(ctx, { recursive: true });
      await cp(process.execPath, join(ctx, 'node'));
      await cp(npm, join(ctx, 'npm'), { recursive: true });
      await cp(join(prefix, 'include', 'node'), join(ctx, 'include'), { recursive: true });
      // The certificate authorities this machine trusts (npm ci in the build stage reaches the registry as this machine does).
      await cp(HOST_CA_BUNDLE, join(ctx, 'ca-certificates.crt'));
      writeFileSync(
        join(ctx, 'Dockerfile'),
        [
          `FROM ${LOCAL_BASE}`,
          'COPY node /usr/local/bin/node',
          'COPY npm /usr/local/lib/node_modules/npm',
          'COPY include /usr/local/include/node',
          'RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx && node --version',
          // node-gyp builds native modules against these headers instead of downloading them.
          'ENV npm_config_nodedir=/usr/local',
          'COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt',
          'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt',
        ].join('\n'),
      );
      run('docker', ['build', '-q', '-t', LOCAL_NODE, ctx], { env, timeoutMs: 600_000 });
    }
    if (!hasImage(LOCAL_ENGINES, env)) {
      const ctx = join(work, 'engines');
      mkdirSync(ctx, { recursive: true });
      writeFileSync(
        join(ctx, 'Dockerfile'),
        [
          `FROM ${LOCAL_BASE}`,
          'RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends etcd-server etcd-client nats-server redis-server redis-tools haproxy wget >/dev/null && rm -rf /var/lib/apt/lists/*',
        ].join('\n'),
      );
      run('docker', ['build', '-q', '--network=host', '-t', LOCAL_ENGINES, ctx], { env, timeoutMs: 900_000 });
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
