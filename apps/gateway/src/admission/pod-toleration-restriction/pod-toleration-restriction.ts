import { Injectable } from '@nestjs/common';
import { AdmissionPluginProvider, handling, admissionDenied, type AdmissionAttributes, type AdmissionPlugin } from '../../pipeline/admit';
import { StateAdmissionPlugin } from '../admission-state';
import type { AdmittedPod, Toleration } from '../api';
import { annotation, brandSpellings, findNamespace } from '../namespace-annotations';

export const POD_TOLERATION_RESTRICTION = 'PodTolerationRestriction';
/** SPEC well-known namespace annotations (orch and upstream spellings). */
export const DEFAULT_TOLERATIONS_KEYS = brandSpellings('scheduler.alpha.orch.io/defaultTolerations');
export const TOLERATIONS_WHITELIST_KEYS = brandSpellings('scheduler.alpha.orch.io/tolerationsWhitelist');
export const REASON_WHITELIST = 'pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist';

function same(a: Toleration, b: Toleration): boolean {
  return (a.key ?? '') === (b.key ?? '') && (a.operator ?? 'Equal') === (b.operator ?? 'Equal') && (a.value ?? '') === (b.value ?? '') && (a.effect ?? '') === (b.effect ?? '') && a.tolerationSeconds === b.tolerationSeconds;
}

/** Whether `t` is at least as narrow as `w` (upstream Toleration.MatchToleration with wildcards). */
function allowedBy(t: Toleration, w: Toleration): boolean {
  if ((w.key ?? '') !== '' && (w.key ?? '') !== (t.key ?? '')) return false;
  if ((w.effect ?? '') !== '' && (w.effect ?? '') !== (t.effect ?? '')) return false;
  if ((w.operator ?? 'Equal') === 'Equal' && (w.key ?? '') !== '' && ((t.operator ?? 'Equal') !== 'Equal' || (w.value ?? '') !== (t.value ?? ''))) return false;
  return true;
}

/** The pod's tolerations with the namespace defaults added (a default the pod has for the same key and effect is skipped). */
export function mergeTolerations(pod: readonly Toleration[], defaults: readonly Toleration[]): Toleration[] {
  const out = [...pod];
  for (const d of defaults) if (!out.some((t) => same(t, d) || ((t.key ?? '') === (d.key ?? '') && (t.effect ?? '') === (d.effect ?? '')))) out.push(d);
  return out;
}

/** Whether every toleration is allowed by the whitelist (an empty whitelist allows none; no whitelist allows all). */
export function withinWhitelist(tolerations: readonly Toleration[], whitelist: readonly Toleration[] | undefined): boolean {
  if (!whitelist) return true;
  return tolerations.every((t) => whitelist.some((w) => allowedBy(t, w)));
}

function parseTolerations(text: string | undefined): Toleration[] | undefined {
  if (text === undefined) return undefined;
  const v = JSON.parse(text) as unknown;
  if (!Array.isArray(v)) throw new Error('tolerations annotation must be a JSON list');
  return v as Toleration[];
}

/**
 * PodTolerationRestriction (upstream plugin of the same name): pods created in a namespace get
 * its scheduler.alpha.orch.io/defaultTolerations, and every pod toleration (on create and
 * update) must be allowed by its scheduler.alpha.orch.io/tolerationsWhitelist when one is set.
 */
@AdmissionPluginProvider()
@Injectable()
export class PodTolerationRestriction extends StateAdmissionPlugin implements AdmissionPlugin {
  readonly name = POD_TOLERATION_RESTRICTION;

  readonly handles = handling({ CREATE: ['pods'], UPDATE: ['pods'] });

  async mutate(a: AdmissionAttributes): Promise<void> {
    const pod = a.object as AdmittedPod | undefined;
    if (!pod || a.operation !== 'CREATE') return;
    const defaults = this.parse(a, annotation(await findNamespace(this.state, a.namespace), DEFAULT_TOLERATIONS_KEYS));
    if (defaults?.length) pod.spec = { ...(pod.spec ?? {}), tolerations: mergeTolerations(pod.spec?.tolerations ?? [], defaults) };
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const pod = a.object as AdmittedPod | undefined;
    if (!pod) return;
    const whitelist = this.parse(a, annotation(await findNamespace(this.state, a.namespace), TOLERATIONS_WHITELIST_KEYS));
    if (!withinWhitelist(pod.spec?.tolerations ?? [], whitelist)) throw admissionDenied(a, REASON_WHITELIST);
  }

  private parse(a: AdmissionAttributes, text: string | undefined): Toleration[] | undefined {
    try {
      return parseTolerations(text);
    } catch (e) {
      throw admissionDenied(a, `invalid tolerations annotation on namespace ${a.namespace}: ${(e as Error).message}`);
    }
  }
}
