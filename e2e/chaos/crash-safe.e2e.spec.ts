import { existsSync } from 'node:fs';
import { readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
// The torn-log test cuts the log inside its last committed frame, found the way the store reads it.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { inspectSqliteWal } from '@orch/storage';
import { freePort, httpProbe, removeDir, startProcess, tempDir, type ProcessExit, type RunningProcess } from '@orch/testing';
import { CONTROLLER_MANAGER_MAIN, startControllerManager } from '../support/controller-manager';
import { POD_CONTROLLERS, startGateway, type GatewayProcess } from '../support/gateway';
import { eventually, startNodeAgent, type NodeAgentProcess } from '../support/node-agent';
import { SCHEDULER_MAIN, startScheduler } from '../support/scheduler';
import { verifyStore } from './support/chaos';

/** SQLite's write-ahead log layout (https://www.sqlite.org/fileformat2.html#walformat). */
const WAL_HEADER_BYTES = 32;
const WAL_FRAME_HEADER_BYTES = 24;

const PROXY_MAIN = join(__dirname, '..', '..', 'dist', 'apps', 'network-proxy', 'src', 'main.js');
const CMS = '/api/v1/namespaces/default/configmaps';

/** SIGTERM, then how it ended and how long it took; SIGKILL only after `graceMs` (which the test then sees). */
async function terminate(proc: RunningProcess, graceMs: number): Promise<ProcessExit & { ms: number }> {
  const started = Date.now();
  const timer = setTimeout(() => void proc.kill9(), graceMs);
  try {
    process.kill(proc.pid, 'SIGTERM');
    const exit = await proc.exited;
    return { ...exit, ms: Date.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

const CLEAN = { code: 0, signal: null };

/**
 * Every component stops cleanly on SIGTERM (exit 0, no SIGKILL needed within its grace period)
 * and starts again on the same state with no manual step; a torn write-ahead log and a
 * half-written PKI file are found and named at start-up.
 */
describe('crash-safe stop and start', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({ controllers: POD_CONTROLLERS });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('gateway: SIGTERM ends watches and requests cleanly and exits 0; a restart serves the same objects', async () => {
    const dataDir = await tempDir('crash-safe-gw-');
    try {
      const first = await startGateway({ dataDir });
      const created = await first.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept' } });
      expect(created.status).toBe(201);
      // SIGTERM only once the watch is being served (it delivered an event): a watch that reaches
      // a closing gateway is rightly answered 503, which is not what this checks.
      let served: () => void = () => undefined;
      const serving = new Promise<void>((r) => (served = r));
      const watching = first.admin.watch(`${CMS}?watch=1&resourceVersion=${created.json.metadata.resourceVersion}`, (events) => (events.length > 0 && served(), false), 30_000);
      expect((await first.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'seen-by-the-watch' } })).status).toBe(201);
      await Promise.race([serving, watching]);
      expect(await terminate(first.process, 10_000)).toMatchObject(CLEAN);
      expect((await watching).status).toBe(200); // the stream ended; it was not reset
      first.admin.close();
      first.anonymous.close();
      const second = await first.restart();
      try {
        expect((await second.admin.get(`${CMS}/kept`)).json.metadata.uid).toBe(created.json.metadata.uid);
      } finally {
        await second.stop();
      }
    } finally {
      await removeDir(dataDir);
    }
  });

  it.each([
    { name: 'controller-manager', start: () => startControllerManager(gw.kubeconfig, ['replicaset'], ['--leader-elect=true']) },
    { name: 'scheduler', start: () => startScheduler(gw.kubeconfig) },
  ])('$name: SIGTERM exits 0 and releases its lease; the next process leads at once', async ({ name, start }) => {
    const lease = async () => (await gw.admin.get(`/apis/coordination.orch.io/v1/namespaces/orch-system/leases/${name}`)).json?.spec;
    const first = await start();
    await eventually(`${name} leads`, async () => ((l) => (l?.holderIdentity?.endsWith(`_${first.pid}`) ? l : undefined))(await lease()), 20_000);
    expect(await terminate(first, 10_000)).toMatchObject(CLEAN);
    expect((await lease()).holderIdentity ?? '').toBe('');
    // The default lease is 15 s: leading well before it would expire shows the lease was released.
    const second = await start();
    try {
      const releasedAt = Date.now();
      await eventually(`the next ${name} leads`, async () => ((l) => (l?.holderIdentity?.endsWith(`_${second.pid}`) ? l : undefined))(await lease()), 10_000);
      expect(Date.now() - releasedAt).toBeLessThan(15_000);
    } finally {
      await second.stop();
    }
  });

  // A stop that comes while a new leader is still starting (its controllers' tokens not yet
  // issued) is a clean stop too: it exited 1 ("stopped before a token ... was obtained") in CI.
  it.each([
    { name: 'controller-manager', main: CONTROLLER_MANAGER_MAIN, args: ['--controllers=replicaset', '--leader-elect=true'] },
    { name: 'scheduler', main: SCHEDULER_MAIN, args: [] },
  ])('$name: SIGTERM the moment it starts leading exits 0', async ({ main, args }) => {
    for (let attempt = 0; attempt < 3; attempt++) {
      // No readiness wait: the signal goes out from the line that says it leads (its identity ends in its pid).
      const proc = await startProcess({
        cmd: process.execPath,
        args: [main, `--kubeconfig=${gw.kubeconfig}`, `--secure-port=${await freePort()}`, ...args],
        onLine: (line) => ((m) => m && process.kill(Number(m[1]), 'SIGTERM'))(/started leading identity="[^"]*_(\d+)"/.exec(line)),
      });
      const timer = setTimeout(() => void proc.kill9(), 20_000);
      const exit = await proc.exited.finally(() => clearTimeout(timer));
      expect({ attempt, exit, output: exit.code === 0 ? '' : proc.output().slice(-2000) }).toEqual({ attempt, exit: CLEAN, output: '' });
    }
  });

  it('node-agent: SIGTERM stops its containers within --shutdown-grace-period and exits 0; a restart runs the pod again', async () => {
    const rootDir = await tempDir('crash-safe-agent-');
    const args = [`--client-ca-file=${join(gw.dataDir, 'pki', 'ca.crt')}`, '--shutdown-grace-period=5s'];
    let agent: NodeAgentProcess | undefined;
    try {
      agent = await startNodeAgent({ name: 'crash-safe-node', kubeconfig: gw.kubeconfig, rootDir, args });
      const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'sleeper' }, spec: { nodeName: 'crash-safe-node', containers: [{ name: 'c', image: 'none', command: ['sleep', '100000'] }] } };
      expect((await gw.admin.post('/api/v1/namespaces/default/pods', pod)).status).toBe(201);
      const running = (p: any) => (p.status?.containerStatuses?.[0]?.state?.running ? p : undefined);
      const before = await eventually('the pod runs', async () => running((await gw.admin.get('/api/v1/namespaces/default/pods/sleeper')).json), 30_000);
      const pid = Number(before.status.containerStatuses[0].containerID.replace('process://', ''));
      expect(await terminate(agent.process, 5_000 + 5_000)).toMatchObject(CLEAN);
      expect(existsSync(`/proc/${pid}`)).toBe(false);
      agent = await startNodeAgent({ name: 'crash-safe-node', kubeconfig: gw.kubeconfig, rootDir, args });
      const after = await eventually('the pod runs again', async () => ((p) => (running(p) && p.status.containerStatuses[0].containerID !== before.status.containerStatuses[0].containerID ? p : undefined))((await gw.admin.get('/api/v1/namespaces/default/pods/sleeper')).json), 30_000);
      expect(after.status.containerStatuses[0].restartCount).toBe(before.status.containerStatuses[0].restartCount + 1);
    } finally {
      await gw.admin.delete('/api/v1/namespaces/default/pods/sleeper?gracePeriodSeconds=0');
      await agent?.stop();
      await removeDir(rootDir);
    }
  });

  it('network-proxy: SIGTERM exits 0; a restart is ready again', async () => {
    const start = async () => {
      const metrics = await freePort();
      return startProcess({
        cmd: process.execPath,
        args: [PROXY_MAIN, `--kubeconfig=${gw.kubeconfig}`, `--healthz-bind-address=127.0.0.1:${await freePort()}`, `--metrics-bind-address=127.0.0.1:${metrics}`, '--hostname-override=crash-safe-node', '--nodeport-addresses=127.0.0.1/32'],
        readyProbe: httpProbe(`http://127.0.0.1:${metrics}/readyz`),
        timeoutMs: 30_000,
      });
    };
    const first = await start();
    expect(await terminate(first, 10_000)).toMatchObject(CLEAN);
    const second = await start();
    expect(await terminate(second, 10_000)).toMatchObject(CLEAN);
  });

  it('a torn write-ahead log is named at start-up; the store opens at its last complete transaction and verifies', async () => {
    const dataDir = await tempDir('crash-safe-wal-');
    try {
      const first = await startGateway({ dataDir });
      for (let i = 0; i < 20; i++) expect((await first.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `w${i}` } })).status).toBe(201);
      await first.kill9();
      // A power loss in the middle of the last committed frame of the log's current generation. Not
      // simply the file's last bytes: after a checkpoint the log restarts at its head and its tail
      // holds frames of an older generation, which SQLite ignores by design.
      const wal = join(dataDir, 'orch.db-wal');
      const { committedFrames } = inspectSqliteWal(join(dataDir, 'orch.db'));
      expect(committedFrames).toBeGreaterThan(0);
      const pageSize = (await readFile(wal)).readUInt32BE(8);
      await truncate(wal, WAL_HEADER_BYTES + committedFrames * (WAL_FRAME_HEADER_BYTES + pageSize) - 1000);
      const second = await first.restart();
      try {
        expect(second.process.output()).toMatch(/sqlite store: the write-ahead log .*orch\.db-wal ends in a torn write \(frame \d+: \d+ of \d+ bytes.*\); SQLite discards it/);
        expect((await second.admin.get(CMS)).status).toBe(200);
        const verified = await verifyStore([`--data-dir=${dataDir}`]);
        expect(verified.output).toMatch(/^store ok: sqlite /m);
      } finally {
        await second.stop();
      }
    } finally {
      await removeDir(dataDir);
    }
  });

  it('a half-written CA certificate stops start-up with a message naming the file and what to do', async () => {
    const dataDir = await tempDir('crash-safe-pki-');
    try {
      const first = await startGateway({ dataDir });
      await first.process.stop();
      first.admin.close();
      first.anonymous.close();
      const ca = join(dataDir, 'pki', 'ca.crt');
      const pem = await readFile(ca, 'utf8');
      await writeFile(ca, pem.slice(0, pem.length >> 1));
      await expect(startGateway({ dataDir })).rejects.toThrow(/gateway: .*pki\/ca\.crt cannot be read as PEM \(.*\): the file is incomplete or damaged; restore it from a backup, or remove the PKI directory/);
    } finally {
      await removeDir(dataDir);
    }
  });
});
