// The Pod Security Standards (upstream k8s.io/pod-security-admission/policy) with their versions:
// each check has one implementation per version it changed in, and a level:version policy runs
// the implementations in effect at that version (`-version` labels; `latest` is the newest this
// gateway knows, 1.32). Restricted includes baseline, except the baseline checks a restricted
// check replaces. Reasons and details are worded as upstream's; results come in upstream's
// order (baseline checks, then restricted ones, each by check ID). Pure functions of a pod's
// metadata and spec.

import type { coreV1, metaV1 } from '@orch/api';

export type Level = 'privileged' | 'baseline' | 'restricted';

/** The newest version of the standards this gateway implements (`latest`): Kubernetes 1.32. */
export const LATEST_MINOR = 32;

/** Container and pod security settings, read alike (the generated types; the pod's lacks `privileged`, the container's `sysctls`). */
type SecurityContext = coreV1.SecurityContext & coreV1.PodSecurityContext;
type Container = Omit<coreV1.Container | coreV1.EphemeralContainer, 'securityContext'> & { securityContext?: SecurityContext };

/** What the checks read of a pod spec: the generated PodSpec, any part possibly absent (templates and partial bodies). */
export type CheckedPodSpec = Partial<Omit<coreV1.PodSpec, 'containers' | 'initContainers' | 'ephemeralContainers' | 'securityContext'>> & {
  securityContext?: SecurityContext;
  containers?: Container[];
  initContainers?: Container[];
  ephemeralContainers?: Container[];
};

/** What the checks read of a pod's metadata. */
export type CheckedPodMeta = Pick<metaV1.ObjectMeta, 'annotations'>;

export interface Violation {
  /** Short reason, e.g. `privileged`. */
  reason: string;
  /** What must change, e.g. `container "c" must not set securityContext.privileged=true`. */
  detail: string;
}

type CheckFn = (meta: CheckedPodMeta, spec: CheckedPodSpec) => Violation | undefined;

/** One check of the standards: its implementations by the minor version they start at. */
interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  versions: readonly { since: number; check: CheckFn; overrides?: readonly string[] }[];
}

function containers(spec: CheckedPodSpec): Container[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])];
}

/** upstream joinQuote: `"a", "b"` (no escaping). */
function joinQuote(items: readonly string[]): string {
  return `"${items.join('", "')}"`;
}

function pluralize(singular: string, plural: string, n: number): string {
  return n === 1 ? singular : plural;
}

/** `container "a"` / `containers "a", "b"`. */
function which(names: readonly string[]): string {
  return `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;
}

/** Sorted distinct strings (upstream sets.String.List()). */
function sortedSet(items: Iterable<string>): string[] {
  return [...new Set(items)].sort();
}

/** `pod and containers "a", "b"`: who set a bad value. */
function setters(pod: boolean, badContainers: readonly string[]): string[] {
  const out = pod ? ['pod'] : [];
  if (badContainers.length) out.push(which(badContainers));
  return out;
}

const isWindows = (spec: CheckedPodSpec) => spec.os?.name === 'windows';

// --- baseline ---------------------------------------------------------------------------------

const windowsHostProcess: CheckFn = (_m, spec) => {
  const bad = containers(spec).filter((c) => c.securityContext?.windowsOptions?.hostProcess === true).map((c) => c.name);
  const who = setters(spec.securityContext?.windowsOptions?.hostProcess === true, bad);
  return who.length ? { reason: 'hostProcess', detail: `${who.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true` } : undefined;
};

const hostNamespaces: CheckFn = (_m, spec) => {
  const set = (['hostNetwork', 'hostPID', 'hostIPC'] as const).filter((k) => spec[k] === true);
  return set.length ? { reason: 'host namespaces', detail: set.map((k) => `${k}=true`).join(', ') } : undefined;
};

const privileged: CheckFn = (_m, spec) => {
  const bad = containers(spec).filter((c) => c.securityContext?.privileged === true).map((c) => c.name);
  return bad.length ? { reason: 'privileged', detail: `${which(bad)} must not set securityContext.privileged=true` } : undefined;
};

const BASELINE_CAPABILITIES = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);

const capabilitiesBaseline: CheckFn = (_m, spec) => {
  const bad = containers(spec).filter((c) => (c.securityContext?.capabilities?.add ?? []).some((cap) => !BASELINE_CAPABILITIES.has(cap)));
  if (bad.length === 0) return undefined;
  const caps = sortedSet(bad.flatMap((c) => (c.securityContext?.capabilities?.add ?? []).filter((cap) => !BASELINE_CAPABILITIES.has(cap))));
  return { reason: 'non-default capabilities', detail: `${which(bad.map((c) => c.name))} must not include ${joinQuote(caps)} in securityContext.capabilities.add` };
};

const hostPathVolumes: CheckFn = (_m, spec) => {
  const bad = (spec.volumes ?? []).filter((v) => v.hostPath !== undefined && v.hostPath !== null).map((v) => v.name);
  return bad.length ? { reason: 'hostPath volumes', detail: `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)}` } : undefined;
};

const hostPorts: CheckFn = (_m, spec) => {
  const bad = containers(spec).filter((c) => (c.ports ?? []).some((p) => (p.hostPort ?? 0) !== 0));
  if (bad.length === 0) return undefined;
  const ports = sortedSet(bad.flatMap((c) => (c.ports ?? []).filter((p) => (p.hostPort ?? 0) !== 0).map((p) => String(p.hostPort))));
  return { reason: 'hostPort', detail: `${which(bad.map((c) => c.name))} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', ports.length)} ${ports.join(', ')}` };
};

