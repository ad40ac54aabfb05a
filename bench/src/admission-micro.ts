// In-process figure of the ValidatingAdmissionPolicy plugin: CPU per `validate()` of a config
// map create against the bench's 10 policies, without a gateway around it.
//
//   node dist/bench/src/admission-micro.js [--creates=20000] [--policies=10] [--flush] [--builds=<dist>,<dist>]
//
// --flush sweeps 8 MB of memory before each call, as the rest of a gateway's request work does
// between two validations: with it the figure is what a gateway pays (≈ 400 µs here, the bench's
// +380 µs per create), without it the same calls cost ≈ 50 µs (data and code stay in the CPU's
// caches). --builds runs the plugins of several builds' dist/ directories in alternating rounds,
// each build in a process of its own (paired ratios cancel the machine's load; in one process the
// builds share the engine's module and the second build measured 1.12–1.2× the first even when
// the two were copies of one build).

import 'reflect-metadata';
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Catalog } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import { policies } from './admission';

interface Plugin {
  validate(a: unknown): unknown;
}

const ROUNDS = 20;
const WARM_UP = 5000;
const GROUP = 'admissionregistration.orch.io';
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1];

/** The replica's caches the plugin reads, holding the bench's policies and bindings. */
function benchState(count: number): unknown {
  const ps = policies().slice(0, count);
  const lists = new Map<string, KubeObject[]>([
    [`${GROUP}/validatingadmissionpolicies`, ps.map((p) => ({ ...(p.policy as KubeObject), metadata: { ...(p.policy as KubeObject).metadata, resourceVersion: '1' } }))],
    [`${GROUP}/validatingadmissionpolicybindings`, ps.map((p) => p.binding as KubeObject)],
  ]);
  const cache = (group: string, resource: string) => {
    const list = () => lists.get(`${group}/${resource}`) ?? [];
    return { generation: 1, list: () => [...list()], get: (_ns: string, name: string) => list().find((o) => o.metadata.name === name) };
  };
  return { catalog: new Catalog(), cache, authorizer: { authorize: async () => ({ decision: 'Allow' }) }, versioned: (a: unknown) => a };
}

let created = 0;
/** The attributes of a config map create as the bench sends it (after defaulting). */
function create(): unknown {
  const name = `c-${created++}`;
  const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'bench', labels: { app: 'bench' }, uid: '558e06fb-2d93-484f-b67d-b729cc191dc2', creationTimestamp: '2026-11-29T04:00:00Z' }, data: { key: 'value' } };
  return { operation: 'CREATE', object, kind: { group: '', version: 'v1', kind: 'ConfigMap' }, resource: { group: '', version: 'v1', resource: 'configmaps' }, subresource: '', namespace: 'bench', name, userInfo: { username: 'admin', groups: ['system:masters', 'system:authenticated'] }, dryRun: false };
}

const sweep = new Float64Array(1 << 20);
/** Touches 8 MB, a cache line at a time (evicts what the last validation left in the CPU caches). */
function flush(): void {
  for (let i = 0; i < sweep.length; i += 8) sweep[i]++;
}

type Options = { creates: number; policies: number; flush: boolean };

/** One build's plugin in this process: warmed up, checked to apply, then measured a round at a time. */
async function child(dist: string, o: Options): Promise<void> {
  const { ValidatingAdmissionPolicyPlugin } = createRequire(__filename)(join(dist, 'apps/gateway/src/admission/policy/validating-admission-policy.js')) as { ValidatingAdmissionPolicyPlugin: new (state: unknown) => Plugin };
  const plugin = new ValidatingAdmissionPolicyPlugin(benchState(o.policies));
  for (let i = 0; i < WARM_UP; i++) await plugin.validate(create());
  // The policies apply: a config map the 9th refuses is refused.
  if (o.policies > 8) {
    const refused = create() as { object: { data: Record<string, string> } };
    refused.object.data = { password: 'x' };
    if (await new Promise((resolve) => resolve(plugin.validate(refused))).then(() => true, () => false)) throw new Error(`${dist}: the policies do not apply`);
  }
  const send = (m: unknown) => process.send!(m);
  process.on('message', () => {
    void (async () => {
      let spent = 0;
      for (let i = 0; i < o.creates / ROUNDS; i++) {
        const a = create();
        if (o.flush) flush();
        const before = process.cpuUsage();
        await plugin.validate(a);
        const t = process.cpuUsage(before);
        spent += t.user + t.system;
      }
      send(spent / (o.creates / ROUNDS));
    })();
  });
  send('ready');
}

/** A build's child process, measuring a round when asked. */
function measured(dist: string, argv: string[]): { dist: string; rounds: number[]; ready: Promise<void>; round(): Promise<number>; stop(): void } {
  const proc = fork(__filename, [...argv, `--child=${dist}`], { stdio: 'inherit' });
  const next = () => new Promise<unknown>((resolve, reject) => {
    const exited = (code: number | null) => reject(new Error(`${dist}: the measuring process exited (${code})`));
    proc.once('exit', exited);
    proc.once('message', (m) => {
      proc.off('exit', exited);
      resolve(m);
    });
  });
  const ready = next().then(() => undefined);
  return { dist, rounds: [], ready, round: () => (proc.send('round'), next() as Promise<number>), stop: () => proc.kill() };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { creates: { type: 'string', default: '20000' }, policies: { type: 'string', default: '10' }, flush: { type: 'boolean', default: false }, builds: { type: 'string', default: join(__dirname, '..', '..') }, child: { type: 'string' } } });
  const o: Options = { creates: Number(values.creates), policies: Number(values.policies), flush: values.flush };
  if (values.child) return child(values.child, o);
  const argv = process.argv.slice(2).filter((a) => !a.startsWith('--builds'));
  const builds: ReturnType<typeof measured>[] = [];
  // One at a time: their warm-ups would otherwise compete for the CPU.
  for (const dist of values.builds.split(',')) {
    const b = measured(dist, argv);
    await b.ready;
    builds.push(b);
  }
  for (let r = 0; r < ROUNDS; r++) {
    // Every other round in the reverse order: the build measured first in a round gains, which this cancels.
    for (const b of r % 2 ? [...builds].reverse() : builds) b.rounds.push(await b.round());
  }
  for (const b of builds) b.stop();
  for (const b of builds) console.log(`${b.dist}: ${median(b.rounds).toFixed(1)} µs CPU per validate (median of ${ROUNDS} rounds; lowest ${Math.min(...b.rounds).toFixed(1)})${o.flush ? ', caches flushed before each' : ''}`);
  for (const b of builds.slice(1)) console.log(`${b.dist} / ${builds[0].dist}: ${median(b.rounds.map((x, i) => x / builds[0].rounds[i])).toFixed(3)} (median paired round ratio)`);
}

void main();
