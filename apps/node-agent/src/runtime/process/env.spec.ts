import type { ConfigMap, Container, Pod, Secret } from '../../api/types';
import { ContainerConfigError, containerEnv, expandVars, fieldValue, resourceFieldValue, type ObjectSource, type PodFacts } from './env';

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** An in-memory object source: the API is not what these tests are about. */
const source: ObjectSource = {
  async configMap(ns, name) {
    const all: Record<string, ConfigMap> = {
      'ns/cfg': { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { LEVEL: 'debug', 'bad key': 'x', mode: 'fast' }, binaryData: { BIN: b64('bytes') } },
    };
    return all[`${ns}/${name}`];
  },
  async secret(ns, name) {
    const all: Record<string, Secret> = { 'ns/creds': { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, data: { password: b64('s3cret'), USER: b64('admin') } } };
    return all[`${ns}/${name}`];
  },
};

const pod: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'ns', uid: 'u-1', labels: { app: 'web', tier: 'front' }, annotations: { note: 'a "quoted" value' } },
  spec: { serviceAccountName: 'sa', containers: [{ name: 'main', resources: { limits: { cpu: '1500m', memory: '256Mi' }, requests: { cpu: '250m' } } }] },
};
const facts: PodFacts = { podIP: '127.5.5.2', hostIP: '10.0.0.7', nodeName: 'n1', nodeAllocatable: { cpu: '4', memory: '8Gi' } };

describe('expandVars', () => {
  const vars: Record<string, string> = { A: 'alpha', B: 'beta' };
  it.each([
    { input: '$(A)-$(B)', want: 'alpha-beta' },
    { input: '$(MISSING)', want: '$(MISSING)' },
    { input: '$$(A)', want: '$(A)' },
    { input: 'cost: $5', want: 'cost: $5' },
    { input: 'open $(A', want: 'open $(A' },
    { input: 'trailing $', want: 'trailing $' },
  ])('$input', ({ input, want }) => {
    expect(expandVars(input, (n) => vars[n])).toBe(want);
  });
});

describe('fieldValue and resourceFieldValue', () => {
  it.each([
    { path: 'metadata.name', want: 'web' },
    { path: 'metadata.namespace', want: 'ns' },
    { path: 'metadata.uid', want: 'u-1' },
    { path: "metadata.labels['tier']", want: 'front' },
    { path: 'metadata.labels', want: 'app="web"\ntier="front"' },
    { path: 'metadata.annotations', want: 'note="a \\"quoted\\" value"' },
    { path: 'spec.nodeName', want: 'n1' },
    { path: 'spec.serviceAccountName', want: 'sa' },
    { path: 'status.podIP', want: '127.5.5.2' },
    { path: 'status.hostIP', want: '10.0.0.7' },
  ])('fieldRef $path', ({ path, want }) => {
    expect(fieldValue(pod, facts, { fieldPath: path })).toBe(want);
  });

  it.each([
    { resource: 'limits.cpu', divisor: undefined, want: '2' },
    { resource: 'limits.cpu', divisor: '1m', want: '1500' },
    { resource: 'requests.cpu', divisor: '1m', want: '250' },
    { resource: 'limits.memory', divisor: '1Mi', want: '256' },
    { resource: 'requests.memory', divisor: '1Mi', want: '256' },
    { resource: 'limits.ephemeral-storage', divisor: undefined, want: '0' },
  ])('resourceFieldRef $resource / $divisor', ({ resource, divisor, want }) => {
    expect(resourceFieldValue(pod, pod.spec.containers[0], facts, { resource, divisor })).toBe(want);
  });

  it('uses node allocatable for a missing limit and rejects unknown fields', () => {
    const bare: Pod = { ...pod, spec: { containers: [{ name: 'c' }] } };
    expect(resourceFieldValue(bare, bare.spec.containers[0], facts, { resource: 'limits.memory', divisor: '1Gi' })).toBe('8');
    expect(() => fieldValue(pod, facts, { fieldPath: 'spec.foo' })).toThrow(ContainerConfigError);
  });
});

describe('containerEnv', () => {
  const base = { POD_IP: '127.5.5.2', POD_NAME: 'web' };
  it('layers base, envFrom and env in order, with $(VAR) references', async () => {
    const c: Container = {
      name: 'main',
      envFrom: [{ configMapRef: { name: 'cfg' } }, { prefix: 'S_', secretRef: { name: 'creds' } }],
      env: [
        { name: 'LEVEL', value: 'info' },
        { name: 'URL', value: 'http://$(POD_IP):8080/$(LEVEL)' },
        { name: 'PASS', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
        { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'mode' } } },
        { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
        { name: 'OPT', valueFrom: { configMapKeyRef: { name: 'nope', key: 'x', optional: true } } },
      ],
    };
    const env = await containerEnv(pod, c, facts, source, base);
    expect(env).toEqual({
      POD_IP: '127.5.5.2',
      POD_NAME: 'web',
      LEVEL: 'info',
      mode: 'fast',
      BIN: 'bytes',
      S_password: 's3cret',
      S_USER: 'admin',
      URL: 'http://127.5.5.2:8080/info',
      PASS: 's3cret',
      MODE: 'fast',
      NODE: 'n1',
    });
  });

  it.each([
    { name: 'missing config map', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'nope', key: 'k' } } }], want: 'configmap "nope" not found' },
    { name: 'missing key', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'k' } } }], want: "couldn't find key k in ConfigMap ns/cfg" },
    { name: 'missing secret', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'nope', key: 'k' } } }], want: 'secret "nope" not found' },
    { name: 'missing secret key', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'creds', key: 'k' } } }], want: "couldn't find key k in Secret ns/creds" },
  ])('$name is a config error', async ({ env, want }) => {
    await expect(containerEnv(pod, { name: 'main', env }, facts, source, {})).rejects.toThrow(new ContainerConfigError(want));
  });
});
