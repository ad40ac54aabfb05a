import { Injectable } from '@nestjs/common';
import type { KubeObject } from '@orch/apimachinery';
import { AdmissionPluginProvider, admissionDenied, type AdmissionAttributes, type AdmissionPlugin, type AdmissionResource, type AdmissionResponse } from '../../pipeline/admit';
import { AdmissionConfigError, isObj } from '../admission-config';
import { StateAdmissionPlugin } from '../admission-state';
import type { Served } from '../../registry/strategy';
import { findNamespace } from '../namespace-annotations';
import { evaluatePod, forbiddenReason, violationText, type Level, type CheckedPodMeta, type CheckedPodSpec } from './checks';

export const POD_SECURITY = 'PodSecurity';

/** The three modes, each with its level and version labels in both spellings (SPEC well-known labels). */
const MODES = ['enforce', 'audit', 'warn'] as const;
type Mode = (typeof MODES)[number];
const PREFIXES = ['pod-security.orch.io/', 'pod-security.kubernetes.io/'];
const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];
const VERSION_RE = /^(latest|v1\.(0|[1-9][0-9]*))$/;

/** Audit annotation keys (upstream's). */
export const AUDIT_VIOLATIONS = 'pod-security.kubernetes.io/audit-violations';
export const AUDIT_EXEMPT = 'pod-security.kubernetes.io/exempt';
/** The enforce policy a pod was admitted under (upstream EnforcedPolicyAnnotationKey). */
export const AUDIT_ENFORCE_POLICY = 'pod-security.kubernetes.io/enforce-policy';

/** apiVersions of a PodSecurityConfiguration (upstream v1, v1beta1, v1alpha1 and the orch spelling). */
export const POD_SECURITY_CONFIG_VERSIONS = ['pod-security.admission.config.orch.io/v1', 'pod-security.admission.config.k8s.io/v1', 'pod-security.admission.config.k8s.io/v1beta1', 'pod-security.admission.config.k8s.io/v1alpha1'];

/** A level and the version of the standards it is checked at (`latest` or `v1.x`). */
export interface Policy {
  level: Level;
  version: string;
}

export type Policies = Record<Mode, Policy>;

/** What --admission-control-config-file says for PodSecurity (upstream PodSecurityConfiguration). */
export interface PodSecurityConfig {
  /** The policy of a namespace without labels (privileged:latest for every mode by default). */
  defaults: Policies;
  exemptions: { usernames: string[]; runtimeClasses: string[]; namespaces: string[] };
}

const PRIVILEGED: Policy = { level: 'privileged', version: 'latest' };
export const DEFAULT_POD_SECURITY_CONFIG: PodSecurityConfig = { defaults: { enforce: PRIVILEGED, audit: PRIVILEGED, warn: PRIVILEGED }, exemptions: { usernames: [], runtimeClasses: [], namespaces: [] } };

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * The PodSecurity configuration from its configuration document (absent: the defaults),
 * validated as upstream: levels and versions of the defaults, exemptions that are namespace
 * names, RuntimeClass names and non-empty user names, without duplicates. Throws an
 * AdmissionConfigError naming every bad field.
 */
export function podSecurityConfiguration(doc: unknown, source = POD_SECURITY): PodSecurityConfig {
  if (doc === undefined) return DEFAULT_POD_SECURITY_CONFIG;
  if (!isObj(doc)) throw new AdmissionConfigError(source, ['the PodSecurity configuration must be an object']);
  const errs: string[] = [];
  if (!POD_SECURITY_CONFIG_VERSIONS.includes(String(doc.apiVersion))) errs.push(`apiVersion: Unsupported value: ${JSON.stringify(doc.apiVersion)}: supported values: ${POD_SECURITY_CONFIG_VERSIONS.map((v) => JSON.stringify(v)).join(', ')}`);
  if (doc.kind !== 'PodSecurityConfiguration') errs.push(`kind: Unsupported value: ${JSON.stringify(doc.kind)}: supported values: "PodSecurityConfiguration"`);
  const defaults = isObj(doc.defaults) ? doc.defaults : {};
  const policies = {} as Policies;
  for (const mode of MODES) {
    const level = defaults[mode] ?? 'privileged';
    const version = defaults[`${mode}-version`] ?? 'latest';
    if (!LEVELS.includes(level as Level)) errs.push(`defaults.${mode}: Invalid value: ${JSON.stringify(level)}: must be one of privileged, baseline, restricted`);
    if (typeof version !== 'string' || !VERSION_RE.test(version)) errs.push(`defaults.${mode}-version: Invalid value: ${JSON.stringify(version)}: must be "latest" or "v1.x"`);
    policies[mode] = { level: level as Level, version: String(version) };
  }
  const exemptions = isObj(doc.exemptions) ? doc.exemptions : {};
  const list = (field: 'usernames' | 'runtimeClasses' | 'namespaces', problem: (v: string) => string | undefined): string[] => {
    const raw = exemptions[field] ?? [];
    if (!Array.isArray(raw)) {
      errs.push(`exemptions.${field}: must be a list of strings`);
      return [];
    }
    const seen = new Set<string>();
    raw.forEach((v: unknown, i: number) => {
      const at = `exemptions.${field}[${i}]`;
      if (typeof v !== 'string') return void errs.push(`${at}: must be a string`);
      const p = problem(v);
      if (p) errs.push(`${at}: Invalid value: ${JSON.stringify(v)}: ${p}`);
      else if (seen.has(v)) errs.push(`${at}: Duplicate value: ${JSON.stringify(v)}`);
      seen.add(v);
    });
    return [...seen];
  };
  const out: PodSecurityConfig = {
    defaults: policies,
    exemptions: {
      usernames: list('usernames', (v) => (v === '' ? 'username must not be empty' : undefined)),
      runtimeClasses: list('runtimeClasses', (v) => (v.length <= 253 && DNS_SUBDOMAIN.test(v) ? undefined : 'must be a lowercase RFC 1123 subdomain')),
      namespaces: list('namespaces', (v) => (v.length <= 63 && DNS_LABEL.test(v) ? undefined : 'must be a lowercase RFC 1123 label')),
    },
  };
  if (errs.length) throw new AdmissionConfigError(source, errs);
  return out;
}

