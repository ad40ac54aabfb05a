// A stock @kubernetes/client-node informer (ESM) on one gateway, run as a child process by
// ha-profile.e2e.spec.ts. Usage: node ha-informer.mjs <kubeconfig> <server> <namespace>
// Prints READY once synced; on each stdin line DUMP prints `DUMP {"items":[[name, rv]...],"errors":n}`.
// Like any controller it restarts its informer after an error (a relist).
import { createInterface } from 'node:readline';
import * as k8s from '@kubernetes/client-node';

const [kubeconfig, server, namespace] = process.argv.slice(2);
const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
kc.clusters = kc.clusters.map((c) => ({ ...c, server }));
const core = kc.makeApiClient(k8s.CoreV1Api);
const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${namespace}/configmaps`, () => core.listNamespacedConfigMap({ namespace }));
let errors = 0;
informer.on('error', () => {
  errors++;
  setTimeout(() => informer.start().catch(() => undefined), 500);
});
await informer.start();
process.stdout.write('READY\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() !== 'DUMP') return;
  const items = informer.list(namespace).map((o) => [o.metadata.name, o.metadata.resourceVersion]).sort();
  process.stdout.write(`DUMP ${JSON.stringify({ items, errors })}\n`);
});
