import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type GatewayProcess } from './support/gateway';
import { kubectlSync } from './support/kubectl';

// Server-side apply, managedFields and strategic merge patches against the real gateway
// (SPEC "Apply ownership", "Patch content types"), through raw HTTPS and through kubectl.

const APPLY = 'application/apply-patch+yaml';
const MERGE = 'application/merge-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const CMS = '/api/v1/namespaces/default/configmaps';

const cm = (name: string, data: Record<string, string>, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data });

/** Manager → its FieldsV1 tree, for the entries of one operation. */
function owners(obj: any, operation?: 'Apply' | 'Update'): Record<string, any> {
  const out: Record<string, any> = {};
  for (const e of obj.metadata.managedFields ?? []) if (!operation || e.operation === operation) out[e.manager] = e.fieldsV1;
  return out;
}

describe('server-side apply and managedFields (real gateway)', () => {
  let gw: GatewayProcess;

  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => {
    await gw?.stop();
  });

  const apply = (name: string, body: unknown, manager: string | undefined, extra = '') =>
    gw.admin.patch(`${CMS}/${name}?${manager === undefined ? '' : `fieldManager=${manager}`}${extra}`, typeof body === 'string' ? body : JSON.stringify(body), APPLY);

  it('apply creates the object (201) with an Apply entry, then updates it (200)', async () => {
    const created = await apply('ssa', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n  labels:\n    app: web\ndata:\n  key: one\n', 'alice');
    expect(created.status).toBe(201);
    expect(created.json.metadata.uid).toBeDefined();
    expect(created.json.metadata.managedFields).toEqual([
      {
        manager: 'alice',
        operation: 'Apply',
        apiVersion: 'v1',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:key': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } },
      },
    ]);
    const updated = await apply('ssa', cm('ssa', { key: 'two' }, { labels: { app: 'web' } }), 'alice');
    expect(updated.status).toBe(200);
    expect(updated.json.data).toEqual({ key: 'two' });
    const again = await apply('ssa', cm('ssa', { key: 'two' }, { labels: { app: 'web' } }), 'alice');
    expect(again.json.metadata.resourceVersion).toBe(updated.json.metadata.resourceVersion);
    const dryRun = await apply('ssa-dry', cm('ssa-dry', { key: 'x' }), 'alice', '&dryRun=All');
    expect(dryRun.status).toBe(201);
    expect((await gw.admin.get(`${CMS}/ssa-dry`)).status).toBe(404);
  });

  it('conflicts with another manager are a 409 listing each field; force takes them over', async () => {
    await apply('owned', cm('owned', { key: 'v1', other: 'x' }), 'alice');
    const edited = await gw.admin.patch(`${CMS}/owned?fieldManager=editor`, JSON.stringify({ data: { key: 'edited', other: 'y' } }), MERGE);
    expect(edited.status).toBe(200);
    expect(owners(edited.json)).toEqual({ editor: { 'f:data': { 'f:key': {}, 'f:other': {} } } });

    const conflict = await apply('owned', cm('owned', { key: 'mine', other: 'z' }), 'alice');
    expect(conflict.status).toBe(409);
    expect(conflict.json).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Conflict',
      code: 409,
      message: 'Apply failed with 2 conflicts: conflicts with "editor" using v1:\n- .data.key\n- .data.other',
      details: {
        causes: [
          { reason: 'FieldManagerConflict', message: 'conflict with "editor" using v1', field: '.data.key' },
          { reason: 'FieldManagerConflict', message: 'conflict with "editor" using v1', field: '.data.other' },
        ],
      },
    });
    const single = await apply('owned', cm('owned', { key: 'mine' }), 'bob');
    expect(single.json.message).toBe('Apply failed with 1 conflict: conflict with "editor" using v1: .data.key');

    const same = await apply('owned', cm('owned', { other: 'y' }), 'bob');
    expect(same.status).toBe(200);
    expect(owners(same.json)).toEqual({ bob: { 'f:data': { 'f:other': {} } }, editor: { 'f:data': { 'f:key': {}, 'f:other': {} } } });

    const forced = await apply('owned', cm('owned', { key: 'mine' }), 'bob', '&force=true');
    expect(forced.status).toBe(200);
    expect(forced.json.data).toEqual({ key: 'mine', other: 'y' });
    expect(owners(forced.json)).toEqual({ bob: { 'f:data': { 'f:key': {} } }, editor: { 'f:data': { 'f:other': {} } } });
    // bob dropped data.other, but editor still owns it: it stays.
    expect(forced.json.data.other).toBe('y');
  });

  it('fields the applier drops are removed when nobody else owns them', async () => {
    await apply('pruned', cm('pruned', { keep: '1', drop: '2' }), 'alice');
    const r = await apply('pruned', cm('pruned', { keep: '1' }), 'alice');
    expect(r.json.data).toEqual({ keep: '1' });
    expect(owners(r.json)).toEqual({ alice: { 'f:data': { 'f:keep': {} } } });
  });

  it('updates and patches record Update entries; the reset rule strips managedFields', async () => {
    const created = await gw.admin.post(`${CMS}?fieldManager=creator`, cm('updates', { a: '1' }));
    expect(owners(created.json, 'Update')).toEqual({ creator: { 'f:data': { '.': {}, 'f:a': {} } } });
    const noManager = await gw.admin.patch(`${CMS}/updates`, JSON.stringify({ data: { b: '2' } }), MERGE, { headers: { 'user-agent': 'my-tool/1.2 (linux)' } });
    expect(owners(noManager.json)).toEqual({ creator: { 'f:data': { '.': {}, 'f:a': {} } }, 'my-tool': { 'f:data': { 'f:b': {} } } });

    const emptyList = await gw.admin.patch(`${CMS}/updates?fieldManager=x`, JSON.stringify({ metadata: { managedFields: [] } }), MERGE);
    expect(emptyList.json.metadata.managedFields).toHaveLength(2);
    const reset = await gw.admin.patch(`${CMS}/updates?fieldManager=x`, JSON.stringify({ metadata: { managedFields: [{}] } }), MERGE);
    expect(reset.json.metadata.managedFields).toBeUndefined();
    const resetAndChange = await gw.admin.patch(
      `${CMS}/updates?fieldManager=resetter`,
      JSON.stringify([
        { op: 'add', path: '/metadata/managedFields', value: [{}] },
        { op: 'add', path: '/data/c', value: '3' },
      ]),
      'application/json-patch+json',
    );
    expect(resetAndChange.json.metadata.managedFields).toEqual([expect.objectContaining({ manager: 'resetter', operation: 'Update', fieldsV1: { 'f:data': { 'f:c': {} } } })]);
  });

  it('rejects bad apply requests as upstream does', async () => {
    const noManager = await apply('bad', cm('bad', { a: '1' }), undefined);
    expect(noManager.status).toBe(422);
    expect(noManager.json.message).toBe('PatchOptions.meta.orch.io "" is invalid: fieldManager: Required value: is required for apply patch');
    const force = await gw.admin.patch(`${CMS}/ssa?fieldManager=x&force=true`, JSON.stringify({ data: { a: '1' } }), MERGE);
    expect(force.status).toBe(422);
    expect(force.json.message).toContain('force: Forbidden: may not be specified for non-apply patch');
    const managed = await apply('bad', { ...cm('bad', {}), metadata: { name: 'bad', managedFields: [] } }, 'alice');
    expect(managed.status).toBe(400);
    expect(managed.json.message).toBe('metadata.managedFields must be nil');
    const version = await apply('bad', { ...cm('bad', {}), apiVersion: 'v2' }, 'alice');
    expect(version.status).toBe(400);
    expect(version.json.message).toBe('Incorrect version specified in apply patch. Specified patch version: v2, expected: v1');
    const kind = await apply('bad', { ...cm('bad', {}), kind: 'Secret' }, 'alice');
    expect(kind.status).toBe(400);
    const name = await apply('bad', cm('other', {}), 'alice');
    expect(name.status).toBe(400);
    expect((await gw.admin.get(`${CMS}/bad`)).status).toBe(404);
  });

  it('strategic merge patches merge lists by key and follow $setElementOrder', async () => {
    const deploy = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'smp' },
      spec: {
        selector: { matchLabels: { app: 'smp' } },
        template: { metadata: { labels: { app: 'smp' } }, spec: { containers: [{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }] } },
      },
    };
    expect((await gw.admin.post('/apis/apps/v1/namespaces/default/deployments', deploy)).status).toBe(201);
    const patch = {
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'c' }, { name: 'b' }, { name: 'a' }],
            containers: [{ name: 'c', image: 'c:1' }, { name: 'a', image: 'a:2' }],
          },
        },
      },
    };
    const r = await gw.admin.patch('/apis/apps/v1/namespaces/default/deployments/smp?fieldManager=smp', JSON.stringify(patch), STRATEGIC);
    expect(r.status).toBe(200);
    expect(r.json.spec.template.spec.containers.map((c: any) => `${c.name}=${c.image}`)).toEqual(['c=c:1', 'b=b:1', 'a=a:2']);
    const del = await gw.admin.patch('/apis/apps/v1/namespaces/default/deployments/smp', JSON.stringify({ spec: { template: { spec: { containers: [{ name: 'b', $patch: 'delete' }] } } } }), STRATEGIC);
    expect(del.json.spec.template.spec.containers.map((c: any) => c.name)).toEqual(['c', 'a']);
  });
});


