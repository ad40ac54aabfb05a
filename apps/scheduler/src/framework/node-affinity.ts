import { LabelSelector, type LabelOperator, type LabelRequirement, type Labels } from '@orch/apimachinery';
import type { NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm } from './api';
import type { NodeInfo, PodInfo } from './types';

// Node selectors as upstream component-helpers/scheduling/corev1/nodeaffinity evaluates them:
// terms are ORed, the requirements of a term ANDed, an empty or invalid term matches nothing.

const OPERATORS: Record<string, LabelOperator> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!', Gt: 'gt', Lt: 'lt' };

function toRequirement(r: NodeSelectorRequirement): LabelRequirement | undefined {
  const op = OPERATORS[r.operator];
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) return undefined;
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length !== 0) return undefined;
      break;
    case 'Gt':
    case 'Lt':
      if (values.length !== 1 || !/^[+-]?[0-9]+$/.test(values[0])) return undefined;
      break;
    default:
      return undefined;
  }
  return { key: r.key, operator: op, values: [...values] };
}

/** One compiled term: a label selector and an optional set of allowed/forbidden node names. */
class CompiledTerm {
  constructor(
    private readonly labels: LabelSelector,
    /** matchFields on metadata.name: each entry is [In|NotIn, names]. */
    private readonly fields: ReadonlyArray<readonly ['In' | 'NotIn', ReadonlySet<string>]>,
  ) {}

  matches(nodeName: string, labels: Labels): boolean {
    for (const [op, names] of this.fields) if (names.has(nodeName) !== (op === 'In')) return false;
    return this.labels.matches(labels);
  }
}

function compileTerm(t: NodeSelectorTerm): CompiledTerm | undefined {
  const exprs = t.matchExpressions ?? [];
  const fields = t.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return undefined;
  const reqs: LabelRequirement[] = [];
  for (const e of exprs) {
    const r = toRequirement(e);
    if (!r) return undefined;
    reqs.push(r);
  }
  const fieldReqs: Array<readonly ['In' | 'NotIn', ReadonlySet<string>]> = [];
  for (const f of fields) {
    // Only metadata.name with In/NotIn is a supported field requirement (upstream validation).
    if (f.key !== 'metadata.name' || (f.operator !== 'In' && f.operator !== 'NotIn') || !f.values?.length) return undefined;
    fieldReqs.push([f.operator, new Set(f.values)]);
  }
  return new CompiledTerm(LabelSelector.of(reqs), fieldReqs);
}

/** A compiled NodeSelector (ORed terms). */
export class NodeSelectorMatcher {
  private readonly terms: CompiledTerm[];

  constructor(selector: NodeSelector) {
    this.terms = (selector.nodeSelectorTerms ?? []).map(compileTerm).filter((t): t is CompiledTerm => !!t);
  }

  matches(nodeName: string, labels: Labels): boolean {
    for (const t of this.terms) if (t.matches(nodeName, labels)) return true;
    return false;
  }
}

/**
 * upstream RequiredNodeAffinity: `spec.nodeSelector` AND the required node affinity terms AND
 * the namespace's node selector (scheduler.alpha.orch.io/node-selector).
 */
export class RequiredNodeAffinity {
  private readonly nodeSelector?: LabelSelector;
  private readonly required?: NodeSelectorMatcher;
  private readonly namespaceSelector?: LabelSelector;

  constructor(pod: PodInfo) {
    const ns = pod.pod.spec.nodeSelector;
    if (ns && Object.keys(ns).length) this.nodeSelector = LabelSelector.of(Object.entries(ns).map(([key, v]) => ({ key, operator: '=' as const, values: [v] })));
    const req = pod.pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
    if (req) this.required = new NodeSelectorMatcher(req);
    if (pod.namespaceNodeSelector && !pod.namespaceNodeSelector.empty()) this.namespaceSelector = pod.namespaceNodeSelector;
  }

  /** True when the pod states no required node constraint at all. */
  isEmpty(): boolean {
    return !this.nodeSelector && !this.required && !this.namespaceSelector;
  }

  match(node: NodeInfo): boolean {
    const labels = node.labels;
    if (this.nodeSelector && !this.nodeSelector.matches(labels)) return false;
    if (this.namespaceSelector && !this.namespaceSelector.matches(labels)) return false;
    if (this.required && !this.required.matches(node.name, labels)) return false;
    return true;
  }
}

/** upstream PreferredSchedulingTerms: the sum of the weights of the matching preferred terms. */
export class PreferredSchedulingTerms {
  private readonly terms: Array<{ term: CompiledTerm; weight: number }> = [];

  constructor(terms: readonly PreferredSchedulingTerm[]) {
    for (const t of terms) {
      if (!t.weight) continue;
      const c = compileTerm(t.preference);
      if (c) this.terms.push({ term: c, weight: t.weight });
    }
  }

  isEmpty(): boolean {
    return this.terms.length === 0;
  }

  score(node: NodeInfo): number {
    let s = 0;
    for (const t of this.terms) if (t.term.matches(node.name, node.labels)) s += t.weight;
    return s;
  }
}
