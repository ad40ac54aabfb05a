import { waitFor } from '@orch/testing';
import { startGateway, type GatewayProcess } from './support/gateway';

describe('durability', () => {
  let gw: GatewayProcess | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it('every create that returned 201 survives kill -9 of the gateway during a burst', async () => {
    const first = await startGateway({ dataDir: undefined });
    const acked: string[] = [];
    let stop = false;
    const worker = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const name = `d-${w}-${i}`;
        try {
          const r = await first.admin.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { i: String(i) } });
          if (r.status === 201) acked.push(name);
        } catch {
          return; // connection reset by the kill
        }
      }
    };
    const workers = Array.from({ length: 16 }, (_, w) => worker(w));
    // The kill comes after a count of acknowledged writes, not after a time: a loaded machine only slows the burst down.
    await waitFor(() => acked.length >= 60, '60 acknowledged creates', 30_000);
    await first.kill9();
    stop = true;
    await Promise.all(workers);
    expect(acked.length).toBeGreaterThanOrEqual(60);

    gw = await first.restart();
    const list = await gw.admin.get('/api/v1/namespaces/default/configmaps');
    const present = new Set(list.json.items.map((i: any) => i.metadata.name));
    const lost = acked.filter((n) => !present.has(n));
    expect(lost).toEqual([]);
  });

  it('a restart keeps every object and continues resourceVersions', async () => {
    const first = await startGateway();
    const created = await first.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'keep' } });
    const rv = Number(created.json.metadata.resourceVersion);
    await first.process.stop();
    gw = await first.restart();
    const got = await gw.admin.get('/api/v1/namespaces/keep');
    expect(got.status).toBe(200);
    expect(got.json.metadata.uid).toBe(created.json.metadata.uid);
    const next = await gw.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'keep2' } });
    expect(Number(next.json.metadata.resourceVersion)).toBeGreaterThan(rv);
  });
});
