import { X509Certificate, webcrypto } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { formatMicroTime, formatTime, parseTime, type KubeObject } from '@orch/apimachinery';
import { ensurePki, issueClientCert } from '@orch/auth';
import { RestClient, isNotFound, type ResourceClient } from '@orch/client';
import { eventually, startClusterControllers, type ClusterControllers } from './cluster-support';

const core = (resource: string) => ({ group: '', version: 'v1', resource });
const LEASES = { group: 'coordination.orch.io', version: 'v1', resource: 'leases' };
const CSRS = { group: 'certificates.orch.io', version: 'v1', resource: 'certificatesigningrequests' };

interface Toleration {
  key?: string;
  operator?: string;
  effect?: string;
  tolerationSeconds?: number;
}
interface NodeObj extends KubeObject {
  spec?: { taints?: { key: string; effect: string; timeAdded?: string }[] };
  status?: { conditions?: { type: string; status: string; reason?: string }[] };
}
interface PodObj extends KubeObject {
  spec: { tolerations?: Toleration[]; [k: string]: unknown };
  status?: { phase?: string; conditions?: { type: string; status: string; reason?: string }[] };
}
interface CsrObj extends KubeObject {
  status?: { conditions?: { type: string; status: string; reason?: string }[]; certificate?: string };
}

async function absent(client: ResourceClient<PodObj>, name: string): Promise<true | undefined> {
  try {
    const p = await client.get(name);
    return p.metadata.deletionTimestamp ? true : undefined;
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
}

async function nodeClientCsr(nodeName: string): Promise<string> {
  x509.cryptoProvider.set(webcrypto);
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: `O=system:nodes, CN=system:node:${nodeName}`, keys, signingAlgorithm: alg });
  return Buffer.from(csr.toString('pem')).toString('base64');
}

