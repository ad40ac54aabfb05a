import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { startGateway, type GatewayProcess } from './support/gateway';

/** @kubernetes/client-node is ESM-only: each scenario runs in a child Node process. */
function scenario(gw: GatewayProcess, name: string): any {
  const r = spawnSync(process.execPath, [join(__dirname, 'support', 'client-node-scenarios.mjs'), gw.kubeconfig, name], { encoding: 'utf8', timeout: 60_000 });
  const line = r.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`scenario ${name} printed no result: ${r.stdout}\n${r.stderr}`);
  return JSON.parse(line.slice('RESULT '.length));
}

describe('@kubernetes/client-node against a real gateway', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('typed CRUD through CoreV1Api', () => {
    const r = scenario(gw, 'crud');
    expect(r.error).toBeUndefined();
    expect(r.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.data).toEqual({ a: '1' });
    expect(r.names).toEqual(['one']);
    expect(r.gone).toBe(true);
  });

  // Compatibility option: typed clients use rbac.authorization.k8s.io; each brand's informer sees its own group.
  it('informers on both brands of a group see every add, update and delete, in the group they watch', () => {
    const r = scenario(gw, 'brandInformers');
    expect(r.error).toBeUndefined();
    expect(r.errors).toEqual([]);
    for (const brand of ['k8s', 'orch']) {
      const group = `rbac.authorization.${brand}.io/v1`;
      expect(r.seen[brand]).toEqual([
        ['add', 'r1', group],
        ['update', 'r1', group],
        ['delete', 'r1', group],
      ]);
    }
  });

  it('an informer lists and watches with no gap while 1,000 objects are written', () => {
    const r = scenario(gw, 'informer');
    expect(r.error).toBeUndefined();
    expect(r.errors).toEqual([]);
    expect(r.seen).toBe(1000);
    expect(r.cached).toBe(1000);
  });

  it('an informer on a custom resource stays exact through 500 creates, updates and deletes, each seen once as what it was', () => {
    const r = scenario(gw, 'customResourceInformer');
    expect(r.error).toBeUndefined();
    expect(r.errors).toEqual([]);
    expect(r).toMatchObject({ writes: 500, failed: 0, objects: 175, missing: [], extra: [], equal: true });
    expect(r.events).toEqual({ add: 250, update: 175, delete: 75 });
    expect(r.deletedExactly).toBe(true);
  });
});
