import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:https';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selfSignedServingCert } from '@orch/auth';
import { startGateway, type GatewayProcess } from './support/gateway';
import { kubectlAsync, kubectlSync } from './support/kubectl';

// The life cycle of a CustomResourceDefinition driven by stock kubectl (and, for the informer,
// @kubernetes/client-node 1.4.0) against a real gateway process, with a real HTTPS conversion
// webhook that has its own CA.

const WIDGETS = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd], categories: [all]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    selectableFields:
    - jsonPath: .spec.color
    additionalPrinterColumns:
    - {name: Color, type: string, jsonPath: .spec.color}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [color]
            x-kubernetes-validations:
            - rule: self.replicas <= self.maxReplicas
              message: replicas must not exceed maxReplicas
            properties:
              color: {type: string, enum: [red, blue, green]}
              replicas: {type: integer, minimum: 0, default: 1}
              maxReplicas: {type: integer, default: 10}
              size: {type: integer, maximum: 10}
              storage:
                type: string
                x-kubernetes-validations:
                - {rule: self == oldSelf, message: storage is immutable}
          status:
            type: object
            properties:
              replicas: {type: integer}
`;

const widget = (name: string, spec: string) => `apiVersion: example.com/v1
kind: Widget
metadata: {name: ${name}, namespace: default, labels: {app: ${name}}}
spec: ${spec}
`;

/** Two versions: v1 keeps `spec.color`, v2 has `spec.paint.color`; the webhook converts. */
const gadgets = (url: string, caBundle: string, storage: 'v1' | 'v2') => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, kind: Gadget}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: {url: "${url}", caBundle: ${caBundle}}
  versions:
  - name: v1
    served: true
    storage: ${storage === 'v1'}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {color: {type: string}}}
  - name: v2
    served: true
    storage: ${storage === 'v2'}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {paint: {type: object, properties: {color: {type: string}}}}}
`;

type Obj = { apiVersion: string; kind: string; metadata: Record<string, unknown>; spec?: Record<string, any> };

/** The conversion webhook: v1 spec.color <-> v2 spec.paint.color, recording every review. */
function convert(obj: Obj, to: string): Obj {
  const spec = obj.spec ?? {};
  if (to.endsWith('/v2')) return { ...obj, apiVersion: to, spec: { paint: { color: spec.color } } };
  return { ...obj, apiVersion: to, spec: { color: spec.paint?.color } };
}

