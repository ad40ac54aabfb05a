// Admission webhooks and validating admission policies through a real gateway process, with a
// real HTTPS webhook server holding its own CA: webhooks that mutate, refuse, time out and
// fail (failurePolicy), selectors, matchConditions, reinvocation, dry run, Service
// references through endpoints; policies with params, variables, messageExpression,
// Deny/Warn/Audit and failurePolicy. Each test configures what it needs and removes it.

import WebSocket from 'ws';
import { POD_CONTROLLERS, defaultServiceAccount, startGateway, type GatewayProcess } from './support/gateway';
import { eventually } from './support/node-agent';
import { startWebhookServer, type WebhookServer } from './support/webhook-server';

const NS = 'hooks';
const MUTATING = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const VALIDATING = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const POLICIES = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
const BINDINGS = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings';

let gw: GatewayProcess;
let hooks: WebhookServer;
/** Per test: what the reinvocation webhooks see. */
const seenLabels: Record<string, string>[] = [];

const cm = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS, labels }, data: { a: '1' } });
const createCm = (name: string, labels: Record<string, string> = {}, query = '') => gw.admin.post(`/api/v1/namespaces/${NS}/configmaps${query}`, cm(name, labels));

function webhook(name: string, path: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    clientConfig: { url: hooks.url(path), caBundle: hooks.caBundle },
    rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    timeoutSeconds: 2,
    ...extra,
  };
}

/** Stores a configuration, waits until the gateway applies it (a probe create reaches the webhook), runs `fn`, removes it. */
async function withConfig(kind: 'mutating' | 'validating', name: string, webhooks: unknown[], fn: () => Promise<void>): Promise<void> {
  const base = kind === 'mutating' ? MUTATING : VALIDATING;
  const kindName = kind === 'mutating' ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration';
  const r = await gw.admin.post(base, { apiVersion: 'admissionregistration.k8s.io/v1', kind: kindName, metadata: { name }, webhooks });
  expect(r.status).toBe(201);
  try {
    await fn();
  } finally {
    expect((await gw.admin.delete(`${base}/${name}`)).status).toBe(200);
  }
}

/** Creates `name`, retrying while the configuration is not applied yet (the cache follows within the watch delay). */
async function eventuallyCreated(name: string, check: (r: Awaited<ReturnType<typeof createCm>>) => boolean, labels: Record<string, string> = {}) {
  return eventually(`creating ${name} to be answered as expected`, async () => {
    await gw.admin.delete(`/api/v1/namespaces/${NS}/configmaps/${name}`);
    const r = await createCm(name, labels);
    return check(r) ? r : undefined;
  }, 5_000);
}

beforeAll(async () => {
  hooks = await startWebhookServer(
    {
      '/deny': () => ({ allowed: false, status: { code: 403, reason: 'Forbidden', message: 'configmaps named deny-* are not allowed' } }),
      '/allow': () => ({ allowed: true, warnings: ['checked by the test webhook'] }),
      '/label': (req) => ({ allowed: true, patch: [{ op: 'add', path: '/metadata/labels/stamped', value: `by-webhook-${req.dryRun ? 'dry' : 'wet'}` }] }),
      '/slow': () => 'hang',
      '/bad-uid': () => ({ allowed: true, uid: 'someone-else' }),
      '/reinvoke-a': (req) => {
        seenLabels.push({ ...(req.object?.metadata.labels ?? {}) });
        return req.object?.metadata.labels?.a ? { allowed: true } : { allowed: true, patch: [{ op: 'add', path: '/metadata/labels/a', value: '1' }] };
      },
      '/reinvoke-b': (req) => (req.object?.metadata.labels?.b ? { allowed: true } : { allowed: true, patch: [{ op: 'add', path: '/metadata/labels/b', value: '1' }] }),
      // injects a sidecar container into pods
      '/sidecar': (req) => ((req.object?.spec as { containers: { name: string }[] }).containers.some((c) => c.name === 'sidecar') ? { allowed: true } : { allowed: true, patch: [{ op: 'add', path: '/spec/containers/-', value: { name: 'sidecar', image: 'busybox' } }] }),
      '/observe': () => ({ allowed: true }),
      // an autoscaling/v1 webhook: raises the CPU target of what it sees
      '/hpa-v1': (req) => (req.object?.spec && (req.object.spec as { targetCPUUtilizationPercentage?: number }).targetCPUUtilizationPercentage === 50 ? { allowed: true, patch: [{ op: 'replace', path: '/spec/targetCPUUtilizationPercentage', value: 70 }] } : { allowed: true }),
    },
    ['hook.hooks.svc'],
  );
  gw = await startGateway({ controllers: POD_CONTROLLERS });
  expect((await gw.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { team: 'a' } } })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await hooks?.stop();
});

