import { join } from 'node:path';
import { inspectSqliteWal, openEtcdStore, verifySqliteFile, verifyStore, type StoreVerification } from '@orch/storage';
import { dataDir } from './gateway';
import type { GatewayOptions } from './options';

/** Compaction never starts during a check (the interval is longer than any check). */
const NO_COMPACTION_MS = 24 * 3600 * 1000;

/**
 * `gateway verify-store`: a read-only integrity check of the store the same flags would open
 * (SQLite file in the data dir, or etcd), safe while gateways run. Prints what it checked and
 * every problem; the exit code is 0 for a sound store, 1 otherwise. Operators run it after a
 * crash or a full disk; the chaos suites run it after every kill.
 */
export async function verifyStoreCommand(options: GatewayOptions, out: (line: string) => void): Promise<number> {
  let result: StoreVerification;
  let where: string;
  if (options['storage-backend'] === 'etcd') {
    if (options['etcd-servers'].length === 0) throw new Error('--etcd-servers must be set when --storage-backend=etcd');
    where = `etcd ${options['etcd-servers'].join(',')} prefix ${options['etcd-prefix']}`;
    const store = await openEtcdStore({ endpoints: options['etcd-servers'], prefix: options['etcd-prefix'], compactionIntervalMs: NO_COMPACTION_MS });
    try {
      result = await verifyStore(store);
    } finally {
      await store.close();
    }
  } else {
    const path = join(dataDir(options), 'orch.db');
    where = `sqlite ${path}`;
    const wal = inspectSqliteWal(path);
    if (wal.message) out(`note: ${wal.message}`);
    result = verifySqliteFile(path);
  }
  if (result.problems.length === 0) {
    out(`store ok: ${where} at revision ${result.revision}, ${result.keys} keys`);
    return 0;
  }
  out(`store has ${result.problems.length} problem(s): ${where} at revision ${result.revision}, ${result.keys} keys`);
  for (const p of result.problems) out(`  ${p}`);
  return 1;
}
