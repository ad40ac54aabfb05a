// The Pod Security Standards (upstream k8s.io/pod-security-admission/policy, checks of the
// latest version): each check returns the violation's short reason and detail, or nothing.
// Pure functions of a pod spec and metadata.

export type Level = 'privileged' | 'baseline' | 'restricted';

interface SecurityContext {
  privileged?: boolean;
  allowPrivilegeEscalation?: boolean;
  runAsNonRoot?: boolean;
  runAsUser?: number;
  procMount?: string;
  capabilities?: { add?: string[]; drop?: string[] };
  seLinuxOptions?: { type?: string; user?: string; role?: string };
  seccompProfile?: { type?: string };
  appArmorProfile?: { type?: string };
  windowsOptions?: { hostProcess?: boolean };
  sysctls?: { name: string; value?: string }[];
}

interface Container {
  name: string;
  securityContext?: SecurityContext;
  ports?: { hostPort?: number }[];
}

export interface PodSpecLike {
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  securityContext?: SecurityContext;
  containers?: Container[];
  initContainers?: Container[];
  ephemeralContainers?: Container[];
  volumes?: ({ name: string } & Record<string, unknown>)[];
  os?: { name?: string };
}

export interface PodMetaLike {
  annotations?: Record<string, string>;
}

export interface Violation {
  /** Short reason, e.g. `privileged`. */
  reason: string;
  /** What must change, e.g. `container "c" must not set securityContext.privileged=true`. */
  detail: string;
}

type Check = (meta: PodMetaLike, spec: PodSpecLike) => Violation | undefined;

function containers(spec: PodSpecLike): Container[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])];
}

function quoted(names: readonly string[]): string {
  return names.map((n) => JSON.stringify(n)).join(', ');
}

/** `container "a"` / `containers "a", "b"`. */
function which(names: readonly string[]): string {
  return `${names.length === 1 ? 'container' : 'containers'} ${quoted(names)}`;
}

function pluralize(names: readonly string[], singular: string, plural: string): string {
  return names.length === 1 ? singular : plural;
}

const BASELINE_CAPABILITIES = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);
const SAFE_SYSCTLS = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]);
const RESTRICTED_VOLUMES = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret']);
const SELINUX_TYPES = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t']);

const hostProcess: Check = (_m, spec) => {
  const bad = containers(spec).filter((c) => c.securityContext?.windowsOptions?.hostProcess === true).map((c) => c.name);
  const pod = spec.securityContext?.windowsOptions?.hostProcess === true;
  if (!pod && bad.length === 0) return undefined;
  return { reason: 'hostProcess', detail: pod ? 'pod must not set securityContext.windowsOptions.hostProcess=true' : `${which(bad)} must not set securityContext.windowsOptions.hostProcess=true` };
};

const hostNamespaces: Check = (_m, spec) => {
  const set = (['hostNetwork', 'hostPID', 'hostIPC'] as const).filter((k) => spec[k] === true);
  if (set.length === 0) return undefined;
  return { reason: 'host namespaces', detail: `${set.map((k) => `${k}=true`).join(', ')}` };
};

const privileged: Check = (_m, spec) => {
  const bad = containers(spec).filter((c) => c.securityContext?.privileged === true).map((c) => c.name);
  return bad.length ? { reason: 'privileged', detail: `${which(bad)} must not set securityContext.privileged=true` } : undefined;
};

const baselineCapabilities: Check = (_m, spec) => {
  const bad = containers(spec).filter((c) => (c.securityContext?.capabilities?.add ?? []).some((cap) => !BASELINE_CAPABILITIES.has(cap)));
  if (bad.length === 0) return undefined;
  const caps = [...new Set(bad.flatMap((c) => (c.securityContext?.capabilities?.add ?? []).filter((cap) => !BASELINE_CAPABILITIES.has(cap))))];
  return { reason: 'non-default capabilities', detail: `${which(bad.map((c) => c.name))} must not include ${quoted(caps)} in securityContext.capabilities.add` };
};

const hostPathVolumes: Check = (_m, spec) => {
  const bad = (spec.volumes ?? []).filter((v) => v.hostPath !== undefined).map((v) => v.name);
  return bad.length ? { reason: 'hostPath volumes', detail: `${pluralize(bad, 'volume', 'volumes')} ${quoted(bad)}` } : undefined;
};

const hostPorts: Check = (_m, spec) => {
  const bad = containers(spec).filter((c) => (c.ports ?? []).some((p) => (p.hostPort ?? 0) !== 0));
  if (bad.length === 0) return undefined;
  const ports = bad.flatMap((c) => (c.ports ?? []).map((p) => p.hostPort ?? 0).filter((p) => p !== 0));
  return { reason: 'hostPort', detail: `${which(bad.map((c) => c.name))} ${pluralize(ports.map(String), 'uses', 'use')} ${pluralize(ports.map(String), 'hostPort', 'hostPorts')} ${ports.join(', ')}` };
};

