import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { removeDir, startProcess, tempDir } from '@orch/testing';
import { moduleRunnerSource } from './module-runner';
import { openSqliteStore } from './sqlite';

/**
 * A child process writes as fast as it can (32 concurrent writers, each creating a key and
 * then updating it with an increasing counter) and prints every write once its promise
 * resolved. It is killed with SIGKILL mid-burst; every acknowledged write must be there.
 */
const CHILD = (storeModule: string, dbPath: string) => `
import { openSqliteStore } from ${JSON.stringify(storeModule)};

async function writer(store: Awaited<ReturnType<typeof openSqliteStore>>, w: number): Promise<void> {
  const key = '/durable/w' + w;
  const created = await store.create(key, '0');
  process.stdout.write('ack ' + key + ' 0 ' + created.modRevision + '\\n');
  for (let n = 1; ; n++) {
    const updated = await store.update(key, String(n));
    process.stdout.write('ack ' + key + ' ' + n + ' ' + updated.modRevision + '\\n');
  }
}

void openSqliteStore(${JSON.stringify(dbPath)}).then((store) => {
  process.stdout.write('open\\n');
  for (let w = 0; w < 32; w++) void writer(store, w);
});
`;

describe('SqliteStore durability', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('sqlite-durable-');
  });
  afterEach(async () => {
    await removeDir(dir);
  });

  it('keeps every acknowledged write when the writing process is killed with SIGKILL', async () => {
    const dbPath = join(dir, 'store.db');
    const childPath = join(dir, 'child.ts');
    await writeFile(childPath, CHILD(join(__dirname, 'sqlite'), dbPath));
    const acked = new Map<string, { n: number; revision: number }>();
    let count = 0;
    const child = await startProcess({
      cmd: process.execPath,
      args: ['-e', moduleRunnerSource(childPath)],
      onLine: (line) => {
        const m = /^ack (\S+) (\d+) (\d+)$/.exec(line);
        if (!m) return;
        count++;
        acked.set(m[1], { n: Number(m[2]), revision: Number(m[3]) });
      },
      readyProbe: async () => count >= 1500,
      timeoutMs: 20000,
    });
    await child.kill9();
    expect(acked.size).toBe(32);

    const store = await openSqliteStore(dbPath);
    try {
      const maxAcked = Math.max(...[...acked.values()].map((a) => a.revision));
      expect(await store.currentRevision()).toBeGreaterThanOrEqual(maxAcked);
      for (const [key, ack] of acked) {
        const kv = await store.get(key);
        // Writes after the last acknowledged one may have committed too, never fewer.
        expect({ key, atLeast: Number(kv?.value) >= ack.n && kv!.modRevision >= ack.revision }).toEqual({ key, atLeast: true });
        expect(await store.get(key, ack.revision)).toMatchObject({ value: String(ack.n), modRevision: ack.revision });
      }
      const next = await store.create('/durable/after-restart', 'x');
      expect(next.modRevision).toBe((await store.currentRevision()));
      expect(next.modRevision).toBeGreaterThan(maxAcked);
    } finally {
      await store.close();
    }
  }, 30000);
});
