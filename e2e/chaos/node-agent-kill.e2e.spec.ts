import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, tempDir } from '@orch/testing';
import type { ApiClient } from '../support/api-client';
import { POD_CONTROLLERS, startGateway, type GatewayProcess } from '../support/gateway';
import { eventually, startNodeAgent, type NodeAgentProcess } from '../support/node-agent';
import { chaosCycles, chaosTimeout, recordChaos } from './support/chaos';

const CYCLES = chaosCycles(3);
const NODE = 'chaos-node';
const PODS = '/api/v1/namespaces/default/pods';

/** A web server on $POD_IP:8080 that logs a tick every 100 ms. */
const WEB = `require('http').createServer((q, s) => s.end('ok')).listen(8080, process.env.POD_IP);
let n = 0; setInterval(() => console.log('tick ' + n++), 100);`;

const pod = (name: string, container: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { chaos: 'node-agent' } },
  spec: { nodeName: NODE, terminationGracePeriodSeconds: 2, containers: [{ name: 'c', image: 'none', ...container }] },
});
const web = (name: string) =>
  pod(name, { command: [process.execPath, '-e', WEB], ports: [{ name: 'http', containerPort: 8080 }], readinessProbe: { httpGet: { port: 'http', path: '/' }, periodSeconds: 1 } });
const shell = (name: string, script: string) => pod(name, { command: ['/bin/sh', '-c', script] });

const pidOf = (p: any) => Number(p.status?.containerStatuses?.[0]?.containerID?.replace('process://', ''));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
};
const ready = (p: any) => p?.status?.phase === 'Running' && p.status.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');

/** Shims still running under the agent's root dir (state files whose pid is alive): one per running container. */
function liveShims(rootDir: string): { uid: string; pid: number }[] {
  const out: { uid: string; pid: number }[] = [];
  const pods = join(rootDir, 'pods');
  for (const uid of existsSync(pods) ? readdirSync(pods) : []) {
    const run = join(pods, uid, 'run');
    for (const c of existsSync(run) ? readdirSync(run) : []) {
      const state = join(run, c, 'state.json');
      if (!existsSync(state)) continue;
      const { shimPid } = JSON.parse(readFileSync(state, 'utf8'));
      if (alive(shimPid)) out.push({ uid, pid: shimPid });
    }
  }
  return out;
}

/** The pod's namespace holder (sandbox runtime) recorded under the agent's root dir, if that file is there. */
function holderOf(rootDir: string, uid: string): number | undefined {
  const file = join(rootDir, 'pods', uid, 'pids', 'sandbox');
  const pid = existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : NaN;
  return Number.isInteger(pid) && pid > 1 ? pid : undefined;
}

/** The runtimes whose containers outlive a killed agent: plain host processes, and the sandbox (its pods' namespace holders too). */
const RUNTIMES = [{ runtime: 'process' }, { runtime: 'sandbox' }];

/**
 * kill -9 of the node agent with pods running: the restarted agent adopts them (same process,
 * restartCount and startedAt unchanged, logs continue), stops a pod deleted while it was down
 * (and, in the sandbox, releases its namespace holder) and starts one created meanwhile, and
 * leaves no process behind; a clean stop at the end ends every container and holder.
 */