const appArmor: Check = (meta, spec) => {
  const bad: string[] = [];
  const allowed = (t: string | undefined) => t === undefined || t === 'RuntimeDefault' || t === 'Localhost';
  if (!allowed(spec.securityContext?.appArmorProfile?.type)) bad.push(`pod must not set securityContext.appArmorProfile.type to ${JSON.stringify(spec.securityContext?.appArmorProfile?.type)}`);
  for (const c of containers(spec)) if (!allowed(c.securityContext?.appArmorProfile?.type)) bad.push(`container ${JSON.stringify(c.name)} must not set securityContext.appArmorProfile.type to ${JSON.stringify(c.securityContext?.appArmorProfile?.type)}`);
  for (const [k, v] of Object.entries(meta.annotations ?? {})) {
    if (k.startsWith('container.apparmor.security.beta.kubernetes.io/') && v !== 'runtime/default' && !v.startsWith('localhost/')) bad.push(`${k}=${JSON.stringify(v)}`);
  }
  return bad.length ? { reason: 'forbidden AppArmor profile', detail: bad.join(', ') } : undefined;
};

const seLinux: Check = (_m, spec) => {
  const bad = (o?: SecurityContext['seLinuxOptions']) => !!o && (!SELINUX_TYPES.has(o.type ?? '') || !!o.user || !!o.role);
  const names = containers(spec).filter((c) => bad(c.securityContext?.seLinuxOptions)).map((c) => c.name);
  if (!bad(spec.securityContext?.seLinuxOptions) && names.length === 0) return undefined;
  return { reason: 'seLinuxOptions', detail: `${bad(spec.securityContext?.seLinuxOptions) ? 'pod' : which(names)} set forbidden securityContext.seLinuxOptions` };
};

const procMount: Check = (_m, spec) => {
  const bad = containers(spec).filter((c) => c.securityContext?.procMount !== undefined && c.securityContext.procMount !== 'Default').map((c) => c.name);
  return bad.length ? { reason: 'procMount', detail: `${which(bad)} must not set securityContext.procMount to "Unmasked"` } : undefined;
};

const seccompBaseline: Check = (_m, spec) => {
  const bad: string[] = [];
  if (spec.securityContext?.seccompProfile?.type === 'Unconfined') bad.push('pod must not set securityContext.seccompProfile.type to "Unconfined"');
  const names = containers(spec).filter((c) => c.securityContext?.seccompProfile?.type === 'Unconfined').map((c) => c.name);
  if (names.length) bad.push(`${which(names)} must not set securityContext.seccompProfile.type to "Unconfined"`);
  return bad.length ? { reason: 'seccompProfile', detail: bad.join('; ') } : undefined;
};

const sysctls: Check = (_m, spec) => {
  const bad = (spec.securityContext?.sysctls ?? []).map((s) => s.name).filter((n) => !SAFE_SYSCTLS.has(n));
  return bad.length ? { reason: 'forbidden sysctls', detail: bad.join(', ') } : undefined;
};

const restrictedVolumes: Check = (_m, spec) => {
  const bad = (spec.volumes ?? []).filter((v) => !Object.keys(v).some((k) => k !== 'name' && RESTRICTED_VOLUMES.has(k)));
  if (bad.length === 0) return undefined;
  const types = [...new Set(bad.flatMap((v) => Object.keys(v).filter((k) => k !== 'name')))];
  return { reason: 'restricted volume types', detail: `${pluralize(bad.map((v) => v.name), 'volume', 'volumes')} ${quoted(bad.map((v) => v.name))} ${pluralize(bad.map((v) => v.name), 'uses', 'use')} restricted volume ${pluralize(types, 'type', 'types')} ${quoted(types)}` };
};

const privilegeEscalation: Check = (_m, spec) => {
  const bad = containers(spec).filter((c) => c.securityContext?.allowPrivilegeEscalation !== false).map((c) => c.name);
  return bad.length ? { reason: 'allowPrivilegeEscalation != false', detail: `${which(bad)} must set securityContext.allowPrivilegeEscalation=false` } : undefined;
};