describe('cluster controllers: nodelifecycle, podgc, csrapproving, csrsigning (real gateway + controller-manager)', () => {
  let c: ClusterControllers;
  let renewer: NodeJS.Timeout | undefined;
  beforeAll(async () => {
    c = await startClusterControllers(['nodelifecycle', 'podgc', 'csrapproving', 'csrsigning'], ['--node-monitor-grace-period=2s', '--node-monitor-period=300ms', '--terminated-pod-gc-threshold=1']);
  });
  afterAll(async () => {
    clearInterval(renewer);
    await c?.stop();
  });

  it('taints a node whose lease stops renewing and evicts its pods after their tolerationSeconds', async () => {
    const nodes = c.client.resource<NodeObj>(core('nodes'));
    const leases = c.client.resource(LEASES, 'orch-node-lease');
    for (const name of ['alive', 'dead']) {
      await nodes.create({ apiVersion: 'v1', kind: 'Node', metadata: { name } });
      const now = formatTime(Date.now());
      await nodes.patch(name, 'merge', { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: now, lastTransitionTime: now }] } }, { subresource: 'status' });
      await leases.create({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: formatMicroTime(Date.now() * 1000) } });
    }
    renewer = setInterval(() => void leases.patch('alive', 'merge', { spec: { renewTime: formatMicroTime(Date.now() * 1000) } }).catch(() => undefined), 300);

    const pods = c.client.resource<PodObj>(core('pods'), 'default');
    const pod = (name: string, nodeName: string, tolerations?: Toleration[]): PodObj => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { nodeName, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'x' }], ...(tolerations ? { tolerations } : {}) },
    });
    await pods.create(pod('short', 'dead', [{ key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 2 }]));
    const defaulted = await pods.create(pod('defaulted', 'dead'));
    await pods.create(pod('elsewhere', 'alive'));

    // DefaultTolerationSeconds (gateway admission) gave the plain pod 300 s for both taints.
    expect(defaulted.spec.tolerations).toEqual([
      { key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ]);
    expect((await pods.get('short')).spec.tolerations?.map((t) => `${t.key}:${t.tolerationSeconds}`)).toEqual(['node.orch.io/unreachable:2', 'node.orch.io/not-ready:300']);

    const dead = await eventually('dead node tainted', async () => {
      const n = await nodes.get('dead');
      return n.spec?.taints?.some((t) => t.effect === 'NoExecute') ? n : undefined;
    }, 15_000);
    expect(dead.status?.conditions?.find((x) => x.type === 'Ready')).toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown' });
    const taint = dead.spec?.taints?.find((t) => t.effect === 'NoExecute');
    expect(taint?.key).toBe('node.orch.io/unreachable');
    expect(taint?.timeAdded).toBeDefined();

    await eventually('short-tolerance pod evicted', () => absent(pods, 'short'), 10_000);
    expect(Date.now()).toBeGreaterThanOrEqual(parseTime(taint?.timeAdded ?? '') + 2000);
    expect((await pods.get('defaulted')).metadata.deletionTimestamp).toBeUndefined();
    expect((await pods.get('elsewhere')).metadata.deletionTimestamp).toBeUndefined();
    expect((await nodes.get('alive')).spec?.taints ?? []).toEqual([]);
  }, 40_000);

  it('auto-approves and signs a node client certificate request from a bootstrapper', async () => {
    // The requester is whoever authenticates (the gateway sets spec.username and groups):
    // here a bootstrapper's client certificate.
    const pki = await ensurePki(c.pkiDir);
    const bootstrapper = await issueClientCert(pki, { cn: 'system:bootstrap:abcdef', orgs: ['system:bootstrappers'] });
    const asBootstrapper = new RestClient({ server: c.gateway.url, caPem: pki.ca.certPem, certPem: bootstrapper.certPem, keyPem: bootstrapper.keyPem }, { component: 'e2e-bootstrapper' });
    const csrs = asBootstrapper.resource<CsrObj>(CSRS);
    await csrs.create({
      apiVersion: 'certificates.orch.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name: 'node-csr-n9' },
      spec: { request: await nodeClientCsr('n9'), signerName: 'orch.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] },
    });
    expect((await csrs.get('node-csr-n9')).spec).toMatchObject({ username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] });
    const issued = await eventually('certificate issued', async () => {
      const x = await csrs.get('node-csr-n9');
      return x.status?.certificate ? x : undefined;
    });
    expect(issued.status?.conditions).toEqual([expect.objectContaining({ type: 'Approved', status: 'True', reason: 'AutoApproved' })]);
    const cert = new X509Certificate(Buffer.from(issued.status?.certificate ?? '', 'base64'));
    expect(cert.subject).toBe('O=system:nodes\nCN=system:node:n9');
    expect(cert.verify(new X509Certificate(await readFile(join(c.pkiDir, 'ca.crt'), 'utf8')).publicKey)).toBe(true);
    asBootstrapper.close();
  });

  it('does not approve a CSR whose requester lacks the nodeclient permission (the gateway answers the SubjectAccessReview)', async () => {
    const pki = await ensurePki(c.pkiDir);
    // mallory may create CSRs (system:node-bootstrapper) but holds no nodeclient permission.
    const binding = { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'mallory-csrs' }, roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'ClusterRole', name: 'system:node-bootstrapper' }, subjects: [{ kind: 'User', name: 'mallory' }] };
    await c.client.request({ method: 'POST', path: '/apis/rbac.authorization.orch.io/v1/clusterrolebindings', body: binding });
    const mallory = await issueClientCert(pki, { cn: 'mallory' });
    const asMallory = new RestClient({ server: c.gateway.url, caPem: pki.ca.certPem, certPem: mallory.certPem, keyPem: mallory.keyPem }, { component: 'e2e-mallory' });
    // Claims to come from a bootstrapper; the gateway records who sent it.
    await asMallory.resource<CsrObj>(CSRS).create({
      apiVersion: 'certificates.orch.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name: 'node-csr-spoofed' },
      spec: { request: await nodeClientCsr('n8'), signerName: 'orch.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'], username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers'] },
    });
    await new Promise((r) => setTimeout(r, 2000));
    const csr = await c.client.resource<CsrObj>(CSRS).get('node-csr-spoofed');
    expect(csr.spec).toMatchObject({ username: 'mallory' });
    expect(csr.status?.certificate).toBeUndefined();
    expect((csr.status?.conditions ?? []).filter((x) => x.type === 'Approved')).toEqual([]);
  });

  it('garbage-collects terminated pods above the threshold', async () => {
    const pods = c.client.resource<PodObj>(core('pods'), 'default');
    for (const name of ['done-1', 'done-2', 'done-3']) {
      await pods.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: 'alive', terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'x' }] } });
      await pods.patch(name, 'merge', { status: { phase: 'Succeeded' } }, { subresource: 'status' });
    }
    // The pod GC passes every 20 s (upstream gcCheckPeriod).
    await eventually('two oldest terminated pods deleted', async () => ((await absent(pods, 'done-1')) && (await absent(pods, 'done-2')) ? true : undefined), 25_000, 250);
    expect((await pods.get('done-3')).status?.phase).toBe('Succeeded');
  }, 30_000);
});