describe('custom resources through kubectl', () => {
  let gw: GatewayProcess;
  let dir: string;
  let webhook: Server;
  let webhookUrl: string;
  let caBundle: string;
  const reviews: { apiVersion: string; desired: string; count: number }[] = [];
  const kubectl = (...args: string[]) => kubectlSync({ kubeconfig: gw.kubeconfig, cacheDir: join(dir, 'cache') }, args);
  const apply = (name: string, text: string, ...flags: string[]) => {
    writeFileSync(join(dir, name), text);
    return kubectl('apply', '-f', join(dir, name), ...flags);
  };
  /** kubectl without blocking this process (the conversion webhook answers from it meanwhile). */
  const kubectlInBackground = (...args: string[]) => kubectlAsync({ kubeconfig: gw.kubeconfig, cacheDir: join(dir, 'cache') }, args);
  const applyAsync = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return kubectlInBackground('apply', '-f', join(dir, name));
  };

  beforeAll(async () => {
    gw = await startGateway();
    dir = mkdtempSync(join(tmpdir(), 'orch-crd-'));
    const cert = await selfSignedServingCert(['127.0.0.1', 'localhost'], 'conversion-webhook');
    caBundle = Buffer.from(cert.caPem).toString('base64');
    webhook = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const { uid, desiredAPIVersion, objects } = review.request;
        reviews.push({ apiVersion: review.apiVersion, desired: desiredAPIVersion, count: objects.length });
        const response = { uid, convertedObjects: objects.map((o: Obj) => convert(o, desiredAPIVersion)), result: { status: 'Success' } };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'ConversionReview', response }));
      });
    });
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
    webhookUrl = `https://127.0.0.1:${(webhook.address() as AddressInfo).port}/convert`;
  });
  afterAll(async () => {
    webhook?.close();
    await gw?.stop();
  });

  it('serves a CRD once it is Established: api-resources lists it', () => {
    const started = Date.now();
    expect(apply('widgets.yaml', WIDGETS)).toMatchObject({ code: 0 });
    expect(kubectl('wait', '--for=condition=Established', 'crd/widgets.example.com', '--timeout=20s').code).toBe(0);
    const resources = kubectl('api-resources', '--api-group=example.com');
    console.log(`widgets.example.com served ${Date.now() - started} ms after kubectl apply (incl. two kubectl runs)`);
    expect(resources.out).toMatch(/^widgets\s+wd\s+example\.com\/v1\s+true\s+Widget$/m);
    const crd = JSON.parse(kubectl('get', 'crd', 'widgets.example.com', '-o', 'json').out);
    expect(crd.status.conditions.map((c: { type: string; status: string }) => `${c.type}=${c.status}`)).toEqual(['NamesAccepted=True', 'Established=True']);
    expect(crd.status.storedVersions).toEqual(['v1']);
  });

  it('creates a custom resource and shows its printer columns', () => {
    expect(apply('w1.yaml', widget('w1', '{color: red, storage: fast}'))).toMatchObject({ code: 0 });
    const table = kubectl('get', 'widgets');
    expect(table.out).toMatch(/^NAME\s+COLOR\s+REPLICAS\s+AGE$/m);
    expect(table.out).toMatch(/^w1\s+red\s+1\s+\d+s$/m);
    const obj = JSON.parse(kubectl('get', 'wd', 'w1', '-o', 'json').out);
    expect(obj.spec).toEqual({ color: 'red', storage: 'fast', replicas: 1, maxReplicas: 10 });
    expect(kubectl('get', 'all').out).toMatch(/widget\.example\.com\/w1/);
  });

  it('explains the custom resource from its schema', () => {
    const r = kubectl('explain', 'widgets.spec');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/KIND:\s+Widget/);
    expect(r.out).toMatch(/color\s+<string> -required-/);
    expect(r.out).toMatch(/maxReplicas\s+<integer>/);
  });

  it.each([
    { name: 'a value above the maximum', spec: '{color: red, size: 30}', want: 'spec.size: Invalid value: 30: spec.size in body should be less than or equal to 10' },
    { name: 'a value outside the enum', spec: '{color: pink}', want: 'spec.color: Unsupported value: "pink": supported values: "red", "blue", "green"' },
    { name: 'a missing required field', spec: '{size: 1}', want: 'spec.color: Required value' },
    { name: 'a validation rule', spec: '{color: red, replicas: 5, maxReplicas: 3}', want: 'spec: Invalid value: "object": replicas must not exceed maxReplicas' },
    { name: 'an unknown field (kubectl validates strictly)', spec: '{color: red, bogus: 1}', want: 'strict decoding error: unknown field "spec.bogus"' },
  ])('refuses $name, naming the field', ({ spec, want }) => {
    const r = apply('bad.yaml', widget('bad', spec));
    expect(r.code).not.toBe(0);
    expect(r.err).toContain(want);
  });

  it('enforces a transition rule on update', () => {
    const r = kubectl('patch', 'widget', 'w1', '--type=merge', '-p', '{"spec":{"storage":"slow"}}');
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('spec.storage: Invalid value: "string": storage is immutable');
    expect(kubectl('patch', 'widget', 'w1', '--type=merge', '-p', '{"spec":{"color":"blue"}}').code).toBe(0);
  });

  it.each([
    { name: 'a valid change is saved', edit: 's/color: blue/color: green/', code: 0, color: 'green', refusal: undefined },
    { name: 'an invalid one is refused naming the field, nothing saved', edit: 's/color: green/color: pink/', code: 1, color: 'green', refusal: '# * spec.color: Unsupported value: "pink"' },
  ])('kubectl edit: $name', ({ edit, code, color, refusal }) => {
    // kubectl runs $EDITOR through the shell with the file to edit appended.
    const env = { ...process.env, EDITOR: `sed -i '${edit}'` };
    const r = spawnSync('kubectl', ['--kubeconfig', gw.kubeconfig, '--cache-dir', join(dir, 'cache'), 'edit', 'widget', 'w1'], { encoding: 'utf8', timeout: 30_000, env });
    expect(r.status).toBe(code);
    if (refusal) {
      // kubectl shows the server's causes in the file it reopens, and keeps a copy of it.
      const copy = /A copy of your changes has been stored to "([^"]+)"/.exec(r.stderr)?.[1];
      expect(copy).toBeDefined();
      const text = readFileSync(copy!, 'utf8');
      rmSync(copy!, { force: true });
      expect(text).toContain(refusal);
    }
    expect(JSON.parse(kubectl('get', 'widget', 'w1', '-o', 'json').out).spec.color).toBe(color);
  });

  it('writes status only through the status subresource, and scales through scale', () => {
    expect(kubectl('patch', 'widget', 'w1', '--subresource=status', '--type=merge', '-p', '{"status":{"replicas":2}}').code).toBe(0);
    expect(kubectl('patch', 'widget', 'w1', '--type=merge', '-p', '{"status":{"replicas":9}}').code).toBe(0);
    const before = JSON.parse(kubectl('get', 'widget', 'w1', '-o', 'json').out);
    expect(before.status).toEqual({ replicas: 2 });
    expect(kubectl('scale', 'widget', 'w1', '--replicas=4').code).toBe(0);
    const after = JSON.parse(kubectl('get', 'widget', 'w1', '-o', 'json').out);
    expect(after.spec.replicas).toBe(4);
    expect(after.metadata.generation).toBe(before.metadata.generation + 1);
  });

  it('server-side applies with field ownership and conflicts', () => {
    expect(apply('ssa.yaml', widget('ssa', '{color: red}'), '--server-side', '--field-manager=alice').code).toBe(0);
    const conflict = apply('ssa.yaml', widget('ssa', '{color: blue}'), '--server-side', '--field-manager=bob');
    expect(conflict.code).not.toBe(0);
    expect(conflict.err).toMatch(/conflict/i);
    expect(conflict.err).toContain('.spec.color');
    expect(apply('ssa.yaml', widget('ssa', '{color: blue}'), '--server-side', '--field-manager=bob', '--force-conflicts').code).toBe(0);
    const obj = JSON.parse(kubectl('get', 'widget', 'ssa', '-o', 'json', '--show-managed-fields').out);
    expect(obj.spec.color).toBe('blue');
    expect(obj.metadata.managedFields.map((m: { manager: string; operation: string }) => `${m.manager}/${m.operation}`).sort()).toEqual(['alice/Apply', 'bob/Apply']);
  });

  it('watches custom resources', async () => {
    const watch: ChildProcess = spawn('kubectl', ['--kubeconfig', gw.kubeconfig, '--cache-dir', join(dir, 'cache'), 'get', 'widgets', '--watch-only', '-o', 'custom-columns=NAME:.metadata.name,COLOR:.spec.color', '--no-headers']);
    let out = '';
    watch.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    try {
      // The watch is open once a first change arrives; keep changing until it shows.
      for (let i = 0; !/^w1\s+green$/m.test(out) && i < 100; i++) {
        kubectl('patch', 'widget', 'w1', '--type=merge', '-p', `{"spec":{"color":"${i % 2 ? 'blue' : 'green'}"}}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(out).toMatch(/^w1\s+green$/m);
    } finally {
      watch.kill();
    }
  });

  it('lists with selectors, chunks, dry-run and field validation as built-ins do', async () => {
    const base = '/apis/example.com/v1/namespaces/default/widgets';
    expect((await gw.admin.get(`${base}?labelSelector=app%3Dssa`)).json.items.map((i: Obj) => i.metadata.name)).toEqual(['ssa']);
    expect(kubectl('patch', 'widget', 'w1', '--type=merge', '-p', '{"spec":{"color":"red"}}').code).toBe(0);
    expect((await gw.admin.get(`${base}?fieldSelector=spec.color%3Dblue`)).json.items.map((i: Obj) => i.metadata.name)).toEqual(['ssa']);
    expect((await gw.admin.get(`${base}?fieldSelector=spec.size%3D1`)).status).toBe(400);
    const page = await gw.admin.get(`${base}?limit=1`);
    expect(page.json.items).toHaveLength(1);
    const rest = await gw.admin.get(`${base}?limit=1&continue=${encodeURIComponent(page.json.metadata.continue)}`);
    expect(rest.json.items.map((i: Obj) => i.metadata.name)).not.toEqual(page.json.items.map((i: Obj) => i.metadata.name));
    const dry = await gw.admin.post(`${base}?dryRun=All`, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'dry' }, spec: { color: 'red' } });
    expect(dry.status).toBe(201);
    expect((await gw.admin.get(`${base}/dry`)).status).toBe(404);
    const warned = await gw.admin.post(`${base}?fieldValidation=Warn`, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'warned' }, spec: { color: 'red', extra: 1 } });
    expect(warned.status).toBe(201);
    expect(String(warned.headers.warning)).toContain('unknown field \\"spec.extra\\"');
    expect(warned.json.spec.extra).toBeUndefined();
  });

  it('answers JSON and YAML only: protobuf is 406, strategic merge patch is 415', async () => {
    const path = '/apis/example.com/v1/namespaces/default/widgets/w1';
    expect((await gw.admin.get(path, { headers: { accept: 'application/vnd.kubernetes.protobuf' } })).status).toBe(406);
    expect((await gw.admin.get(path, { headers: { accept: 'application/yaml' } })).text).toContain('kind: Widget');
    expect((await gw.admin.patch(path, { spec: { size: 2 } }, 'application/strategic-merge-patch+json')).status).toBe(415);
    expect((await gw.admin.patch(path, [{ op: 'add', path: '/spec/size', value: 2 }], 'application/json-patch+json')).status).toBe(200);
  });

  it('converts between two versions through an HTTPS conversion webhook and keeps storedVersions', async () => {
    expect(await applyAsync('gadgets.yaml', gadgets(webhookUrl, caBundle, 'v1'))).toMatchObject({ code: 0 });
    expect((await kubectlInBackground('wait', '--for=condition=Established', 'crd/gadgets.example.com', '--timeout=20s')).code).toBe(0);
    expect(await applyAsync('g1.yaml', 'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g1, namespace: default}\nspec: {color: red}\n')).toMatchObject({ code: 0 });
    expect(await applyAsync('g2.yaml', 'apiVersion: example.com/v2\nkind: Gadget\nmetadata: {name: g2, namespace: default}\nspec: {paint: {color: blue}}\n')).toMatchObject({ code: 0 });
    const asV2 = JSON.parse((await kubectlInBackground('get', 'gadgets.v2.example.com', 'g1', '-o', 'json')).out);
    expect(asV2).toMatchObject({ apiVersion: 'example.com/v2', spec: { paint: { color: 'red' } } });
    const asV1 = JSON.parse((await kubectlInBackground('get', 'gadgets.v1.example.com', 'g2', '-o', 'json')).out);
    expect(asV1).toMatchObject({ apiVersion: 'example.com/v1', spec: { color: 'blue' } });
    expect(reviews.length).toBeGreaterThan(0);
    expect(reviews.every((r) => r.apiVersion === 'apiextensions.k8s.io/v1')).toBe(true);
    // The storage version moves to v2: both are stored versions now.
    expect(await applyAsync('gadgets.yaml', gadgets(webhookUrl, caBundle, 'v2'))).toMatchObject({ code: 0 });
    const crd = JSON.parse((await kubectlInBackground('get', 'crd', 'gadgets.example.com', '-o', 'json')).out);
    expect(crd.status.storedVersions).toEqual(['v1', 'v2']);
    // A webhook that is gone: reads that need conversion fail with a 500 naming it, others still work.
    webhook.close();
    webhook.closeAllConnections();
    const failed = await kubectlInBackground('get', 'gadgets.v2.example.com', 'g1', '-o', 'json');
    expect(failed.code).not.toBe(0);
    expect(failed.err).toContain('conversion webhook for example.com/v2, Kind=Gadget failed');
    expect((await kubectlInBackground('get', 'gadgets.v1.example.com', 'g1', '-o', 'json')).code).toBe(0);
  });

  it('applies a default added to the CRD later to objects written before it', async () => {
    const patch = [{ op: 'add', path: '/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/tier', value: { type: 'string', default: 'gold' } }];
    expect(kubectl('patch', 'crd', 'widgets.example.com', '--type=json', '-p', JSON.stringify(patch)).code).toBe(0);
    // Every replica serves the new schema once its cache has the CRD change.
    let tier: string | undefined;
    for (let i = 0; tier === undefined && i < 50; i++) {
      tier = (await gw.admin.get('/apis/example.com/v1/namespaces/default/widgets/w1')).json.spec.tier;
      if (tier === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    expect(tier).toBe('gold');
    const list = await gw.admin.get('/apis/example.com/v1/namespaces/default/widgets');
    expect(list.json.items.every((w: Obj) => w.spec?.tier === 'gold')).toBe(true);
  });

  it('deleting a CRD deletes its objects and stops serving it', () => {
    expect(kubectl('delete', 'crd', 'widgets.example.com', '--timeout=30s').code).toBe(0);
    expect(kubectl('api-resources', '--api-group=example.com').out).not.toMatch(/^widgets/m);
    expect(kubectl('get', 'widgets.example.com').code).not.toBe(0);
    expect(apply('widgets.yaml', WIDGETS).code).toBe(0);
    expect(kubectl('wait', '--for=condition=Established', 'crd/widgets.example.com', '--timeout=20s').code).toBe(0);
    const after = kubectl('get', 'widgets', '-A', '-o', 'name');
    expect(after).toMatchObject({ code: 0, out: '' });
  });
});
