import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ensurePythonModule } from '@orch/testing';
import { startLocalPlane, type LocalPlane } from '../support/local-plane';
import { eventually } from '../support/node-agent';

/**
 * A stock in-cluster program, unmodified: a pod runs the official Python client's
 * `config.load_incluster_config()` and lists pods with its own service-account token. It finds
 * the API through KUBERNETES_SERVICE_HOST/PORT (the `default/kubernetes` Service, forwarded by the
 * network-proxy), the token and CA at /var/run/secrets/kubernetes.io/serviceaccount, and
 * verifies the serving certificate against the Service address. `npm start` with the sandbox
 * runtime (root), whose containers see their volumes at the absolute mount paths.
 */
jest.setTimeout(240_000);

const NS = 'incluster';
const PROGRAM = [
  'import json',
  'from kubernetes import client, config',
  'config.load_incluster_config()',
  `pods = client.CoreV1Api().list_namespaced_pod("${NS}")`,
  'print("RESULT " + json.dumps({"host": client.Configuration.get_default_copy().host, "pods": sorted(p.metadata.name for p in pods.items)}))',
].join('\n');

describe('an in-cluster Python program (load_incluster_config)', () => {
  let plane: LocalPlane;
  let python: string;
  const kubectl = (...args: string[]) => {
    const r = spawnSync('kubectl', ['--kubeconfig', plane.kubeconfig, '--cache-dir', join(plane.dataDir, 'kubectl-cache'), ...args], { encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };

  beforeAll(async () => {
    expect(process.getuid?.()).toBe(0); // the sandbox runtime needs root
    python = await ensurePythonModule('kubernetes', 'python3-kubernetes');
    plane = await startLocalPlane(120_000, { ORCH_NODE_AGENT_RUNTIME: 'sandbox' });
    await eventually('a Ready node', async () => ((await plane.admin.get('/api/v1/nodes')).json.items.some((n: any) => n.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True')) ? true : undefined), 60_000, 250);
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it('lists pods with its own token through the default/kubernetes Service', async () => {
    kubectl('create', 'namespace', NS);
    // kubectl hard-codes rbac.authorization.k8s.io for this command.
    kubectl('-n', NS, 'create', 'rolebinding', 'default-view', '--clusterrole=view', `--serviceaccount=${NS}:default`);
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'py', namespace: NS },
      spec: { restartPolicy: 'Never', containers: [{ name: 'py', image: 'python', command: [python, '-c', PROGRAM] }] },
    };
    // The serviceaccount controller creates `default` in a new namespace asynchronously; a pod
    // admitted before it exists gets no token (upstream refuses it until then).
    await eventually('the default service account', async () => ((await plane.admin.get(`/api/v1/namespaces/${NS}/serviceaccounts/default`)).status === 200 ? true : undefined), 60_000);
    expect((await plane.admin.post(`/api/v1/namespaces/${NS}/pods`, pod)).status).toBe(201);
    const phase = await eventually('pod finished', async () => {
      const p = (await plane.admin.get(`/api/v1/namespaces/${NS}/pods/py`)).json.status?.phase;
      return p === 'Succeeded' || p === 'Failed' ? p : undefined;
    }, 90_000, 250);
    const log = kubectl('logs', 'py', '-n', NS);
    if (phase !== 'Succeeded') throw new Error(`the pod ended ${phase}; its log:\n${log.slice(-2000)}`);
    const result = JSON.parse(log.split('\n').find((l) => l.startsWith('RESULT '))!.slice('RESULT '.length));
    const svc = JSON.parse(kubectl('get', 'svc', 'kubernetes', '-n', 'default', '-o', 'json'));
    expect(result).toEqual({ host: `https://${svc.spec.clusterIP}:${svc.spec.ports[0].port}`, pods: ['py'] });
  });
});
