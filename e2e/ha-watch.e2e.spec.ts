import https from 'node:https';
import { join } from 'node:path';
import { Etcd3, type IKeyValue } from 'etcd3';
import { eventually, freePort, removeDir, startEtcd, startEtcdCluster, startNats, startProcess, startRedis, tempDir, type EtcdCluster, type EtcdServer, type NatsServer, type RedisServer, type RunningProcess } from '@orch/testing';
import { ApiClient } from './support/api-client';
import { GATEWAY_MAIN, startGateway, type GatewayProcess } from './support/gateway';

const NS = 'ha';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `cond` holds (the shared `eventually`, for a yes/no condition). */
async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  await eventually(what, async () => ((await cond()) ? true : undefined), timeoutMs, 50);
}

/** One event of the store's own feed (read from etcd directly: the truth). */
interface TruthEvent {
  type: 'create' | 'update' | 'delete';
  key: string;
  revision: number;
  /** The object after (create, update) or before (delete) the event. */
  value: string;
}

/** The gateway's etcd keys: `--etcd-prefix` (default /registry) + `/registry/<group>/<resource>/<ns>/<name>`. */
const ETCD_PREFIX = `/registry/registry/core/configmaps/${NS}/`;

interface Seen {
  type: string;
  name: string;
  rv: number;
}

/**
 * A client that watches like an informer: from a resourceVersion, on one gateway; when the
 * stream breaks it resumes from the last resourceVersion it saw, on the next live gateway.
 * It records every event, every ERROR and every bookmark that claims a revision it was not
 * given everything up to.
 */
class ResumingWatch {
  readonly events: Seen[] = [];
  readonly errors: unknown[] = [];
  readonly badBookmarks: string[] = [];
  private lastRv: number;
  private bookmarkRv = 0;
  private stopped = false;
  private req?: ReturnType<typeof https.get>;

  constructor(
    private readonly gateways: () => GatewayProcess[],
    private at: number,
    from: number,
    private readonly selector = '',
  ) {
    this.lastRv = from;
    this.open();
  }

  private open(): void {
    if (this.stopped) return;
    const gws = this.gateways();
    const gw = gws[this.at % gws.length];
    const creds = gw.creds;
    const query = `watch=1&allowWatchBookmarks=true&timeoutSeconds=600&resourceVersion=${this.lastRv}${this.selector ? `&labelSelector=${encodeURIComponent(this.selector)}` : ''}`;
    let buffered = '';
    let retried = false;
    const retry = () => {
      if (retried) return;
      retried = true;
      this.req = undefined;
      if (this.stopped) return;
      this.at++; // resume anywhere: the next gateway
      setTimeout(() => this.open(), 100);
    };
    const req = https.get(`${gw.url}/api/v1/namespaces/${NS}/configmaps?${query}`, { ca: creds.ca, cert: creds.cert, key: creds.key }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        retry();
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line.trim()) this.onEvent(JSON.parse(line));
        }
      });
      // A clean end, or a reset when the gateway died: resume elsewhere.
      res.on('close', retry);
      res.on('error', () => undefined);
    });
    req.on('error', retry);
    this.req = req;
  }

  private onEvent(ev: { type: string; object: { metadata: { name?: string; resourceVersion: string } } }): void {
    const rv = Number(ev.object.metadata.resourceVersion);
    if (ev.type === 'ERROR') {
      this.errors.push(ev.object);
      return;
    }
    if (ev.type === 'BOOKMARK') {
      this.bookmarkRv = Math.max(this.bookmarkRv, rv);
      this.lastRv = Math.max(this.lastRv, rv);
      return;
    }
    if (rv <= this.bookmarkRv) this.badBookmarks.push(`event ${ev.type} ${ev.object.metadata.name}@${rv} after a bookmark at ${this.bookmarkRv}`);
    this.events.push({ type: ev.type, name: ev.object.metadata.name!, rv });
    this.lastRv = rv;
  }

  stop(): void {
    this.stopped = true;
    this.req?.destroy();
  }
}

/** The store's own feed, mapped to what a watch of the selection must show. */
function expected(truth: TruthEvent[], parity?: string): Seen[] {
  const out: Seen[] = [];
  for (const e of truth) {
    const name = e.key.slice(e.key.lastIndexOf('/') + 1);
    if (parity && JSON.parse(e.value).metadata.labels?.parity !== parity) continue;
    out.push({ type: e.type === 'create' ? 'ADDED' : e.type === 'update' ? 'MODIFIED' : 'DELETED', name, rv: e.revision });
  }
  return out;
}

/**
 * Three gateway replicas over a 3-member etcd, NATS and Redis: concurrent writers through two
 * of them and resuming watchers on all three see exactly the store's history, in order, with
 * no gap and no duplicate, while the pump leader is killed, NATS goes down, Redis hangs and
 * goes down (watches resuming from the start meanwhile replay from etcd) and an etcd member dies.
 */