const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';

const appArmorProfile: CheckFn = (meta, spec) => {
  const allowedType = (t: string | undefined) => t === 'RuntimeDefault' || t === 'Localhost';
  const badValues = new Set<string>();
  const podType = spec.securityContext?.appArmorProfile ? spec.securityContext.appArmorProfile.type : undefined;
  const podBad = !!spec.securityContext?.appArmorProfile && !allowedType(podType);
  if (podBad) badValues.add(podType ?? '');
  const bad = containers(spec).filter((c) => !!c.securityContext?.appArmorProfile && !allowedType(c.securityContext.appArmorProfile.type));
  for (const c of bad) badValues.add(c.securityContext!.appArmorProfile!.type ?? '');
  const who = setters(podBad, bad.map((c) => c.name));
  const annotations = Object.entries(meta.annotations ?? {})
    .filter(([k, v]) => k.startsWith(APPARMOR_ANNOTATION_PREFIX) && !(v === '' || v === 'runtime/default' || v.startsWith('localhost/')))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .sort();
  const values = [...[...badValues].sort(), ...annotations];
  if (annotations.length) who.push(pluralize('annotation', 'annotations', annotations.length));
  if (who.length === 0) return undefined;
  return { reason: pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', values.length), detail: `${who.join(' and ')} must not set AppArmor profile type to ${joinQuote(values)}` };
};

function seLinuxOptions(allowedTypes: ReadonlySet<string>): CheckFn {
  return (_m, spec) => {
    const badTypes = new Set<string>();
    let setUser = false;
    let setRole = false;
    const valid = (o: NonNullable<SecurityContext['seLinuxOptions']>) => {
      let ok = true;
      if (!allowedTypes.has(o.type ?? '')) {
        ok = false;
        badTypes.add(o.type ?? '');
      }
      if (o.user) {
        ok = false;
        setUser = true;
      }
      if (o.role) {
        ok = false;
        setRole = true;
      }
      return ok;
    };
    const podBad = !!spec.securityContext?.seLinuxOptions && !valid(spec.securityContext.seLinuxOptions);
    const bad = containers(spec).filter((c) => !!c.securityContext?.seLinuxOptions && !valid(c.securityContext.seLinuxOptions)).map((c) => c.name);
    const who = setters(podBad, bad);
    if (who.length === 0) return undefined;
    const data: string[] = [];
    if (badTypes.size) data.push(`${pluralize('type', 'types', badTypes.size)} ${joinQuote(sortedSet(badTypes))}`);
    if (setUser) data.push('user may not be set');
    if (setRole) data.push('role may not be set');
    return { reason: 'seLinuxOptions', detail: `${who.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}` };
  };
}

const SELINUX_TYPES_1_0 = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);
const SELINUX_TYPES_1_31 = new Set([...SELINUX_TYPES_1_0, 'container_engine_t']);

