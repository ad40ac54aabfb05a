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

/**
 * kill -9 of the node agent (process runtime) with pods running: the restarted agent adopts
 * them (same process, restartCount and startedAt unchanged, logs continue), stops a pod deleted
 * while it was down and starts one created meanwhile, and leaves no process behind.
 */
describe('chaos: kill -9 of the node agent', () => {
  let gw: GatewayProcess;
  let admin: ApiClient;
  let rootDir: string;
  let agent: NodeAgentProcess;
  let args: string[];

  beforeAll(async () => {
    gw = await startGateway({ controllers: POD_CONTROLLERS });
    admin = gw.admin;
    rootDir = await tempDir('chaos-agent-');
    args = [`--client-ca-file=${join(gw.dataDir, 'pki', 'ca.crt')}`, '--pod-workers=4', '--node-status-update-frequency=1s'];
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
      const waitReady = (name: string) => eventually(`${name} ready`, async () => ((p) => (ready(p) ? p : undefined))(await get(name)), 30_000);
      const steady = ['web', 'ticker'];
      const before = new Map<string, any>();
      for (const name of [...steady, 'victim-0']) before.set(name, await waitReady(name));

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

        // The pod deleted meanwhile is stopped and gone; the new one runs.
        await eventually(`${victim} gone`, async () => ((await admin.get(`${PODS}/${victim}`)).status === 404 ? true : undefined), 30_000);
        await eventually(`${victim}'s process stopped`, () => (alive(victimPid) ? undefined : true), 10_000);
        before.set(next, await waitReady(next));
        const shims = liveShims(rootDir);
        const expected = [...steady, next].map((n) => before.get(n).metadata.uid).sort();
        orphans += shims.filter((s) => !expected.includes(s.uid)).length;
        expect(shims.map((s) => s.uid).sort()).toEqual(expected);
      }
      recordChaos({ component: 'node-agent (process runtime)', fault: 'kill -9 with pods running', cycles: CYCLES, acknowledged: 0, lost: 0, duplicates: restarted, orphans, recoveryMs });
    },
    chaosTimeout(CYCLES, 40_000),
  );
});