function label(labels: Record<string, string> | undefined, key: string): string | undefined {
  return PREFIXES.map((p) => labels?.[`${p}${key}`]).find((v) => v !== undefined);
}

/**
 * The policies of a namespace (upstream PolicyToEvaluate): each mode's labels, else the
 * configured defaults; an invalid level counts as restricted and an invalid version as latest.
 * A warn level not set follows an enforce level set more restrictive than it.
 */
export function policiesFor(labels: Record<string, string> | undefined, defaults: Policies = DEFAULT_POD_SECURITY_CONFIG.defaults): Policies {
  const out = { enforce: { ...defaults.enforce }, audit: { ...defaults.audit }, warn: { ...defaults.warn } };
  for (const mode of MODES) {
    const level = label(labels, mode);
    const version = label(labels, `${mode}-version`);
    if (level !== undefined) out[mode].level = LEVELS.includes(level as Level) ? (level as Level) : 'restricted';
    if (version !== undefined) out[mode].version = VERSION_RE.test(version) ? version : 'latest';
  }
  const enforceLevel = label(labels, 'enforce');
  if (label(labels, 'warn') === undefined && enforceLevel !== undefined && LEVELS.includes(enforceLevel as Level) && rank(out.enforce.level) > rank(out.warn.level)) {
    out.warn.level = out.enforce.level;
    if (label(labels, 'warn-version') === undefined) out.warn.version = out.enforce.version;
  }
  return out;
}

/** The policy of one mode of a namespace (see policiesFor). */
export function policyFor(labels: Record<string, string> | undefined, mode: Mode, defaults?: Policies): Policy {
  return policiesFor(labels, defaults)[mode];
}

const rank = (l: Level) => LEVELS.indexOf(l);
const text = (p: Policy) => `${p.level}:${p.version}`;
const samePolicy = (a: Policy, b: Policy) => a.level === b.level && a.version === b.version;
/** Two policies that check the same (privileged is privileged at any version). */
const equivalent = (a: Policies, b: Policies) => MODES.every((m) => (a[m].level === 'privileged' && b[m].level === 'privileged') || samePolicy(a[m], b[m]));
const fullyPrivileged = (p: Policies, modes: readonly Mode[] = MODES) => modes.every((m) => p[m].level === 'privileged');

/** Invalid pod-security labels on a namespace (upstream refuses them). */
export function invalidLabels(labels: Record<string, string> | undefined): string[] {
  const out: string[] = [];
  for (const p of PREFIXES) {
    for (const m of MODES) {
      const level = labels?.[`${p}${m}`];
      if (level !== undefined && !LEVELS.includes(level as Level)) out.push(`${p}${m}: Invalid value: ${JSON.stringify(level)}: must be one of privileged, baseline, restricted`);
      const version = labels?.[`${p}${m}-version`];
      if (version !== undefined && !VERSION_RE.test(version)) out.push(`${p}${m}-version: Invalid value: ${JSON.stringify(version)}: must be "latest" or "v1.x"`);
    }
  }
  return out;
}

/** At most this many of a namespace's pods are checked against a new enforce level (upstream). */
export const NAMESPACE_MAX_PODS_TO_CHECK = 3000;

/** A pod as the checks read it (templates and test pods may leave out what a stored pod has). */
type CheckedPod = Served<{ spec?: CheckedPodSpec }>;

