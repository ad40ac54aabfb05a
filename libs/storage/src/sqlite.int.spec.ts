import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { eventually, removeDir, tempDir } from '@orch/testing';
import { describeStoreConformance } from './conformance';
import { openSqliteStore, SqliteStore } from './sqlite';
import { StoreError } from './store';

let dir: string;
let n = 0;
const dbPath = () => join(dir, `store-${++n}.db`);
beforeAll(async () => {
  dir = await tempDir('sqlite-store-');
});
afterAll(async () => {
  await removeDir(dir);
});

// A tiny compaction chunk makes every compaction in the suite run in several steps.
describeStoreConformance('sqlite', (opts) => openSqliteStore(dbPath(), { compactionChunk: 7, ...opts }));

describe('SqliteStore', () => {
  const open: SqliteStore[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  const openStore = async (path: string) => {
    const s = await openSqliteStore(path);
    open.push(s);
    return s;
  };

  it('continues revisions and keeps history across a restart', async () => {
    const path = dbPath();
    const first = await openStore(path);
    const v1 = await first.create('/k', 'v1');
    const v2 = await first.update('/k', 'v2');
    const gone = await first.create('/gone', 'x');
    const del = await first.delete('/gone');
    await first.close();

    const second = await openStore(path);
    expect(await second.currentRevision()).toBe(del.revision);
    expect(await second.get('/k', v1.modRevision)).toEqual(v1);
    expect(await second.get('/gone', gone.modRevision)).toEqual(gone);
    expect(await second.get('/k')).toEqual(v2);
    expect((await second.update('/k', 'v3')).modRevision).toBe(del.revision + 1);
  });

  // List latency is measured by `npm run bench -- --only=gateway`, not here.
  it('lists 10,000 keys at the latest revision', async () => {
    const store = await openStore(dbPath());
    const value = JSON.stringify({ metadata: { name: 'x', labels: { app: 'demo' } }, spec: { replicas: 3 } });
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(Array.from({ length: 1000 }, (_, i) => store.create(`/registry/pods/default/p${batch}-${i}`, value)));
    }
    const res = await store.list('/registry/pods/');
    expect(res.items).toHaveLength(10000);
    expect(await store.count('/registry/pods/')).toBe(10000);
  });

  it('finishes queued writes on close, then rejects calls and ends watches', async () => {
    const store = await openStore(dbPath());
    const errors: Error[] = [];
    store.watch('/', 0, { onEvents: () => undefined, onError: (err) => errors.push(err) });
    const writes = Array.from({ length: 50 }, (_, i) => store.create(`/k${i}`, 'v'));
    await store.close();
    expect((await Promise.all(writes)).map((kv) => kv.modRevision)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(errors).toEqual([new StoreError('sqlite store is closed')]);
    await expect(store.get('/k0')).rejects.toThrow('sqlite store is closed');
    await expect(store.create('/k0', 'v')).rejects.toThrow('sqlite store is closed');
    await expect(store.update('/nope', 'v')).rejects.toThrow('sqlite store is closed');
  });

  // While the writer commits, later writes wait for its answer and go to it together: every
  // answer (failed writes' too) must let the next ones go, in the order they were made. Each
  // round waits for its writes, so the next round needs the store to send again.
  it.each([
    { name: 'one write per event-loop turn', turns: 20, perTurn: 1, failEvery: 0 },
    { name: 'several writes per turn', turns: 5, perTurn: 7, failEvery: 0 },
    { name: 'failed writes between good ones', turns: 10, perTurn: 3, failEvery: 4 },
  ])('settles writes made while a group commits, in order ($name)', async ({ turns, perTurn, failEvery }) => {
    const store = await openStore(dbPath());
    await store.create('/taken', 'v');
    let made = 0;
    let revision = 1;
    for (let round = 0; round < 3; round++) {
      const outcomes: Promise<number | string>[] = [];
      const expected: (number | string)[] = [];
      for (let t = 0; t < turns; t++) {
        for (let i = 0; i < perTurn; i++) {
          const fails = failEvery > 0 && ++made % failEvery === 0;
          outcomes.push(store.create(fails ? '/taken' : `/k${round}-${t}-${i}`, 'v').then((kv) => kv.modRevision, (err: Error) => err.name));
          expected.push(fails ? 'KeyExistsError' : ++revision);
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(await Promise.all(outcomes)).toEqual(expected);
    }
    expect(await store.currentRevision()).toBe(revision);
  });

  it('breaks loudly when a second store writes to the same file', async () => {
    const path = dbPath();
    const a = await openStore(path);
    const b = await openStore(path);
    await a.create('/a', 'v');
    await expect(b.create('/b', 'v')).rejects.toThrow(/another process wrote to the store file/);
    await expect(b.create('/b', 'v')).rejects.toThrow(/another process writes to .*a store file has one writer/);
    expect(await a.get('/b')).toBeUndefined();
  });

  /** Bytes the store's files (the database and its write-ahead log) take on disk. */
  const storeBytes = (path: string) => [path, `${path}-wal`].reduce((sum, f) => sum + (existsSync(f) ? statSync(f).size : 0), 0);

  it('gives the space of deleted and compacted keys back to the disk (database and log shrink)', async () => {
    const path = dbPath();
    const store = await openStore(path);
    const value = JSON.stringify({ data: 'x'.repeat(16 * 1024) });
    const keys = Array.from({ length: 400 }, (_, i) => `/big/k${i}`);
    for (let i = 0; i < keys.length; i += 50) await Promise.all(keys.slice(i, i + 50).map((k) => store.create(k, value)));
    const full = storeBytes(path);
    expect(full).toBeGreaterThan(6 * 1024 * 1024);
    for (let i = 0; i < keys.length; i += 50) await Promise.all(keys.slice(i, i + 50).map((k) => store.delete(k)));
    await store.compact(await store.currentRevision());
    // The writer vacuums and truncates between writes, after the compaction answered.
    const shrunk = await eventually('the store files shrink below 1 MiB', () => (storeBytes(path) < 1024 * 1024 ? storeBytes(path) : undefined), 10_000);
    expect(shrunk).toBeLessThan(full / 6);
    expect(await store.count('/')).toBe(0);
    expect((await store.create('/after', 'v')).key).toBe('/after');
  });

  it('converts a file created without incremental vacuum when it opens it', async () => {
    const path = dbPath();
    const legacy = new Database(path);
    legacy.pragma('journal_mode = WAL');
    legacy.exec('CREATE TABLE legacy (x INTEGER)');
    legacy.close();
    expect(autoVacuum(path)).toBe(0);
    const store = await openStore(path);
    await store.create('/k', 'v');
    expect(autoVacuum(path)).toBe(2);
  });

  it('fails to open with a clear error', async () => {
    await expect(openSqliteStore(join(dir, 'missing-dir', 'x.db'))).rejects.toThrow(/cannot open sqlite store .*missing-dir/);
  });
});

/** The file's auto_vacuum mode: 0 none, 1 full, 2 incremental. */
function autoVacuum(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return db.pragma('auto_vacuum', { simple: true }) as number;
  } finally {
    db.close();
  }
}
