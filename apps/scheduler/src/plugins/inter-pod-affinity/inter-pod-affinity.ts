import { FieldError, type Labels } from '@orch/apimachinery';
import type { CycleState } from '../../framework/cycle-state';
import { ActionType } from '../../framework/events';
import { MAX_NODE_SCORE, type ClusterEventWithHint, type FilterScorePlugin, type Handle, type PluginRegistration } from '../../framework/interface';
import { selectorAnchors } from '../../framework/affinity-index';
import type { Snapshot } from '../../framework/snapshot';
import { Status } from '../../framework/status';
import { podMatchesAllAffinityTerms, type AffinityTerm, type NodeInfo, type PodInfo } from '../../framework/types';
import { podCountingExtensions, stateNotFound, type PodCountingState } from '../helper';
import { INTER_POD_AFFINITY } from '../names';

export const ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules";
export const ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules";
export const ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules";

export interface InterPodAffinityArgs {
  /** Score added for an existing pod's required affinity term that the incoming pod matches (0–100, default 1). */
  hardPodAffinityWeight?: number;
  /** Score only by the incoming pod's preferred terms. */
  ignorePreferredTermsOfExistingPods?: boolean;
}

/** Matching-term counts by topology key and value (upstream topologyToMatchedTermCount). */
export class TopologyCounts {
  /** Topology key → value → count; zero counts are dropped. */
  readonly m = new Map<string, Map<string, number>>();
  private entries = 0;

  /** Number of (key, value) pairs with a non-zero count. */
  get size(): number {
    return this.entries;
  }

  get(key: string, value: string): number {
    return this.m.get(key)?.get(value) ?? 0;
  }

  /** Adds `delta` for the node's value of `key` (nothing when the node lacks the key). */
  update(node: NodeInfo, key: string, delta: number): void {
    const v = node.labels[key];
    if (v === undefined) return;
    let byValue = this.m.get(key);
    if (!byValue) this.m.set(key, (byValue = new Map()));
    const before = byValue.get(v) ?? 0;
    const n = before + delta;
    if (n === 0) {
      byValue.delete(v);
      if (byValue.size === 0) this.m.delete(key);
    } else byValue.set(v, n);
    this.entries += (n !== 0 ? 1 : 0) - (before !== 0 ? 1 : 0);
  }

  /** Each term matching `pod` counts for the node's domain. */
  updateWithAntiAffinityTerms(terms: readonly AffinityTerm[], pod: PodInfo, nsLabels: Labels | undefined, node: NodeInfo, delta: number): void {
    for (const t of terms) if (t.matches(pod, nsLabels)) this.update(node, t.topologyKey, delta);
  }

  /** When `pod` matches all terms, every term counts for the node's domain. */
  updateWithAffinityTerms(terms: readonly AffinityTerm[], pod: PodInfo, node: NodeInfo, delta: number): void {
    if (!podMatchesAllAffinityTerms(terms, pod)) return;
    for (const t of terms) this.update(node, t.topologyKey, delta);
  }

  clone(): TopologyCounts {
    const c = new TopologyCounts();
    for (const [k, v] of this.m) c.m.set(k, new Map(v));
    c.entries = this.entries;
    return c;
  }
}

const REJECT_AFFINITY = Status.unresolvable(ERR_REASON_AFFINITY).withPlugin(INTER_POD_AFFINITY);
const REJECT_ANTI_AFFINITY = Status.unschedulable(ERR_REASON_ANTI_AFFINITY).withPlugin(INTER_POD_AFFINITY);
const REJECT_EXISTING = Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY).withPlugin(INTER_POD_AFFINITY);

const PRE_FILTER_KEY = `PreFilter${INTER_POD_AFFINITY}`;
const EXTENSIONS = podCountingExtensions(PRE_FILTER_KEY);
const PRE_SCORE_KEY = `PreScore${INTER_POD_AFFINITY}`;

