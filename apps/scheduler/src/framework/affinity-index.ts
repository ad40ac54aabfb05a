import type { LabelSelector, Labels } from '@orch/apimachinery';
import type { AffinityTerm, PodInfo } from './types';

/**
 * The `key=value` pairs a selector requires one of (its first `=`/`in` requirement), or
 * undefined when it has none (then every pod is a candidate).
 */
export function selectorAnchors(sel: LabelSelector): string[] | undefined {
  for (const r of sel.requirements()) {
    if (r.operator === '=' || r.operator === '==' || r.operator === 'in') return r.values.map((v) => `${r.key}=${v}`);
  }
  return undefined;
}

/** An affinity term of a pod in the snapshot. */
export interface TermRef {
  pod: PodInfo;
  term: AffinityTerm;
  /** +weight for preferred affinity, −weight for preferred anti-affinity, 0 for required terms (scored with hardPodAffinityWeight). */
  weight: number;
}

/** Terms indexed by the label a pod must carry to match them. */
class TermIndex {
  private readonly byAnchor = new Map<string, Set<TermRef>>();
  private readonly unanchored = new Set<TermRef>();

  add(ref: TermRef): void {
    const anchors = selectorAnchors(ref.term.selector);
    if (!anchors) this.unanchored.add(ref);
    else for (const a of anchors) getOrCreate(this.byAnchor, a).add(ref);
  }

  remove(ref: TermRef): void {
    const anchors = selectorAnchors(ref.term.selector);
    if (!anchors) this.unanchored.delete(ref);
    else for (const a of anchors) deleteFrom(this.byAnchor, a, ref);
  }

  /** Terms that may match a pod with `labels` (a superset; callers check `term.matches`). */
  *candidates(labels: Labels): Iterable<TermRef> {
    yield* this.unanchored;
    for (const k of Object.keys(labels)) {
      const set = this.byAnchor.get(`${k}=${labels[k]}`);
      if (set) yield* set;
    }
  }
}

/**
 * Indexes of the pods in a snapshot for inter-pod affinity (kept in step by the snapshot as
 * NodeInfos change): pods by label, and existing pods' terms by the label they select on.
 * They turn "scan every pod" into "look at the pods that can match" for selectors with an
 * equality requirement; other selectors fall back to candidates = everything.
 */
export class AffinityIndex {
  private readonly podsByLabel = new Map<string, Set<PodInfo>>();
  private readonly refs = new Map<PodInfo, TermRef[]>();
  /** Existing pods' required anti-affinity terms. */
  readonly requiredAnti = new TermIndex();
  /** Existing pods' required affinity and preferred (anti-)affinity terms (scoring). */
  readonly scoring = new TermIndex();

  addPod(pi: PodInfo): void {
    for (const k of Object.keys(pi.labels)) getOrCreate(this.podsByLabel, `${k}=${pi.labels[k]}`).add(pi);
    if (!pi.hasAffinity()) return;
    const refs: TermRef[] = [];
    for (const term of pi.requiredAntiAffinityTerms) {
      const r = { pod: pi, term, weight: 0 };
      this.requiredAnti.add(r);
      refs.push(r);
    }
    const scoring: TermRef[] = [
      ...pi.requiredAffinityTerms.map((term) => ({ pod: pi, term, weight: 0 })),
      ...pi.preferredAffinityTerms.map((w) => ({ pod: pi, term: w.term, weight: w.weight })),
      ...pi.preferredAntiAffinityTerms.map((w) => ({ pod: pi, term: w.term, weight: -w.weight })),
    ];
    for (const r of scoring) this.scoring.add(r);
    this.refs.set(pi, [...refs, ...scoring]);
  }

  removePod(pi: PodInfo): void {
    for (const k of Object.keys(pi.labels)) deleteFrom(this.podsByLabel, `${k}=${pi.labels[k]}`, pi);
    for (const r of this.refs.get(pi) ?? []) {
      this.requiredAnti.remove(r);
      this.scoring.remove(r);
    }
    this.refs.delete(pi);
  }

  /** Pods carrying one of `anchors` (from selectorAnchors). */
  *podsWithAnchors(anchors: readonly string[]): Iterable<PodInfo> {
    for (const a of anchors) {
      const set = this.podsByLabel.get(a);
      if (set) yield* set;
    }
  }
}

function getOrCreate<T>(m: Map<string, Set<T>>, k: string): Set<T> {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  return s;
}

function deleteFrom<T>(m: Map<string, Set<T>>, k: string, v: T): void {
  const s = m.get(k);
  if (!s) return;
  s.delete(v);
  if (s.size === 0) m.delete(k);
}
