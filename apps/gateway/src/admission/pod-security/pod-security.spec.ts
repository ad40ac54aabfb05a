import { evaluatePod, minorOf, violationText, type CheckedPodSpec } from './checks';
import type { AdmissionAttributes } from '../../pipeline/admit';
import type { AdmissionState } from '../admission-state';
import { AUDIT_ENFORCE_POLICY, AUDIT_EXEMPT, AUDIT_VIOLATIONS, DEFAULT_POD_SECURITY_CONFIG, PodSecurity, existingPodWarnings, invalidLabels, podSecurityConfiguration, policiesFor, policyFor } from './pod-security';

const restrictedOk: CheckedPodSpec = {
  securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
  containers: [{ name: 'c', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
};
const withContainer = (sc: Record<string, unknown>, spec: Partial<CheckedPodSpec> = {}): CheckedPodSpec => ({ ...restrictedOk, ...spec, containers: [{ name: 'c', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, ...sc } }] });

describe('Pod Security Standards', () => {
  it.each([
    { name: 'a compliant pod', level: 'restricted', spec: restrictedOk, want: [] },
    { name: 'privileged is allowed at privileged', level: 'privileged', spec: withContainer({ privileged: true }), want: [] },
    { name: 'privileged container', level: 'baseline', spec: withContainer({ privileged: true }), want: ['privileged (container "c" must not set securityContext.privileged=true)'] },
    { name: 'host namespaces', level: 'baseline', spec: { ...restrictedOk, hostNetwork: true, hostPID: true }, want: ['host namespaces (hostNetwork=true, hostPID=true)'] },
    { name: 'hostPath volume', level: 'baseline', spec: { ...restrictedOk, volumes: [{ name: 'v', hostPath: { path: '/' } }] }, want: ['hostPath volumes (volume "v")'] },
    { name: 'host port', level: 'baseline', spec: { ...restrictedOk, containers: [{ name: 'c', ports: [{ hostPort: 80 }] }] }, want: ['hostPort (container "c" uses hostPort 80)'] },
    { name: 'extra capability (baseline)', level: 'baseline', spec: withContainer({ capabilities: { add: ['NET_ADMIN'] } }), want: ['non-default capabilities (container "c" must not include "NET_ADMIN" in securityContext.capabilities.add)'] },
    { name: 'unsafe sysctl', level: 'baseline', spec: { ...restrictedOk, securityContext: { ...restrictedOk.securityContext, sysctls: [{ name: 'kernel.msgmax' }] } }, want: ['forbidden sysctls (kernel.msgmax)'] },
    { name: 'unconfined seccomp (baseline)', level: 'baseline', spec: withContainer({ seccompProfile: { type: 'Unconfined' } }), want: ['seccompProfile (container "c" must not set securityContext.seccompProfile.type to "Unconfined")'] },
    { name: 'baseline allows what restricted does not', level: 'baseline', spec: { containers: [{ name: 'c' }] }, want: [] },
    {
      name: 'restricted needs the hardening fields',
      level: 'restricted',
      spec: { containers: [{ name: 'c' }] },
      want: [
        // upstream's order (baseline, then restricted, each by check ID), as kubectl shows it for a bare pod
        'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)',
        'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"])',
        'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true)',
        'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
      ],
    },
    { name: 'restricted volume types', level: 'restricted', spec: { ...restrictedOk, volumes: [{ name: 'd', nfs: { server: 's' } }] }, want: ['restricted volume types (volume "d" uses restricted volume type "nfs")'] },
    { name: 'runAsUser 0', level: 'restricted', spec: withContainer({ runAsUser: 0 }), want: ['runAsUser=0 (container "c" must not set runAsUser=0)'] },
    { name: 'NET_BIND_SERVICE is allowed', level: 'restricted', spec: withContainer({ capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } }), want: [] },
  ] as const)('$name', ({ level, spec, want }) => {
    expect(evaluatePod(level, {}, spec as CheckedPodSpec).map((v) => `${v.reason} (${v.detail})`)).toEqual(want);
  });

  it('lists baseline violations before restricted ones (upstream)', () => {
    expect(evaluatePod('restricted', {}, { containers: [{ name: 'c', securityContext: { privileged: true } }] }).map((v) => v.reason)).toEqual(['privileged', 'allowPrivilegeEscalation != false', 'unrestricted capabilities', 'runAsNonRoot != true', 'seccompProfile']);
  });

  it('words the message as upstream', () => {
    expect(violationText('baseline:latest', evaluatePod('baseline', {}, withContainer({ privileged: true })))).toBe('PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)');
  });
});

