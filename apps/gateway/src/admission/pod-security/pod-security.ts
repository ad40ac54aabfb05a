import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@orch/apimachinery';
import { AdmissionPluginProvider, admissionDenied, type AdmissionAttributes, type AdmissionPlugin, type AdmissionResource, type AdmissionResponse } from '../../pipeline/admit';
import { AdmissionState } from '../admission-state';
import { findNamespace } from '../namespace-annotations';
import { evaluatePod, violationText, type Level, type PodMetaLike, type PodSpecLike } from './checks';

export const POD_SECURITY = 'PodSecurity';

/** The three modes, each with its level and version labels in both spellings (SPEC well-known labels). */
const MODES = ['enforce', 'audit', 'warn'] as const;
type Mode = (typeof MODES)[number];
const PREFIXES = ['pod-security.orch.io/', 'pod-security.kubernetes.io/'];
const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];
const VERSION_RE = /^(latest|v1\.(0|[1-9][0-9]*))$/;

/** Audit annotation key (upstream's). */
export const AUDIT_VIOLATIONS = 'pod-security.kubernetes.io/audit-violations';

export interface Policy {
  level: Level;
  version: string;
}

/** The policy of one mode from a namespace's labels (absent: privileged; an invalid level: restricted, as upstream). */
export function policyFor(labels: Record<string, string> | undefined, mode: Mode): Policy {
  const read = (suffix: string) => PREFIXES.map((p) => labels?.[`${p}${suffix}`]).find((v) => v !== undefined);
  const level = read(mode);
  const version = read(`${mode}-version`);
  return {
    level: level === undefined ? 'privileged' : LEVELS.includes(level as Level) ? (level as Level) : 'restricted',
    version: version !== undefined && VERSION_RE.test(version) ? version : 'latest',
  };
}

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

function podTemplate(r: AdmissionResource, obj: KubeObject): { metadata?: PodMetaLike; spec?: PodSpecLike } | undefined {
  const path = TEMPLATE_PATHS[`${r.group}/${r.resource}`];
  let cur: unknown = obj;
  for (const k of path ?? []) cur = (cur as Record<string, unknown> | undefined)?.[k];
  return path ? (cur as { metadata?: PodMetaLike; spec?: PodSpecLike } | undefined) : undefined;
}

/**
 * PodSecurity (upstream plugin of the same name): the namespace labels
 * pod-security.orch.io/{enforce,audit,warn} (and the pod-security.kubernetes.io spellings)
 * pick a Pod Security Standard level — privileged, baseline or restricted — and a version
 * (`-version` labels). A pod that violates the enforce level is refused; violations of the warn
 * level come back as Warning headers and of the audit level as an audit annotation. Workload
 * templates (Deployment, Job, ...) are checked for warn and audit. Invalid labels on a
 * namespace are refused. Every version runs the checks of the latest standard.
 */
@AdmissionPluginProvider()
@Injectable()
export class PodSecurity implements AdmissionPlugin {
  readonly name = POD_SECURITY;

  constructor(@Inject(AdmissionState) private readonly state: AdmissionState) {}

  handles(operation: string, r: AdmissionResource, sub: string): boolean {
    if (r.group === '' && r.resource === 'namespaces') return (operation === 'CREATE' || operation === 'UPDATE') && sub === '';
    if (r.group === '' && r.resource === 'pods') return (operation === 'CREATE' && sub === '') || (operation === 'UPDATE' && sub === 'ephemeralcontainers');
    return (operation === 'CREATE' || operation === 'UPDATE') && sub === '' && TEMPLATE_PATHS[`${r.group}/${r.resource}`] !== undefined;
  }

  async validate(a: AdmissionAttributes): Promise<AdmissionResponse | void> {
    if (!a.object) return;
    if (a.resource.resource === 'namespaces' && a.resource.group === '') {
      const bad = invalidLabels(a.object.metadata.labels);
      if (bad.length) throw admissionDenied(a, bad.join(', '));
      return;
    }
    const labels = (await findNamespace(this.state, a.namespace))?.metadata.labels;
    const isPod = a.resource.group === '' && a.resource.resource === 'pods';
    const pod = isPod ? { metadata: a.object.metadata as PodMetaLike, spec: (a.object as { spec?: PodSpecLike }).spec } : podTemplate(a.resource, a.object);
    if (!pod?.spec) return;
    const judge = (mode: Mode) => {
      const p = policyFor(labels, mode);
      const v = evaluatePod(p.level, pod.metadata ?? {}, pod.spec!);
      return v.length ? violationText(`${p.level}:${p.version}`, v) : undefined;
    };
    if (isPod) {
      const enforced = judge('enforce');
      if (enforced) throw admissionDenied(a, `violates ${enforced}`);
    }
    const warned = judge('warn');
    const audited = judge('audit');
    const res: AdmissionResponse = {};
    if (warned) res.warnings = [`would violate ${warned}`];
    if (audited) res.auditAnnotations = { [AUDIT_VIOLATIONS]: `would violate ${audited}` };
    return res;
  }
}