describe('kubectl apply (client-side, server-side) and diff', () => {
  let gw: GatewayProcess;
  let dir: string;
  const kubectl = (...args: string[]) => kubectlSync({ kubeconfig: gw.kubeconfig, cacheDir: join(dir, 'cache') }, args);
  const manifest = (file: string, replicas: number, image: string) => {
    writeFileSync(
      join(dir, file),
      `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: ${replicas}
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: ${image}
        env:
        - name: A
          value: "1"
        - name: B
          value: "2"
      - name: sidecar
        image: sidecar:1
`,
    );
    return join(dir, file);
  };
  const get = (kind: string, name: string) => JSON.parse(kubectl('get', kind, name, '-n', 'default', '-o', 'json', '--show-managed-fields').out);

  beforeAll(async () => {
    gw = await startGateway();
    dir = mkdtempSync(join(tmpdir(), 'orch-apply-'));
  });
  afterAll(async () => {
    await gw?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('apply twice: the second apply is a strategic merge patch (with $setElementOrder)', () => {
    const first = kubectl('apply', '-f', manifest('d1.yaml', 1, 'web:1'));
    expect(first.err).toBe('');
    expect(first.out).toContain('deployment.apps/web created');
    const second = kubectl('apply', '-f', manifest('d1.yaml', 3, 'web:2'));
    expect(second.err).toBe('');
    expect(second.out).toContain('deployment.apps/web configured');
    const d = get('deploy', 'web');
    expect(d.spec.replicas).toBe(3);
    expect(d.spec.template.spec.containers.map((c: any) => `${c.name}=${c.image}`)).toEqual(['web=web:2', 'sidecar=sidecar:1']);
    expect(owners(d, 'Update')['kubectl-client-side-apply']).toBeDefined();
    const unchanged = kubectl('apply', '-f', manifest('d1.yaml', 3, 'web:2'));
    expect(unchanged.out).toContain('deployment.apps/web unchanged');
  });

  it('kubectl diff shows the change an apply would make', () => {
    const none = kubectl('diff', '-f', manifest('d2.yaml', 3, 'web:2'));
    expect(none.err).toBe('');
    expect(none.code).toBe(0);
    const some = kubectl('diff', '-f', manifest('d3.yaml', 3, 'web:3'));
    expect(some.code).toBe(1);
    expect(some.out).toMatch(/-\s+image: web:2/);
    expect(some.out).toMatch(/\+\s+image: web:3/);
  });

  it('apply --server-side takes over from client-side apply without conflicts', () => {
    const r = kubectl('apply', '--server-side', '-f', manifest('d4.yaml', 2, 'web:4'));
    expect(r.err).toBe('');
    expect(r.out).toContain('deployment.apps/web serverside-applied');
    const d = get('deploy', 'web');
    expect(d.spec.template.spec.containers[0].image).toBe('web:4');
    // kubectl migrated the client-side entry to its own Apply entry.
    expect(Object.keys(owners(d, 'Apply'))).toContain('kubectl');
    expect(owners(d)['kubectl-client-side-apply']).toBeUndefined();
    expect(JSON.parse(d.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).spec.replicas).toBe(2);
  });

  it('apply --server-side by two managers: conflict, then --force-conflicts', () => {
    const cmFile = (value: string, file: string) => {
      writeFileSync(join(dir, file), `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n  namespace: default\ndata:\n  key: ${value}\n`);
      return join(dir, file);
    };
    const first = kubectl('apply', '--server-side', '--field-manager=team-a', '-f', cmFile('a', 'a.yaml'));
    expect(first.err).toBe('');
    expect(first.out).toContain('configmap/shared serverside-applied');
    const conflict = kubectl('apply', '--server-side', '--field-manager=team-b', '-f', cmFile('b', 'b.yaml'));
    expect(conflict.code).not.toBe(0);
    expect(conflict.err).toContain('conflict with "team-a"');
    expect(conflict.err).toContain('.data.key');
    const forced = kubectl('apply', '--server-side', '--field-manager=team-b', '--force-conflicts', '-f', cmFile('b', 'b.yaml'));
    expect(forced.err).toBe('');
    const shared = get('cm', 'shared');
    expect(shared.data).toEqual({ key: 'b' });
    expect(owners(shared, 'Apply')).toEqual({ 'team-b': { 'f:data': { 'f:key': {} } } });
  });
});