const runAsNonRoot: Check = (_m, spec) => {
  const podSet = spec.securityContext?.runAsNonRoot;
  const explicitFalse = containers(spec).filter((c) => c.securityContext?.runAsNonRoot === false).map((c) => c.name);
  const unset = containers(spec).filter((c) => c.securityContext?.runAsNonRoot === undefined).map((c) => c.name);
  if (podSet === false) return { reason: 'runAsNonRoot != true', detail: 'pod must not set securityContext.runAsNonRoot=false' };
  if (explicitFalse.length) return { reason: 'runAsNonRoot != true', detail: `${which(explicitFalse)} must not set securityContext.runAsNonRoot=false` };
  if (podSet !== true && unset.length) return { reason: 'runAsNonRoot != true', detail: `pod or ${which(unset)} must set securityContext.runAsNonRoot=true` };
  return undefined;
};

const runAsUser: Check = (_m, spec) => {
  const bad: string[] = [];
  if (spec.securityContext?.runAsUser === 0) bad.push('pod must not set runAsUser=0');
  const names = containers(spec).filter((c) => c.securityContext?.runAsUser === 0).map((c) => c.name);
  if (names.length) bad.push(`${which(names)} must not set runAsUser=0`);
  return bad.length ? { reason: 'runAsUser=0', detail: bad.join('; ') } : undefined;
};

const seccompRestricted: Check = (_m, spec) => {
  const ok = (t?: string) => t === 'RuntimeDefault' || t === 'Localhost';
  const podType = spec.securityContext?.seccompProfile?.type;
  const unset = containers(spec).filter((c) => c.securityContext?.seccompProfile?.type === undefined).map((c) => c.name);
  const badSet = containers(spec).filter((c) => c.securityContext?.seccompProfile?.type !== undefined && !ok(c.securityContext.seccompProfile.type)).map((c) => c.name);
  if (podType !== undefined && !ok(podType)) return { reason: 'seccompProfile', detail: `pod must not set securityContext.seccompProfile.type to ${JSON.stringify(podType)}` };
  if (badSet.length) return { reason: 'seccompProfile', detail: `${which(badSet)} must not set securityContext.seccompProfile.type to "Unconfined"` };
  if (podType === undefined && unset.length) return { reason: 'seccompProfile', detail: `pod or ${which(unset)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"` };
  return undefined;
};

const restrictedCapabilities: Check = (_m, spec) => {
  const noDrop = containers(spec).filter((c) => !(c.securityContext?.capabilities?.drop ?? []).includes('ALL')).map((c) => c.name);
  const badAdd = containers(spec).filter((c) => (c.securityContext?.capabilities?.add ?? []).some((cap) => cap !== 'NET_BIND_SERVICE'));
  const parts: string[] = [];
  if (noDrop.length) parts.push(`${which(noDrop)} must set securityContext.capabilities.drop=["ALL"]`);
  if (badAdd.length) {
    const caps = [...new Set(badAdd.flatMap((c) => (c.securityContext?.capabilities?.add ?? []).filter((cap) => cap !== 'NET_BIND_SERVICE')))];
    parts.push(`${which(badAdd.map((c) => c.name))} must not include ${quoted(caps)} in securityContext.capabilities.add`);
  }
  return parts.length ? { reason: 'unrestricted capabilities', detail: parts.join('; ') } : undefined;
};

const BASELINE_CHECKS: readonly Check[] = [hostProcess, hostNamespaces, privileged, baselineCapabilities, hostPathVolumes, hostPorts, appArmor, seLinux, procMount, seccompBaseline, sysctls];
/** Restricted replaces the baseline capabilities and seccomp checks with stricter ones. */
const RESTRICTED_CHECKS: readonly Check[] = [hostProcess, hostNamespaces, privileged, hostPathVolumes, hostPorts, appArmor, seLinux, procMount, sysctls, restrictedVolumes, privilegeEscalation, runAsNonRoot, runAsUser, seccompRestricted, restrictedCapabilities];

/** Every violation of `level` by a pod (privileged: none). Windows pods skip the Linux-only restricted checks. */
export function evaluatePod(level: Level, meta: PodMetaLike, spec: PodSpecLike): Violation[] {
  if (level === 'privileged') return [];
  const checks = level === 'baseline' ? BASELINE_CHECKS : RESTRICTED_CHECKS.filter((c) => !(spec.os?.name === 'windows' && (c === privilegeEscalation || c === seccompRestricted || c === restrictedCapabilities || c === runAsUser)));
  const out: Violation[] = [];
  for (const check of checks) {
    const v = check(meta, spec);
    if (v) out.push(v);
  }
  return out;
}

/** upstream's message: `violates PodSecurity "restricted:latest": reason (detail), reason (detail)`. */
export function violationText(policy: string, violations: readonly Violation[]): string {
  return `PodSecurity ${JSON.stringify(policy)}: ${violations.map((v) => `${v.reason} (${v.detail})`).join(', ')}`;
}