class PreFilterState implements PodCountingState {
  constructor(
    readonly affinityTerms: readonly AffinityTerm[],
    readonly antiAffinityTerms: readonly AffinityTerm[],
    readonly namespaceLabels: Labels | undefined,
    /** Existing pods' required anti-affinity terms matching the incoming pod. */
    readonly existingAntiAffinityCounts: TopologyCounts,
    /** Existing pods matching all of the incoming pod's required affinity terms. */
    readonly affinityCounts: TopologyCounts,
    /** Existing pods matching the incoming pod's required anti-affinity terms. */
    readonly antiAffinityCounts: TopologyCounts,
  ) {}

  clone(): PreFilterState {
    return new PreFilterState(
      this.affinityTerms,
      this.antiAffinityTerms,
      this.namespaceLabels,
      this.existingAntiAffinityCounts.clone(),
      this.affinityCounts.clone(),
      this.antiAffinityCounts.clone(),
    );
  }

  /** upstream updateWithPod: `pod` appears on (delta 1) or disappears from (−1) `node`. */
  updateWithPod(incoming: PodInfo, pod: PodInfo, node: NodeInfo, delta: 1 | -1): void {
    this.existingAntiAffinityCounts.updateWithAntiAffinityTerms(pod.requiredAntiAffinityTerms, incoming, this.namespaceLabels, node, delta);
    this.affinityCounts.updateWithAffinityTerms(this.affinityTerms, pod, node, delta);
    this.antiAffinityCounts.updateWithAntiAffinityTerms(this.antiAffinityTerms, pod, undefined, node, delta);
  }
}

/** Topology key → value → score (upstream scoreMap). */
type ScoreMap = Map<string, Map<string, number>>;

function addScore(m: ScoreMap, term: AffinityTerm, weight: number, pod: PodInfo, nsLabels: Labels | undefined, node: NodeInfo): void {
  if (!term.matches(pod, nsLabels)) return;
  const v = node.labels[term.topologyKey];
  if (v === undefined) return;
  let byValue = m.get(term.topologyKey);
  if (!byValue) m.set(term.topologyKey, (byValue = new Map()));
  byValue.set(v, (byValue.get(v) ?? 0) + weight);
}

/**
 * Filter: required pod affinity (the node's domain has a pod matching all terms), required
 * anti-affinity (no matching pod in the domain) and existing pods' anti-affinity against
 * the incoming pod. Score: preferred (anti-)affinity both ways. Counts are computed once per
 * pod at PreFilter/PreScore, iterating only nodes with relevant pods where possible
 * (upstream InterPodAffinity).
 */
export class InterPodAffinity implements FilterScorePlugin {
  readonly name = INTER_POD_AFFINITY;
  /** PreFilter extensions: preemption adds and removes pods from the counts. */
  readonly addPod = EXTENSIONS.addPod;
  readonly removePod = EXTENSIONS.removePod;
  private readonly hardPodAffinityWeight: number;
  private readonly ignoreExistingPreferred: boolean;

  constructor(
    private readonly handle: Handle,
    args: InterPodAffinityArgs = {},
  ) {
    this.hardPodAffinityWeight = args.hardPodAffinityWeight ?? 1;
    this.ignoreExistingPreferred = args.ignorePreferredTermsOfExistingPods ?? false;
  }

  /** upstream mergeAffinityTermNamespacesIfNotEmpty: namespaceSelector resolved into namespace names. */
  private mergeNamespaces(term: AffinityTerm): AffinityTerm {
    const sel = term.namespaceSelector;
    if (sel.empty() || sel.requirements().length === 0) return term;
    const names: string[] = [];
    for (const ns of this.handle.namespaces.list()) if (sel.matches(ns.labels)) names.push(ns.name);
    return term.withNamespaces(names);
  }

