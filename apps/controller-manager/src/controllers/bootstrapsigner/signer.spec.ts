import { compactVerify } from 'jose';
import { formatTime } from '@orch/apimachinery';
import type { ConfigMap, Secret } from '../../framework/api';
import { eventually, startHarness, storedObject, type Harness } from '../../framework/testing/harness';
import { KUBECONFIG_KEY, clusterInfoKubeconfig } from './jws';
import { BootstrapSigner, bootstrapSignerController } from './signer';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const bootstrapToken = (id: string, secret: string, extra: Record<string, string> = {}): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  type: 'bootstrap.orch.io/token',
  metadata: { name: `bootstrap-token-${id}`, namespace: 'orch-system' },
  data: Object.fromEntries(Object.entries({ 'token-id': id, 'token-secret': secret, 'usage-bootstrap-signing': 'true', ...extra }).map(([k, v]) => [k, b64(v)])),
});
const clusterInfo = (h: Harness) => storedObject<ConfigMap>(h.peer, '/v1/configmaps', 'cluster-info', 'orch-public');

describe('BootstrapSigner against an API peer', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ rootCaPem: 'CA\n' });
  });
  afterEach(() => h.stop());

  it('is off by default', () => {
    expect(bootstrapSignerController.disabledByDefault).toBe(true);
  });

  it('creates cluster-info and keeps one verifiable signature per signing token', async () => {
    h.peer.put('/v1/secrets', bootstrapToken('aaaaaa', '0123456789abcdef'));
    h.peer.put('/v1/secrets', bootstrapToken('cccccc', '0123456789abcdef', { 'usage-bootstrap-signing': 'false' }));
    h.peer.put('/v1/secrets', { ...bootstrapToken('dddddd', '0123456789abcdef'), metadata: { name: 'bootstrap-token-dddddd', namespace: 'elsewhere' } });
    h.start(new BootstrapSigner(h.ctx));
    const cm = await eventually('signed', () => {
      const x = clusterInfo(h);
      return x?.data?.['jws-kubeconfig-aaaaaa'] ? x : undefined;
    });
    expect(cm.data?.[KUBECONFIG_KEY]).toBe(clusterInfoKubeconfig(h.peer.url, 'CA\n'));
    expect(Object.keys(cm.data ?? {}).sort()).toEqual(['jws-kubeconfig-aaaaaa', 'kubeconfig']);
    const [header, , signature] = (cm.data?.['jws-kubeconfig-aaaaaa'] ?? '').split('.');
    const full = `${header}.${Buffer.from(cm.data?.[KUBECONFIG_KEY] ?? '').toString('base64url')}.${signature}`;
    await expect(compactVerify(full, new TextEncoder().encode('aaaaaa.0123456789abcdef'))).resolves.toBeDefined();
    await expect(compactVerify(full, new TextEncoder().encode('aaaaaa.fedcba9876543210'))).rejects.toThrow();

    // A second token joins; the first one's signature disappears when it expires.
    h.peer.put('/v1/secrets', bootstrapToken('bbbbbb', 'fedcba9876543210'));
    h.peer.put('/v1/secrets', bootstrapToken('aaaaaa', '0123456789abcdef', { expiration: formatTime(Date.now() + 1500) }));
    await eventually('second token signed', () => (clusterInfo(h)?.data?.['jws-kubeconfig-bbbbbb'] ? true : undefined));
    await eventually('expired token signature removed', () => (clusterInfo(h)?.data?.['jws-kubeconfig-aaaaaa'] ? undefined : true), 5000);
  });

  it('signs cluster-info in kube-public too under the compatibility option (the harness default)', async () => {
    h.peer.put('/v1/secrets', bootstrapToken('aaaaaa', '0123456789abcdef'));
    h.start(new BootstrapSigner(h.ctx));
    const upstream = await eventually('kube-public signed', () => {
      const x = storedObject<ConfigMap>(h.peer, '/v1/configmaps', 'cluster-info', 'kube-public');
      return x?.data?.['jws-kubeconfig-aaaaaa'] ? x : undefined;
    });
    expect(upstream.data?.[KUBECONFIG_KEY]).toBe(clusterInfoKubeconfig(h.peer.url, 'CA\n'));
    await eventually('orch-public signed', () => (clusterInfo(h)?.data?.['jws-kubeconfig-aaaaaa'] ? true : undefined));
  });

  it('signs an existing cluster-info without touching its kubeconfig', async () => {
    h.peer.put('/v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cluster-info', namespace: 'orch-public' }, data: { kubeconfig: 'custom' } });
    h.peer.put('/v1/secrets', bootstrapToken('aaaaaa', '0123456789abcdef'));
    h.start(new BootstrapSigner(h.ctx));
    const cm = await eventually('signed', () => {
      const x = clusterInfo(h);
      return x?.data?.['jws-kubeconfig-aaaaaa'] ? x : undefined;
    });
    expect(cm.data?.['kubeconfig']).toBe('custom');
  });
});