const procMount: CheckFn = (_m, spec) => {
  const bad = containers(spec).filter((c) => c.securityContext?.procMount !== undefined && c.securityContext.procMount !== 'Default');
  if (bad.length === 0) return undefined;
  const values = sortedSet(bad.map((c) => c.securityContext!.procMount!));
  return { reason: 'procMount', detail: `${which(bad.map((c) => c.name))} must not set securityContext.procMount to ${joinQuote(values)}` };
};

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';

/** Before 1.19 seccomp was set by annotation. */
const seccompProfileBaseline_1_0: CheckFn = (meta, spec) => {
  const ok = (v: string) => v === '' || v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');
  const forbidden = new Set<string>();
  const podValue = meta.annotations?.[SECCOMP_POD_ANNOTATION];
  if (podValue !== undefined && !ok(podValue)) forbidden.add(`${SECCOMP_POD_ANNOTATION}=${JSON.stringify(podValue)}`);
  for (const c of containers(spec)) {
    const key = `${SECCOMP_CONTAINER_ANNOTATION_PREFIX}${c.name}`;
    const v = meta.annotations?.[key];
    if (v !== undefined && !ok(v)) forbidden.add(`${key}=${JSON.stringify(v)}`);
  }
  return forbidden.size ? { reason: 'seccompProfile', detail: `forbidden ${pluralize('annotation', 'annotations', forbidden.size)} ${sortedSet(forbidden).join(', ')}` } : undefined;
};

const validSeccomp = (t: string | undefined) => t === 'RuntimeDefault' || t === 'Localhost';

/** Explicitly set seccomp profiles that are not RuntimeDefault or Localhost. */
function badSeccompSetters(spec: CheckedPodSpec): { who: string[]; values: string[] } {
  const values = new Set<string>();
  const podProfile = spec.securityContext?.seccompProfile;
  const podBad = !!podProfile && !validSeccomp(podProfile.type);
  if (podBad) values.add(podProfile!.type ?? '');
  const bad = containers(spec).filter((c) => !!c.securityContext?.seccompProfile && !validSeccomp(c.securityContext.seccompProfile.type));
  for (const c of bad) values.add(c.securityContext!.seccompProfile!.type ?? '');
  return { who: setters(podBad, bad.map((c) => c.name)), values: sortedSet(values) };
}

const seccompProfileBaseline_1_19: CheckFn = (_m, spec) => {
  const { who, values } = badSeccompSetters(spec);
  return who.length ? { reason: 'seccompProfile', detail: `${who.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(values)}` } : undefined;
};

function sysctls(allowed: ReadonlySet<string>): CheckFn {
  return (_m, spec) => {
    const bad = (spec.securityContext?.sysctls ?? []).map((s) => s.name).filter((n) => !allowed.has(n));
    return bad.length ? { reason: 'forbidden sysctls', detail: bad.join(', ') } : undefined;
  };
}

