import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeProtobuf, decodeWatchEventProtobuf, encodeProtobuf, splitProtobufFrames } from '@orch/api';
import { removeDir } from '@orch/testing';
import { startGateway, type GatewayProcess } from './support/gateway';
import { kubectlSync } from './support/kubectl';

// OpenAPI v3 and protobuf against a real gateway process: stock kubectl with validation on
// (it reads /openapi/v3 and sends protobuf bodies from its typed clients), and raw requests.


const PROTOBUF = 'application/vnd.orch.protobuf';
const K8S_PROTOBUF = 'application/vnd.kubernetes.protobuf';

const deployment = (replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: example/web:1
`;

let gw: GatewayProcess;
let dir: string;

beforeAll(async () => {
  gw = await startGateway();
  dir = mkdtempSync(join(tmpdir(), 'orch-openapi-pb-'));
});
afterAll(async () => {
  await gw?.stop();
  if (dir) await removeDir(dir);
});

describe('kubectl with validation on and protobuf bodies', () => {
  let cache: string;
  beforeEach(() => {
    cache = mkdtempSync(join(dir, 'cache-'));
  });
  const kubectl = (...args: string[]) => {
    return kubectlSync({ kubeconfig: gw.kubeconfig, cacheDir: cache }, args);
  };

  it('apply -f validates against /openapi/v3 (fieldValidation=Strict) and re-applies a change', () => {
    writeFileSync(join(dir, 'deploy.yaml'), deployment(2));
    const first = kubectl('apply', '-f', join(dir, 'deploy.yaml'));
    expect(first.err).toBe('');
    expect(first.out).toContain('deployment.apps/web created');
    expect(kubectl('get', 'deploy', 'web', '-o', 'jsonpath={.spec.replicas}').out).toBe('2');

    // The second apply sends a strategic merge patch with fieldValidation=Strict.
    writeFileSync(join(dir, 'deploy.yaml'), deployment(3));
    const second = kubectl('apply', '-f', join(dir, 'deploy.yaml'));
    expect(second.err).toBe('');
    expect(second.out).toContain('deployment.apps/web configured');
    expect(kubectl('get', 'deploy', 'web', '-o', 'jsonpath={.spec.replicas}').out).toBe('3');
  });

  it('apply -f rejects an unknown field (server-side strict validation)', () => {
    writeFileSync(join(dir, 'bad.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\ndata: {a: b}\nbogus: 1\n');
    const r = kubectl('apply', '-f', join(dir, 'bad.yaml'));
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('unknown field "bogus"');
  });

  it('explain deployment.spec.strategy', () => {
    const r = kubectl('explain', 'deployment.spec.strategy');
    expect(r.err).toBe('');
    expect(r.out).toContain('GROUP:      apps');
    expect(r.out).toContain('KIND:       Deployment');
    expect(r.out).toContain('FIELD: strategy <DeploymentStrategy>');
    expect(r.out).toMatch(/rollingUpdate\s+<RollingUpdateDeployment>/);
    expect(r.out).toMatch(/type\s+<string>\s+enum: Recreate, RollingUpdate/);
  });

  it('explain pods.spec.containers shows list fields and required markers', () => {
    const r = kubectl('explain', 'pods.spec.containers');
    expect(r.err).toBe('');
    expect(r.out).toContain('FIELD: containers <[]Container>');
    expect(r.out).toMatch(/name\s+<string> -required-/);
    expect(r.out).toMatch(/resources\s+<ResourceRequirements>/);
  });

  it.each([
    { name: 'create namespace', args: ['create', 'namespace', 'x'], want: 'namespace/x created', check: ['get', 'ns', 'x', '-o', 'jsonpath={.metadata.name}'], value: 'x' },
    {
      name: 'create configmap --from-literal',
      args: ['create', 'configmap', 'c', '--from-literal=a=b'],
      want: 'configmap/c created',
      check: ['get', 'cm', 'c', '-o', 'jsonpath={.data.a}'],
      value: 'b',
    },
    {
      name: 'create role (rbac.authorization.k8s.io alias)',
      args: ['create', 'role', 'r', '--verb=get', '--resource=pods'],
      want: 'role.rbac.authorization.k8s.io/r created',
      check: ['get', 'roles.rbac.authorization.orch.io', 'r', '-o', 'jsonpath={.rules[0].verbs[0]}/{.rules[0].resources[0]}'],
      value: 'get/pods',
    },
    {
      name: 'create rolebinding',
      args: ['create', 'rolebinding', 'rb', '--role=r', '--user=alice'],
      want: 'rolebinding.rbac.authorization.k8s.io/rb created',
      check: ['get', 'rolebindings.rbac.authorization.orch.io', 'rb', '-o', 'jsonpath={.subjects[0].name}/{.roleRef.name}'],
      value: 'alice/r',
    },
  ])('$name sends protobuf and reads the protobuf reply', ({ args, want, check, value }) => {
    const r = kubectl(...args);
    expect(r.err).toBe('');
    expect(r.out.trim()).toBe(want);
    expect(kubectl(...check).out).toBe(value);
  });

  // The SelfSubjectAccessReview goes to the k8s.io path with a protobuf body; the answer
  // comes from the authorizer chain (RBAC), so both answers must be possible.
  it.each([
    { name: 'the admin may create pods', args: [], want: 'yes', code: 0 },
    { name: 'a user without bindings may not', args: ['--as=nobody'], want: 'no', code: 1 },
  ])('auth can-i create pods: $name', ({ args, want, code }) => {
    const r = kubectl('auth', 'can-i', 'create', 'pods', ...args);
    expect(r.out.trim()).toBe(want);
    expect(r.code).toBe(code);
  });
});

describe('protobuf on the wire', () => {
  const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', labels: { pb: 'yes' } }, data: { k: 'v' } });

  it.each([
    { name: 'orch brand', type: PROTOBUF },
    { name: 'kubernetes brand', type: K8S_PROTOBUF },
  ])('create with a $name body and reply, then get and list agree with JSON', async ({ type }) => {
    const name = `pb-${type === PROTOBUF ? 'orch' : 'k8s'}`;
    const created = await gw.admin.post('/api/v1/namespaces/default/configmaps?fieldManager=e2e', encodeProtobuf(cm(name)), { headers: { 'content-type': type, accept: type } });
    expect(created.status).toBe(201);
    expect(created.headers['content-type']).toBe(type);
    const obj = decodeProtobuf(created.body);
    expect(obj).toMatchObject(cm(name));

    const pb = await gw.admin.request('GET', `/api/v1/namespaces/default/configmaps/${name}`, undefined, { headers: { accept: type } });
    const json = await gw.admin.request('GET', `/api/v1/namespaces/default/configmaps/${name}`);
    expect(decodeProtobuf(pb.body)).toEqual(json.json);

    const pbList = await gw.admin.request('GET', '/api/v1/namespaces/default/configmaps?labelSelector=pb%3Dyes', undefined, { headers: { accept: type } });
    const jsonList = await gw.admin.request('GET', '/api/v1/namespaces/default/configmaps?labelSelector=pb%3Dyes');
    expect(decodeProtobuf(pbList.body)).toEqual(jsonList.json);
  });

  it('a protobuf DeleteOptions body is honoured', async () => {
    await gw.admin.post('/api/v1/namespaces/default/configmaps', cm('to-delete'));
    const opts = encodeProtobuf({ apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: 'not-the-uid' } });
    // Node sends a DELETE body without framing unless Content-Length is set.
    const r = await gw.admin.delete('/api/v1/namespaces/default/configmaps/to-delete', opts, { headers: { 'content-type': K8S_PROTOBUF, 'content-length': String(opts.length) } });
    expect(r.status).toBe(409);
    expect(r.json.reason).toBe('Conflict');
  });

  it('errors are protobuf Status objects when only protobuf is acceptable', async () => {
    const r = await gw.admin.request('GET', '/api/v1/namespaces/default/configmaps/missing', undefined, { headers: { accept: PROTOBUF } });
    expect(r.status).toBe(404);
    expect(r.headers['content-type']).toBe(PROTOBUF);
    expect(decodeProtobuf(r.body)).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404 });
  });

  it('a malformed protobuf body is a 400', async () => {
    const r = await gw.admin.post('/api/v1/namespaces/default/configmaps', Buffer.from('k8s\u0000\u000a\u00ff'), { headers: { 'content-type': PROTOBUF } });
    expect(r.status).toBe(400);
    expect(r.json.message).toContain('unable to decode the protobuf body');
  });

  it('watch streams length-prefixed WatchEvent frames', async () => {
    const pki = join(gw.dataDir, 'pki');
    const agent = new https.Agent({ ca: readFileSync(join(pki, 'ca.crt')), cert: readFileSync(join(pki, 'admin.crt')), key: readFileSync(join(pki, 'admin.key')) });
    const list = await gw.admin.request('GET', '/api/v1/namespaces/default/configmaps');
    const rv = list.json.metadata.resourceVersion as string;
    const events: { type: string; object: { metadata: { name?: string } } }[] = [];
    let contentType = '';
    const done = new Promise<void>((resolve, reject) => {
      const req = https.get(new URL(`/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rv}&timeoutSeconds=10`, gw.url), { agent, headers: { accept: `${K8S_PROTOBUF},application/json` } }, (res) => {
        contentType = String(res.headers['content-type']);
        let pending: Buffer = Buffer.alloc(0);
        res.on('data', (chunk: Buffer) => {
          const { frames, rest } = splitProtobufFrames(Buffer.concat([pending, chunk]));
          pending = rest;
          for (const f of frames) events.push(decodeWatchEventProtobuf(f));
          if (events.some((e) => e.type === 'DELETED')) {
            req.destroy();
            resolve();
          }
        });
        res.on('end', resolve);
      });
      req.on('error', reject);
    });
    await new Promise((r) => setTimeout(r, 300));
    await gw.admin.post('/api/v1/namespaces/default/configmaps', cm('watched'));
    await gw.admin.delete('/api/v1/namespaces/default/configmaps/watched');
    await done;
    agent.destroy();
    expect(contentType).toBe(`${K8S_PROTOBUF};stream=watch`);
    expect(events.filter((e) => e.object.metadata.name === 'watched').map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
  });
});

describe('OpenAPI v3', () => {
  it('the index names every group/version with a hash; documents carry ETags and honour If-None-Match', async () => {
    const index = await gw.admin.request('GET', '/openapi/v3');
    expect(index.status).toBe(200);
    const paths = index.json.paths as Record<string, { serverRelativeURL: string }>;
    expect(Object.keys(paths)).toEqual(expect.arrayContaining(['api/v1', 'apis/apps/v1', 'apis/rbac.authorization.orch.io/v1']));
    const url = paths['apis/apps/v1'].serverRelativeURL;
    expect(url).toMatch(/^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{128}$/);

    const doc = await gw.admin.request('GET', url);
    expect(doc.status).toBe(200);
    expect(doc.headers['cache-control']).toBe('public, immutable');
    const etag = String(doc.headers.etag);
    expect(etag).toBe(`"${url.split('hash=')[1]}"`);
    const patch = doc.json.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'].patch;
    expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: 'apps', version: 'v1', kind: 'Deployment' });
    expect(patch.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['fieldValidation', 'fieldManager', 'dryRun', 'force']));

    const again = await gw.admin.request('GET', '/openapi/v3/apis/apps/v1', undefined, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    const stale = await gw.admin.request('GET', '/openapi/v3/apis/apps/v1?hash=0');
    expect(stale.status).toBe(301);
    expect(stale.headers.location).toBe(url);
  });

  it.each([
    { name: 'v2 is not served', path: '/openapi/v2', want: 404 },
    { name: 'an unknown group/version', path: '/openapi/v3/apis/nope/v1', want: 404 },
  ])('$name', async ({ path, want }) => {
    const r = await gw.admin.request('GET', path, undefined, { headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
    expect(r.status).toBe(want);
  });
});
