import { evaluatePod, violationText, type PodSpecLike } from './checks';
import { invalidLabels, policyFor } from './pod-security';

const restrictedOk: PodSpecLike = {
  securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
  containers: [{ name: 'c', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
};
const withContainer = (sc: Record<string, unknown>, spec: Partial<PodSpecLike> = {}): PodSpecLike => ({ ...restrictedOk, ...spec, containers: [{ name: 'c', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, ...sc } }] });

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
        'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)',
        'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true)',
        'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
        'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"])',
      ],
    },
    { name: 'restricted volume types', level: 'restricted', spec: { ...restrictedOk, volumes: [{ name: 'd', nfs: { server: 's' } }] }, want: ['restricted volume types (volume "d" uses restricted volume type "nfs")'] },
    { name: 'runAsUser 0', level: 'restricted', spec: withContainer({ runAsUser: 0 }), want: ['runAsUser=0 (container "c" must not set runAsUser=0)'] },
    { name: 'NET_BIND_SERVICE is allowed', level: 'restricted', spec: withContainer({ capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } }), want: [] },
  ] as const)('$name', ({ level, spec, want }) => {
    expect(evaluatePod(level, {}, spec as PodSpecLike).map((v) => `${v.reason} (${v.detail})`)).toEqual(want);
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
