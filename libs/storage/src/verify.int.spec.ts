import Database from 'better-sqlite3';
import { copyFile, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { removeDir, tempDir } from '@orch/testing';
import { openSqliteStore, type SqliteStore } from './sqlite';
import { inspectSqliteWal, verifySqliteFile, verifyStore } from './verify';

const value = (i: number) => JSON.stringify({ metadata: { name: `k${i}` }, data: { i } });

describe('store verification and write-ahead log inspection', () => {
  let dir: string;
  let store: SqliteStore;
  const dbPath = () => join(dir, 'live.db');

  beforeEach(async () => {
    dir = await tempDir('sqlite-verify-');
    store = await openSqliteStore(dbPath());
    for (let i = 0; i < 20; i++) await store.create(`/registry/k${i}`, value(i));
    await store.update('/registry/k1', value(100));
    await store.delete('/registry/k2');
  });
  afterEach(async () => {
    await store.close();
    await removeDir(dir);
  });

  /** The files a kill -9 would leave right now: the database and its write-ahead log, not checkpointed. */
  async function crashCopy(): Promise<string> {
    const copy = join(dir, 'crashed.db');
    await copyFile(dbPath(), copy);
    await copyFile(`${dbPath()}-wal`, `${copy}-wal`);
    return copy;
  }

  it('finds a sound store sound, through the file and through the Store interface', async () => {
    expect(verifySqliteFile(dbPath())).toEqual({ backend: 'sqlite', revision: 22, keys: 19, problems: [] });
    expect(await verifyStore(store, '/registry/')).toEqual({ backend: 'sqlite', revision: 22, keys: 19, problems: [] });
  });

  it.each([
    { name: 'a current row pointing nowhere', sql: "UPDATE current SET rev = 9999 WHERE key = '/registry/k3'", want: /current rows pointing at a missing/ },
    { name: 'a live key missing from current', sql: "DELETE FROM current WHERE key = '/registry/k4'", want: /newest history row disagrees/ },
    { name: 'a value that is not JSON', sql: "UPDATE kv SET value = '{torn' WHERE key = '/registry/k5'", want: /not JSON objects/ },
    { name: 'a row newer than meta.revision', sql: "UPDATE meta SET value = 3 WHERE name = 'revision'", want: /newer than meta\.revision/ },
  ])('reports $name', async ({ sql, want }) => {
    const copy = await crashCopy();
    const db = new Database(copy);
    db.exec(sql);
    db.close();
    const problems = verifySqliteFile(copy).problems;
    expect(problems.join('\n')).toMatch(want);
  });

  it('reports a file that is not a database', async () => {
    const bogus = join(dir, 'bogus.db');
    await writeFile(bogus, 'x'.repeat(8192));
    expect(verifySqliteFile(bogus).problems.join('\n')).toMatch(/not a database/);
  });

  it('a log with only committed frames is clean', async () => {
    const copy = await crashCopy();
    const wal = inspectSqliteWal(copy);
    expect(wal.committedFrames).toBeGreaterThan(0);
    expect(wal).toMatchObject({ uncommittedFrames: 0, tornBytes: 0 });
    expect(wal.message).toBeUndefined();
  });

  it.each([
    { name: 'a frame cut short', tear: async (wal: string, size: number) => truncate(wal, size - 1000), want: /torn write \(frame \d+: \d+ of \d+ bytes/ },
    {
      name: 'a frame whose checksum fails',
      tear: async (wal: string, size: number) => {
        const bytes = await readFile(wal);
        bytes[size - 100] ^= 0xff;
        await writeFile(wal, bytes);
      },
      want: /torn write \(frame \d+: checksum mismatch/,
    },
  ])('detects a torn tail ($name); the store opens at its last complete transaction and stays sound', async ({ tear, want }) => {
    const copy = await crashCopy();
    const wal = `${copy}-wal`;
    await tear(wal, (await stat(wal)).size);
    const inspected = inspectSqliteWal(copy);
    expect(inspected.tornBytes).toBeGreaterThan(0);
    expect(inspected.message).toMatch(want);

    const warnings: string[] = [];
    const reopened = await openSqliteStore(copy, { onWarning: (m) => warnings.push(m) });
    try {
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^sqlite store: the write-ahead log .* ends in a torn write/);
      // The torn frame held the last transaction (the delete of k2): it is gone, the rest is there.
      expect(await reopened.currentRevision()).toBe(21);
      expect(await reopened.get('/registry/k2')).toBeDefined();
    } finally {
      await reopened.close();
    }
    expect(verifySqliteFile(copy).problems).toEqual([]);
  });
});
