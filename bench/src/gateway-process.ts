import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import https from 'node:https';
import { join } from 'node:path';
import type { ClientConfig } from '@orch/client';
import { freePort } from '@orch/testing';

export const ROOT = join(__dirname, '..', '..', '..');
/**
 * The built entry point of an app (`dist/apps/<app>/src/main.js`); `npm run bench -- --compare=<ref>`
 * points ORCH_BENCH_APPS_ROOT at the checkout of the commit compared with, so its apps run under this
 * checkout's bench.
 */
export const appMain = (app: string) => join(process.env.ORCH_BENCH_APPS_ROOT || ROOT, 'dist', 'apps', app, 'src', 'main.js');

export interface BenchGateway {
  url: string;
  port: number;
  process: ChildProcess;
  /** `<dataDir>/admin.kubeconfig`. */
  kubeconfig: string;
  pkiDir: string;
  /** Admin credentials as PEM (for https agents) and as a client config. */
  creds: { ca: string; cert: string; key: string };
  admin: ClientConfig;
}

function readyz(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    https.get(`${url}/readyz`, { rejectUnauthorized: false }, (r) => (r.resume(), resolve(r.statusCode === 200))).on('error', () => resolve(false));
  });
}

/**
 * The environment of a gateway process: NODE_OPTIONS with the gateway's default Node flags
 * (deploy/node-options.json of the apps run, as deploy/topology.mjs's serviceEnv gives them to
 * npm start, start:ha and compose) ahead of the bench's own NODE_OPTIONS. A checkout without the
 * file (`--compare` with an older ref) runs its gateways on Node's defaults.
 */
function gatewayEnv(): NodeJS.ProcessEnv {
  let defaults = '';
  try {
    defaults = (JSON.parse(readFileSync(join(process.env.ORCH_BENCH_APPS_ROOT || ROOT, 'deploy', 'node-options.json'), 'utf8')) as { gateway: string[] }).gateway.join(' ');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return { ...process.env, NODE_OPTIONS: [defaults, process.env.NODE_OPTIONS].filter(Boolean).join(' ') };
}

/**
 * Node flags for every gateway process the bench starts (gateways and watch pumps), from
 * ORCH_BENCH_GATEWAY_NODE_OPTIONS split on whitespace (e.g. `--max-semi-space-size=64`): on the
 * command line, so they win over the defaults in NODE_OPTIONS. Empty when the variable is unset.
 */
const benchGatewayNodeArgs = (): string[] => (process.env.ORCH_BENCH_GATEWAY_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);

/**
 * Spawns `node <ORCH_BENCH_GATEWAY_NODE_OPTIONS> <nodeArgs> <main> <args>` with {@link gatewayEnv}
 * and waits until `<url>/readyz` answers 200 (30 s at most; else kills it and throws).
 */
async function spawnUntilReady(what: string, url: string, main: string, args: string[], nodeArgs: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...benchGatewayNodeArgs(), ...nodeArgs, main, ...args], { stdio: 'ignore', env: gatewayEnv() });
  for (let i = 0; i < 300 && child.exitCode === null && !(await readyz(url)); i++) await new Promise((r) => setTimeout(r, 100));
  if (!(await readyz(url))) {
    child.kill('SIGKILL');
    throw new Error(`the ${what} did not become ready`);
  }
  return child;
}

/**
 * Starts `gateway watch-pump` (the watch pump in a process of its own) on a free loopback port
 * with the given store and engine flags and waits until it is ready. The PKI in --pki-dir must exist.
 */
export async function startBenchWatchPump(args: string[], nodeArgs: string[] = []): Promise<ChildProcess> {
  const port = await freePort();
  return spawnUntilReady('watch pump', `https://127.0.0.1:${port}`, appMain('gateway'), ['watch-pump', `--secure-port=${port}`, '--bind-address=127.0.0.1', ...args], nodeArgs);
}

/**
 * Starts the built gateway (SQLite unless args say otherwise) on a free loopback port with its
 * state in dataDir and waits until /readyz answers 200 (30 s at most); `nodeArgs` go to node
 * itself (e.g. --cpu-prof). The caller kills `process` when done.
 */
export async function startBenchGateway(dataDir: string, args: string[] = [], nodeArgs: string[] = []): Promise<BenchGateway> {
  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  const child = await spawnUntilReady('gateway', url, appMain('gateway'), [`--secure-port=${port}`, '--bind-address=127.0.0.1', `--data-dir=${dataDir}`, ...args], nodeArgs);
  // Replicas share a PKI through --pki-dir.
  const pkiArg = args.find((a) => a.startsWith('--pki-dir='));
  const pkiDir = pkiArg ? pkiArg.slice('--pki-dir='.length) : join(dataDir, 'pki');
  const creds = {
    ca: await readFile(join(pkiDir, 'ca.crt'), 'utf8'),
    cert: await readFile(join(pkiDir, 'admin.crt'), 'utf8'),
    key: await readFile(join(pkiDir, 'admin.key'), 'utf8'),
  };
  return { url, port, process: child, kubeconfig: join(dataDir, 'admin.kubeconfig'), pkiDir, creds, admin: { server: url, caPem: creds.ca, certPem: creds.cert, keyPem: creds.key } };
}