const SYSCTLS_1_0 = new Set(['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start']);
const SYSCTLS_1_27 = new Set([...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports']);
const SYSCTLS_1_29 = new Set([...SYSCTLS_1_27, 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes']);
const SYSCTLS_1_32 = new Set([...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem']);

// --- restricted -------------------------------------------------------------------------------

const RESTRICTED_VOLUME_SOURCES = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'image', 'persistentVolumeClaim', 'projected', 'secret']);

const restrictedVolumes: CheckFn = (_m, spec) => {
  const badTypes = new Set<string>();
  const bad: string[] = [];
  for (const v of spec.volumes ?? []) {
    const sources = Object.entries(v).filter(([k, source]) => k !== 'name' && source !== undefined && source !== null).map(([k]) => k);
    if (sources.some((s) => RESTRICTED_VOLUME_SOURCES.has(s))) continue;
    bad.push(v.name);
    if (sources.length === 0) badTypes.add('unknown');
    for (const s of sources) badTypes.add(s);
  }
  if (bad.length === 0) return undefined;
  return { reason: 'restricted volume types', detail: `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('restricted volume type', 'restricted volume types', badTypes.size)} ${joinQuote(sortedSet(badTypes))}` };
};

const runAsNonRoot: CheckFn = (_m, spec) => {
  const podValue = spec.securityContext?.runAsNonRoot;
  const explicitlyBad = containers(spec).filter((c) => c.securityContext?.runAsNonRoot === false).map((c) => c.name);
  const implicitlyBad = podValue === true ? [] : containers(spec).filter((c) => c.securityContext?.runAsNonRoot === undefined || c.securityContext?.runAsNonRoot === null).map((c) => c.name);
  const who = setters(podValue === false, explicitlyBad);
  if (who.length) return { reason: 'runAsNonRoot != true', detail: `${who.join(' and ')} must not set securityContext.runAsNonRoot=false` };
  if (implicitlyBad.length) return { reason: 'runAsNonRoot != true', detail: `pod or ${which(implicitlyBad)} must set securityContext.runAsNonRoot=true` };
  return undefined;
};

const runAsUser: CheckFn = (_m, spec) => {
  const bad = containers(spec).filter((c) => c.securityContext?.runAsUser === 0).map((c) => c.name);
  const who = setters(spec.securityContext?.runAsUser === 0, bad);
  return who.length ? { reason: 'runAsUser=0', detail: `${who.join(' and ')} must not set runAsUser=0` } : undefined;
};

const allowPrivilegeEscalation_1_8: CheckFn = (_m, spec) => {
  const bad = containers(spec).filter((c) => c.securityContext?.allowPrivilegeEscalation !== false).map((c) => c.name);
  return bad.length ? { reason: 'allowPrivilegeEscalation != false', detail: `${which(bad)} must set securityContext.allowPrivilegeEscalation=false` } : undefined;
};

const seccompProfileRestricted_1_19: CheckFn = (_m, spec) => {
  const { who, values } = badSeccompSetters(spec);
  if (who.length) return { reason: 'seccompProfile', detail: `${who.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(values)}` };
  const podSet = validSeccomp(spec.securityContext?.seccompProfile?.type);
  const implicitlyBad = podSet ? [] : containers(spec).filter((c) => !c.securityContext?.seccompProfile).map((c) => c.name);
  if (implicitlyBad.length) return { reason: 'seccompProfile', detail: `pod or ${which(implicitlyBad)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"` };
  return undefined;
};

const capabilitiesRestricted_1_22: CheckFn = (_m, spec) => {
  const noDropAll = containers(spec).filter((c) => !(c.securityContext?.capabilities?.drop ?? []).includes('ALL')).map((c) => c.name);
  const badAdd = containers(spec).filter((c) => (c.securityContext?.capabilities?.add ?? []).some((cap) => cap !== 'NET_BIND_SERVICE'));
  const parts: string[] = [];
  if (noDropAll.length) parts.push(`${which(noDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  if (badAdd.length) {
    const caps = sortedSet(badAdd.flatMap((c) => (c.securityContext?.capabilities?.add ?? []).filter((cap) => cap !== 'NET_BIND_SERVICE')));
    parts.push(`${which(badAdd.map((c) => c.name))} must not include ${joinQuote(caps)} in securityContext.capabilities.add`);
  }
  return parts.length ? { reason: 'unrestricted capabilities', detail: parts.join('; ') } : undefined;
};

/** From 1.25 Windows pods are not subject to Linux-only restrictions. */
const notOnWindows =
  (check: CheckFn): CheckFn =>
  (meta, spec) =>
    isWindows(spec) ? undefined : check(meta, spec);

/** Every check with its versions (upstream policy.DefaultChecks), sorted by ID as upstream evaluates them. */
const CHECKS: readonly Check[] = (
  [
    { id: 'allowPrivilegeEscalation', level: 'restricted', versions: [{ since: 8, check: allowPrivilegeEscalation_1_8 }, { since: 25, check: notOnWindows(allowPrivilegeEscalation_1_8) }] },
    { id: 'appArmorProfile', level: 'baseline', versions: [{ since: 0, check: appArmorProfile }] },
    { id: 'capabilities_baseline', level: 'baseline', versions: [{ since: 0, check: capabilitiesBaseline }] },
    {
      id: 'capabilities_restricted',
      level: 'restricted',
      versions: [
        { since: 22, check: capabilitiesRestricted_1_22, overrides: ['capabilities_baseline'] },
        { since: 25, check: notOnWindows(capabilitiesRestricted_1_22), overrides: ['capabilities_baseline'] },
      ],
    },
    { id: 'hostNamespaces', level: 'baseline', versions: [{ since: 0, check: hostNamespaces }] },
    { id: 'hostPathVolumes', level: 'baseline', versions: [{ since: 0, check: hostPathVolumes }] },
    { id: 'hostPorts', level: 'baseline', versions: [{ since: 0, check: hostPorts }] },
    { id: 'privileged', level: 'baseline', versions: [{ since: 0, check: privileged }] },
    { id: 'procMount', level: 'baseline', versions: [{ since: 0, check: procMount }] },
    { id: 'restrictedVolumes', level: 'restricted', versions: [{ since: 0, check: restrictedVolumes, overrides: ['hostPathVolumes'] }] },
    { id: 'runAsNonRoot', level: 'restricted', versions: [{ since: 0, check: runAsNonRoot }] },
    { id: 'runAsUser', level: 'restricted', versions: [{ since: 23, check: runAsUser }] },
    { id: 'seLinuxOptions', level: 'baseline', versions: [{ since: 0, check: seLinuxOptions(SELINUX_TYPES_1_0) }, { since: 31, check: seLinuxOptions(SELINUX_TYPES_1_31) }] },
    { id: 'seccompProfile_baseline', level: 'baseline', versions: [{ since: 0, check: seccompProfileBaseline_1_0 }, { since: 19, check: seccompProfileBaseline_1_19 }] },
    {
      id: 'seccompProfile_restricted',
      level: 'restricted',
      versions: [
        { since: 19, check: seccompProfileRestricted_1_19, overrides: ['seccompProfile_baseline'] },
        { since: 25, check: notOnWindows(seccompProfileRestricted_1_19), overrides: ['seccompProfile_baseline'] },
      ],
    },
    { id: 'sysctls', level: 'baseline', versions: [{ since: 0, check: sysctls(SYSCTLS_1_0) }, { since: 27, check: sysctls(SYSCTLS_1_27) }, { since: 29, check: sysctls(SYSCTLS_1_29) }, { since: 32, check: sysctls(SYSCTLS_1_32) }] },
    { id: 'windowsHostProcess', level: 'baseline', versions: [{ since: 0, check: windowsHostProcess }] },
  ] satisfies Check[]
).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

const byLevelVersion = new Map<string, readonly CheckFn[]>();

/** The check implementations of a level at a minor version (computed once per pair). */
function checksFor(level: 'baseline' | 'restricted', minor: number): readonly CheckFn[] {
  const key = `${level}:${minor}`;
  let fns = byLevelVersion.get(key);
  if (fns) return fns;
  const inEffect = (c: Check) => [...c.versions].reverse().find((v) => v.since <= minor);
  const active = CHECKS.filter((c) => (c.level === 'baseline' || level === 'restricted') && inEffect(c));
  const overridden = new Set(active.filter((c) => c.level === 'restricted').flatMap((c) => inEffect(c)!.overrides ?? []));
  // Baseline checks first, then restricted, each sorted by ID (upstream registry populate).
  const kept = active.filter((c) => !(level === 'restricted' && overridden.has(c.id)));
  fns = [...kept.filter((c) => c.level === 'baseline'), ...kept.filter((c) => c.level === 'restricted')].map((c) => inEffect(c)!.check);
  byLevelVersion.set(key, fns);
  return fns;
}

/** The minor version a policy version means: `latest` and versions past the newest known are the newest. */
export function minorOf(version: string): number {
  const m = /^v1\.(\d+)$/.exec(version);
  return m ? Math.min(Number(m[1]), LATEST_MINOR) : LATEST_MINOR;
}

/** Every violation of `level` at `version` (`latest` or `v1.x`) by a pod; privileged has none. */
export function evaluatePod(level: Level, meta: CheckedPodMeta, spec: CheckedPodSpec, version = 'latest'): Violation[] {
  if (level === 'privileged') return [];
  const out: Violation[] = [];
  for (const check of checksFor(level, minorOf(version))) {
    const v = check(meta, spec);
    if (v) out.push(v);
  }
  return out;
}

/** upstream's aggregate reason: `reason (detail), reason (detail)`. */
export function forbiddenReason(violations: readonly Violation[]): string {
  return violations.map((v) => `${v.reason} (${v.detail})`).join(', ');
}

/** upstream's message: `PodSecurity "restricted:latest": reason (detail), reason (detail)` (after "violates" / "would violate"). */
export function violationText(policy: string, violations: readonly Violation[]): string {
  return `PodSecurity ${JSON.stringify(policy)}: ${forbiddenReason(violations)}`;
}