describe('gateway replicas over etcd with NATS and Redis', () => {
  let etcd: EtcdCluster;
  let nats: NatsServer;
  let redis: RedisServer;
  let shared: string;
  const gateways: GatewayProcess[] = [];
  let etcdClient: Etcd3;

  beforeAll(async () => {
    [etcd, nats, redis, shared] = await Promise.all([startEtcdCluster(3), startNats(), startRedis(), tempDir('orch-ha-')]);
    const args = [
      '--storage-backend=etcd',
      `--etcd-servers=${etcd.endpoints.join(',')}`,
      `--nats-url=${nats.url}`,
      `--redis-url=${redis.url}`,
      `--pki-dir=${join(shared, 'pki')}`,
    ];
    // The first creates the shared PKI; the others reuse it.
    gateways.push(await startGateway({ args }));
    gateways.push(...(await Promise.all([startGateway({ args }), startGateway({ args })])));
    etcdClient = new Etcd3({ hosts: etcd.endpoints });
    expect((await gateways[0].admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    etcdClient?.close();
    for (const gw of gateways) await gw.stop();
    await Promise.all([etcd?.stop(), nats?.stop(), redis?.stop()]);
    if (shared) await removeDir(shared);
  });

  it('watchers on every replica see the store’s history exactly across a pump failover, NATS, Redis and etcd faults, and resume from the start during them', async () => {
    const base = Number((await etcdClient.get('\0').exec()).header.revision);
    const truth: TruthEvent[] = [];
    const feed = await etcdClient.watch().prefix(ETCD_PREFIX).startRevision(String(base + 1)).withPreviousKV().create();
    const key = (kv: IKeyValue) => kv.key.toString();
    feed.on('put', (kv) => truth.push({ type: kv.create_revision === kv.mod_revision ? 'create' : 'update', key: key(kv), revision: Number(kv.mod_revision), value: kv.value.toString() }));
    feed.on('delete', (kv, prev) => truth.push({ type: 'delete', key: key(kv), revision: Number(kv.mod_revision), value: prev!.value.toString() }));
    const live = () => gateways;
    const watches = [new ResumingWatch(live, 0, base), new ResumingWatch(live, 1, base), new ResumingWatch(live, 2, base), new ResumingWatch(live, 2, base, 'parity=even')];

    // Two writers, each through its own replica, falling over to the next when it fails.
    let writing = true;
    let acknowledged = 0;
    const writer = async (w: number) => {
      for (let i = 0; writing; i++) {
        const name = `w${w}-${i}`;
        const ops: [string, string, unknown, string?][] = [['POST', '', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { parity: i % 2 ? 'odd' : 'even' } }, data: { i: String(i) } }]];
        if (i % 3 === 0) ops.push(['PATCH', `/${name}`, { data: { updated: 'yes' } }, 'application/merge-patch+json']);
        if (i % 5 === 0) ops.push(['DELETE', `/${name}`, undefined]);
        for (const [method, path, body, type] of ops) {
          for (let attempt = 0; writing || attempt === 0; attempt++) {
            const gw = gateways[(w + attempt) % gateways.length];
            const r = await gw.admin.request(method, `/api/v1/namespaces/${NS}/configmaps${path}`, body, type ? { headers: { 'content-type': type } } : {}).catch(() => undefined);
            if (r && r.status < 300) {
              acknowledged++;
              break;
            }
            if (r && (r.status === 409 || r.status === 404)) break; // done by an earlier attempt whose answer was lost
            await sleep(100);
          }
        }
        await sleep(20);
      }
    };
    const writers = [writer(0), writer(1)];
    const progress = async (what: string) => {
      const before = acknowledged;
      await until(() => acknowledged >= before + 20, `writes to continue after ${what}`);
    };
    await progress('start');

    // 1. kill -9 the pump leader; another replica takes the Lease over.
    const lease = async () => (await gateways[0].admin.get('/apis/coordination.orch.io/v1/namespaces/orch-system/leases/orch-watch-pump')).json?.spec?.holderIdentity as string | undefined;
    await until(async () => !!(await lease()), 'a pump leader');
    const holder = (await lease())!;
    const leaderAt = gateways.findIndex((g) => holder.includes(`:${g.port}_`));
    expect(leaderAt).toBeGreaterThanOrEqual(0);
    const victim = gateways[leaderAt];
    await victim.kill9();
    const survivor = gateways[(leaderAt + 1) % 3];
    gateways.splice(leaderAt, 1);
    await until(async () => {
      const h = await (await survivor.admin.get('/apis/coordination.orch.io/v1/namespaces/orch-system/leases/orch-watch-pump')).json?.spec?.holderIdentity;
      return !!h && h !== holder;
    }, 'another replica to take the pump over', 40_000);
    await progress('the pump failover');
    gateways.splice(leaderAt, 0, await victim.restart());

    // 2. NATS down, then back on the same port.
    await nats.kill9();
    await progress('NATS went down');
    nats = await startNats({ port: nats.port });
    await sleep(1000);
    await progress('NATS came back');

    // 3. Redis hangs (SIGSTOP), then continues. A watch resuming from the start meanwhile
    //    cannot read the shared history: it replays from etcd instead.
    redis.pause();
    watches.push(new ResumingWatch(live, 1, base));
    await progress('Redis hung');
    redis.resume();
    await progress('Redis continued');
    // Redis down and back: the history has a hole, which readers detect.
    await redis.kill9();
    await progress('Redis went down');
    redis = await startRedis({ port: redis.port });
    await progress('Redis came back');
    watches.push(new ResumingWatch(live, 2, base));

    // 4. One etcd member dies; the other two keep quorum; then it comes back.
    await etcd.members[1].kill9();
    await progress('an etcd member died');
    await etcd.restart(1);
    await progress('the etcd member came back');

    writing = false;
    await Promise.all(writers);
    await expectEveryWatcherSawHistory(gateways[0].admin, truth, feed, watches, 3);
  }, 240_000);
});

