import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ensurePythonModule } from '@orch/testing';
import { startGateway, type GatewayProcess } from '../support/gateway';

/**
 * The official Python client (Debian python3-kubernetes, installed by apt-get when missing, run
 * with /usr/bin/python3) against a real gateway, as its users write it: typed CRUD,
 * watch.Watch().stream (it sends watch=True), resuming from a list's resourceVersion, and the
 * dynamic client on *.k8s.io group versions. Before the compatibility work every stream got a
 * list instead of a watch, and the dynamic client could not resolve rbac.authorization.k8s.io/v1.
 */
jest.setTimeout(120_000);

const SCRIPT = join(__dirname, 'python_client.py');

describe('the official Python client', () => {
  let gw: GatewayProcess;
  let python: string;
  const run = (scenario: string) => {
    const r = spawnSync(python, [SCRIPT, gw.kubeconfig, scenario], { encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`python ${scenario} failed (${r.status ?? r.signal}):\n${r.stderr}`);
    return JSON.parse(r.stdout.trim().split('\n').pop()!);
  };

  beforeAll(async () => {
    python = await ensurePythonModule('kubernetes', 'python3-kubernetes');
    gw = await startGateway();
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('creates, reads, patches, replaces, lists and deletes with the typed API', () => {
    expect(run('crud')).toEqual({
      created: 'settings',
      read: { color: 'blue' },
      patched: 'green',
      replaced: { color: 'green', size: 'L' },
      listed: ['settings'],
      listKind: 'ConfigMapList',
      deleteStatus: 'Success',
      afterDelete: 404,
    });
  });

  it('watch.Watch().stream receives ADDED, MODIFIED and DELETED', () => {
    expect(run('watch').events).toEqual([
      ['ADDED', 'watched', 'V1ConfigMap'],
      ['MODIFIED', 'watched', 'V1ConfigMap'],
      ['DELETED', 'watched', 'V1ConfigMap'],
    ]);
  });

  it("resumes from a list's resourceVersion: only what came after the list", () => {
    expect(run('resume')).toEqual({ listed: ['before'], seen: [['ADDED', 'after']] });
  });

  it('the dynamic client resolves *.k8s.io group versions, and replies name the group asked for', () => {
    expect(run('dynamic')).toEqual({
      created: 'rbac.authorization.k8s.io/v1',
      got: ['rbac.authorization.k8s.io/v1', 'Role', 'py-reader'],
      listApiVersion: 'rbac.authorization.k8s.io/v1',
      listItems: [['rbac.authorization.k8s.io/v1', 'py-reader']],
      typedRoles: ['py-reader'],
      typedNetpols: ['py-deny'],
    });
  });
});