describe('namespace labels', () => {
  it.each([
    { name: 'absent: privileged', labels: {}, mode: 'enforce', want: { level: 'privileged', version: 'latest' } },
    { name: 'orch spelling', labels: { 'pod-security.orch.io/enforce': 'restricted', 'pod-security.orch.io/enforce-version': 'v1.30' }, mode: 'enforce', want: { level: 'restricted', version: 'v1.30' } },
    { name: 'upstream spelling', labels: { 'pod-security.kubernetes.io/warn': 'baseline' }, mode: 'warn', want: { level: 'baseline', version: 'latest' } },
    { name: 'per mode', labels: { 'pod-security.kubernetes.io/warn': 'baseline' }, mode: 'audit', want: { level: 'privileged', version: 'latest' } },
    { name: 'invalid level: restricted', labels: { 'pod-security.orch.io/enforce': 'strict' }, mode: 'enforce', want: { level: 'restricted', version: 'latest' } },
  ] as const)('$name', ({ labels, mode, want }) => {
    expect(policyFor(labels as Record<string, string>, mode)).toEqual(want);
  });

  it('refuses invalid values', () => {
    expect(invalidLabels({ 'pod-security.orch.io/enforce': 'strict', 'pod-security.kubernetes.io/warn-version': '1.2', 'pod-security.orch.io/audit': 'baseline' })).toEqual([
      'pod-security.orch.io/enforce: Invalid value: "strict": must be one of privileged, baseline, restricted',
      'pod-security.kubernetes.io/warn-version: Invalid value: "1.2": must be "latest" or "v1.x"',
    ]);
  });
});