  preFilter(state: CycleState, pod: PodInfo): Status {
    if (pod.parseError) return Status.unresolvable(pod.parseError);
    const snap = this.handle.snapshot();
    const affinityTerms = pod.requiredAffinityTerms.map((t) => this.mergeNamespaces(t));
    const antiTerms = pod.requiredAntiAffinityTerms.map((t) => this.mergeNamespaces(t));
    const nsLabels = this.handle.namespaces.labels(pod.namespace);
    const index = snap.affinityIndex;

    const existingAnti = new TopologyCounts();
    for (const ref of index.requiredAnti.candidates(pod.labels)) {
      const node = snap.get(ref.pod.pod.spec.nodeName ?? '');
      if (node && ref.term.matches(pod, nsLabels)) existingAnti.update(node, ref.term.topologyKey, 1);
    }
    const affinityCounts = new TopologyCounts();
    const antiCounts = new TopologyCounts();
    if (affinityTerms.length) {
      this.forCandidates(snap, affinityTerms, (existing, node) => affinityCounts.updateWithAffinityTerms(affinityTerms, existing, node, 1));
    }
    for (const t of antiTerms) {
      this.forCandidates(snap, [t], (existing, node) => {
        if (t.matches(existing, undefined)) antiCounts.update(node, t.topologyKey, 1);
      });
    }
    if (existingAnti.size === 0 && affinityTerms.length === 0 && antiTerms.length === 0) return Status.skip();
    state.write(PRE_FILTER_KEY, new PreFilterState(affinityTerms, antiTerms, nsLabels, existingAnti, affinityCounts, antiCounts));
    return Status.success();
  }

  filter(state: CycleState, pod: PodInfo, nodeInfo: NodeInfo): Status {
    const s = state.read<PreFilterState>(PRE_FILTER_KEY);
    if (!s) return stateNotFound(PRE_FILTER_KEY);
    if (!satisfyPodAffinity(s, pod, nodeInfo)) return REJECT_AFFINITY;
    if (!satisfyPodAntiAffinity(s, nodeInfo)) return REJECT_ANTI_AFFINITY;
    if (!satisfyExistingPodsAntiAffinity(s, nodeInfo)) return REJECT_EXISTING;
    return Status.success();
  }

  /**
   * Calls `fn` for each existing pod (with its node) that can match all of `terms`: the pods
   * carrying the label some term's selector requires, or every pod when no term has one.
   */
  private forCandidates(snap: Snapshot, terms: readonly AffinityTerm[], fn: (existing: PodInfo, node: NodeInfo) => void): void {
    const anchors = terms.map((t) => selectorAnchors(t.selector)).find((a) => a !== undefined);
    if (!anchors) {
      for (const node of snap.nodeInfoList) for (const existing of node.pods) fn(existing, node);
      return;
    }
    for (const existing of snap.affinityIndex.podsWithAnchors(anchors)) {
      const node = snap.get(existing.pod.spec.nodeName ?? '');
      if (node) fn(existing, node);
    }
  }

  preScore(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): Status {
    if (nodes.length === 0) return Status.skip();
    const hasConstraints = pod.preferredAffinityTerms.length > 0 || pod.preferredAntiAffinityTerms.length > 0;
    if (this.ignoreExistingPreferred && !hasConstraints) return Status.skip();
    const snap = this.handle.snapshot();
    const nsLabels = this.handle.namespaces.labels(pod.namespace);
    const scores: ScoreMap = new Map();
    // The incoming pod's preferred terms against existing pods.
    for (const w of pod.preferredAffinityTerms) {
      const term = this.mergeNamespaces(w.term);
      this.forCandidates(snap, [term], (existing, node) => addScore(scores, term, w.weight, existing, undefined, node));
    }
    for (const w of pod.preferredAntiAffinityTerms) {
      const term = this.mergeNamespaces(w.term);
      this.forCandidates(snap, [term], (existing, node) => addScore(scores, term, -w.weight, existing, undefined, node));
    }
    // Existing pods' required affinity (hardPodAffinityWeight) and preferred terms against the incoming pod.
    for (const ref of snap.affinityIndex.scoring.candidates(pod.labels)) {
      const weight = ref.weight === 0 ? this.hardPodAffinityWeight : ref.weight;
      if (weight === 0) continue;
      const node = snap.get(ref.pod.pod.spec.nodeName ?? '');
      if (node) addScore(scores, ref.term, weight, pod, nsLabels, node);
    }
    if (scores.size === 0) return Status.skip();
    state.writeImmutable(PRE_SCORE_KEY, scores);
    return Status.success();
  }