beforeEach(() => {
  hooks.calls.clear();
  seenLabels.length = 0;
});

describe('validating webhooks', () => {
  it('refuse with the webhook’s message and code; others are admitted with its warnings', async () => {
    await withConfig('validating', 'deny-prefix', [webhook('deny.test.orch.io', '/deny', { objectSelector: { matchLabels: { deny: 'yes' } } }), webhook('allow.test.orch.io', '/allow')], async () => {
      const r = await eventuallyCreated('deny-1', (x) => x.status === 403, { deny: 'yes' });
      expect(r.json.message).toBe('admission webhook "deny.test.orch.io" denied the request: configmaps named deny-* are not allowed');
      const ok = await createCm('fine-1');
      expect(ok.status).toBe(201);
      expect(String(ok.headers.warning)).toContain('checked by the test webhook');
      // the objectSelector kept the deny webhook away from the unlabeled object
      expect((hooks.calls.get('/deny') ?? []).every((c) => c.object?.metadata.labels?.deny === 'yes')).toBe(true);
    });
  });

  it('sends an AdmissionReview v1 with the request’s attributes', async () => {
    await withConfig('validating', 'record', [webhook('allow.test.orch.io', '/allow')], async () => {
      await eventuallyCreated('review-1', () => (hooks.calls.get('/allow') ?? []).some((c) => c.name === 'review-1'));
      const call = hooks.calls.get('/allow')!.find((c) => c.name === 'review-1')!;
      expect(call).toMatchObject({ operation: 'CREATE', namespace: NS, name: 'review-1', dryRun: false, kind: { group: '', version: 'v1', kind: 'ConfigMap' }, resource: { group: '', version: 'v1', resource: 'configmaps' } });
      expect(call.userInfo.groups).toContain('system:masters');
      expect(call.object?.metadata.name).toBe('review-1');
    });
  });

  it.each([
    { policy: 'Fail', path: '/slow', want: 500, message: /failed calling webhook "slow.test.orch.io": failed to call webhook: the call timed out after 1000 ms/ },
    { policy: 'Ignore', path: '/slow', want: 201, message: undefined },
    { policy: 'Fail', path: '/nothing-listens', want: 500, message: /failed calling webhook "slow.test.orch.io"/ },
  ])('failurePolicy $policy when the webhook at $path times out or is down', async ({ policy, path, want, message }) => {
    const hook = webhook('slow.test.orch.io', path, { timeoutSeconds: 1, failurePolicy: policy });
    if (path === '/nothing-listens') (hook.clientConfig as { url: string }).url = 'https://127.0.0.1:1/x';
    await withConfig('validating', `slow-${policy.toLowerCase()}`, [hook], async () => {
      const r = await eventuallyCreated(`slow-${policy.toLowerCase()}`, (x) => x.status === want && (policy === 'Ignore' || x.status !== 201));
      if (message) expect(r.json.message).toMatch(message);
    });
  });

  it('namespaceSelector limits a webhook to matching namespaces', async () => {
    await withConfig('validating', 'ns-select', [webhook('deny.test.orch.io', '/deny', { namespaceSelector: { matchLabels: { team: 'a' } } })], async () => {
      await eventuallyCreated('ns-1', (x) => x.status === 403);
      expect((await gw.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other-team', labels: { team: 'b' } } })).status).toBe(201);
      const elsewhere = await gw.admin.post('/api/v1/namespaces/other-team/configmaps', { ...cm('ns-2'), metadata: { name: 'ns-2', namespace: 'other-team' } });
      expect(elsewhere.status).toBe(201);
    });
  });

  it('matchConditions (CEL) decide which requests reach the webhook', async () => {
    const conditions = [{ name: 'only-flagged', expression: "has(object.metadata.labels) && 'flag' in object.metadata.labels && request.operation == 'CREATE'" }];
    await withConfig('validating', 'conditions', [webhook('deny.test.orch.io', '/deny', { matchConditions: conditions })], async () => {
      await eventuallyCreated('cond-1', (x) => x.status === 403, { flag: 'x' });
      expect((await createCm('cond-2')).status).toBe(201);
    });
  });

  it('refuses a configuration whose matchCondition does not compile, naming the field', async () => {
    const bad = webhook('bad.test.orch.io', '/allow', { matchConditions: [{ name: 'broken', expression: 'object.metadata.name ==' }] });
    const r = await gw.admin.post(VALIDATING, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'broken' }, webhooks: [bad] });
    expect(r.status).toBe(422);
    expect(r.json.message).toContain('webhooks[0].matchConditions[0].expression');
    expect(r.json.message).toContain('compilation failed');
  });

  it('reaches a webhook behind a Service through its endpoints, verifying <service>.<namespace>.svc', async () => {
    await gw.admin.post(`/api/v1/namespaces/${NS}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'hook', namespace: NS }, spec: { ports: [{ name: 'https', port: 443, targetPort: hooks.port }] } });
    await gw.admin.post(`/api/v1/namespaces/${NS}/endpoints`, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'hook', namespace: NS }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: hooks.port }] }] });
    const hook = { ...webhook('svc.test.orch.io', '/deny'), clientConfig: { service: { namespace: NS, name: 'hook', path: '/deny' }, caBundle: hooks.caBundle } };
    await withConfig('validating', 'by-service', [hook], async () => {
      const r = await eventuallyCreated('svc-1', (x) => x.status === 403);
      expect(r.json.message).toContain('admission webhook "svc.test.orch.io" denied the request');
    });
  });

  it('treats a response for another request as a call failure', async () => {
    await withConfig('validating', 'bad-uid', [webhook('uid.test.orch.io', '/bad-uid')], async () => {
      const r = await eventuallyCreated('uid-1', (x) => x.status === 500);
      expect(r.json.message).toMatch(/failed calling webhook "uid.test.orch.io": failed to call webhook: expected response.uid=".+", got "someone-else"/);
    });
  });
});

describe('CONNECT', () => {
  /** A WebSocket exec upgrade as admin: the HTTP status and body the gateway answered instead of upgrading. */
  function execUpgrade(pod: string): Promise<{ status: number; body: string }> {
    const url = `wss://127.0.0.1:${gw.port}/api/v1/namespaces/${NS}/pods/${pod}/exec?command=true&stdout=true`;
    const ws = new WebSocket(url, ['v4.channel.k8s.io'], { ca: gw.creds.ca, cert: gw.creds.cert, key: gw.creds.key });
    return new Promise((resolve, reject) => {
      ws.on('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      });
      ws.on('open', () => (ws.close(), reject(new Error('the upgrade was accepted'))));
      ws.on('error', (e) => reject(e));
    });
  }

  it('an exec upgrade runs the admit stage with operation CONNECT (a webhook on pods/exec refuses it)', async () => {
    const hook = { ...webhook('connect.test.orch.io', '/deny'), rules: [{ operations: ['CONNECT'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/exec'] }] };
    await withConfig('validating', 'no-exec', [hook], async () => {
      const r = await eventually('the exec upgrade to be refused by the webhook', async () => {
        const x = await execUpgrade('no-such-pod');
        return x.status === 403 ? x : undefined;
      }, 5_000);
      expect(JSON.parse(r.body).message).toBe('admission webhook "connect.test.orch.io" denied the request: configmaps named deny-* are not allowed');
      expect(hooks.calls.get('/deny')?.at(-1)).toMatchObject({ operation: 'CONNECT', name: 'no-such-pod', resource: { resource: 'pods' } });
    });
    // Without the webhook the same upgrade reaches the pod lookup.
    expect((await execUpgrade('no-such-pod')).status).toBe(404);
  });
});

describe('mutating webhooks', () => {
  it('apply a JSONPatch, and the object is stored as patched', async () => {
    await withConfig('mutating', 'stamp', [webhook('label.test.orch.io', '/label')], async () => {
      const r = await eventuallyCreated('mut-1', (x) => x.status === 201 && x.json.metadata.labels?.stamped === 'by-webhook-wet');
      expect(r.json.metadata.labels).toEqual({ stamped: 'by-webhook-wet' });
      const stored = await gw.admin.get(`/api/v1/namespaces/${NS}/configmaps/mut-1`);
      expect(stored.json.metadata.labels.stamped).toBe('by-webhook-wet');
    });
  });

  it('dry run: the webhook is told, it mutates the answer, nothing is stored', async () => {
    await withConfig('mutating', 'stamp-dry', [webhook('label.test.orch.io', '/label', { sideEffects: 'NoneOnDryRun' })], async () => {
      await eventuallyCreated('probe-dry', (x) => x.status === 201 && x.json.metadata.labels?.stamped !== undefined);
      const r = await createCm('dry-1', {}, '?dryRun=All');
      expect(r.status).toBe(201);
      expect(r.json.metadata.labels.stamped).toBe('by-webhook-dry');
      expect((await gw.admin.get(`/api/v1/namespaces/${NS}/configmaps/dry-1`)).status).toBe(404);
      expect(hooks.calls.get('/label')!.some((c) => c.name === 'dry-1' && c.dryRun)).toBe(true);
    });
  });

  it('reinvocationPolicy IfNeeded: a webhook sees the changes a later webhook made', async () => {
    await withConfig('mutating', 'reinvoke', [webhook('a.test.orch.io', '/reinvoke-a', { reinvocationPolicy: 'IfNeeded' }), webhook('b.test.orch.io', '/reinvoke-b')], async () => {
      const r = await eventuallyCreated('re-1', (x) => x.status === 201 && x.json.metadata.labels?.a === '1' && x.json.metadata.labels?.b === '1');
      expect(r.json.metadata.labels).toEqual({ a: '1', b: '1' });
      // first call saw nothing, the reinvocation saw both labels
      const mine = hooks.calls.get('/reinvoke-a')!.filter((c) => c.name === 're-1');
      expect(mine.length).toBe(2);
      expect(mine[1].object?.metadata.labels).toEqual({ a: '1', b: '1' });
    });
  });

  it('a webhook change runs the built-in plugins again: an injected sidecar gets LimitRange defaults, and an IfNeeded webhook sees them', async () => {
    const ns = 'reinvoke';
    expect((await gw.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status).toBe(201);
    await defaultServiceAccount(gw.admin, ns);
    const limits = { type: 'Container', default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '100m', memory: '64Mi' } };
    expect((await gw.admin.post(`/api/v1/namespaces/${ns}/limitranges`, { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'defaults', namespace: ns }, spec: { limits: [limits] } })).status).toBe(201);
    const podRule = [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }];
    const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns }, spec: { containers: [{ name: 'app', image: 'nginx' }] } });
    const hooksFor = [webhook('observe.test.orch.io', '/observe', { rules: podRule, reinvocationPolicy: 'IfNeeded' }), webhook('sidecar.test.orch.io', '/sidecar', { rules: podRule })];
    await withConfig('mutating', 'sidecar', hooksFor, async () => {
      const r = await eventually('the sidecar to be injected and defaulted', async () => {
        await gw.admin.delete(`/api/v1/namespaces/${ns}/pods/side-1`);
        const x = await gw.admin.post(`/api/v1/namespaces/${ns}/pods`, pod('side-1'));
        return x.status === 201 && x.json.spec.containers.length === 2 && x.json.spec.containers[1].resources?.limits ? x : undefined;
      }, 5_000);
      const want = { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '64Mi' } };
      expect(r.json.spec.containers.map((c: { name: string; resources: unknown }) => [c.name, c.resources])).toEqual([['app', want], ['sidecar', want]]);
      // the observer ran before the sidecar, then once more after the built-in plugins defaulted it
      const seen = hooks.calls.get('/observe')!.filter((c) => c.name === 'side-1').map((c) => (c.object?.spec as { containers: { name: string; resources?: unknown }[] }).containers.map((x) => [x.name, x.resources]));
      expect(seen).toEqual([[['app', want]], [['app', want], ['sidecar', want]]]);
      expect(hooks.calls.get('/sidecar')!.filter((c) => c.name === 'side-1').length).toBe(1);
    });
  });

  it('a refusing mutating webhook stops the request before validation', async () => {
    await withConfig('mutating', 'mut-deny', [webhook('deny.test.orch.io', '/deny')], async () => {
      const r = await eventuallyCreated('mutdeny-1', (x) => x.status === 403);
      expect(r.json.message).toContain('denied the request');
    });
  });
});

describe('AdmissionReview versions and matchPolicy', () => {
  it.each([
    { versions: ['v1beta1', 'v1'], want: 'admission.k8s.io/v1beta1' },
    { versions: ['v1', 'v1beta1'], want: 'admission.k8s.io/v1' },
    { versions: ['v7', 'v1beta1'], want: 'admission.k8s.io/v1beta1' },
  ])('a webhook accepting $versions is sent $want (and its answer in it is accepted)', async ({ versions, want }) => {
    await withConfig('mutating', 'review-version', [webhook('version.test.orch.io', '/label', { admissionReviewVersions: versions })], async () => {
      const r = await eventuallyCreated('version-1', (x) => x.status === 201 && x.json.metadata.labels?.stamped === 'by-webhook-wet');
      expect(r.status).toBe(201);
      expect(hooks.calls.get('/label')!.filter((c) => c.name === 'version-1').map((c) => c.reviewApiVersion)).toContain(want);
      expect(hooks.calls.get('/label')!.every((c) => c.reviewApiVersion === want)).toBe(true);
    });
  });

  const hpaRule = [{ operations: ['CREATE'], apiGroups: ['autoscaling'], apiVersions: ['v1'], resources: ['horizontalpodautoscalers'] }];
  const hpaV2 = (name: string) => ({
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name, namespace: NS },
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 3, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }] },
  });
  const createHpaV2 = (name: string) => gw.admin.post(`/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers`, hpaV2(name));
  const cpuTarget = (hpa: { spec: { metrics: { resource: { target: { averageUtilization: number } } }[] } }) => hpa.spec.metrics[0].resource.target.averageUtilization;

  it('Equivalent: a webhook for autoscaling/v1 sees an autoscaling/v2 HorizontalPodAutoscaler as v1, and its patch comes back into v2', async () => {
    await withConfig('mutating', 'hpa-v1', [webhook('hpa.test.orch.io', '/hpa-v1', { rules: hpaRule, matchPolicy: 'Equivalent' })], async () => {
      const r = await eventually('the v1 webhook to patch the v2 object', async () => {
        await gw.admin.delete(`/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers/eq-1`);
        const x = await createHpaV2('eq-1');
        return x.status === 201 && cpuTarget(x.json) === 70 ? x : undefined;
      }, 5_000);
      expect(r.json.apiVersion).toBe('autoscaling/v2');
      expect(cpuTarget((await gw.admin.get(`/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers/eq-1`)).json)).toBe(70);
      const call = hooks.calls.get('/hpa-v1')!.find((c) => c.name === 'eq-1')!;
      expect(call).toMatchObject({
        kind: { group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' },
        resource: { group: 'autoscaling', version: 'v1', resource: 'horizontalpodautoscalers' },
        requestKind: { group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' },
        requestResource: { group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers' },
      });
      expect(call.object).toMatchObject({ apiVersion: 'autoscaling/v1', spec: { targetCPUUtilizationPercentage: 50, maxReplicas: 3 } });
    });
  });

  it('Exact: the same webhook is not called for autoscaling/v2', async () => {
    await withConfig('mutating', 'hpa-exact', [webhook('hpa.test.orch.io', '/hpa-v1', { rules: hpaRule, matchPolicy: 'Exact' })], async () => {
      // a v1 object reaches it (the configuration applies) ...
      await eventually('the v1 webhook to apply', async () => {
        await gw.admin.delete(`/apis/autoscaling/v1/namespaces/${NS}/horizontalpodautoscalers/exact-probe`);
        const x = await gw.admin.post(`/apis/autoscaling/v1/namespaces/${NS}/horizontalpodautoscalers`, { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'exact-probe', namespace: NS }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3, targetCPUUtilizationPercentage: 50 } });
        return x.status === 201 && x.json.spec.targetCPUUtilizationPercentage === 70 ? x : undefined;
      }, 5_000);
      // ... a v2 one does not
      const r = await createHpaV2('exact-1');
      expect([r.status, cpuTarget(r.json)]).toEqual([201, 50]);
      expect(hooks.calls.get('/hpa-v1')!.some((c) => c.name === 'exact-1')).toBe(false);
    });
  });

  it('Equivalent across groups: a webhook for events.k8s.io Events sees a core Event as an events.k8s.io Event', async () => {
    const rule = [{ operations: ['CREATE'], apiGroups: ['events.k8s.io'], apiVersions: ['v1'], resources: ['events'] }];
    const event = (name: string) => ({ apiVersion: 'v1', kind: 'Event', metadata: { name, namespace: NS }, involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', namespace: NS }, reason: 'Tested', message: 'hello', type: 'Normal', source: { component: 'e2e' } });
    await withConfig('validating', 'events-v1', [webhook('events.test.orch.io', '/deny', { rules: rule })], async () => {
      const r = await eventually('the events webhook to refuse a core Event', async () => {
        const x = await gw.admin.post(`/api/v1/namespaces/${NS}/events`, event('ev-1'));
        return x.status === 403 ? x : undefined;
      }, 5_000);
      expect(r.json.message).toContain('admission webhook "events.test.orch.io" denied the request');
      const call = hooks.calls.get('/deny')!.find((c) => c.name === 'ev-1')!;
      expect(call).toMatchObject({ kind: { group: 'events.orch.io', version: 'v1', kind: 'Event' }, requestKind: { group: '', version: 'v1', kind: 'Event' } });
      expect(call.object).toMatchObject({ apiVersion: 'events.orch.io/v1', note: 'hello', reason: 'Tested', regarding: { kind: 'ConfigMap', name: 'x' } });
    });
  });
});

describe('validating admission policies', () => {
  const policy = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name }, spec: { failurePolicy: 'Fail', matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }] }, ...spec } });
  const binding = (name: string, policyName: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name }, spec: { policyName, validationActions: ['Deny'], ...spec } });

  async function withPolicy(p: unknown, b: unknown, fn: () => Promise<void>): Promise<void> {
    const pr = await gw.admin.post(POLICIES, p);
    expect(pr.status).toBe(201);
    const br = await gw.admin.post(BINDINGS, b);
    expect(br.status).toBe(201);
    try {
      await fn();
    } finally {
      await gw.admin.delete(`${BINDINGS}/${br.json.metadata.name}`);
      await gw.admin.delete(`${POLICIES}/${pr.json.metadata.name}`);
    }
  }

  it('params, variables and messageExpression', async () => {
    await gw.admin.post(`/api/v1/namespaces/${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'limits', namespace: NS }, data: { maxKeys: '1' } });
    const p = policy('max-keys', {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConditions: [{ name: 'not-the-params', expression: "object.metadata.name != 'limits'" }],
      variables: [{ name: 'keys', expression: 'has(object.data) ? object.data.size() : 0' }],
      validations: [{ expression: 'variables.keys <= int(params.data.maxKeys)', messageExpression: "'too many keys: ' + string(variables.keys) + ' > ' + params.data.maxKeys", reason: 'Forbidden' }],
    });
    await withPolicy(p, binding('max-keys', 'max-keys', { paramRef: { name: 'limits', namespace: NS, parameterNotFoundAction: 'Deny' } }), async () => {
      const big = { ...cm('many'), data: { a: '1', b: '2' } };
      const r = await eventually('the policy to refuse', async () => {
        const x = await gw.admin.post(`/api/v1/namespaces/${NS}/configmaps`, big);
        return x.status === 403 ? x : undefined;
      }, 5_000);
      expect(r.json.message).toBe("configmaps \"many\" is forbidden: ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys' denied request: too many keys: 2 > 1");
      expect((await createCm('few')).status).toBe(201);
    });
  });

  it('an expression asking the authorizer (evaluated asynchronously) decides like any other', async () => {
    const p = policy('ask-authorizer', {
      variables: [{ name: 'mayDelete', expression: "authorizer.group('').resource('configmaps').namespace(object.metadata.namespace).check('delete').allowed()" }],
      validations: [{ expression: '!variables.mayDelete', message: 'the requester may delete config maps here', reason: 'Forbidden' }],
    });
    await withPolicy(p, binding('ask-authorizer', 'ask-authorizer'), async () => {
      const r = await eventually('the policy to refuse', async () => {
        await gw.admin.delete(`/api/v1/namespaces/${NS}/configmaps/asked`);
        const x = await gw.admin.post(`/api/v1/namespaces/${NS}/configmaps`, cm('asked'));
        return x.status === 403 ? x : undefined;
      }, 5_000);
      expect(r.json.message).toBe("configmaps \"asked\" is forbidden: ValidatingAdmissionPolicy 'ask-authorizer' with binding 'ask-authorizer' denied request: the requester may delete config maps here");
    });
  });

  it.each([
    { action: 'Warn', status: 201, header: "Validation failed for ValidatingAdmissionPolicy 'no-x' with binding 'no-x-binding': failed expression: !('x' in object.data)" },
    { action: 'Audit', status: 201, header: undefined },
  ])('validationActions $action', async ({ action, status, header }) => {
    const p = policy('no-x', { validations: [{ expression: "!('x' in object.data)" }] });
    await withPolicy(p, binding('no-x-binding', 'no-x', { validationActions: [action] }), async () => {
      // Audit leaves no trace in the response: wait for a Warn twin to know the policy applies.
      const r = await eventually('the policy to apply', async () => {
        await gw.admin.delete(`/api/v1/namespaces/${NS}/configmaps/with-x`);
        const x = await gw.admin.post(`/api/v1/namespaces/${NS}/configmaps`, { ...cm('with-x'), data: { x: '1' } });
        return x.status === status && (!header || String(x.headers.warning).includes(header)) ? x : undefined;
      }, 5_000);
      if (!header) expect(r.headers.warning).toBeUndefined();
    });
  });

  it.each([
    { policy: 'Fail', want: 403 },
    { policy: 'Ignore', want: 201 },
  ])('failurePolicy $policy when an expression fails to evaluate', async ({ policy: fp, want }) => {
    const p = { ...policy('breaks', { validations: [{ expression: 'object.data.missing == "1"' }] }) };
    (p.spec as { failurePolicy: string }).failurePolicy = fp;
    await withPolicy(p, binding('breaks-binding', 'breaks'), async () => {
      const r = await eventually('the policy to apply', async () => {
        await gw.admin.delete(`/api/v1/namespaces/${NS}/configmaps/breaks-1`);
        const x = await createCm('breaks-1');
        return x.status === want ? x : undefined;
      }, 5_000);
      if (want === 403) expect(r.json.message).toMatch(/expression 'object.data.missing == "1"' resulted in error: .*missing/);
    });
  });

  it('refuses a policy whose expression does not compile, and reports type-checking warnings in status', async () => {
    const bad = await gw.admin.post(POLICIES, policy('bad', { validations: [{ expression: 'object.spec.replicas <=' }] }));
    expect(bad.status).toBe(422);
    expect(bad.json.message).toContain('spec.validations[0].expression');
    const typo = policy('typo', { matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }] }, validations: [{ expression: 'object.spec.replicass < 5' }] });
    expect((await gw.admin.post(POLICIES, typo)).status).toBe(201);
    try {
      const warnings = await eventually('type checking', async () => (await gw.admin.get(`${POLICIES}/typo`)).json.status?.typeChecking?.expressionWarnings, 5_000);
      expect(warnings).toEqual([{ fieldRef: 'spec.validations[0].expression', warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:13: undefined field 'replicass'" }]);
    } finally {
      await gw.admin.delete(`${POLICIES}/typo`);
    }
  });
});
