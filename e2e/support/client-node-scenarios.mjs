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
};

try {
  const result = await scenarios[scenario]();
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  process.exit(0);
} catch (err) {
  process.stdout.write(`RESULT ${JSON.stringify({ error: String(err?.stack ?? err) })}\n`);
  process.exit(1);
}
