// Admission through stock kubectl against a real gateway, controller-manager (resource quota
// and serviceaccount controllers, as their own least-privilege identities under Node,RBAC) and HTTPS webhook server: a
// validating webhook refusing with its message, a mutating one adding a label, a
// ValidatingAdmissionPolicy refusing a Deployment over its replica limit, quota exceeded,
// LimitRange defaults, PodSecurity restricted refusing a privileged pod and warn printing a
// warning, ServiceAccount admission (default account, the API-access volume at both paths,
// refusals).

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningProcess } from '@orch/testing';
import { startControllerManager } from './support/controller-manager';
import { POD_CONTROLLERS, defaultServiceAccount, startGateway, type GatewayProcess } from './support/gateway';
import { eventually } from './support/node-agent';
import { startWebhookServer, type WebhookServer } from './support/webhook-server';
import { kubectlAsync, type KubectlRun } from './support/kubectl';

let gw: GatewayProcess;
let cm: RunningProcess;
let hooks: WebhookServer;
let cacheDir: string;

/** Runs kubectl asynchronously (the webhook server answers from this process meanwhile). */
function kubectl(args: string[], stdin?: string): Promise<KubectlRun> {
  return kubectlAsync({ kubeconfig: gw.kubeconfig, cacheDir }, args, stdin);
}

/** Runs kubectl until `ok` holds (configuration reaches the gateway's caches within the watch delay); `cleanup` runs first each time. */
function kubectlUntil(args: string[], ok: (r: KubectlRun) => boolean, stdin?: string, cleanup?: string[]): Promise<KubectlRun> {
  return eventually(`kubectl ${args.join(' ')}`, async () => {
    if (cleanup) await kubectl(cleanup);
    const r = await kubectl(args, stdin);
    return ok(r) ? r : undefined;
  }, 10_000, 200);
}

beforeAll(async () => {
  cacheDir = mkdtempSync(join(tmpdir(), 'orch-adm-kubectl-'));
  hooks = await startWebhookServer({
    '/deny-secret-words': (req) => (JSON.stringify(req.object ?? {}).includes('password') ? { allowed: false, status: { code: 403, message: 'data must not mention passwords' } } : { allowed: true }),
    '/add-owner-label': () => ({ allowed: true, patch: [{ op: 'add', path: '/metadata/labels', value: { owner: 'platform-team' } }] }),
  });
  // Node,RBAC (the default); the quota controller runs as the controller-manager's own
  // least-privilege identity (system:orch-controller-manager), not as an admin.
  gw = await startGateway({ args: ['--write-component-kubeconfigs'] });
  const cmKubeconfig = join(gw.dataDir, 'controller-manager.kubeconfig');
  await eventually('the controller-manager kubeconfig', () => (existsSync(cmKubeconfig) ? true : undefined), 10_000);
  cm = await startControllerManager(cmKubeconfig, ['resourcequota', ...POD_CONTROLLERS]);
  for (const ns of ['webhooks', 'policies', 'quota', 'limits', 'restricted', 'warned', 'accounts']) expect((await kubectl(['create', 'namespace', ns])).code).toBe(0);
  for (const ns of ['quota', 'limits', 'restricted', 'warned', 'accounts']) await defaultServiceAccount(gw.admin, ns);
}, 60_000);

afterAll(async () => {
  await cm?.stop();
  await gw?.stop();
  await hooks?.stop();
  rmSync(cacheDir, { recursive: true, force: true });
});

const webhookConfig = (kind: string, name: string, path: string, ns: string) => `apiVersion: admissionregistration.k8s.io/v1
kind: ${kind}
metadata:
  name: ${name}
webhooks:
- name: ${name}.test.orch.io
  clientConfig:
    url: ${hooks.url(path)}
    caBundle: ${hooks.caBundle}
  rules:
  - operations: ["CREATE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["configmaps"]
  namespaceSelector:
    matchLabels:
      orch.io/metadata.name: ${ns}
  sideEffects: None
  admissionReviewVersions: ["v1"]
`;

it('a validating webhook refuses with its message', async () => {
  expect((await kubectl(['apply', '-f', '-'], webhookConfig('ValidatingWebhookConfiguration', 'no-passwords', '/deny-secret-words', 'webhooks'))).code).toBe(0);
  const r = await kubectlUntil(['create', 'configmap', 'creds', '-n', 'webhooks', '--from-literal=note=password123'], (x) => x.code !== 0, undefined, ['delete', 'configmap', 'creds', '-n', 'webhooks', '--ignore-not-found']);
  expect(r.err).toContain('admission webhook "no-passwords.test.orch.io" denied the request: data must not mention passwords');
  expect((await kubectl(['create', 'configmap', 'fine', '-n', 'webhooks', '--from-literal=note=hello'])).code).toBe(0);
});