  score(state: CycleState, _pod: PodInfo, nodeInfo: NodeInfo): number | Status {
    const topologyScore = state.readImmutable<ScoreMap>(PRE_SCORE_KEY);
    if (!topologyScore) return stateNotFound(PRE_SCORE_KEY);
    let score = 0;
    const labels = nodeInfo.labels;
    for (const [key, byValue] of topologyScore) {
      const v = labels[key];
      if (v !== undefined) score += byValue.get(v) ?? 0;
    }
    return score;
  }

  /** Maps [min, max] linearly to [0, 100] (all 0 when every node scored the same). */
  normalizeScore(_state: CycleState, _pod: PodInfo, _nodes: readonly NodeInfo[], scores: number[]): Status {
    if (scores.length === 0) return Status.success();
    const min = Math.min(...scores);
    const diff = Math.max(...scores) - min;
    for (let i = 0; i < scores.length; i++) scores[i] = diff > 0 ? Math.trunc((MAX_NODE_SCORE * (scores[i] - min)) / diff) : 0;
    return Status.success();
  }

  eventsToRegister(): ClusterEventWithHint[] {
    return [
      { event: { resource: 'Pod', action: ActionType.Add | ActionType.Delete | ActionType.UpdatePodLabel, label: 'AssignedPodChange' } },
      { event: { resource: 'Node', action: ActionType.Add | ActionType.UpdateNodeLabel, label: 'NodeChange' } },
      { event: { resource: 'Namespace', action: ActionType.Add | ActionType.UpdateNamespaceLabel, label: 'NamespaceChange' } },
    ];
  }
}

/**
 * The node's domain for every required affinity term has a pod matching all terms — or no pod
 * anywhere matches and the pod matches its own terms (the first pod of a self-affine group).
 */
function satisfyPodAffinity(s: PreFilterState, pod: PodInfo, node: NodeInfo): boolean {
  let podsExist = true;
  for (const t of s.affinityTerms) {
    const v = node.labels[t.topologyKey];
    if (v === undefined) return false;
    if (s.affinityCounts.get(t.topologyKey, v) <= 0) podsExist = false;
  }
  if (podsExist) return true;
  return s.affinityCounts.size === 0 && podMatchesAllAffinityTerms(s.affinityTerms, pod);
}

/** No pod in the node's domain matches one of the pod's required anti-affinity terms. */
function satisfyPodAntiAffinity(s: PreFilterState, node: NodeInfo): boolean {
  if (s.antiAffinityCounts.size === 0) return true;
  for (const t of s.antiAffinityTerms) {
    const v = node.labels[t.topologyKey];
    if (v !== undefined && s.antiAffinityCounts.get(t.topologyKey, v) > 0) return false;
  }
  return true;
}

/** No existing pod whose required anti-affinity matches the incoming pod shares a domain with the node. */
function satisfyExistingPodsAntiAffinity(s: PreFilterState, node: NodeInfo): boolean {
  for (const [key, byValue] of s.existingAntiAffinityCounts.m) {
    const v = node.labels[key];
    if (v !== undefined && (byValue.get(v) ?? 0) > 0) return false;
  }
  return true;
}

/** Validates InterPodAffinityArgs (upstream ValidateInterPodAffinityArgs). */
export function validateInterPodAffinityArgs(args: unknown, path: string): FieldError[] {
  if (typeof args !== 'object' || args === null) return [FieldError.typeInvalid(path, args, 'must be an object')];
  const w = (args as InterPodAffinityArgs).hardPodAffinityWeight;
  if (w !== undefined && (!Number.isInteger(w) || w < 0 || w > 100)) return [FieldError.invalid(`${path}.hardPodAffinityWeight`, w, 'not in valid range [0, 100]')];
  return [];
}

export const interPodAffinityRegistration: PluginRegistration = {
  factory: (args, handle) => new InterPodAffinity(handle, (args ?? {}) as InterPodAffinityArgs),
  validateArgs: validateInterPodAffinityArgs,
};
