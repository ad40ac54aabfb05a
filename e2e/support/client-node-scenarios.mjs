// Runs @kubernetes/client-node (ESM) scenarios against a gateway in a child process and
// prints one JSON result line. Usage: node client-node-scenarios.mjs <kubeconfig> <scenario>
import https from 'node:https';
import * as k8s from '@kubernetes/client-node';

const [kubeconfig, scenario] = process.argv.slice(2);
const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);

/** Creates ConfigMaps through a separate raw HTTPS agent (the writer is not the client under test). */
function rawCreate(ns, name) {
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  const url = new URL(`/api/v1/namespaces/${ns}/configmaps`, cluster.server);
  const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { n: name } });
  return new Promise((resolve, reject) => {
    const req = https.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      ca: Buffer.from(cluster.caData, 'base64'),
      cert: Buffer.from(user.certData, 'base64'),
      key: Buffer.from(user.keyData, 'base64'),
      agent: rawCreate.agent ??= new https.Agent({ keepAlive: true, maxSockets: 32 }),
    }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 201 ? resolve() : reject(new Error(`create ${name}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Any request through the raw writer agent; resolves with the status code and parsed body. */
function raw(method, path, body, contentType = 'application/json') {
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(path, cluster.server), {
      method,
      headers: payload ? { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) } : {},
      ca: Buffer.from(cluster.caData, 'base64'),
      cert: Buffer.from(user.certData, 'base64'),
      key: Buffer.from(user.keyData, 'base64'),
      agent: rawCreate.agent ??= new https.Agent({ keepAlive: true, maxSockets: 32 }),
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode, body: text ? JSON.parse(text) : undefined });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const scenarios = {
  async crud() {
    await core.createNamespace({ body: { metadata: { name: 'cn' } } });
    const cm = await core.createNamespacedConfigMap({ namespace: 'cn', body: { metadata: { name: 'one' }, data: { a: '1' } } });
    const read = await core.readNamespacedConfigMap({ namespace: 'cn', name: 'one' });
    const list = await core.listNamespacedConfigMap({ namespace: 'cn' });
    await core.deleteNamespacedConfigMap({ namespace: 'cn', name: 'one' });
    let gone = false;
    try {
      await core.readNamespacedConfigMap({ namespace: 'cn', name: 'one' });
    } catch (e) {
      gone = e.code === 404;
    }
    return { uid: cm.metadata.uid, data: read.data, names: list.items.map((i) => i.metadata.name), gone };
  },

  /**
   * Informers on both brands of one group (rbac.authorization.k8s.io, as typed clients use it,
   * and rbac.authorization.orch.io): each sees every add, update and delete, in its own group.
   */
  async brandInformers() {
    await core.createNamespace({ body: { metadata: { name: 'brand' } } });
    const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const brands = {
      k8s: k8s.makeInformer(kc, '/apis/rbac.authorization.k8s.io/v1/namespaces/brand/roles', () => rbac.listNamespacedRole({ namespace: 'brand' })),
      orch: k8s.makeInformer(kc, '/apis/rbac.authorization.orch.io/v1/namespaces/brand/roles', () =>
        custom.listNamespacedCustomObject({ group: 'rbac.authorization.orch.io', version: 'v1', namespace: 'brand', plural: 'roles' }),
      ),
    };
    const seen = { k8s: [], orch: [] };
    const errors = [];
    let stopping = false;
    for (const [brand, inf] of Object.entries(brands)) {
      for (const type of ['add', 'update', 'delete']) inf.on(type, (obj) => seen[brand].push([type, obj.metadata.name, obj.apiVersion]));
      inf.on('error', (err) => stopping || errors.push(`${brand}: ${err}`));
      await inf.start();
    }
    const path = '/apis/rbac.authorization.k8s.io/v1/namespaces/brand/roles';
    const must = async (...args) => {
      const r = await raw(...args);
      if (r.status >= 300) throw new Error(`${args[0]} ${args[1]}: ${r.status} ${JSON.stringify(r.body)}`);
    };
    await must('POST', path, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'r1' }, rules: [] });
    await must('PATCH', `${path}/r1`, { rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }, 'application/merge-patch+json');
    await must('DELETE', `${path}/r1`);
    const deadline = Date.now() + 15_000;
    while ((seen.k8s.length < 3 || seen.orch.length < 3) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    stopping = true;
    for (const inf of Object.values(brands)) await inf.stop();
    return { seen, errors };
  },

  async informer() {
    const N = 1000;
    const PRE = 100;
    await core.createNamespace({ body: { metadata: { name: 'inf' } } });
    for (let i = 0; i < PRE; i++) await rawCreate('inf', `c-${i}`);
    const informer = k8s.makeInformer(kc, '/api/v1/namespaces/inf/configmaps', () => core.listNamespacedConfigMap({ namespace: 'inf' }));
    const seen = new Set();
    const errors = [];
    let stopping = false;
    informer.on('add', (obj) => seen.add(obj.metadata.name));
    // stop() aborts the informer's own watch request, which it reports as an error: ignore that one.
    informer.on('error', (err) => stopping || errors.push(String(err)));
    await informer.start();
    const pending = [];
    for (let i = PRE; i < N; i++) {
      pending.push(rawCreate('inf', `c-${i}`));
      if (pending.length >= 32) await Promise.all(pending.splice(0));
    }
    await Promise.all(pending);
    const deadline = Date.now() + 20_000;
    while (seen.size < N && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    stopping = true;
    await informer.stop();
    return { seen: seen.size, cached: informer.list('inf').length, errors };
  },

  /**
   * An informer on a custom resource through CustomObjectsApi while 500 writes (creates,
   * updates, deletes) go through another connection: its cache must end equal to a fresh list
   * (same names, resourceVersions and specs).
   */
  async customResourceInformer() {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'counters.inform.example.com' },
      spec: {
        group: 'inform.example.com',
        scope: 'Namespaced',
        names: { plural: 'counters', kind: 'Counter' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { n: { type: 'integer' } } } } } } }],
      },
    };
    const created = await raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    if (created.status !== 201) throw new Error(`create CRD: ${created.status} ${JSON.stringify(created.body)}`);
    await core.createNamespace({ body: { metadata: { name: 'crinf' } } });
    const base = '/apis/inform.example.com/v1/namespaces/crinf/counters';
    for (let tries = 0; (await raw('GET', base)).status !== 200; tries++) {
      if (tries > 200) throw new Error('the custom resource is not served');
      await new Promise((r) => setTimeout(r, 25));
    }
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const list = () => custom.listNamespacedCustomObject({ group: 'inform.example.com', version: 'v1', namespace: 'crinf', plural: 'counters' });
    const informer = k8s.makeInformer(kc, base, list);
    const errors = [];
    let stopping = false;
    informer.on('error', (err) => stopping || errors.push(String(err)));
    // Every notification, by kind: each write must be seen once, as what it was.
    const events = { add: 0, update: 0, delete: 0 };
    const deleted = [];
    informer.on('add', () => events.add++);
    informer.on('update', () => events.update++);
    informer.on('delete', (o) => (events.delete++, deleted.push(o.metadata.name)));
    await informer.start();
    // 500 writes: 250 creates, 175 updates, 75 deletes, 16 at a time.
    const writes = [];
    for (let i = 0; i < 250; i++) writes.push(() => raw('POST', base, { apiVersion: 'inform.example.com/v1', kind: 'Counter', metadata: { name: `c-${i}` }, spec: { n: 0 } }));
    for (let i = 0; i < 175; i++) writes.push(() => raw('PATCH', `${base}/c-${i % 100}`, { spec: { n: i + 1 } }, 'application/merge-patch+json'));
    for (let i = 0; i < 75; i++) writes.push(() => raw('DELETE', `${base}/c-${100 + i}`));
    let failed = 0;
    for (let i = 0; i < writes.length; i += 16) {
      const batch = await Promise.all(writes.slice(i, i + 16).map((w) => w()));
      failed += batch.filter((r) => r.status >= 300).length;
    }
    const truth = (await raw('GET', base)).body.items;
    const key = (o) => `${o.metadata.name}@${o.metadata.resourceVersion}:${o.spec?.n}`;
    const want = truth.map(key).sort();
    const cached = () => informer.list('crinf').map(key).sort();
    const deadline = Date.now() + 20_000;
    while (JSON.stringify(cached()) !== JSON.stringify(want) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    stopping = true;
    await informer.stop();
    const got = cached();
    const deletedExactly = JSON.stringify(deleted.sort()) === JSON.stringify(Array.from({ length: 75 }, (_, i) => `c-${100 + i}`).sort());
    return { writes: writes.length, failed, objects: want.length, equal: JSON.stringify(got) === JSON.stringify(want), missing: want.filter((k) => !got.includes(k)), extra: got.filter((k) => !want.includes(k)), events, deletedExactly, errors };
  },
};

try {
  const result = await scenarios[scenario]();
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  process.exit(0);
} catch (err) {
  process.stdout.write(`RESULT ${JSON.stringify({ error: String(err?.stack ?? err) })}\n`);
  process.exit(1);
}
