import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { selfSignedServingCert } from '@orch/auth';
import { startBenchGateway, type BenchGateway } from './gateway-process';
import { call, percentile, runLoad, target, type HttpsTarget } from './load';
import { inclusiveShares, monotonicMicros, profileSummary, type ProfileWindow } from './profile';
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

/** The parts of the ValidatingAdmissionPolicy plugin's work the --gateway-profile notes of the policies phase name (frames as `<function> <url>`). */
const POLICY_PARTS: Record<string, RegExp> = {
  'ValidatingAdmissionPolicy plugin (validate)': /^validate \S*admission\/policy\/validating-admission-policy\.js$/,
  'bindings that apply (candidates)': /^candidates \S*policy-source\.js$/,
  'expression values (activation)': /^(admissionActivation|activation) \S*(admission-request|policy-source)\.js$/,
  'object to expression values (CelValueConverter.convert, convertProjected)': /^(convert|convertProjected) \S*libs\/cel\/src\/schema\.js$/,
  'expression evaluation (CelProgram.evaluate, untrackedValue, compiledTrue)': /^(evaluate|untrackedValue|compiledTrue) \S*libs\/cel\/src\/program\.js$/,
};

/** One phase's medians: creates/s and gateway CPU per create, with the no-plugins gateway's beside them. */
interface Measured {
  value: number;
  baseline: number;
  cpu: number;
  baselineCpu: number;
  spread: string;
}
const ROUNDS = 6;
const WARM_UP_CREATES = 3000;
/**
 * Creates of a phase's warm-up, on both gateways: more than the ~1,500 creates V8 takes to
 * compile the code a new phase brings (after the 10 policies are added, the first creates cost
 * 2,400–3,000 µs CPU each, against ~750 µs warm).
 */