/**
 * The end of a run: a last write marks the end, every feed must reach it, and then each watcher's
 * stream must equal the store's history (the watcher at `evenWatcher` the `parity=even` selection
 * of it), in order, without gaps, duplicates, errors or bookmarks claiming unseen revisions.
 */
async function expectEveryWatcherSawHistory(admin: ApiClient, truth: TruthEvent[], feed: { cancel(): Promise<void> }, watches: ResumingWatch[], evenWatcher: number): Promise<void> {
  const marker = await admin.post(`/api/v1/namespaces/${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'zz-end', labels: { parity: 'even' } } });
  expect(marker.status).toBe(201);
  const lastEvent = Number(marker.json.metadata.resourceVersion);
  await until(() => (truth.at(-1)?.revision ?? 0) >= lastEvent, 'the truth feed');
  const wanted = (i: number) => (i === evenWatcher ? expected(truth, 'even') : expected(truth));
  await until(() => watches.every((w) => (w.events.at(-1)?.rv ?? 0) >= lastEvent), 'every watcher to reach the last write', 30_000).catch((err: Error) => {
    const state = watches.map((w, i) => ({ watcher: i, events: w.events.length, want: wanted(i).length, last: w.events.at(-1), errors: w.errors }));
    throw new Error(`${err.message}: last write ${lastEvent}; ${JSON.stringify(state)}`);
  });
  await feed.cancel();
  for (const w of watches) w.stop();
  for (const [i, w] of watches.entries()) {
    expect({ watcher: i, errors: w.errors, badBookmarks: w.badBookmarks }).toEqual({ watcher: i, errors: [], badBookmarks: [] });
    expect({ watcher: i, events: w.events }).toEqual({ watcher: i, events: wanted(i) });
  }
  expect(expected(truth).length).toBeGreaterThan(100);
}

interface PumpProcess {
  port: number;
  process: RunningProcess;
}

/** `gateway watch-pump` (the pump alone, in a process of its own) on a free port; resolves once /readyz answers 200. */
async function startWatchPump(args: string[]): Promise<PumpProcess> {
  const port = await freePort();
  const probe = new ApiClient(`https://127.0.0.1:${port}`, {});
  const proc = await startProcess({
    cmd: process.execPath,
    args: [GATEWAY_MAIN, 'watch-pump', `--secure-port=${port}`, '--bind-address=127.0.0.1', ...args],
    readyProbe: async () => (await probe.request('GET', '/readyz', undefined, { insecure: true }).catch(() => undefined))?.status === 200,
    timeoutMs: 30_000,
  });
  return { port, process: proc };
}

/**
 * The HA placement of the pump: replicas run with --watch-pump=false and never campaign; two
 * `gateway watch-pump` processes elect one publisher. Watchers on both replicas see exactly the
 * store's history while the leading pump is killed (the other continues where it stopped), while
 * no pump runs at all (replicas follow etcd themselves) and after a new pump starts.
 */
describe('gateway replicas with the watch pump in processes of its own', () => {
  let etcd: EtcdServer;
  let nats: NatsServer;
  let redis: RedisServer;
  let shared: string;
  let args: string[];
  const gateways: GatewayProcess[] = [];
  const pumps: PumpProcess[] = [];
  let etcdClient: Etcd3;

  beforeAll(async () => {
    [etcd, nats, redis, shared] = await Promise.all([startEtcd(), startNats(), startRedis(), tempDir('orch-ha-pump-')]);
    args = ['--storage-backend=etcd', `--etcd-servers=${etcd.endpoint}`, `--nats-url=${nats.url}`, `--redis-url=${redis.url}`, `--pki-dir=${join(shared, 'pki')}`];
    gateways.push(await startGateway({ args: [...args, '--watch-pump=false'] }));
    gateways.push(await startGateway({ args: [...args, '--watch-pump=false'] }));
    pumps.push(...(await Promise.all([startWatchPump(args), startWatchPump(args)])));
    etcdClient = new Etcd3({ hosts: etcd.endpoint });
    expect((await gateways[0].admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    etcdClient?.close();
    for (const gw of gateways) await gw.stop();
    for (const p of pumps) await p.process.stop();
    await Promise.all([etcd?.stop(), nats?.stop(), redis?.stop()]);
    if (shared) await removeDir(shared);
  });

  it('the pump processes lead in turn, replicas never campaign, and watchers see the store’s history exactly throughout', async () => {
    const base = Number((await etcdClient.get('\0').exec()).header.revision);
    const truth: TruthEvent[] = [];
    const feed = await etcdClient.watch().prefix(ETCD_PREFIX).startRevision(String(base + 1)).withPreviousKV().create();
    const key = (kv: IKeyValue) => kv.key.toString();
    feed.on('put', (kv) => truth.push({ type: kv.create_revision === kv.mod_revision ? 'create' : 'update', key: key(kv), revision: Number(kv.mod_revision), value: kv.value.toString() }));
    feed.on('delete', (kv, prev) => truth.push({ type: 'delete', key: key(kv), revision: Number(kv.mod_revision), value: prev!.value.toString() }));
    const live = () => gateways;
    const watches = [new ResumingWatch(live, 0, base), new ResumingWatch(live, 1, base), new ResumingWatch(live, 1, base, 'parity=even')];

    let writing = true;
    let acknowledged = 0;
    const writer = async (w: number) => {
      for (let i = 0; writing; i++) {
        const name = `p${w}-${i}`;
        const r = await gateways[w].admin.post(`/api/v1/namespaces/${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { parity: i % 2 ? 'odd' : 'even' } } });
        expect(r.status).toBe(201);
        acknowledged++;
        if (i % 4 === 0) expect((await gateways[w].admin.request('DELETE', `/api/v1/namespaces/${NS}/configmaps/${name}`)).status).toBe(200);
        await sleep(20);
      }
    };
    const writers = [writer(0), writer(1)];
    try {
      const progress = async (what: string) => {
        const before = acknowledged;
        await until(() => acknowledged >= before + 20, `writes to continue after ${what}`);
      };
      // Holder identities name the pump process: `<host>:watch-pump:<port>_<id>`.
      const holder = async () => ((await gateways[0].admin.get('/apis/coordination.orch.io/v1/namespaces/orch-system/leases/orch-watch-pump')).json?.spec?.holderIdentity as string | undefined) ?? '';
      const leaderPort = async () => Number(/:watch-pump:(\d+)_/.exec(await holder())?.[1] ?? 0);
      await progress('start');
      await until(async () => (await leaderPort()) > 0, 'a pump process to lead');
      const first = await leaderPort();
      expect(pumps.map((p) => p.port)).toContain(first);

      // 1. kill -9 the leading pump: the other takes the Lease over.
      const leader = pumps.find((p) => p.port === first)!;
      await leader.process.kill9();
      const standby = pumps.find((p) => p !== leader)!;
      await until(async () => (await leaderPort()) === standby.port, 'the standing-by pump to take over', 40_000);
      await progress('the pump failover');

      // 2. No pump at all: the replicas notice the silent bus and follow etcd themselves.
      await standby.process.kill9();
      await progress('the last pump died');
      // Past the end of the dead holder's lease: a replica that campaigned would hold it by now.
      const lease = (await gateways[0].admin.get('/apis/coordination.orch.io/v1/namespaces/orch-system/leases/orch-watch-pump')).json.spec;
      await sleep(Math.max(0, Date.parse(lease.renewTime) + lease.leaseDurationSeconds * 1000 + 3000 - Date.now()));
      expect(await leaderPort()).toBe(standby.port);
      await progress('a time without any pump');

      // 3. A new pump process: it takes the Lease (the dead holders' leases expire) and publishes again.
      pumps.splice(0, pumps.length, await startWatchPump(args));
      await until(async () => (await leaderPort()) === pumps[0].port, 'the new pump to lead', 40_000);
      await progress('a new pump');

      writing = false;
      await Promise.all(writers);
      await expectEveryWatcherSawHistory(gateways[0].admin, truth, feed, watches, 2);
    } finally {
      // A failing step must not leave writers and watchers running into the teardown.
      writing = false;
      for (const w of watches) w.stop();
      await Promise.allSettled(writers);
    }
  }, 240_000);
});