describe.each(RUNTIMES)('chaos: kill -9 of the node agent ($runtime runtime)', ({ runtime }) => {
  let gw: GatewayProcess;
  let admin: ApiClient;
  let rootDir: string;
  let agent: NodeAgentProcess;
  let args: string[];

  beforeAll(async () => {
    gw = await startGateway({ controllers: POD_CONTROLLERS });
    admin = gw.admin;
    rootDir = await tempDir('chaos-agent-');
    args = [`--runtime=${runtime}`, `--client-ca-file=${join(gw.dataDir, 'pki', 'ca.crt')}`, '--pod-workers=4', '--node-status-update-frequency=1s'];
    agent = await startNodeAgent({ name: NODE, kubeconfig: gw.kubeconfig, rootDir, args });
  }, 60_000);
  afterAll(async () => {
    await agent?.stop();
    await gw?.stop();
    if (rootDir) await removeDir(rootDir);
  });

  it(
    `${CYCLES} cycles: running pods adopted, not restarted; deleted-while-down pods stopped; no orphans`,
    async () => {
      for (const p of [web('web'), shell('ticker', 'i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.2; done'), shell('victim-0', 'exec sleep 100000')]) {
        expect((await admin.post(PODS, p)).status).toBe(201);
      }
      const get = async (name: string) => (await admin.get(`${PODS}/${name}`)).json;
      // A pod that does not get ready is reported with its status and the agent's last lines.
      const waitReady = (name: string) =>
        eventually(`${name} ready`, async () => ((p) => (ready(p) ? p : undefined))(await get(name)), 30_000).catch(async (err: Error) => {
          const status = JSON.stringify((await get(name))?.status);
          throw new Error(`${err.message}\nstatus: ${status}\nagent output:\n${agent.process.output().split('\n').slice(-40).join('\n')}`);
        });
      const steady = ['web', 'ticker'];
      const before = new Map<string, any>();
      for (const name of [...steady, 'victim-0']) before.set(name, await waitReady(name));
      const sandboxed = runtime === 'sandbox';
      /** Every namespace holder seen, by pod uid (sandbox runtime). */
      const holders = new Map<string, number>();
      const recordHolder = (p: any) => {
        if (!sandboxed) return;
        const pid = holderOf(rootDir, p.metadata.uid);
        expect({ pod: p.metadata.name, holder: pid !== undefined && alive(pid) }).toEqual({ pod: p.metadata.name, holder: true });
        holders.set(p.metadata.uid, pid!);
      };
      for (const p of before.values()) recordHolder(p);

      const recoveryMs: number[] = [];
      let orphans = 0;
      let restarted = 0;
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const tickerLog = join(rootDir, 'pods', before.get('ticker').metadata.uid, 'logs', 'c', `${before.get('ticker').status.containerStatuses[0].restartCount}.log`);
        const victim = `victim-${cycle}`;
        const victimPid = pidOf(before.get(victim));
        const killedAt = Date.now();
        await agent.process.kill9();
        const logSize = statSync(tickerLog).size;

        // While the agent is down: every container keeps running; one pod goes, another comes.
        for (const name of [...steady, victim]) expect({ name, alive: alive(pidOf(before.get(name))) }).toEqual({ name, alive: true });
        expect((await admin.delete(`${PODS}/${victim}`)).status).toBe(200);
        const next = `victim-${cycle + 1}`;
        expect((await admin.post(PODS, shell(next, 'exec sleep 100000'))).status).toBe(201);

        agent = await startNodeAgent({ name: NODE, kubeconfig: gw.kubeconfig, rootDir, args });
        // Adopted: the ticker's output (held in its FIFO meanwhile) reaches its instance log again.
        await eventually('the adopted container logs through the new agent', () => (statSync(tickerLog).size > logSize ? true : undefined), 30_000, 20);
        recoveryMs.push(Date.now() - killedAt);
        for (const name of steady) await waitReady(name);

        for (const name of steady) {
          const was = before.get(name).status.containerStatuses[0];
          const now = (await get(name)).status.containerStatuses[0];
          if (now.containerID !== was.containerID || now.restartCount !== was.restartCount) restarted++;
          expect({ name, containerID: now.containerID, restartCount: now.restartCount, startedAt: now.state.running?.startedAt }).toEqual({
            name,
            containerID: was.containerID,
            restartCount: was.restartCount,
            startedAt: was.state.running.startedAt,
          });
          expect(alive(pidOf(before.get(name)))).toBe(true);
        }
        // Nothing the ticker wrote was lost: its tick numbers in the log have no gap.
        const ticks = readFileSync(tickerLog, 'utf8').split('\n').map((l) => /stdout F tick (\d+)$/.exec(l)?.[1]).filter(Boolean).map(Number);
        expect(ticks.every((t, i) => i === 0 || t === ticks[i - 1] + 1)).toBe(true);

        // The pod deleted meanwhile is stopped and gone, its namespace holder too; the new one runs.
        const victimUid = before.get(victim).metadata.uid;
        await eventually(`${victim} gone`, async () => ((await admin.get(`${PODS}/${victim}`)).status === 404 ? true : undefined), 30_000);
        await eventually(`${victim}'s process stopped`, () => (alive(victimPid) ? undefined : true), 10_000);
        if (sandboxed) await eventually(`${victim}'s namespace holder released`, () => (alive(holders.get(victimUid)!) ? undefined : true), 10_000);
        before.set(next, await waitReady(next));
        recordHolder(before.get(next));
        const shims = liveShims(rootDir);
        const expected = [...steady, next].map((n) => before.get(n).metadata.uid).sort();
        const liveHolders = [...holders].filter(([, pid]) => alive(pid)).map(([uid]) => uid);
        orphans += shims.filter((s) => !expected.includes(s.uid)).length + liveHolders.filter((uid) => !expected.includes(uid)).length;
        expect(shims.map((s) => s.uid).sort()).toEqual(expected);
        if (sandboxed) {
          expect(liveHolders.sort()).toEqual(expected);
          // Adopted pods keep the holder they had: their containers' namespaces stay the same.
          for (const name of steady) expect(holderOf(rootDir, before.get(name).metadata.uid)).toBe(holders.get(before.get(name).metadata.uid));
        }
      }

      // A clean stop ends every container and namespace holder, adopted ones included.
      const current = [...steady, `victim-${CYCLES}`].map((n) => before.get(n));
      expect(await agent.process.stop()).toMatchObject({ code: 0, signal: null });
      const left = [...current.map(pidOf), ...current.map((p) => holders.get(p.metadata.uid)).filter((pid) => pid !== undefined)].filter(alive);
      orphans += left.length;
      expect(left).toEqual([]);
      recordChaos({ component: `node-agent (${runtime} runtime)`, fault: 'kill -9 with pods running', cycles: CYCLES, acknowledged: 0, lost: 0, duplicates: restarted, orphans, recoveryMs });
    },
    chaosTimeout(CYCLES, 40_000),
  );
});
