// The admission configuration file (--admission-control-config-file) through stock kubectl
// against a real gateway: PodSecurity defaults for unlabeled namespaces and exempt namespaces,
// versions pinned by -version labels, warnings about existing pods when a namespace's enforce
// level rises, PodNodeSelector's cluster default and namespace whitelist (its configuration
// read from a path relative to the file), and start-up refusing a configuration it cannot use.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { POD_CONTROLLERS, defaultServiceAccount, startGateway, type GatewayProcess } from './support/gateway';
import { eventually } from './support/node-agent';
import { kubectlAsync, type KubectlRun } from './support/kubectl';

let gw: GatewayProcess;
let dir: string;

function kubectl(args: string[], stdin?: string): Promise<KubectlRun> {
  return kubectlAsync({ kubeconfig: gw.kubeconfig, cacheDir: join(dir, 'kube-cache') }, args, stdin);
}

async function ok(args: string[], stdin?: string): Promise<KubectlRun> {
  const r = await kubectl(args, stdin);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${r.err}`);
  return r;
}

const ADMISSION_CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      enforce: baseline
      warn: restricted
    exemptions:
      namespaces: [exempt]
- name: PodNodeSelector
  path: node-selector.yaml
`;

const NODE_SELECTOR_CONFIG = `podNodeSelectorPluginConfig:
  clusterDefaultNodeSelector: pool=general
  pinned: pool=general,disk=ssd
`;

/** A pod in `ns`; `extra` is YAML under spec (indented by two). */
const pod = (ns: string, name: string, extra = '', container = '') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${ns}
spec:
${extra}  containers:
  - name: app
    image: busybox
${container}`;
const privileged = (ns: string, name = 'root') => pod(ns, name, '', '    securityContext:\n      privileged: true\n');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'orch-adm-config-'));
  writeFileSync(join(dir, 'admission.yaml'), ADMISSION_CONFIG);
  writeFileSync(join(dir, 'node-selector.yaml'), NODE_SELECTOR_CONFIG);
  gw = await startGateway({ args: [`--admission-control-config-file=${join(dir, 'admission.yaml')}`, '--enable-admission-plugins=PodNodeSelector'], controllers: POD_CONTROLLERS });
  for (const ns of ['plain', 'exempt', 'pinned']) await ok(['create', 'namespace', ns]);
  for (const ns of ['plain', 'exempt', 'pinned']) await defaultServiceAccount(gw.admin, ns);
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('PodSecurity configuration', () => {
  it('a namespace without labels gets the configured defaults: baseline enforced, restricted warned', async () => {
    const refused = await kubectl(['apply', '-f', '-'], privileged('plain'));
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain('pods "root" is forbidden: violates PodSecurity "baseline:latest": privileged (container "app" must not set securityContext.privileged=true)');
    const admitted = await ok(['apply', '-f', '-'], pod('plain', 'web'));
    expect(admitted.err).toContain('Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)');
  });

  it('an exempt namespace is not checked, and a policy set on it is said to be ignored', async () => {
    await ok(['apply', '-f', '-'], privileged('exempt'));
    const labeled = await ok(['label', 'namespace', 'exempt', 'pod-security.kubernetes.io/enforce=restricted']);
    expect(labeled.err).toContain('Warning: namespace "exempt" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored');
    await ok(['apply', '-f', '-'], privileged('exempt', 'root-2'));
  });

  it('an enforce level pinned to an older version applies that version’s checks', async () => {
    await ok(['apply', '-f', '-'], 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: older\n  labels:\n    pod-security.kubernetes.io/enforce: baseline\n    pod-security.kubernetes.io/enforce-version: v1.26\n');
    await defaultServiceAccount(gw.admin, 'older');
    // net.ipv4.ip_local_reserved_ports became a safe sysctl in 1.27.
    const sysctlPod = (ns: string) => pod(ns, 'tuned', '  securityContext:\n    sysctls:\n    - name: net.ipv4.ip_local_reserved_ports\n      value: "30000"\n');
    const refused = await kubectl(['apply', '-f', '-'], sysctlPod('older'));
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain('violates PodSecurity "baseline:v1.26": forbidden sysctls (net.ipv4.ip_local_reserved_ports)');
    await ok(['apply', '-f', '-'], sysctlPod('plain'));
  });

  it('raising a namespace’s enforce level warns about the existing pods that violate it', async () => {
    // The pod "web" (from the first test) reaches the gateway's pod cache through its watch:
    // until it has, the label change finds no pods to warn about; take the label off and retry.
    const r = await eventually('the label change to warn about pod "web"', async () => {
      const x = await ok(['label', 'namespace', 'plain', 'pod-security.kubernetes.io/enforce=restricted', '--overwrite']);
      if (x.err.includes('existing pods')) return x;
      await ok(['label', 'namespace', 'plain', 'pod-security.kubernetes.io/enforce-']);
      return undefined;
    }, 10_000, 200);
    expect(r.err).toContain('Warning: existing pods in namespace "plain" violate the new PodSecurity enforce level "restricted:latest"');
    expect(r.err).toMatch(/Warning: (tuned|web) \(and 1 other pod\): allowPrivilegeEscalation != false/);
    // A relaxed level warns about nothing.
    expect((await ok(['label', 'namespace', 'plain', 'pod-security.kubernetes.io/enforce=baseline', '--overwrite'])).err).not.toContain('existing pods');
  });
});

describe('PodNodeSelector configuration', () => {
  const selectorOf = async (ns: string, name: string) => JSON.parse((await ok(['get', 'pod', name, '-n', ns, '-o', 'jsonpath={.spec.nodeSelector}'])).out) as Record<string, string>;

  it('puts the cluster default node selector on pods of namespaces without the annotation', async () => {
    expect(await selectorOf('plain', 'web')).toEqual({ pool: 'general' });
  });

  it.each([
    { name: 'a selector within the whitelist is admitted', pod: 'ssd', selector: 'disk: ssd', want: { pool: 'general', disk: 'ssd' } },
    { name: 'a label value outside the whitelist is refused', pod: 'hdd', selector: 'disk: hdd', want: 'pod node label selector labels conflict with its namespace whitelist' },
    { name: 'a selector conflicting with the default is refused', pod: 'gpu', selector: 'pool: gpu', want: 'pod node label selector conflicts with its namespace node label selector' },
  ])('namespace whitelist: $name', async ({ pod: name, selector, want }) => {
    const r = await kubectl(['apply', '-f', '-'], pod('pinned', name, `  nodeSelector:\n    ${selector}\n`));
    if (typeof want === 'string') {
      expect(r.code).not.toBe(0);
      expect(r.err).toContain(want);
    } else {
      expect(r.code).toBe(0);
      expect(await selectorOf('pinned', name)).toEqual(want);
    }
  });
});

describe('start-up with a configuration it cannot use', () => {
  it.each([
    { name: 'a bad PodSecurity level', file: ADMISSION_CONFIG.replace('enforce: baseline', 'enforce: strict'), message: /plugin PodSecurity: invalid admission configuration: defaults.enforce: Invalid value: "strict"/ },
    { name: 'a plugin configured twice', file: `${ADMISSION_CONFIG}- name: PodSecurity\n`, message: /plugins\[2\].name: Duplicate value: "PodSecurity"/ },
    { name: 'a configuration for a plugin that takes none', file: ADMISSION_CONFIG.replace('name: PodNodeSelector', 'name: LimitRanger'), message: /configures admission plugin\(s\) LimitRanger, which take no configuration here/ },
    { name: 'a missing file', file: undefined, message: /cannot read the file/ },
  ])('$name fails start-up, naming the field', async ({ file, message }) => {
    const path = join(dir, `bad-${Math.random().toString(36).slice(2)}.yaml`);
    if (file !== undefined) writeFileSync(path, file);
    await expect(startGateway({ args: [`--admission-control-config-file=${path}`] })).rejects.toThrow(message);
  });
});
