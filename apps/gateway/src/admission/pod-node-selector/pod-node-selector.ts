import { Injectable } from '@nestjs/common';
import { AdmissionPluginProvider, handling, admissionDenied, type AdmissionAttributes, type AdmissionPlugin } from '../../pipeline/admit';
import { AdmissionConfigError, isObj } from '../admission-config';
import { StateAdmissionPlugin } from '../admission-state';
import type { AdmittedPod } from '../api';
import { annotation, brandSpellings, findNamespace } from '../namespace-annotations';

export const POD_NODE_SELECTOR = 'PodNodeSelector';
/** SPEC well-known namespace annotation (orch and upstream spellings). */
export const NODE_SELECTOR_KEYS = brandSpellings('scheduler.alpha.orch.io/node-selector');
export const REASON_CONFLICT = 'pod node label selector conflicts with its namespace node label selector';
export const REASON_NOT_EXTENDED = 'pod node label selector does not extend namespace node selector';
export const REASON_WHITELIST = 'pod node label selector labels conflict with its namespace whitelist';

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

/** What --admission-control-config-file says for PodNodeSelector (upstream podNodeSelectorPluginConfig). */
export interface PodNodeSelectorConfig {
  /** The node selector of namespaces without the annotation (`clusterDefaultNodeSelector`). */
  clusterDefault: Record<string, string>;
  /** Per namespace: the only labels (and values) pod node selectors there may use. */
  whitelists: ReadonlyMap<string, Record<string, string>>;
}

const CLUSTER_DEFAULT_KEY = 'clusterDefaultNodeSelector';

/**
 * The configuration from its document (`podNodeSelectorPluginConfig`: `clusterDefaultNodeSelector`
 * and namespace name → whitelist, each `key=value,...`); absent: none. Throws an
 * AdmissionConfigError naming every selector that is not a set of equalities.
 */
export function podNodeSelectorConfiguration(doc: unknown, source = POD_NODE_SELECTOR): PodNodeSelectorConfig {
  const out = { clusterDefault: {} as Record<string, string>, whitelists: new Map<string, Record<string, string>>() };
  if (doc === undefined) return out;
  const map = isObj(doc) ? doc.podNodeSelectorPluginConfig : undefined;
  if (map === undefined || map === null) return out;
  if (!isObj(map)) throw new AdmissionConfigError(source, ['podNodeSelectorPluginConfig: must be a map of names to node selectors']);
  const errs: string[] = [];
  for (const [key, value] of Object.entries(map)) {
    const at = `podNodeSelectorPluginConfig.${key}`;
    if (typeof value !== 'string') {
      errs.push(`${at}: must be a string`);
      continue;
    }
    let selector: Record<string, string>;
    try {
      selector = parseNodeSelector(value);
    } catch (e) {
      errs.push(`${at}: ${(e as Error).message}`);
      continue;
    }
    if (key === CLUSTER_DEFAULT_KEY) out.clusterDefault = selector;
    else out.whitelists.set(key, selector);
  }
  if (errs.length) throw new AdmissionConfigError(source, errs);
  return out;
}

/** Whether every label of `labels` is in the whitelist with the same value (an empty whitelist allows all). */
export function withinNodeSelectorWhitelist(labels: Record<string, string> | undefined, whitelist: Record<string, string> | undefined): boolean {
  if (!whitelist || Object.keys(whitelist).length === 0) return true;
  return Object.entries(labels ?? {}).every(([k, v]) => whitelist[k] === v);
}

/**
 * PodNodeSelector (upstream plugin of the same name): a namespace annotated with
 * scheduler.alpha.orch.io/node-selector — or, without the annotation, the configured cluster
 * default — puts its node selector on every pod created in it; a pod whose own selector
 * conflicts with it is refused, and so is a pod whose final selector uses labels outside its
 * namespace's configured whitelist.
 */
@AdmissionPluginProvider()
@Injectable()
export class PodNodeSelector extends StateAdmissionPlugin implements AdmissionPlugin {
  readonly name = POD_NODE_SELECTOR;
  private readonly config = this.state.pluginConfigurationOf(POD_NODE_SELECTOR, podNodeSelectorConfiguration);

  readonly handles = handling({ CREATE: ['pods'] });

  async mutate(a: AdmissionAttributes): Promise<void> {
    const pod = a.object as AdmittedPod | undefined;
    if (!pod) return;
    const merged = mergeNodeSelector(pod.spec?.nodeSelector, await this.namespaceSelector(a));
    if (!merged) throw admissionDenied(a, REASON_CONFLICT);
    if (Object.keys(merged).length) pod.spec = { ...(pod.spec ?? {}), nodeSelector: merged };
  }

  /** After every mutation (webhooks included): the namespace's selector is still there, and the whitelist holds. */
  async validate(a: AdmissionAttributes): Promise<void> {
    const pod = a.object as AdmittedPod | undefined;
    if (!pod) return;
    const own = pod.spec?.nodeSelector ?? {};
    if (Object.entries(await this.namespaceSelector(a)).some(([k, v]) => own[k] !== v)) throw admissionDenied(a, REASON_NOT_EXTENDED);
    if (!withinNodeSelectorWhitelist(own, this.config.whitelists.get(a.namespace))) throw admissionDenied(a, REASON_WHITELIST);
  }

  /** The namespace's node selector: its annotation, else the cluster default. */
  private async namespaceSelector(a: AdmissionAttributes): Promise<Record<string, string>> {
    const text = annotation(await findNamespace(this.state, a.namespace), NODE_SELECTOR_KEYS);
    if (text === undefined) return this.config.clusterDefault;
    try {
      return parseNodeSelector(text);
    } catch (e) {
      throw admissionDenied(a, (e as Error).message);
    }
  }
}