const PHASE_WARM_UP_CREATES = 3000;
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
export function policies(): { policy: unknown; binding: unknown }[] {
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

/** CPU time (user + system, all threads) a process has used, in µs, from /proc (USER_HZ = 100). */
async function cpuMicros(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

async function must(t: HttpsTarget, method: string, path: string, body: unknown, want = 201): Promise<void> {
  const r = await call(t, method, path, JSON.stringify(body));
  if (r.status !== want) throw new Error(`${method} ${path}: ${r.status} ${r.body}`);
}

/** A phase's figures on one gateway: creates/s, and the gateway's CPU time per create (µs). */
interface Round {
  perSecond: number;
  cpuPerCreate: number;
}

/** Creates of config maps for `durationMs` with `concurrency` clients (every create must succeed), and the gateway process's CPU per create meanwhile. */
async function creates(t: HttpsTarget, pid: number, phase: string, concurrency: number, durationMs: number, maxOps?: number): Promise<Round> {
  const cpuBefore = await cpuMicros(pid);
  const r = await runLoad(concurrency, durationMs, async (i) => {
    const res = await call(t, 'POST', `/api/v1/namespaces/${NS}/configmaps`, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${phase}-${i}`, namespace: NS, labels: { app: 'bench' } }, data: { key: 'value' } }));
    return res.status === 201;
  }, maxOps);
  const cpu = (await cpuMicros(pid)) - cpuBefore;
  if (r.errors > 0) throw new Error(`${phase}: ${r.errors} creates failed`);
  return { perSecond: r.opsPerSecond, cpuPerCreate: cpu / Math.max(1, r.ops) };
}

/**
 * Admission cost on the create path, same run: creates/s with no admission plugins (baseline),
 * with the default chain, with one validating webhook (a real HTTPS server) and with 10
 * validating admission policies. The two gateways alternate short rounds so machine noise falls
 * on both; each figure is the median of six rounds, measured warm: before each phase both
 * gateways serve PHASE_WARM_UP_CREATES uncounted creates (V8 compiles the phase's new code). Each phase also gives the gateway's CPU
 * time per create (user + system of the whole process, /proc): unlike creates/s it does not
 * depend on what else the machine runs. With `profile`, the gateway with the chain runs under
 * --cpu-prof and the notes give its top frames per phase.
 */
export async function admissionBench(opts: { durationMs: number; concurrency: number; profile?: boolean }): Promise<{ rows: Row[]; notes: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-adm-'));
  const gateways: BenchGateway[] = [];
  const hook = await startAllowingWebhook();
  try {
    const bare = await startBenchGateway(join(dir, 'bare'), [`--disable-admission-plugins=${DEFAULT_PLUGINS.join(',')}`]);
    gateways.push(bare);
    const profDir = join(dir, 'prof');
    const full = await startBenchGateway(join(dir, 'full'), [], opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []);
    gateways.push(full);
    const b = target(bare.url, bare.creds, opts.concurrency);
    const f = target(full.url, full.creds, opts.concurrency);
    for (const t of [b, f]) await must(t, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const d = opts.durationMs;
    let round = 0;
    /**
     * Six short rounds each, alternating with the baseline gateway (the machine's load changes
     * within seconds, and falls on both alike), the baseline first in every other round (the
     * gateway measured second in a pair meets the machine as the first left it); the median
     * round of each counts.
     */
    const windows: { name: string; window: ProfileWindow }[] = [];
    const measure = async (phase: string): Promise<Measured> => {
      const value: Round[] = [];
      const baseline: Round[] = [];
      // The phase's own code paths warm up first (not counted); the baseline gateway gets the same
      // creates, so both are measured warm and hold as many config maps.
      for (const [t, g] of [[b, bare], [f, full]] as const) await creates(t, g.process.pid!, `${phase}-warm-${round++}`, opts.concurrency, 60_000, PHASE_WARM_UP_CREATES);
      const from = monotonicMicros();
      const baselineRound = async () => baseline.push(await creates(b, bare.process.pid!, `none-${round++}`, opts.concurrency, d / 3));
      const valueRound = async () => value.push(await creates(f, full.process.pid!, `${phase}-${round++}`, opts.concurrency, d / 3));
      for (let i = 0; i < ROUNDS; i++) {
        for (const measureRound of i % 2 ? [valueRound, baselineRound] : [baselineRound, valueRound]) await measureRound();
      }
      windows.push({ name: phase, window: { from, to: monotonicMicros() } });
      // The spread: the lowest and highest ratio of a round to the baseline round beside it.
      const ratios = value.map((v, i) => v.perSecond / baseline[i].perSecond).sort((x, y) => x - y);
      return {
        value: median(value.map((v) => v.perSecond)),
        baseline: median(baseline.map((v) => v.perSecond)),
        cpu: median(value.map((v) => v.cpuPerCreate)),
        baselineCpu: median(baseline.map((v) => v.cpuPerCreate)),
        spread: `${ratios[0].toFixed(2)}–${ratios[ratios.length - 1].toFixed(2)}x`,
      };
    };
    // Warm-up (V8 compiles the hot paths on its own threads, which count as the process's CPU), not counted.
    for (const [t, g] of [[b, bare], [f, full]] as const) await creates(t, g.process.pid!, `warm-${round++}`, opts.concurrency, 60_000, WARM_UP_CREATES);
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

    const row = (metric: string, m: Measured): Row => ({ metric, orch: m.value, baseline: m.baseline, baselineName: `no admission plugins (alternating rounds, medians; round ratios ${m.spread})`, unit: 'creates/s', higherIsBetter: true });
    const cpuRow = (metric: string, m: Measured): Row => ({ metric, orch: m.cpu, baseline: m.baselineCpu, baselineName: 'no admission plugins (gateway process CPU, user + system, medians of the same rounds)', unit: 'µs CPU/create', higherIsBetter: false });
    const rows = [
      row('config map creates/s, default admission chain', chain),
      row('default chain + one validating webhook (HTTPS)', webhook),
      row('default chain + 10 validating admission policies', tenPolicies),
      cpuRow('gateway CPU per create, default admission chain', chain),
      cpuRow('gateway CPU per create, default chain + one validating webhook', webhook),
      cpuRow('gateway CPU per create, default chain + 10 validating admission policies', tenPolicies),
    ];
    const notes: string[] = [];
    if (opts.profile) {
      // A clean exit (SIGINT) writes the profile.
      full.process.kill('SIGINT');
      await new Promise((r) => full.process.once('exit', r));
      for (const w of windows) notes.push(`gateway CPU profile (default chain), ${w.name} (self time of the main thread's busy time):\n    ${(await profileSummary(profDir, w.window, 15, true)).join('\n    ')}`);
      const policiesWindow = windows.find((w) => w.name === 'policies')!.window;
      notes.push(`gateway CPU profile (default chain), policies, by part (inclusive):\n    ${(await inclusiveShares(profDir, POLICY_PARTS, policiesWindow, true)).join('\n    ')}`);
    }
    return { rows, notes };
  } finally {
    for (const g of gateways) g.process.kill('SIGKILL');
    await hook.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
