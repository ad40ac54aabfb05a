// Which requests a webhook or an admission policy is for: rules (operations, groups,
// versions, resources with subresources, scope), matchPolicy Equivalent across versions and
// group spellings, and namespace and object label selectors (upstream
// apiserver/pkg/admission/plugin/webhook/predicates).

import { canonicalGroup, type Catalog, type GroupVersionKind, type ResourceDef } from '@orch/api';
import { labelSelectorFromObject, type KubeObject, type LabelSelectorObject } from '@orch/apimachinery';
import type { AdmissionAttributes, AdmissionResource } from '../pipeline/admit';

/** admissionregistration RuleWithOperations / NamedRuleWithOperations. */
export interface Rule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  /** `*` (default), `Cluster` or `Namespaced`. */
  scope?: string;
  /** Policies only: the names the rule is limited to. */
  resourceNames?: string[];
}

/** What a rule is matched against: the request's operation, resource and kind, and the resource's scope. */
export interface RuleTarget {
  operation: string;
  resource: AdmissionResource;
  kind: GroupVersionKind;
  subresource: string;
  namespaced: boolean;
  name: string;
}

function has(list: readonly string[] | undefined, value: string): boolean {
  return (list ?? []).some((v) => v === '*' || v === value);
}

/** `resources` entries: `pods`, `pods/status`, `*`, `*\/status`, `pods/*`, `*\/*`. */
function matchesResource(list: readonly string[] | undefined, resource: string, subresource: string): boolean {
  for (const entry of list ?? []) {
    const [res, sub] = entry.split('/', 2);
    if (sub === undefined) {
      if (subresource === '' && (res === '*' || res === resource)) return true;
      continue;
    }
    if ((res === '*' || res === resource) && (sub === '*' || sub === subresource)) return true;
  }
  return false;
}

/** Whether one rule covers the target (upstream RuleMatcher). Groups compare in the orch spelling, so `networking.k8s.io` rules match. */
export function ruleMatches(rule: Rule, t: RuleTarget): boolean {
  if (!has(rule.operations, t.operation)) return false;
  if (!(rule.apiGroups ?? []).some((g) => g === '*' || canonicalGroup(g) === t.resource.group)) return false;
  if (!has(rule.apiVersions, t.resource.version)) return false;
  if (!matchesResource(rule.resources, t.resource.resource, t.subresource)) return false;
  const scope = rule.scope ?? '*';
  if (scope === 'Cluster' && t.namespaced) return false;
  if (scope === 'Namespaced' && !t.namespaced) return false;
  if (rule.resourceNames?.length && !rule.resourceNames.includes(t.name)) return false;
  return true;
}

/** The resource and kind a hook's rules matched a request as (upstream WebhookInvocation). */
export interface MatchedAs {
  resource: AdmissionResource;
  kind: GroupVersionKind;
}

/**
 * What a set of rules matches the request as: the request's own resource, or — with
 * matchPolicy Equivalent — an equivalent resource a rule names (another version, or a resource
 * stored as the same objects: Catalog.equivalents), earlier rules first as upstream. The hook
 * then sees objects converted to that resource's kind (AdmissionState.versioned).
 */
export function matchingResource(rules: readonly Rule[], t: RuleTarget, matchPolicy: string | undefined, catalog: Catalog): MatchedAs | undefined {
  if (rules.some((r) => ruleMatches(r, t))) return { resource: t.resource, kind: t.kind };
  if (matchPolicy === 'Exact') return undefined;
  const def = catalog.lookup(t.resource.group, t.resource.version, t.resource.resource);
  if (!def) return undefined;
  const equivalents = catalog.equivalents(def);
  if (equivalents.length < 2) return undefined;
  for (const rule of rules) {
    for (const eq of equivalents) {
      if (eq === def) continue;
      const resource = { group: eq.group, version: eq.version, resource: eq.resource };
      const kind = kindOf(eq, t.subresource);
      if (kind && ruleMatches(rule, { ...t, resource })) return { resource, kind };
    }
  }
  return undefined;
}

/** The kind a resource (or its subresource) takes, or undefined when it has no such subresource. */
function kindOf(def: ResourceDef, subresource: string): GroupVersionKind | undefined {
  if (!subresource) return { group: def.group, version: def.version, kind: def.kind };
  const sub = def.subresources.find((s) => s.name === subresource);
  return sub ? { group: sub.group ?? def.group, version: sub.version ?? def.version, kind: sub.kind } : undefined;
}

/** Whether labels satisfy a selector; an absent selector matches everything (webhook and policy selectors). */
export function selectorMatches(selector: LabelSelectorObject | undefined | null, labels: Record<string, string> | undefined): boolean {
  if (!selector) return true;
  return labelSelectorFromObject(selector).matches(labels ?? {});
}

/**
 * namespaceSelector: applies to namespaced objects (by their namespace's labels) and to
 * Namespace objects themselves (by their own); cluster-scoped objects always match.
 */
export function namespaceSelectorMatches(selector: LabelSelectorObject | undefined | null, a: Pick<AdmissionAttributes, 'resource' | 'namespace' | 'object' | 'oldObject'>, namespace: KubeObject | undefined): boolean {
  if (!selector || (selector.matchLabels === undefined && selector.matchExpressions === undefined)) return true;
  if (a.resource.group === '' && a.resource.resource === 'namespaces') return selectorMatches(selector, (a.object ?? a.oldObject)?.metadata.labels);
  if (!a.namespace) return true;
  return selectorMatches(selector, namespace?.metadata.labels);
}

/** objectSelector: the new or the old object's labels match. */
export function objectSelectorMatches(selector: LabelSelectorObject | undefined | null, a: Pick<AdmissionAttributes, 'object' | 'oldObject'>): boolean {
  if (!selector) return true;
  if (!a.object && !a.oldObject) return selectorMatches(selector, {});
  return (!!a.object && selectorMatches(selector, a.object.metadata.labels)) || (!!a.oldObject && selectorMatches(selector, a.oldObject.metadata.labels));
}