/**
 * The warnings a namespace's new enforce level gives about its existing pods (upstream
 * EvaluatePodsInNamespace): one line per distinct violation, led by the first pod's name (and
 * how many others share it), after a summary line; pods of a controller already seen are
 * checked last when there are more pods than can be checked.
 */
export function existingPodWarnings(namespace: string, enforce: Policy, pods: readonly CheckedPod[], exemptRuntimeClasses: readonly string[] = [], maxPods = NAMESPACE_MAX_PODS_TO_CHECK): string[] {
  const first: CheckedPod[] = [];
  const later: CheckedPod[] = [];
  const controllers = new Set<string>();
  for (const pod of pods) {
    const owner = pod.metadata.ownerReferences?.find((o) => o.controller);
    if (!owner || !controllers.has(owner.uid)) {
      if (owner) controllers.add(owner.uid);
      first.push(pod);
    } else later.push(pod);
  }
  const checked = [...first, ...later].slice(0, maxPods);
  const byWarning = new Map<string, { pod: string; count: number }>();
  for (const pod of checked) {
    if (pod.spec?.runtimeClassName && exemptRuntimeClasses.includes(pod.spec.runtimeClassName)) continue;
    const violations = evaluatePod(enforce.level, pod.metadata as CheckedPodMeta, pod.spec ?? {}, enforce.version);
    if (violations.length === 0) continue;
    const warning = forbiddenReason(violations);
    const name = pod.metadata.name ?? '';
    const seen = byWarning.get(warning);
    if (!seen) byWarning.set(warning, { pod: name, count: 1 });
    else {
      seen.count++;
      if (name < seen.pod) seen.pod = name;
    }
  }
  const out: string[] = [];
  if (checked.length < pods.length) out.push(`new PodSecurity enforce level only checked against the first ${checked.length} of ${pods.length} existing pods`);
  if (byWarning.size) out.push(`existing pods in namespace ${JSON.stringify(namespace)} violate the new PodSecurity enforce level ${JSON.stringify(text(enforce))}`);
  const lines = [...byWarning].map(([w, { pod, count }]) => (count === 1 ? `${pod}: ${w}` : count === 2 ? `${pod} (and 1 other pod): ${w}` : `${pod} (and ${count - 1} other pods): ${w}`));
  return [...out, ...lines.sort()];
}

/** Workload kinds whose pod template is checked (warn and audit only, as upstream). */
const TEMPLATE_PATHS: Readonly<Record<string, readonly string[]>> = {
  '/podtemplates': ['template'],
  '/replicationcontrollers': ['spec', 'template'],
  'apps/deployments': ['spec', 'template'],
  'apps/replicasets': ['spec', 'template'],
  'apps/statefulsets': ['spec', 'template'],
  'apps/daemonsets': ['spec', 'template'],
  'batch/jobs': ['spec', 'template'],
  'batch/cronjobs': ['spec', 'jobTemplate', 'spec', 'template'],
};

function podTemplate(r: AdmissionResource, obj: KubeObject): { metadata?: CheckedPodMeta; spec?: CheckedPodSpec } | undefined {
  const path = TEMPLATE_PATHS[`${r.group}/${r.resource}`];
  let cur: unknown = obj;
  for (const k of path ?? []) cur = (cur as Record<string, unknown> | undefined)?.[k];
  return path ? (cur as { metadata?: CheckedPodMeta; spec?: CheckedPodSpec } | undefined) : undefined;
}

/**
 * PodSecurity (upstream plugin of the same name): the namespace labels
 * pod-security.orch.io/{enforce,audit,warn} (and the pod-security.kubernetes.io spellings)
 * pick a Pod Security Standard level — privileged, baseline or restricted — and the version of
 * the standard (`-version` labels); namespaces without labels get the configured defaults. A
 * pod that violates the enforce level is refused; violations of the warn level come back as
 * Warning headers and of the audit level as an audit annotation; workload templates
 * (Deployment, Job, ...) are checked for warn and audit. Exempt namespaces, users and
 * RuntimeClasses (configuration) are not checked. Invalid labels on a namespace are refused;
 * a namespace whose enforce level becomes stricter gets warnings naming the existing pods that
 * would violate it.
 */
@AdmissionPluginProvider()
@Injectable()
export class PodSecurity extends StateAdmissionPlugin implements AdmissionPlugin {
  readonly name = POD_SECURITY;
  private readonly config = this.state.pluginConfigurationOf(POD_SECURITY, podSecurityConfiguration);

  readonly handlesFixed = true;

  handles(operation: string, r: AdmissionResource, sub: string): boolean {
    if (r.group === '' && r.resource === 'namespaces') return (operation === 'CREATE' || operation === 'UPDATE') && sub === '';
    if (r.group === '' && r.resource === 'pods') return (operation === 'CREATE' && sub === '') || (operation === 'UPDATE' && sub === 'ephemeralcontainers');
    return (operation === 'CREATE' || operation === 'UPDATE') && sub === '' && TEMPLATE_PATHS[`${r.group}/${r.resource}`] !== undefined;
  }

