import { spawnSync } from 'node:child_process';
import { EtcdServer, startEtcd } from '@orch/testing';
import { describeStoreConformance } from './conformance';
import { EtcdStore, openEtcdStore } from './etcd';
import { StoreError } from './store';

let etcd: EtcdServer;
let n = 0;
beforeAll(async () => {
  etcd = await startEtcd();
}, 30000);
afterAll(async () => {
  await etcd?.stop();
});

// One etcd for the file; every store gets a key prefix of its own.
describeStoreConformance('etcd', (opts) => openEtcdStore({ endpoints: [etcd.endpoint], prefix: `/store-${++n}`, ...opts }));

describe('EtcdStore', () => {
  const open: EtcdStore[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  const openStore = async (endpoint: string, prefix: string) => {
    const s = await openEtcdStore({ endpoints: [endpoint], prefix });
    open.push(s);
    return s;
  };

  it('keeps stores with different prefixes apart', async () => {
    const a = await openStore(etcd.endpoint, '/tenant-a');
    const b = await openStore(etcd.endpoint, '/tenant-b');
    await a.create('/k', 'from a');
    await b.create('/k', 'from b');
    expect((await a.list('/')).items.map((kv) => [kv.key, kv.value])).toEqual([['/k', 'from a']]);
    expect((await b.get('/k'))?.value).toBe('from b');
    expect(await a.count('')).toBe(1);
  });

  it('lists more than gRPC’s default 4 MiB in one response', async () => {
    const store = await openStore(etcd.endpoint, `/big-${process.pid}`);
    const value = 'x'.repeat(100 * 1024);
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.create(`/k${i}`, value)));
    expect((await store.list('/')).items).toHaveLength(50);
  });

  // etcd queues a watch's responses for a client that does not read (a descheduled process) up to
  // the client's flow-control window; past it, the watch's send channel fills and etcd moves the
  // watcher off its synced set (its slow-watcher gauge), to be caught up by a 100 ms sync loop.
  it('a watch whose process does not read while 2,000 writes commit stays synced in etcd, then gets them all in order', async () => {
    const own = await startEtcd();
    try {
      const store = await openStore(own.endpoint, '/burst');
      const revisions: number[] = [];
      const from = await store.currentRevision();
      store.watch('/', from, { onEvents: (events) => revisions.push(...events.map((e) => e.revision)), onError: () => undefined });
      await store.create('/started', 'v');
      while (revisions.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      // spawnSync blocks this process (no read of the watch) while the writer commits, then reads etcd's gauge.
      // On a busy machine etcd's own send goroutine can fall behind for a moment and park the watcher
      // (the gauge reads 1 for ~10 ms, until etcd's victim loop hands the events on); a watcher parked
      // by the client's window cannot recover while this process stays blocked. So the writer polls
      // the gauge for up to 3 s and prints the value it settles at.
      const writer = `
        const { Etcd3 } = require('etcd3');
        const client = new Etcd3({ hosts: ${JSON.stringify(own.endpoint)} });
        const slowWatchers = () => fetch(${JSON.stringify(`${own.endpoint}/metrics`)}).then((res) => res.text())
          .then((text) => /^etcd_debugging_mvcc_slow_watcher_total (\\S+)$/m.exec(text)[1]);
        const settled = async () => {
          for (let polls = 0; ; polls++) {
            const value = await slowWatchers();
            if (value === '0' || polls === 60) return value;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        };
        Promise.all(Array.from({ length: 2000 }, (_, i) => client.put('/burst/k' + i).value('x'.repeat(150))))
          .then(settled)
          .then((value) => { console.log(value); process.exit(0); });`;
      const run = spawnSync(process.execPath, ['-e', writer], { encoding: 'utf8', timeout: 60_000 });
      expect(run.stderr).toBe('');
      expect(run.stdout.trim()).toBe('0');
      const last = await store.currentRevision();
      const deadline = Date.now() + 10000;
      while (revisions.at(-1)! < last && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(revisions).toEqual(Array.from({ length: last - from }, (_, i) => from + 1 + i));
    } finally {
      await own.stop();
    }
  }, 60000);

  it('ends watches with an error when etcd goes away', async () => {
    const own = await startEtcd();
    try {
      const store = await openStore(own.endpoint, '');
      const errors: Error[] = [];
      store.watch('/', await store.currentRevision(), { onEvents: () => undefined, onError: (err) => errors.push(err) });
      await store.create('/k', 'v');
      await own.kill9();
      const deadline = Date.now() + 10000;
      while (errors.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(StoreError);
    } finally {
      await own.stop();
    }
  }, 20000);
});