it('a mutating webhook adds a label', async () => {
  expect((await kubectl(['apply', '-f', '-'], webhookConfig('MutatingWebhookConfiguration', 'owner-label', '/add-owner-label', 'policies'))).code).toBe(0);
  const r = await eventually('the mutating webhook to label a new config map', async () => {
    await kubectl(['delete', 'configmap', 'labeled', '-n', 'policies', '--ignore-not-found']);
    await kubectl(['create', 'configmap', 'labeled', '-n', 'policies', '--from-literal=a=b']);
    const x = await kubectl(['get', 'configmap', 'labeled', '-n', 'policies', '-o', 'jsonpath={.metadata.labels.owner}']);
    return x.out === 'platform-team' ? x : undefined;
  }, 10_000, 200);
  expect(r.out).toBe('platform-team');
});

it('a ValidatingAdmissionPolicy refuses a Deployment over its replica limit with the policy’s message', async () => {
  const policy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replica-limit
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 5"
    message: "a Deployment may run at most 5 replicas"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replica-limit
spec:
  policyName: replica-limit
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        orch.io/metadata.name: policies
`;
  expect((await kubectl(['apply', '-f', '-'], policy)).code).toBe(0);
  const r = await kubectlUntil(['create', 'deployment', 'big', '-n', 'policies', '--image=nginx', '--replicas=7'], (x) => x.code !== 0, undefined, ['delete', 'deployment', 'big', '-n', 'policies', '--ignore-not-found']);
  expect(r.err).toContain("ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: a Deployment may run at most 5 replicas");
  expect((await kubectl(['create', 'deployment', 'small', '-n', 'policies', '--image=nginx', '--replicas=3'])).code).toBe(0);
});

it('a ResourceQuota refuses what exceeds it, naming the resource', async () => {
  expect((await kubectl(['create', 'quota', 'pods-quota', '-n', 'quota', '--hard=pods=1,count/configmaps=10'])).code).toBe(0);
  // the quota controller computes the status first (until then the quota refuses everything it constrains)
  await kubectlUntil(['get', 'quota', 'pods-quota', '-n', 'quota', '-o', 'jsonpath={.status.used.pods}'], (x) => x.out === '0');
  expect((await kubectl(['run', 'first', '-n', 'quota', '--image=nginx'])).code).toBe(0);
  const r = await kubectl(['run', 'second', '-n', 'quota', '--image=nginx']);
  expect(r.code).not.toBe(0);
  expect(r.err).toContain('pods "second" is forbidden: exceeded quota: pods-quota, requested: pods=1, used: pods=1, limited: pods=1');
  // The controller (its own identity) keeps status.used: a deleted pod is given back.
  expect((await kubectl(['delete', 'pod', 'first', '-n', 'quota', '--wait=false'])).code).toBe(0);
  await kubectlUntil(['get', 'quota', 'pods-quota', '-n', 'quota', '-o', 'jsonpath={.status.used.pods}'], (x) => x.out === '0');
});

it('a LimitRange defaults container resources', async () => {
  const lr = `apiVersion: v1
kind: LimitRange
metadata:
  name: defaults
  namespace: limits
spec:
  limits:
  - type: Container
    default: {cpu: 500m, memory: 256Mi}
    defaultRequest: {cpu: 100m, memory: 64Mi}
`;
  expect((await kubectl(['apply', '-f', '-'], lr)).code).toBe(0);
  const r = await eventually('LimitRange defaults on a new pod', async () => {
    await kubectl(['delete', 'pod', 'defaulted', '-n', 'limits', '--ignore-not-found', '--wait=false']);
    await kubectl(['run', 'defaulted', '-n', 'limits', '--image=nginx']);
    const x = await kubectl(['get', 'pod', 'defaulted', '-n', 'limits', '-o', 'jsonpath={.spec.containers[0].resources}']);
    return x.out.includes('limits') ? x : undefined;
  }, 10_000, 200);
  expect(JSON.parse(r.out)).toEqual({ limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '64Mi' } });
});

const privilegedPod = (ns: string) => `apiVersion: v1
kind: Pod
metadata:
  name: root
  namespace: ${ns}
spec:
  containers:
  - name: shell
    image: busybox
    securityContext:
      privileged: true
`;

it('PodSecurity restricted refuses a privileged pod', async () => {
  expect((await kubectl(['label', 'namespace', 'restricted', 'pod-security.kubernetes.io/enforce=restricted'])).code).toBe(0);
  const r = await kubectlUntil(['apply', '-f', '-'], (x) => x.code !== 0, privilegedPod('restricted'));
  expect(r.err).toContain('pods "root" is forbidden: violates PodSecurity "restricted:latest": privileged (container "shell" must not set securityContext.privileged=true)');
});

it('PodSecurity warn returns a warning kubectl prints, and admits the pod', async () => {
  expect((await kubectl(['label', 'namespace', 'warned', 'pod-security.orch.io/warn=baseline', 'pod-security.orch.io/warn-version=v1.32'])).code).toBe(0);
  const r = await kubectlUntil(['apply', '-f', '-'], (x) => x.err.includes('Warning:'), privilegedPod('warned'), ['delete', 'pod', 'root', '-n', 'warned', '--ignore-not-found', '--wait=false']);
  expect(r.code).toBe(0);
  expect(r.err).toContain('Warning: would violate PodSecurity "baseline:v1.32": privileged (container "shell" must not set securityContext.privileged=true)');
});

describe('ServiceAccount admission', () => {
  const accounts = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: no-token
  namespace: accounts
automountServiceAccountToken: false
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: puller
  namespace: accounts
imagePullSecrets:
- name: registry-creds
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: locked
  namespace: accounts
  annotations:
    orch.io/enforce-mountable-secrets: "true"
secrets:
- name: allowed
`;
  const podOf = (name: string, account?: string, extra = '') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: accounts
spec:
${account ? `  serviceAccountName: ${account}\n` : ''}  containers:
  - name: app
    image: busybox
${extra}`;
  interface PodSpec {
    serviceAccountName?: string;
    imagePullSecrets?: { name: string }[];
    volumes?: { name: string; projected?: { sources: Record<string, unknown>[] } }[];
    containers: { volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[] }[];
  }
  const specOf = async (name: string) => JSON.parse((await kubectl(['get', 'pod', name, '-n', 'accounts', '-o', 'jsonpath={.spec}'])).out) as PodSpec;

  beforeAll(async () => {
    expect((await kubectl(['apply', '-f', '-'], accounts)).code).toBe(0);
  });

  it('a pod without an account runs as default, with the API-access volume mounted at the orch.io and kubernetes.io paths', async () => {
    expect((await kubectl(['apply', '-f', '-'], podOf('plain'))).code).toBe(0);
    const spec = await specOf('plain');
    expect(spec.serviceAccountName).toBe('default');
    const volume = spec.volumes?.find((v) => v.name.startsWith('orch-api-access-'));
    expect(volume?.projected?.sources).toEqual([
      { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
      { configMap: { name: 'orch-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ]);
    expect(spec.containers[0].volumeMounts).toEqual([
      { name: volume!.name, readOnly: true, mountPath: '/var/run/secrets/orch.io/serviceaccount' },
      { name: volume!.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
    ]);
  });

  it('an account with automount off gets no volume; its imagePullSecrets are copied', async () => {
    expect((await kubectl(['apply', '-f', '-'], podOf('quiet', 'no-token'))).code).toBe(0);
    expect((await specOf('quiet')).volumes ?? []).toEqual([]);
    expect((await kubectl(['apply', '-f', '-'], podOf('pulling', 'puller'))).code).toBe(0);
    expect((await specOf('pulling')).imagePullSecrets).toEqual([{ name: 'registry-creds' }]);
  });

  it.each([
    { name: 'a missing account', pod: podOf('ghostly', 'ghost'), want: 'pods "ghostly" is forbidden: error looking up service account accounts/ghost: serviceaccount "ghost" not found' },
    {
      name: 'a secret the account does not list (enforce-mountable-secrets)',
      pod: podOf('leaky', 'locked', '    envFrom:\n    - secretRef:\n        name: other\n'),
      want: 'pods "leaky" is forbidden: container app with envFrom referencing secret.secretName="other" is not allowed because service account locked does not reference that secret',
    },
  ])('refuses $name', async ({ pod, want }) => {
    const r = await kubectl(['apply', '-f', '-'], pod);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain(want);
  });
});
