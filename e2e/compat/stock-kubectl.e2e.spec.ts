import { spawnSync } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { startLocalPlane, type LocalPlane } from '../support/local-plane';
import { eventually } from '../support/node-agent';
import { kubectlSync } from '../support/kubectl';

x509.cryptoProvider.set(webcrypto);

/**
 * Stock kubectl 1.32 against `npm start`, as a new user brings what they have: documentation
 * manifests of every SPEC group under their *.k8s.io names (client-side validation on),
 * rollout history/undo, autoscale, events and describe, the upstream labels stock tools read,
 * and an in-cluster program reaching the API through KUBERNETES_SERVICE_HOST. Each block names
 * what failed before the compatibility work.
 */
jest.setTimeout(240_000);

const NS = 'stock';

describe('stock kubectl against npm start', () => {
  let plane: LocalPlane;
  const kubectl = (...args: string[]) => {
    return kubectlSync({ kubeconfig: plane.kubeconfig, cacheDir: join(plane.dataDir, 'kubectl-cache'), timeoutMs: 60_000 }, args);
  };
  const ok = (...args: string[]) => {
    const r = kubectl(...args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.err}`);
    return r.out;
  };
  const apply = (name: string, yaml: string) => {
    const file = join(plane.dataDir, `${name}.yaml`);
    writeFileSync(file, yaml);
    return kubectl('apply', '-f', file);
  };

  beforeAll(async () => {
    expect(spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status).toBe(0);
    plane = await startLocalPlane();
    await eventually('a Ready node', async () => ((await plane.admin.get('/api/v1/nodes')).json.items.some((n: any) => n.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True')) ? true : undefined), 60_000, 250);
  });
  afterAll(async () => {
    await plane?.stop();
  });

  // Before: "the server could not find the requested resource" (client-side validation) for every *.k8s.io group.
  it('applies stock manifests of every SPEC group under their *.k8s.io names, with client-side validation', async () => {
    const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
    const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
    const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: 'CN=stock-user', keys, signingAlgorithm: alg });
    const manifests = readFileSync(join(__dirname, 'stock-manifests.yaml'), 'utf8').replace('__CSR__', Buffer.from(csr.toString('pem')).toString('base64'));
    const r = apply('stock', manifests);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    for (const kind of ['role.rbac.authorization.k8s.io/reader', 'networkpolicy.networking.k8s.io/web-only', 'event.events.k8s.io/stock-note', 'flowschema.flowcontrol.apiserver.k8s.io/stock-flows', 'certificatesigningrequest.certificates.k8s.io/stock-client']) {
      expect(r.out).toContain(`${kind} created`);
    }
    expect(ok('get', 'roles.rbac.authorization.k8s.io', '-n', NS, '-o', 'name').trim()).toBe('role.rbac.authorization.k8s.io/reader');
    // A second apply finds every object (no error, nothing re-created).
    const again = apply('stock', manifests);
    expect({ code: again.code, err: again.err, created: again.out.includes(' created') }).toEqual({ code: 0, err: '', created: false });
  });

  it('kubectl api-resources lists each resource once per brand, short names on the orch one', () => {
    const lines = ok('api-resources', '--no-headers')
      .split('\n')
      .filter(Boolean)
      .map((l) => l.trim().split(/\s+/));
    // NAME [SHORTNAMES] APIVERSION NAMESPACED KIND
    const rows = lines.map((c) => ({ name: c[0], short: c.length === 5 ? c[1] : '', apiVersion: c[c.length - 3] }));
    const keys = rows.map((r) => `${r.name} ${r.apiVersion}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(rows.filter((r) => r.name === 'roles').map((r) => r.apiVersion).sort()).toEqual(['rbac.authorization.k8s.io/v1', 'rbac.authorization.orch.io/v1']);
    expect(rows.filter((r) => r.name === 'networkpolicies').map((r) => [r.apiVersion, r.short])).toEqual(
      expect.arrayContaining([
        ['networking.orch.io/v1', 'netpol'],
        ['networking.k8s.io/v1', ''],
      ]),
    );
  });

  // Before: no deployment.kubernetes.io/revision, so history was empty and undo found no revision.
  it('rollout history, history --revision and undo --to-revision', async () => {
    const deployment = (image: string, cause: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: roll
  namespace: ${NS}
  annotations: {kubernetes.io/change-cause: "${cause}"}
spec:
  replicas: 1
  selector: {matchLabels: {app: roll}}
  template:
    metadata: {labels: {app: roll}}
    spec:
      containers: [{name: app, image: "${image}", command: ["sleep", "3600"]}]
`;
    const revisions = () =>
      ok('rollout', 'history', 'deploy/roll', '-n', NS)
        .split('\n')
        .filter((l) => /^\d+\s/.test(l))
        .map((l) => l.split(/\s+/)[0]);
    for (const [i, image] of ['example/app:1', 'example/app:2', 'example/app:3'].entries()) {
      expect(apply(`roll-${i}`, deployment(image, `to ${image}`)).code).toBe(0);
      await eventually(`revision ${i + 1}`, () => (revisions().length === i + 1 ? true : undefined), 30_000, 250);
    }
    expect(revisions()).toEqual(['1', '2', '3']);
    expect(ok('rollout', 'history', 'deploy/roll', '-n', NS, '--revision=2')).toContain('example/app:2');
    expect(ok('rollout', 'undo', 'deploy/roll', '-n', NS, '--to-revision=1')).toContain('rolled back');
    await eventually('revision 1 became 4', () => (revisions().join() === '2,3,4' ? true : undefined), 30_000, 250);
    expect(ok('get', 'deploy/roll', '-n', NS, '-o', 'jsonpath={.spec.template.spec.containers[0].image}')).toBe('example/app:1');
  });

  // Before: the protobuf body of `kubectl create` stored `stdin: false`, `generation: 0`... that the
  // JSON template of the undo lacks, so the undo made a third ReplicaSet instead of reusing the first.
  it('rollout undo of a Deployment made by kubectl create (a protobuf body) reuses its first ReplicaSet', async () => {
    ok('create', 'deployment', 'made', '-n', NS, '--image=example/app:1', '--', 'sleep', '3600');
    const replicaSets = () =>
      ok('get', 'rs', '-n', NS, '-l', 'app=made', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.metadata.annotations.deployment\\.kubernetes\\.io/revision} {end}')
        .trim()
        .split(' ')
        .filter(Boolean)
        .sort();
    await eventually('revision 1', () => (replicaSets().length === 1 ? true : undefined), 30_000, 250);
    const [first] = replicaSets()[0].split('=');
    ok('set', 'image', 'deploy/made', '-n', NS, 'app=example/app:2');
    await eventually('revision 2', () => (replicaSets().length === 2 ? true : undefined), 30_000, 250);
    expect(ok('rollout', 'undo', 'deploy/made', '-n', NS, '--to-revision=1')).toContain('rolled back');
    await eventually('the first ReplicaSet at revision 3', () => (replicaSets().includes(`${first}=3`) ? true : undefined), 30_000, 250);
    expect(replicaSets()).toHaveLength(2);
  });

  // Before: 404 (autoscaling/v1 was not served).
  it('kubectl autoscale creates an autoscaling/v1 HorizontalPodAutoscaler, read back in v2', () => {
    expect(ok('autoscale', 'deploy/roll', '-n', NS, '--cpu-percent=55', '--min=1', '--max=4')).toContain('autoscaled');
    expect(ok('get', 'hpa', 'roll', '-n', NS, '-o', 'jsonpath={.apiVersion} {.spec.metrics[0].resource.target.averageUtilization} {.spec.maxReplicas}')).toBe('autoscaling/v2 55 4');
    expect(ok('get', 'horizontalpodautoscalers.v1.autoscaling', 'roll', '-n', NS, '-o', 'jsonpath={.apiVersion} {.spec.targetCPUUtilizationPercentage}')).toBe('autoscaling/v1 55');
  });

  // Before: "No events found" everywhere (events.orch.io events were not core events).
  it('events of the scheduler, node-agent and controllers in kubectl events, --for, --types, get --field-selector and describe', async () => {
    const pod = (name: string, extra: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${NS}}
spec:
  restartPolicy: Never
  ${extra}
  containers: [{name: main, image: busybox, args: ["sh", "-c", "echo hello from ${name}; sleep 1"]}]
`;
    expect(apply('hello', pod('hello', 'terminationGracePeriodSeconds: 1')).code).toBe(0);
    expect(apply('nowhere', pod('nowhere', 'nodeSelector: {no-such-label: "x"}')).code).toBe(0);
    await eventually('hello ran', () => (ok('get', 'pod', 'hello', '-n', NS, '-o', 'jsonpath={.status.phase}') === 'Succeeded' ? true : undefined), 60_000, 250);
    await eventually('events recorded', () => {
      const all = ok('events', '-n', NS);
      return ['Scheduled', 'Pulled', 'Created', 'Started', 'FailedScheduling', 'ScalingReplicaSet', 'SuccessfulCreate'].every((r) => all.includes(r)) ? all : undefined;
    }, 30_000, 500);
    const forHello = ok('events', '-n', NS, '--for', 'pod/hello');
    expect(forHello).toContain('Scheduled');
    expect(forHello).toContain('Started');
    expect(forHello).not.toContain('FailedScheduling');
    const warnings = ok('events', '-n', NS, '--types=Warning');
    expect(warnings).toContain('FailedScheduling');
    expect(warnings).not.toContain('Scheduled ');
    const byName = ok('get', 'events', '-n', NS, '--field-selector', 'involvedObject.name=hello');
    expect(byName).toContain('Started');
    expect(byName).not.toContain('nowhere');
    const describe = ok('describe', 'pod', 'hello', '-n', NS);
    expect(describe.slice(describe.indexOf('Events:'))).toMatch(/Scheduled[\s\S]*Started/);
    expect(ok('describe', 'deploy', 'roll', '-n', NS)).toContain('ScalingReplicaSet');
    expect(ok('logs', 'hello', '-n', NS)).toContain('hello from hello');
  });

  // Before: JOB_COMPLETION_INDEX empty, no generated selector or job-name/controller-uid template labels.
  it('an Indexed Job: generated selector and labels, the completion index in annotation, label and JOB_COMPLETION_INDEX', async () => {
    expect(
      apply(
        'indexed',
        `apiVersion: batch/v1
kind: Job
metadata: {name: indexed, namespace: ${NS}}
spec:
  completions: 2
  parallelism: 2
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers: [{name: work, image: busybox, command: ["sh", "-c", "echo index=$JOB_COMPLETION_INDEX"]}]
`,
      ).code,
    ).toBe(0);
    const job = JSON.parse(ok('get', 'job', 'indexed', '-n', NS, '-o', 'json'));
    expect(job.spec.selector.matchLabels).toEqual({ 'batch.orch.io/controller-uid': job.metadata.uid });
    expect(job.spec.template.metadata.labels).toMatchObject({ 'batch.kubernetes.io/job-name': 'indexed', 'batch.kubernetes.io/controller-uid': job.metadata.uid, 'job-name': 'indexed', 'controller-uid': job.metadata.uid });
    await eventually('job complete', () => (ok('get', 'job', 'indexed', '-n', NS, '-o', 'jsonpath={.status.succeeded}') === '2' ? true : undefined), 60_000, 250);
    const pods = JSON.parse(ok('get', 'pods', '-n', NS, '-l', 'batch.kubernetes.io/job-name=indexed', '-o', 'json')).items;
    const byIndex = new Map<string, any>(pods.map((p: any) => [p.metadata.annotations['batch.kubernetes.io/job-completion-index'], p]));
    expect([...byIndex.keys()].sort()).toEqual(['0', '1']);
    for (const [index, p] of byIndex) {
      expect(p.metadata.labels['batch.kubernetes.io/job-completion-index']).toBe(index);
      expect(ok('logs', p.metadata.name, '-n', NS).trim()).toBe(`index=${index}`);
    }
  });

  it('upstream labels: kubernetes.io/service-name on EndpointSlices, kubernetes.io/metadata.name on namespaces', async () => {
    await eventually('web slice', () => (ok('get', 'endpointslices', '-n', NS, '-l', 'kubernetes.io/service-name=web', '-o', 'name').trim() ? true : undefined), 30_000, 250);
    expect(ok('get', 'ns', NS, '-o', 'jsonpath={.metadata.labels.kubernetes\\.io/metadata\\.name}')).toBe(NS);
  });

  // Before: no default/kubernetes Service, no KUBERNETES_SERVICE_* variables, no kube-root-ca.crt.
  it('an in-cluster program reaches the API at KUBERNETES_SERVICE_HOST:PORT, trusting kube-root-ca.crt', async () => {
    expect(ok('get', 'ns', 'kube-system', 'kube-public', 'kube-node-lease', '-o', 'name').split('\n').filter(Boolean)).toHaveLength(3);
    expect(ok('get', 'svc', 'kubernetes', '-n', 'default', '-o', 'jsonpath={.spec.clusterIP}')).toMatch(/^127\.96\.0\.\d+$/);
    await eventually('kube-root-ca.crt', () => (kubectl('get', 'cm', 'kube-root-ca.crt', '-n', NS).code === 0 ? true : undefined), 30_000, 250);
    const script = [
      "const https = require('https'); const fs = require('fs'); const e = process.env;",
      "https.get({ host: e.KUBERNETES_SERVICE_HOST, port: e.KUBERNETES_SERVICE_PORT, path: '/version', ca: fs.readFileSync(e.ORCH_CONTAINER_ROOT + '/ca/ca.crt') },",
      "  (r) => { let b = ''; r.on('data', (d) => (b += d)); r.on('end', () => console.log(`status=${r.statusCode} minor=${JSON.parse(b).minor} web=${e.WEB_SERVICE_HOST}:${e.WEB_SERVICE_PORT}`)); })",
      "  .on('error', (err) => console.log(`error=${err.message}`));",
    ].join(' ');
    expect(
      apply(
        'incluster',
        `apiVersion: v1
kind: Pod
metadata: {name: incluster, namespace: ${NS}}
spec:
  restartPolicy: Never
  automountServiceAccountToken: false
  volumes: [{name: ca, configMap: {name: kube-root-ca.crt}}]
  containers:
  - name: c
    image: node
    volumeMounts: [{name: ca, mountPath: /ca}]
    command: ["node", "-e", ${JSON.stringify(script)}]
`,
      ).code,
    ).toBe(0);
    const webIp = ok('get', 'svc', 'web', '-n', NS, '-o', 'jsonpath={.spec.clusterIP}');
    const line = await eventually('in-cluster request done', () => ok('logs', 'incluster', '-n', NS).match(/^(status|error)=.*$/m)?.[0], 60_000, 250);
    expect(line).toBe(`status=200 minor=32 web=${webIp}:8080`);
  });
});