  async validate(a: AdmissionAttributes): Promise<AdmissionResponse | void> {
    if (!a.object) return;
    if (a.resource.resource === 'namespaces' && a.resource.group === '') return this.validateNamespace(a, a.object);
    const ex = this.config.exemptions;
    if (a.namespace && ex.namespaces.includes(a.namespace)) return { auditAnnotations: { [AUDIT_EXEMPT]: 'namespace' } };
    if (a.userInfo.username && ex.usernames.includes(a.userInfo.username)) return { auditAnnotations: { [AUDIT_EXEMPT]: 'user' } };
    const isPod = a.resource.group === '' && a.resource.resource === 'pods';
    const policies = policiesFor((await findNamespace(this.state, a.namespace))?.metadata.labels, this.config.defaults);
    if (fullyPrivileged(policies, isPod ? MODES : ['audit', 'warn'])) return isPod ? { auditAnnotations: { [AUDIT_ENFORCE_POLICY]: 'privileged:latest' } } : undefined;
    const pod = isPod ? { metadata: a.object.metadata as CheckedPodMeta, spec: (a.object as CheckedPod).spec } : podTemplate(a.resource, a.object);
    if (!pod?.spec) return;
    if (pod.spec.runtimeClassName && ex.runtimeClasses.includes(pod.spec.runtimeClassName)) return { auditAnnotations: { [AUDIT_EXEMPT]: 'runtimeClass' } };
    const results = new Map<string, string | undefined>();
    const judge = (mode: Mode) => {
      const p = policies[mode];
      const key = text(p);
      if (!results.has(key)) {
        const v = evaluatePod(p.level, pod.metadata ?? {}, pod.spec!, p.version);
        results.set(key, v.length ? violationText(key, v) : undefined);
      }
      return results.get(key);
    };
    if (isPod) {
      const enforced = judge('enforce');
      if (enforced) throw admissionDenied(a, `violates ${enforced}`);
    }
    const warned = judge('warn');
    const audited = judge('audit');
    const res: AdmissionResponse = {};
    if (warned) res.warnings = [`would violate ${warned}`];
    if (isPod) res.auditAnnotations = { [AUDIT_ENFORCE_POLICY]: text(policies.enforce) };
    if (audited) res.auditAnnotations = { ...res.auditAnnotations, [AUDIT_VIOLATIONS]: `would violate ${audited}` };
    return res;
  }

  /**
   * Namespace labels: invalid ones are refused (on update only when they changed); a stricter
   * enforce level warns about the existing pods that violate it; an exempt namespace given a
   * policy is told it is ignored.
   */
  private validateNamespace(a: AdmissionAttributes, ns: KubeObject): AdmissionResponse | void {
    const labels = ns.metadata.labels;
    const bad = invalidLabels(labels);
    const name = ns.metadata.name ?? a.name;
    const exempt = this.config.exemptions.namespaces.includes(name);
    const next = policiesFor(labels, this.config.defaults);
    if (a.operation === 'CREATE' || !a.oldObject) {
      if (bad.length) throw admissionDenied(a, bad.join(', '));
      return exempt ? this.exemptWarning(name, next, labels) : undefined;
    }
    const oldLabels = a.oldObject.metadata.labels;
    const oldBad = invalidLabels(oldLabels);
    if (bad.length && (oldBad.length === 0 || JSON.stringify(bad) !== JSON.stringify(oldBad))) throw admissionDenied(a, bad.join(', '));
    const before = policiesFor(oldLabels, this.config.defaults);
    if (samePolicy(next.enforce, before.enforce) || next.enforce.level === 'privileged') return;
    if (next.enforce.version === before.enforce.version && rank(next.enforce.level) <= rank(before.enforce.level)) return;
    if (exempt) return this.exemptWarning(name, next, labels);
    const pods = this.state.cache<CheckedPod>('', 'pods').list(name);
    return { warnings: existingPodWarnings(name, next.enforce, pods, this.config.exemptions.runtimeClasses) };
  }

  /** upstream exemptNamespaceWarning: the policy the labels set is not applied. */
  private exemptWarning(name: string, p: Policies, labels: Record<string, string> | undefined): AdmissionResponse | void {
    if (fullyPrivileged(p) || equivalent(p, this.config.defaults)) return;
    const set = MODES.filter((m) => p[m].level !== 'privileged' && (label(labels, m) !== undefined || label(labels, `${m}-version`) !== undefined));
    return { warnings: [`namespace ${JSON.stringify(name)} is exempt from Pod Security, and the policy (${set.map((m) => `${m}=${text(p[m])}`).join(', ')}) will be ignored`] };
  }
}
