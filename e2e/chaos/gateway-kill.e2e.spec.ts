import { removeDir, startEtcd, tempDir, type EtcdServer } from '@orch/testing';
import type { ApiClient } from '../support/api-client';
import { startGateway, type GatewayProcess } from '../support/gateway';
import { eventually } from '../support/node-agent';
import { adminClient, between, chaosCycles, chaosTimeout, recordChaos, sleep, verifyStore } from './support/chaos';

const CYCLES = chaosCycles(3);
const WRITERS = 8;

interface Backend {
  name: string;
  /** Gateway flags selecting the store. */
  args(): string[];
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
}

let etcd: EtcdServer | undefined;
const BACKENDS: Backend[] = [
  { name: 'sqlite', args: () => [], setUp: async () => undefined, tearDown: async () => undefined },
  {
    name: 'etcd',
    args: () => ['--storage-backend=etcd', `--etcd-servers=${etcd!.endpoint}`],
    setUp: async () => {
      etcd = await startEtcd();
    },
    tearDown: async () => {
      await etcd?.stop();
      etcd = undefined;
    },
  },
];

interface Acked {
  name: string;
  uid: string;
  rv: number;
}

/**
 * WRITERS clients create config maps in `ns` as fast as the gateway answers until their
 * connection breaks; resolves with every create answered 201.
 */
function createUntilKilled(client: ApiClient, ns: string, cycle: number): { acked: Acked[]; done: Promise<Acked[]> } {
  const acked: Acked[] = [];
  const writer = async (w: number) => {
    for (let i = 0; ; i++) {
      const name = `c${cycle}-w${w}-${i}`;
      let r;
      try {
        r = await client.post(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { i: String(i) } });
      } catch {
        return; // the gateway died under this request: it may or may not have been written
      }
      if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.text}`);
      acked.push({ name, uid: r.json.metadata.uid, rv: Number(r.json.metadata.resourceVersion) });
    }
  };
  return { acked, done: Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w))).then(() => acked) };
}

describe.each(BACKENDS)('chaos: kill -9 of the gateway during a stream of creates ($name)', (backend) => {
  let dataDir: string;
  let gw: GatewayProcess;

  beforeAll(async () => {
    await backend.setUp();
    dataDir = await tempDir('chaos-gw-');
    gw = await startGateway({ dataDir, args: backend.args() });
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
    await backend.tearDown();
    if (dataDir) await removeDir(dataDir);
  });

  it(
    `${CYCLES} cycles: every 201 is there after the restart, the store verifies, watches resume or answer 410`,
    async () => {
      const verifyArgs = [`--data-dir=${dataDir}`, ...backend.args()];
      const recoveryMs: number[] = [];
      let acknowledged = 0;
      let lost = 0;
      let duplicates = 0;
      let resumed = 0;
      let gone = 0;
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const ns = `chaos-${cycle}`;
        expect((await gw.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status).toBe(201);
        const startRv = (await gw.admin.get(`/api/v1/namespaces/${ns}/configmaps`)).json.metadata.resourceVersion;

        // A watch that the kill cuts, on its own connection; and the writers.
        const watcher = await adminClient(gw);
        const before = watcher.watch(`/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${startRv}`, () => false, 120_000);
        const writers = await adminClient(gw);
        const writing = createUntilKilled(writers, ns, cycle);
        // Killed a random while after the first acknowledged create (a loaded machine may take a while for it).
        await eventually('a first acknowledged create', () => (writing.acked.length > 0 ? true : undefined), 30_000, 10);
        await sleep(between(200, 1000));
        const killedAt = Date.now();
        await gw.process.kill9();
        const acked = await writing.done;
        const seenBefore = (await before.catch(() => ({ events: [] as any[] }))).events;
        watcher.close();
        writers.close();
        gw.admin.close();
        gw.anonymous.close();
        expect(acked.length).toBeGreaterThan(0);
        acknowledged += acked.length;

        gw = await gw.restart();
        recoveryMs.push(Date.now() - killedAt);

        // Every acknowledged create is there, with the uid and resourceVersion it was acknowledged with.
        const list = await gw.admin.get(`/api/v1/namespaces/${ns}/configmaps`);
        expect(list.status).toBe(200);
        const present = new Map<string, any>(list.json.items.map((o: any) => [o.metadata.name, o]));
        const missing = acked.filter((a) => present.get(a.name)?.metadata.uid !== a.uid || Number(present.get(a.name)?.metadata.resourceVersion) !== a.rv);
        lost += missing.length;
        expect(missing.map((a) => a.name)).toEqual([]);
        const rvs = list.json.items.map((o: any) => o.metadata.resourceVersion);
        const uids = list.json.items.map((o: any) => o.metadata.uid);
        duplicates += rvs.length - new Set(rvs).size + (uids.length - new Set(uids).size);
        expect(new Set(rvs).size).toBe(rvs.length);
        expect(new Set(uids).size).toBe(uids.length);

        // What the cut watch showed was committed: every event it delivered is in the store.
        const beforeRvs = seenBefore.map((e) => Number(e.object.metadata.resourceVersion));
        for (const e of seenBefore) expect(present.get(e.object.metadata.name)?.metadata.uid).toBe(e.object.metadata.uid);
        expect(beforeRvs).toEqual([...beforeRvs].sort((a, b) => a - b));

        // Resuming from the last event seen: the rest in order, exactly once, or 410 Gone.
        const lastSeen = beforeRvs.length ? beforeRvs[beforeRvs.length - 1] : Number(startRv);
        const expected = [...present.values()].filter((o) => Number(o.metadata.resourceVersion) > lastSeen).map((o) => o.metadata.name);
        const after = await gw.admin.watch(`/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${lastSeen}`, (evs) => evs.length >= expected.length, expected.length ? 20_000 : 1_500);
        if (after.status === 410 || after.events[0]?.object?.code === 410) {
          gone++;
        } else {
          expect(after.status).toBe(200);
          resumed++;
          const afterRvs = after.events.map((e) => Number(e.object.metadata.resourceVersion));
          expect(after.events.every((e) => e.type === 'ADDED')).toBe(true);
          expect(afterRvs).toEqual([...afterRvs].sort((a, b) => a - b));
          expect(after.events.map((e) => e.object.metadata.name).sort()).toEqual([...expected].sort());
        }

        const verified = await verifyStore(verifyArgs);
        if (!verified.ok) throw new Error(`the store does not verify after cycle ${cycle}:\n${verified.output}`);
      }
      recordChaos({ component: `gateway (${backend.name})`, fault: 'kill -9 during creates', cycles: CYCLES, acknowledged, lost, duplicates, orphans: 0, recoveryMs });
      process.stdout.write(`chaos: gateway (${backend.name}) watches after restart: ${resumed} resumed, ${gone} answered 410\n`);
    },
    chaosTimeout(CYCLES, 20_000),
  );
});
