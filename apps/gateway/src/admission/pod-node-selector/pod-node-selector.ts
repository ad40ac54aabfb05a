import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@orch/apimachinery';
import { AdmissionPluginProvider, admissionDenied, type AdmissionAttributes, type AdmissionPlugin, type AdmissionResource } from '../../pipeline/admit';
import { AdmissionState } from '../admission-state';
import { annotation, brandSpellings, findNamespace, isPod } from '../namespace-annotations';

export const POD_NODE_SELECTOR = 'PodNodeSelector';
/** SPEC well-known namespace annotation (orch and upstream spellings). */
export const NODE_SELECTOR_KEYS = brandSpellings('scheduler.alpha.orch.io/node-selector');
export const REASON_CONFLICT = 'pod node label selector conflicts with its namespace node label selector';

interface PodLike extends KubeObject {
  spec?: { nodeSelector?: Record<string, string>; [k: string]: unknown };
}

/** `a=b,c=d` (the annotation's label-set form) as a map; throws on anything but equalities. */
export function parseNodeSelector(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (text.trim() === '') return out;
  for (const part of text.split(',')) {
    const m = /^\s*([^=!\s]+)\s*==?\s*([^=!\s]*)\s*$/.exec(part);
    if (!m) throw new Error(`invalid node selector ${JSON.stringify(text)}`);
    out[m[1]] = m[2];
  }
  return out;
}

/** The pod's node selector with the namespace's merged in; undefined when a key conflicts. */
export function mergeNodeSelector(pod: Record<string, string> | undefined, namespace: Record<string, string>): Record<string, string> | undefined {
  const merged = { ...(pod ?? {}) };
  for (const [k, v] of Object.entries(namespace)) {
    if (merged[k] !== undefined && merged[k] !== v) return undefined;
    merged[k] = v;
  }
  return merged;
}

/**
 * PodNodeSelector (upstream plugin of the same name): a namespace annotated with
 * scheduler.alpha.orch.io/node-selector puts its node selector on every pod created in it; a
 * pod whose own selector conflicts with it is refused.
 */
@AdmissionPluginProvider()
@Injectable()
export class PodNodeSelector implements AdmissionPlugin {
  readonly name = POD_NODE_SELECTOR;

  constructor(@Inject(AdmissionState) private readonly state: AdmissionState) {}

  handles(operation: string, r: AdmissionResource, sub: string): boolean {
    return operation === 'CREATE' && isPod(r, sub);
  }

  async mutate(a: AdmissionAttributes): Promise<void> {
    const pod = a.object as PodLike | undefined;
    const text = annotation(await findNamespace(this.state, a.namespace), NODE_SELECTOR_KEYS);
    if (!pod || text === undefined) return;
    let nsSelector: Record<string, string>;
    try {
      nsSelector = parseNodeSelector(text);
    } catch (e) {
      throw admissionDenied(a, (e as Error).message);
    }
    const merged = mergeNodeSelector(pod.spec?.nodeSelector, nsSelector);
    if (!merged) throw admissionDenied(a, REASON_CONFLICT);
    if (Object.keys(merged).length) pod.spec = { ...(pod.spec ?? {}), nodeSelector: merged };
  }
}
