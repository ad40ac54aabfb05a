import { spawnSync } from 'node:child_process';
import http from 'node:http';
import { join } from 'node:path';
import { startLocalPlane, type LocalPlane } from './support/local-plane';
import { eventually, startNodeAgent, type NodeAgentProcess } from './support/node-agent';

/**
 * README "Quick start" and "More machines" as a user runs them: `npm start` (its own data dir and
 * a free port for every component), a bootstrap token made with stock kubectl, and a second
 * machine joined with `node-agent join --server --token`. Before the compatibility work no
 * signature ever appeared in cluster-info (the bootstrap signer was off) and the join timed out.
 */
jest.setTimeout(240_000);

const TOKEN_ID = 'k8scpt';
const TOKEN_SECRET = 'abcdef0123456789';

describe('npm start, then a second machine joins with a bootstrap token', () => {
  let plane: LocalPlane;
  let joined: NodeAgentProcess | undefined;
  const kubectl = (...args: string[]) => spawnSync('kubectl', ['--kubeconfig', plane.kubeconfig, '--cache-dir', join(plane.dataDir, 'kubectl-cache'), ...args], { encoding: 'utf8', timeout: 30_000 });

  beforeAll(async () => {
    expect(spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status).toBe(0);
    plane = await startLocalPlane();
  });
  afterAll(async () => {
    await joined?.stop();
    await plane?.stop();
  });

  it('the network-proxy answers /healthz on plain HTTP, as upstream load balancers probe it', async () => {
    // "control plane up" is printed once the gateway is ready; the proxy starts after it.
    const healthz = () =>
      new Promise<number>((resolve, reject) => http.get(`http://127.0.0.1:${plane.env.ORCH_PROXY_HEALTHZ_PORT}/healthz`, (r) => (r.resume(), resolve(r.statusCode ?? 0))).on('error', reject));
    expect(await eventually('network-proxy healthz on plain HTTP', async () => ((await healthz()) === 200 ? 200 : undefined), 30_000, 200)).toBe(200);
  });

  it('signs cluster-info for a token made with kubectl, and `node-agent join` brings a Ready node', async () => {
    const created = kubectl(
      '-n',
      'orch-system',
      'create',
      'secret',
      'generic',
      `bootstrap-token-${TOKEN_ID}`,
      '--type=bootstrap.orch.io/token',
      `--from-literal=token-id=${TOKEN_ID}`,
      `--from-literal=token-secret=${TOKEN_SECRET}`,
      '--from-literal=usage-bootstrap-authentication=true',
      '--from-literal=usage-bootstrap-signing=true',
      '--from-literal=auth-extra-groups=system:bootstrappers:orch:default-node-token',
    );
    expect(created.stderr).toBe('');
    // The controller-manager of npm start runs the bootstrap signer.
    await eventually(
      'cluster-info signed for the token',
      async () => ((await plane.admin.get('/api/v1/namespaces/orch-public/configmaps/cluster-info')).json?.data?.[`jws-kubeconfig-${TOKEN_ID}`] ? true : undefined),
      30_000,
      200,
    );
    joined = await startNodeAgent({ name: 'machine-2', command: 'join', args: [`--server=${plane.url}`, `--token=${TOKEN_ID}.${TOKEN_SECRET}`], timeoutMs: 90_000 });
    const ready = await eventually(
      'machine-2 Ready',
      async () => {
        const n = (await plane.admin.get('/api/v1/nodes/machine-2')).json;
        return n?.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True') ? n : undefined;
      },
      60_000,
      250,
    );
    expect(ready.metadata.name).toBe('machine-2');
    expect(kubectl('get', 'nodes', '-o', 'name').stdout).toContain('node/machine-2');
  });
});
