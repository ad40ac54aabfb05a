import https from 'node:https';
import { startGateway, type GatewayProcess } from './support/gateway';

/** A watcher that stops reading is cut off once it falls 16 MiB behind; the gateway stays well. */
describe('a watch client too slow to read', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('is ended with an error (the connection is destroyed) instead of buffering without bound', async () => {
    const rv = (await gw.admin.get('/api/v1/namespaces/default/configmaps')).json.metadata.resourceVersion;
    let received = 0;
    let resume = () => undefined as void;
    const outcome = new Promise<string>((resolve) => {
      const req = https.get(`${gw.url}/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv}`, { ...gw.creds }, (res) => {
        res.pause(); // a client that does not read
        res.on('data', (d: Buffer) => (received += d.length));
        res.on('end', () => resolve('clean end'));
        res.on('aborted', () => resolve('aborted'));
        res.on('error', () => resolve('aborted'));
        resume = () => void res.resume();
      });
      req.on('error', () => resolve('aborted'));
    });
    await new Promise((r) => setTimeout(r, 200));
    // 48 objects of 700 KB: about 34 MB of events, well past the bound and the kernel's socket buffers.
    const value = 'x'.repeat(700 * 1024);
    for (let i = 0; i < 48; i++) {
      const r = await gw.admin.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}` }, data: { v: value } });
      expect(r.status).toBe(201);
    }
    await new Promise((r) => setTimeout(r, 500));
    resume();
    expect(await outcome).toBe('aborted');
    expect(received).toBeLessThan(48 * 700 * 1024);
    expect((await gw.admin.get('/readyz')).status).toBe(200);
  });
});