describe('versions of the standards (-version labels)', () => {
  const sysctl = (name: string): CheckedPodSpec => ({ ...restrictedOk, securityContext: { ...restrictedOk.securityContext, sysctls: [{ name, value: '1' }] } });
  // Each row: a pod that one version allows and the next one forbids (or the reverse).
  it.each([
    { name: 'runAsUser=0 is checked from v1.23', level: 'restricted', spec: withContainer({ runAsUser: 0 }), before: 'v1.22', since: 'v1.23', reason: 'runAsUser=0' },
    { name: 'restricted capabilities from v1.22', level: 'restricted', spec: { ...restrictedOk, containers: [{ name: 'c', securityContext: { allowPrivilegeEscalation: false } }] }, before: 'v1.21', since: 'v1.22', reason: 'unrestricted capabilities' },
    { name: 'seccompProfile must be set in restricted from v1.19', level: 'restricted', spec: { ...restrictedOk, securityContext: { runAsNonRoot: true } }, before: 'v1.18', since: 'v1.19', reason: 'seccompProfile' },
  ] as const)('$name', ({ level, spec, before, since, reason }) => {
    expect(evaluatePod(level, {}, spec as CheckedPodSpec, before).map((v) => v.reason)).not.toContain(reason);
    expect(evaluatePod(level, {}, spec as CheckedPodSpec, since).map((v) => v.reason)).toContain(reason);
    expect(evaluatePod(level, {}, spec as CheckedPodSpec, 'latest').map((v) => v.reason)).toContain(reason);
  });

  it.each([
    { name: 'ip_local_reserved_ports is safe from v1.27', spec: sysctl('net.ipv4.ip_local_reserved_ports'), forbidden: 'v1.26', allowed: 'v1.27' },
    { name: 'tcp_keepalive_time is safe from v1.29', spec: sysctl('net.ipv4.tcp_keepalive_time'), forbidden: 'v1.28', allowed: 'v1.29' },
    { name: 'tcp_rmem is safe from v1.32', spec: sysctl('net.ipv4.tcp_rmem'), forbidden: 'v1.31', allowed: 'v1.32' },
    { name: 'SELinux type container_engine_t from v1.31', spec: withContainer({ seLinuxOptions: { type: 'container_engine_t' } }), forbidden: 'v1.30', allowed: 'v1.31' },
    { name: 'Windows pods skip Linux-only restricted checks from v1.25', spec: { os: { name: 'windows' }, securityContext: { runAsNonRoot: true }, containers: [{ name: 'c' }] }, forbidden: 'v1.24', allowed: 'v1.25' },
  ])('$name', ({ spec, forbidden, allowed }) => {
    expect(evaluatePod('restricted', {}, spec as CheckedPodSpec, forbidden)).not.toEqual([]);
    expect(evaluatePod('restricted', {}, spec as CheckedPodSpec, allowed)).toEqual([]);
  });

  it('checks seccomp annotations before v1.19 and fields after', () => {
    const meta = { annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined' } };
    const fields = withContainer({ seccompProfile: { type: 'Unconfined' } });
    expect(evaluatePod('baseline', meta, { containers: [{ name: 'c' }] }, 'v1.18').map((v) => v.detail)).toEqual(['forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined"']);
    expect(evaluatePod('baseline', meta, { containers: [{ name: 'c' }] }, 'v1.19')).toEqual([]);
    expect(evaluatePod('baseline', {}, fields, 'v1.18')).toEqual([]);
    expect(evaluatePod('baseline', {}, fields, 'v1.19')).not.toEqual([]);
  });

  it.each([
    ['latest', 32],
    ['v1.0', 0],
    ['v1.25', 25],
    ['v1.99', 32],
  ])('%s means minor %d', (version, minor) => {
    expect(minorOf(version)).toBe(minor);
  });
});

describe('namespace policies with configured defaults', () => {
  const defaults = { enforce: { level: 'baseline', version: 'v1.30' }, audit: { level: 'restricted', version: 'latest' }, warn: { level: 'restricted', version: 'latest' } } as const;
  it.each([
    { name: 'no labels: the defaults', labels: {}, want: defaults },
    { name: 'a label replaces the level, keeping the default version', labels: { 'pod-security.kubernetes.io/enforce': 'restricted' }, want: { ...defaults, enforce: { level: 'restricted', version: 'v1.30' } } },
    { name: 'a version label alone', labels: { 'pod-security.orch.io/enforce-version': 'latest' }, want: { ...defaults, enforce: { level: 'baseline', version: 'latest' } } },
  ])('$name', ({ labels, want }) => {
    expect(policiesFor(labels as Record<string, string>, defaults)).toEqual(want);
  });

  it('warn follows a stricter enforce level when warn is not set (upstream)', () => {
    expect(policiesFor({ 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'v1.28' }).warn).toEqual({ level: 'restricted', version: 'v1.28' });
    expect(policiesFor({ 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/warn': 'baseline' }).warn).toEqual({ level: 'baseline', version: 'latest' });
  });
});

describe('PodSecurityConfiguration', () => {
  const doc = (over: Record<string, unknown>) => ({ apiVersion: 'pod-security.admission.config.k8s.io/v1', kind: 'PodSecurityConfiguration', ...over });
  it('reads defaults and exemptions', () => {
    expect(podSecurityConfiguration(doc({ defaults: { enforce: 'baseline', 'enforce-version': 'v1.29', warn: 'restricted' }, exemptions: { namespaces: ['kube-system'], usernames: ['system:serviceaccount:ci:deployer'], runtimeClasses: ['gvisor'] } }))).toEqual({
      defaults: { enforce: { level: 'baseline', version: 'v1.29' }, audit: { level: 'privileged', version: 'latest' }, warn: { level: 'restricted', version: 'latest' } },
      exemptions: { namespaces: ['kube-system'], usernames: ['system:serviceaccount:ci:deployer'], runtimeClasses: ['gvisor'] },
    });
    expect(podSecurityConfiguration(undefined)).toBe(DEFAULT_POD_SECURITY_CONFIG);
  });

  it.each([
    { name: 'unknown apiVersion', doc: doc({ apiVersion: 'v1' }), want: 'apiVersion: Unsupported value: "v1"' },
    { name: 'wrong kind', doc: doc({ kind: 'AdmissionConfiguration' }), want: 'kind: Unsupported value: "AdmissionConfiguration"' },
    { name: 'bad level', doc: doc({ defaults: { audit: 'strict' } }), want: 'defaults.audit: Invalid value: "strict"' },
    { name: 'bad version', doc: doc({ defaults: { 'warn-version': '1.30' } }), want: 'defaults.warn-version: Invalid value: "1.30"' },
    { name: 'bad namespace name', doc: doc({ exemptions: { namespaces: ['Kube_System'] } }), want: 'exemptions.namespaces[0]: Invalid value: "Kube_System": must be a lowercase RFC 1123 label' },
    { name: 'duplicate user', doc: doc({ exemptions: { usernames: ['u', 'u'] } }), want: 'exemptions.usernames[1]: Duplicate value: "u"' },
    { name: 'empty user', doc: doc({ exemptions: { usernames: [''] } }), want: 'exemptions.usernames[0]: Invalid value: "": username must not be empty' },
    { name: 'not a list', doc: doc({ exemptions: { runtimeClasses: 'gvisor' } }), want: 'exemptions.runtimeClasses: must be a list of strings' },
  ])('refuses $name', ({ doc: d, want }) => {
    expect(() => podSecurityConfiguration(d, 'admission.yaml: plugin PodSecurity')).toThrow(`admission.yaml: plugin PodSecurity: invalid admission configuration: ${want}`);
  });
});

describe('warnings about existing pods when the enforce level changes', () => {
  const pod = (name: string, spec: CheckedPodSpec, owner?: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns', ...(owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: owner, controller: true }] } : {}) }, spec });
  const privilegedSpec = withContainer({ privileged: true });
  const reason = 'privileged (container "c" must not set securityContext.privileged=true)';
  it.each([
    { name: 'no violating pods: no warnings', pods: [pod('ok', restrictedOk)], max: 10, want: [] },
    { name: 'one pod', pods: [pod('root', privilegedSpec), pod('ok', restrictedOk)], max: 10, want: ['existing pods in namespace "ns" violate the new PodSecurity enforce level "baseline:latest"', `root: ${reason}`] },
    { name: 'two pods with one reason', pods: [pod('b', privilegedSpec), pod('a', privilegedSpec)], max: 10, want: ['existing pods in namespace "ns" violate the new PodSecurity enforce level "baseline:latest"', `a (and 1 other pod): ${reason}`] },
    { name: 'three pods with one reason', pods: [pod('c', privilegedSpec), pod('b', privilegedSpec), pod('a', privilegedSpec)], max: 10, want: ['existing pods in namespace "ns" violate the new PodSecurity enforce level "baseline:latest"', `a (and 2 other pods): ${reason}`] },
    {
      name: 'more pods than checked: one per controller first',
      pods: [pod('rs-1', restrictedOk, 'rs'), pod('rs-2', restrictedOk, 'rs'), pod('root', privilegedSpec)],
      max: 2,
      want: ['new PodSecurity enforce level only checked against the first 2 of 3 existing pods', 'existing pods in namespace "ns" violate the new PodSecurity enforce level "baseline:latest"', `root: ${reason}`],
    },
  ])('$name', ({ pods, max, want }) => {
    expect(existingPodWarnings('ns', { level: 'baseline', version: 'latest' }, pods, [], max)).toEqual(want);
  });

  it('skips pods of an exempt RuntimeClass', () => {
    expect(existingPodWarnings('ns', { level: 'baseline', version: 'latest' }, [pod('root', { ...privilegedSpec, runtimeClassName: 'gvisor' })], ['gvisor'])).toEqual([]);
  });
});

describe('PodSecurity plugin: responses and audit annotations', () => {
  // The plugin reads the namespace from the admission caches; this state has one namespace.
  const stateWith = (labels: Record<string, string>, config?: unknown) =>
    ({
      pluginConfigurationOf: <T>(name: string, parse: (document: unknown, where: string) => T) => parse(config, `admission.yaml: plugin ${name}`),
      cache: () => ({ get: () => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', labels } }), list: () => [] }),
    }) as unknown as AdmissionState;
  const attrs = (spec: CheckedPodSpec, resource = 'pods', username = 'alice'): AdmissionAttributes => ({
    operation: 'CREATE',
    object: resource === 'pods' ? { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec } : { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'p', namespace: 'ns' }, spec: { template: { metadata: {}, spec } } },
    kind: resource === 'pods' ? { group: '', version: 'v1', kind: 'Pod' } : { group: 'apps', version: 'v1', kind: 'Deployment' },
    resource: resource === 'pods' ? { group: '', version: 'v1', resource: 'pods' } : { group: 'apps', version: 'v1', resource: 'deployments' },
    subresource: '',
    namespace: 'ns',
    name: 'p',
    userInfo: { username, groups: [] },
    dryRun: false,
  });
  const exemptConfig = { apiVersion: 'pod-security.admission.config.k8s.io/v1', kind: 'PodSecurityConfiguration', exemptions: { usernames: ['ci-bot'] } };
  const bare: CheckedPodSpec = { containers: [{ name: 'c' }] };

  it.each<{ name: string; labels: Record<string, string>; spec: CheckedPodSpec; username?: string; resource?: string; want: unknown }>([
    { name: 'a privileged namespace: the enforce policy is recorded', labels: {}, spec: bare, want: { auditAnnotations: { [AUDIT_ENFORCE_POLICY]: 'privileged:latest' } } },
    { name: 'an admitted pod', labels: { 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/enforce-version': 'v1.30' }, spec: bare, want: { auditAnnotations: { [AUDIT_ENFORCE_POLICY]: 'baseline:v1.30' } } },
    {
      name: 'audit and warn violations',
      labels: { 'pod-security.kubernetes.io/audit': 'restricted', 'pod-security.kubernetes.io/warn': 'restricted' },
      spec: { ...restrictedOk, securityContext: {} },
      want: {
        warnings: ['would violate PodSecurity "restricted:latest": runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")'],
        auditAnnotations: { [AUDIT_ENFORCE_POLICY]: 'privileged:latest', [AUDIT_VIOLATIONS]: 'would violate PodSecurity "restricted:latest": runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")' },
      },
    },
    { name: 'an exempt user', labels: { 'pod-security.kubernetes.io/enforce': 'restricted' }, spec: bare, username: 'ci-bot', want: { auditAnnotations: { [AUDIT_EXEMPT]: 'user' } } },
    { name: 'a workload template: warnings, no enforce policy', labels: { 'pod-security.kubernetes.io/warn': 'baseline' }, spec: withContainer({ privileged: true }), resource: 'deployments', want: { warnings: ['would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)'] } },
  ])('$name', async ({ labels, spec, username, resource, want }) => {
    const plugin = new PodSecurity(stateWith(labels, exemptConfig));
    expect(await plugin.validate(attrs(spec, resource, username))).toEqual(want);
  });

  it('refuses a pod that violates the enforce level', async () => {
    const plugin = new PodSecurity(stateWith({ 'pod-security.orch.io/enforce': 'baseline' }));
    await expect(plugin.validate(attrs(withContainer({ privileged: true })))).rejects.toThrow('pods "p" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)');
  });
});
