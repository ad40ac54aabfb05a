import { removeDir, tempDir } from '@orch/testing';
import { startGateway, type GatewayProcess } from '../support/gateway';
import { chaosCycles, chaosTimeout, recordChaos, sleep, verifyStore } from './support/chaos';
import { startSmallDisk, type SmallDisk } from './support/small-disk';

const CYCLES = chaosCycles(2);
const DISK_BYTES = 24 * 1024 * 1024;
/** Refused writes each cycle checks before giving the space back. */
const REFUSALS = 5;
const BIG = 'x'.repeat(64 * 1024);
/**
 * What the store's files (database and write-ahead log) may take once a cycle's objects are
 * deleted and compacted: the live objects are a few KiB, so this is the free pages the store
 * keeps for reuse (under 1 MiB) and slack. Without giving space back, the files kept their
 * high-water mark (7.5 MiB after the first cycle) and grew ~2 MiB every few cycles until
 * they filled the disk with no filler (a DELETE 507, then a gateway that could not start).
 */
const STORE_FILES_BOUND = 3 * 1024 * 1024;
const STORE_FILES = ['orch.db', 'orch.db-wal'];

const configMap = (name: string, data: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { d: data } });

/**
 * The SQLite store on a 24 MiB tmpfs (its own mount namespace, see small-disk.ts) that a
 * filler file fills up: writes are refused with 507 naming the full disk, nothing refused is
 * stored, reads keep working, and writes succeed again once the filler is gone, with or
 * without a kill -9 of the gateway while the disk was full; after each cycle the store's
 * files shrink back, so cycles do not add up.
 */
describe('chaos: the disk under the SQLite store fills up', () => {
  let dataDir: string;
  let pkiDir: string;
  let disk: SmallDisk;
  let gw: GatewayProcess;

  beforeAll(async () => {
    dataDir = await tempDir('chaos-disk-');
    pkiDir = await tempDir('chaos-disk-pki-');
    disk = await startSmallDisk(dataDir, DISK_BYTES);
    // History kept 2 s (compacted every 0.5 s, also while the disk is full): the deleted
    // objects' pages are free again for the next cycle, so the store does not grow with cycles.
    gw = await startGateway({ dataDir, launcher: disk.launcher, args: [`--pki-dir=${pkiDir}`, '--watch-history-retention=2s'] });
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
    await disk?.stop();
    await removeDir(pkiDir);
    await removeDir(dataDir);
  });

  it(
    `${CYCLES} cycles: 507 while full, nothing refused is stored, writes resume when space returns, no acknowledged write lost`,
    async () => {
      const recoveryMs: number[] = [];
      const acked: { ns: string; name: string; uid: string }[] = [];
      let refusedTotal = 0;
      /** Acknowledged writes not found (goal: none). */
      const missing: string[] = [];
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const ns = `full-${cycle}`;
        const cms = `/api/v1/namespaces/${ns}/configmaps`;
        expect((await gw.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status).toBe(201);

        for (let i = 0; i < 10; i++) {
          const r = await gw.admin.post(cms, configMap(`before-${i}`, BIG));
          expect(r.status).toBe(201);
          acked.push({ ns, name: `before-${i}`, uid: r.json.metadata.uid });
        }
        await disk.fill();
        // SQLite first fills the free pages it already has; then every write is refused.
        let refused = 0;
        for (let i = 0; refused < REFUSALS; i++) {
          if (i >= 500) throw new Error(`cycle ${cycle}: 500 writes of 64 KiB on a full ${DISK_BYTES}-byte disk and fewer than ${REFUSALS} refused`);
          const name = `big-${i}`;
          const r = await gw.admin.post(cms, configMap(name, BIG));
          if (r.status === 201) {
            acked.push({ ns, name, uid: r.json.metadata.uid });
            continue;
          }
          expect({ status: r.status, body: r.json }).toMatchObject({ status: 507, body: { kind: 'Status', code: 507, reason: 'InsufficientStorage' } });
          expect(r.json.message).toMatch(/insufficient storage: the disk holding .*orch\.db is full .*nothing was written/);
          expect((await gw.admin.get(`${cms}/${name}`)).status).toBe(404);
          refused++;
        }
        refusedTotal += refused;
        expect((await gw.admin.get(cms)).status).toBe(200);

        // Space comes back, with the gateway running (even cycles) or killed while full and restarted.
        if (cycle % 2 === 1) {
          await gw.process.kill9();
          gw.admin.close();
          gw.anonymous.close();
        }
        await disk.free();
        const freedAt = Date.now();
        if (cycle % 2 === 1) gw = await gw.restart();
        for (let i = 0; ; i++) {
          const r = await gw.admin.post(cms, configMap(`after-${i}`, 'small'));
          if (r.status === 201) {
            acked.push({ ns, name: `after-${i}`, uid: r.json.metadata.uid });
            break;
          }
          expect(r.status).toBe(507);
          if (Date.now() - freedAt > 10_000) throw new Error(`cycle ${cycle}: writes still refused 10 s after the disk was freed: ${r.text}\n${await disk.usage()}`);
          await sleep(50);
        }
        recoveryMs.push(Date.now() - freedAt);

        const verified = await verifyStore([`--data-dir=${dataDir}`], disk.launcher);
        if (!verified.ok) throw new Error(`the store does not verify after cycle ${cycle}:\n${verified.output}`);
        // Every write of the cycle acknowledged is there (after a kill -9 too); then they all go,
        // so that each cycle starts with the same free space (else 20 cycles fill 24 MiB).
        for (const a of acked.filter((x) => x.ns === ns)) {
          const r = await gw.admin.get(`${cms}/${a.name}`);
          if (r.status !== 200 || r.json.metadata.uid !== a.uid) missing.push(`${a.ns}/${a.name}`);
          else {
            const deleted = await gw.admin.delete(`${cms}/${a.name}`);
            if (deleted.status !== 200) throw new Error(`cycle ${cycle}: DELETE ${a.ns}/${a.name} answered ${deleted.status} after the disk was freed: ${deleted.text}\n${await disk.usage()}`);
          }
        }
        // The deleted objects' space goes back to the disk once compacted (history is kept 2 s).
        const settled = Date.now();
        for (;;) {
          const bytes = await disk.bytes(STORE_FILES);
          if (bytes <= STORE_FILES_BOUND) break;
          if (Date.now() - settled > 20_000) throw new Error(`cycle ${cycle}: the store's files still take ${bytes} bytes 20 s after its objects were deleted (bound ${STORE_FILES_BOUND}): ${await disk.usage()}`);
          await sleep(100);
        }
        if (cycle % 10 === 9) process.stdout.write(`chaos: disk after cycle ${cycle}: ${await disk.usage()}\n`);
      }

      expect(missing).toEqual([]);
      expect(refusedTotal).toBe(CYCLES * REFUSALS);
      recordChaos({ component: 'gateway (sqlite)', fault: 'disk full', cycles: CYCLES, acknowledged: acked.length, lost: missing.length, duplicates: 0, orphans: 0, recoveryMs });
    },
    chaosTimeout(CYCLES, 30_000),
  );
});
