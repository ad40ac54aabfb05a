import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { selfSignedServingCert } from '@orch/auth';
import { startBenchGateway, type BenchGateway } from './gateway-process';
import { call, percentile, runLoad, target, type HttpsTarget } from './load';
import type { WebhookJob } from './admission-webhook';
import type { Row } from './report';

/** Every default-on plugin of the gateway: disabled for the "no plugins" baseline. */
const DEFAULT_PLUGINS = [
  'NamespaceLifecycle',
  'LimitRanger',
  'ServiceAccount',
  'PodSecurity',
  'Priority',
  'DefaultTolerationSeconds',
  'DefaultStorageClass',
  'DefaultIngressClass',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
];

const NS = 'bench';
const ROUNDS = 6;
const median = (xs: number[]) => percentile([...xs].sort((x, y) => x - y), 50);
const ADMISSION = '/apis/admissionregistration.k8s.io/v1';

/** The allowing webhook (admission-webhook.ts) in a worker thread of its own, with its own CA. */
async function startAllowingWebhook(): Promise<{ url: string; caBundle: string; calls: () => number; stop(): Promise<void> }> {
  const tls = await selfSignedServingCert(['127.0.0.1'], 'bench-webhook');
  const job: WebhookJob = { keyPem: tls.keyPem, certPem: tls.certPem, calls: new SharedArrayBuffer(4) };
  const worker = new Worker(join(__dirname, 'admission-webhook.js'), { workerData: job });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', (m: { port: number }) => resolve(m.port));
    worker.once('error', reject);
  });
  const calls = new Int32Array(job.calls);
  return {
    url: `https://127.0.0.1:${port}/validate`,
    caBundle: Buffer.from(tls.caPem).toString('base64'),
    calls: () => Atomics.load(calls, 0),
    stop: async () => void (await worker.terminate()),
  };
}

/** Ten policies a cluster might hold for config maps, each with a binding (all admit the bench objects). */
function policies(): { policy: unknown; binding: unknown }[] {
  const checks = [
    'object.metadata.name.size() <= 253',
    "!has(object.metadata.labels) || !('forbidden' in object.metadata.labels)",
    "has(object.data) && object.data.all(k, !k.startsWith('secret-'))",
    "object.metadata.name.matches('^[a-z0-9-]+$')",
    "request.operation != 'DELETE'",
    "!has(object.metadata.annotations) || object.metadata.annotations.size() < 20",
    "has(object.data) ? object.data.size() <= 64 : true",
    "object.metadata.namespace != 'orch-system'",
    "!('password' in object.data)",
    "object.kind == 'ConfigMap'",
  ];
  return checks.map((expression, i) => ({
    policy: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: `bench-policy-${i}` },
      spec: { failurePolicy: 'Fail', matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }] }, validations: [{ expression, message: `policy ${i} refused` }] },
    },
    binding: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: `bench-binding-${i}` }, spec: { policyName: `bench-policy-${i}`, validationActions: ['Deny'] } },
  }));
}

async function must(t: HttpsTarget, method: string, path: string, body: unknown, want = 201): Promise<void> {
  const r = await call(t, method, path, JSON.stringify(body));
  if (r.status !== want) throw new Error(`${method} ${path}: ${r.status} ${r.body}`);
}

/** Creates/s of config maps for `durationMs` with `concurrency` clients; every create must succeed. */
async function creates(t: HttpsTarget, phase: string, concurrency: number, durationMs: number): Promise<number> {
  const r = await runLoad(concurrency, durationMs, async (i) => {
    const res = await call(t, 'POST', `/api/v1/namespaces/${NS}/configmaps`, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${phase}-${i}`, namespace: NS, labels: { app: 'bench' } }, data: { key: 'value' } }));
    return res.status === 201;
  });
  if (r.errors > 0) throw new Error(`${phase}: ${r.errors} creates failed`);
  return r.opsPerSecond;
}

/**
 * Admission cost on the create path, same run: creates/s with no admission plugins (baseline),
 * with the default chain, with one validating webhook (a real HTTPS server) and with 10
 * validating admission policies. The two gateways alternate short rounds so machine noise falls
 * on both; each figure is the median of six rounds.
 */
export async function admissionBench(opts: { durationMs: number; concurrency: number }): Promise<Row[]> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-adm-'));
  const gateways: BenchGateway[] = [];
  const hook = await startAllowingWebhook();
  try {
    const bare = await startBenchGateway(join(dir, 'bare'), [`--disable-admission-plugins=${DEFAULT_PLUGINS.join(',')}`]);
    gateways.push(bare);
    const full = await startBenchGateway(join(dir, 'full'));
    gateways.push(full);
    const b = target(bare.url, bare.creds, opts.concurrency);
    const f = target(full.url, full.creds, opts.concurrency);
    for (const t of [b, f]) await must(t, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const d = opts.durationMs;
    let round = 0;
    /**
     * Six short rounds each, alternating with the baseline gateway (the machine's load changes
     * within seconds, and falls on both alike); the median round of each counts.
     */
    const measure = async (phase: string): Promise<{ value: number; baseline: number; spread: string }> => {
      const value: number[] = [];
      const baseline: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        baseline.push(await creates(b, `none-${round++}`, opts.concurrency, d / 3));
        value.push(await creates(f, `${phase}-${round++}`, opts.concurrency, d / 3));
      }
      // The spread: the lowest and highest ratio of a round to the baseline round beside it.
      const ratios = value.map((v, i) => v / baseline[i]).sort((x, y) => x - y);
      return { value: median(value), baseline: median(baseline), spread: `${ratios[0].toFixed(2)}–${ratios[ratios.length - 1].toFixed(2)}x` };
    };
    const chain = await measure('chain');

    await must(f, 'POST', `${ADMISSION}/validatingwebhookconfigurations`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'bench-webhook' },
      webhooks: [{ name: 'allow.bench.orch.io', clientConfig: { url: hook.url, caBundle: hook.caBundle }, rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }], sideEffects: 'None', admissionReviewVersions: ['v1'], timeoutSeconds: 10 }],
    });
    await new Promise((r) => setTimeout(r, 500));
    const before = hook.calls();
    const webhook = await measure('webhook');
    if (hook.calls() === before) throw new Error('the webhook was never called');
    await must(f, 'DELETE', `${ADMISSION}/validatingwebhookconfigurations/bench-webhook`, undefined, 200);

    for (const p of policies()) {
      await must(f, 'POST', `${ADMISSION}/validatingadmissionpolicies`, p.policy);
      await must(f, 'POST', `${ADMISSION}/validatingadmissionpolicybindings`, p.binding);
    }
    await new Promise((r) => setTimeout(r, 500));
    // The policies apply: a config map one of them refuses is refused.
    const refused = await call(f, 'POST', `/api/v1/namespaces/${NS}/configmaps`, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe', namespace: NS }, data: { password: 'x' } }));
    if (refused.status !== 422) throw new Error(`the policies do not apply: ${refused.status} ${refused.body}`);
    const tenPolicies = await measure('policies');

    const row = (metric: string, m: { value: number; baseline: number; spread: string }): Row => ({ metric, orch: m.value, baseline: m.baseline, baselineName: `no admission plugins (alternating rounds, medians; round ratios ${m.spread})`, unit: 'creates/s', higherIsBetter: true });
    return [row('config map creates/s, default admission chain', chain), row('default chain + one validating webhook (HTTPS)', webhook), row('default chain + 10 validating admission policies', tenPolicies)];
  } finally {
    for (const g of gateways) g.process.kill('SIGKILL');
    await hook.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
