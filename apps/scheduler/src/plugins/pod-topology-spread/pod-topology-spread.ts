import { FieldError, LabelSelector, labelSelectorFromObject, type LabelRequirement } from '@orch/apimachinery';
import { doNotScheduleTaint, findUntoleratedTaint, LABEL_HOSTNAME, LABEL_ZONE, type NodeInclusionPolicy, type TopologySpreadConstraint } from '../../framework/api';
import type { CycleState } from '../../framework/cycle-state';
import { ActionType } from '../../framework/events';
import { MAX_NODE_SCORE, type ClusterEventWithHint, type FilterScorePlugin, type Handle, type PluginRegistration } from '../../framework/interface';
import { RequiredNodeAffinity } from '../../framework/node-affinity';
import { Status } from '../../framework/status';
import { labelMatcher, type NodeInfo, type PodInfo } from '../../framework/types';
import { lookupCount, NodeCountCache, podCountingExtensions, stateNotFound, storeCount, type PodCountingState } from '../helper';
import { POD_TOPOLOGY_SPREAD } from '../names';

export const ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints";
export const ERR_REASON_NODE_LABEL_NOT_MATCH = `${ERR_REASON_CONSTRAINTS_NOT_MATCH} (missing required label)`;

type Action = 'DoNotSchedule' | 'ScheduleAnyway';

export interface PodTopologySpreadArgs {
  /** Constraints (without labelSelector) for pods that have none; used when defaultingType is List. */
  defaultConstraints?: Omit<TopologySpreadConstraint, 'labelSelector'>[];
  /** System (default): upstream's built-in soft spreading by hostname and zone; List: defaultConstraints. */
  defaultingType?: 'System' | 'List';
}

/** upstream systemDefaultConstraints. */
export const SYSTEM_DEFAULT_CONSTRAINTS: Omit<TopologySpreadConstraint, 'labelSelector'>[] = [
  { topologyKey: LABEL_HOSTNAME, whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 3 },
  { topologyKey: LABEL_ZONE, whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 5 },
];

/** A constraint with its selector parsed and defaults applied (upstream topologySpreadConstraint). */
export interface SpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  selector: LabelSelector;
  minDomains: number;
  nodeAffinityPolicy: NodeInclusionPolicy;
  nodeTaintsPolicy: NodeInclusionPolicy;
}

/** A node inclusion policy of the API (validated there), or the default when unset. */
function inclusionPolicy(value: string | undefined, unset: NodeInclusionPolicy): NodeInclusionPolicy {
  return value === 'Honor' || value === 'Ignore' ? value : unset;
}

/** The pod's constraints of kind `action`, selectors merged with matchLabelKeys values. Throws on an invalid selector. */
export function filterConstraints(constraints: readonly TopologySpreadConstraint[], podLabels: Readonly<Record<string, string>>, action: Action): SpreadConstraint[] {
  const out: SpreadConstraint[] = [];
  for (const c of constraints) {
    if (c.whenUnsatisfiable !== action) continue;
    let selector = labelSelectorFromObject(c.labelSelector);
    const extra: LabelRequirement[] = [];
    for (const k of c.matchLabelKeys ?? []) if (k in podLabels) extra.push({ key: k, operator: 'in', values: [podLabels[k]] });
    if (extra.length) selector = LabelSelector.of([...selector.requirements(), ...extra]);
    out.push({
      maxSkew: c.maxSkew,
      topologyKey: c.topologyKey,
      selector,
      minDomains: c.minDomains ?? 1,
      nodeAffinityPolicy: inclusionPolicy(c.nodeAffinityPolicy, 'Honor'),
      nodeTaintsPolicy: inclusionPolicy(c.nodeTaintsPolicy, 'Ignore'),
    });
  }
  return out;
}

/** upstream countPodsMatchSelector: live pods of namespace `ns` matching `selector` (an empty selector counts none). */
export function countPodsMatchSelector(pods: readonly PodInfo[], selector: LabelSelector, ns: string, matches = labelMatcher(selector)): number {
  if (selector.empty()) return 0;
  let n = 0;
  for (let i = 0; i < pods.length; i++) {
    const p = pods[i];
    if (p.namespace !== ns || p.isTerminating()) continue;
    if (matches(p.labels)) n++;
  }
  return n;
}

/** Memoized countPodsMatchSelector over the nodes of the snapshot, one entry set per (namespace, selector). */
class MatchCounts {
  private readonly cache = new NodeCountCache();

  /** A counter for pods of `ns` matching `selector`. */
  counter(selector: LabelSelector, ns: string): (node: NodeInfo) => number {
    const entries = this.cache.forKey(`${ns}\u0000${selector.toString()}`);
    const matches = labelMatcher(selector);
    return (node) => lookupCount(entries, node) ?? storeCount(entries, node, countPodsMatchSelector(node.pods, selector, ns, matches));
  }
}

/** The node has every constraint's topology key. */
function nodeHasAllKeys(node: NodeInfo, constraints: readonly SpreadConstraint[]): boolean {
  const labels = node.labels;
  for (const c of constraints) if (!(c.topologyKey in labels)) return false;
  return true;
}

/** upstream matchNodeInclusionPolicies: whether the node counts for the constraint. */
function nodeIncluded(c: SpreadConstraint, pod: PodInfo, node: NodeInfo, required: RequiredNodeAffinity): boolean {
  if (c.nodeAffinityPolicy === 'Honor' && !required.isEmpty() && !required.match(node)) return false;
  if (c.nodeTaintsPolicy === 'Honor' && findUntoleratedTaint(node.taints, pod.pod.spec.tolerations, doNotScheduleTaint)) return false;
  return true;
}

/** The two domains with the fewest matching pods (upstream criticalPaths). */
class CriticalPaths {
  values: [string, string] = ['', ''];
  nums: [number, number] = [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];

  update(value: string, num: number): void {
    const i: 0 | 1 | -1 = value === this.values[0] ? 0 : value === this.values[1] ? 1 : -1;
    if (i !== -1) {
      this.nums[i] = num;
      if (this.nums[0] > this.nums[1]) {
        this.values = [this.values[1], this.values[0]];
        this.nums = [this.nums[1], this.nums[0]];
      }
    } else if (num < this.nums[0]) {
      this.values = [value, this.values[0]];
      this.nums = [num, this.nums[0]];
    } else if (num < this.nums[1]) {
      this.values[1] = value;
      this.nums[1] = num;
    }
  }

  clone(): CriticalPaths {
    const c = new CriticalPaths();
    c.values = [...this.values];
    c.nums = [...this.nums];
    return c;
  }
}

const REJECT_LABEL = Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH).withPlugin(POD_TOPOLOGY_SPREAD);
const REJECT_SKEW = Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH).withPlugin(POD_TOPOLOGY_SPREAD);

const PRE_FILTER_KEY = `PreFilter${POD_TOPOLOGY_SPREAD}`;
const EXTENSIONS = podCountingExtensions(PRE_FILTER_KEY);
const PRE_SCORE_KEY = `PreScore${POD_TOPOLOGY_SPREAD}`;

/** Counts of matching pods per domain for the hard constraints, computed once per pod. */
class PreFilterState implements PodCountingState {
  constructor(
    readonly constraints: SpreadConstraint[],
    /** Per constraint: topology value → matching pods. */
    readonly tpValueToMatchNum: Map<string, number>[],
    readonly criticalPaths: CriticalPaths[],
    /** Per constraint: number of eligible domains. */
    readonly domainsNum: number[],
    readonly required: RequiredNodeAffinity,
    /** Per constraint: 1 when the incoming pod matches its own selector. */
    readonly selfMatch: number[],
  ) {}

  clone(): PreFilterState {
    return new PreFilterState(
      this.constraints,
      this.tpValueToMatchNum.map((m) => new Map(m)),
      this.criticalPaths.map((c) => c.clone()),
      [...this.domainsNum],
      this.required,
      this.selfMatch,
    );
  }

  /** upstream updateWithPod: adds `delta` for `updated` on `node` to every constraint it matches. */
  updateWithPod(preemptor: PodInfo, updated: PodInfo, node: NodeInfo, delta: 1 | -1): void {
    if (updated.namespace !== preemptor.namespace || !node.node || !nodeHasAllKeys(node, this.constraints)) return;
    this.constraints.forEach((c, i) => {
      if (!c.selector.matches(updated.labels) || !nodeIncluded(c, preemptor, node, this.required)) return;
      const v = node.labels[c.topologyKey];
      const n = (this.tpValueToMatchNum[i].get(v) ?? 0) + delta;
      this.tpValueToMatchNum[i].set(v, n);
      this.criticalPaths[i].update(v, n);
    });
  }
}

interface PreScoreState {
  readonly constraints: SpreadConstraint[];
  readonly ignoredNodes: Set<string>;
  /** Per constraint: topology value → matching pods (hostname constraints are counted per node at Score). */
  readonly tpValueToPodCounts: Map<string, number>[];
  readonly normalizingWeights: number[];
  /** Per constraint: matching pods on one node. */
  readonly counters: Array<(node: NodeInfo) => number>;
}

/** upstream topologyNormalizingWeight: log(size + 2), so small topologies are not watered down. */
export function topologyNormalizingWeight(size: number): number {
  return Math.log(size + 2);
}

/** upstream scoreForCount. */
export function scoreForCount(count: number, maxSkew: number, weight: number): number {
  return count * weight + (maxSkew - 1);
}

/**
 * Filter: pods with `whenUnsatisfiable: DoNotSchedule` constraints only go where the skew
 * (matching pods in the domain + self − global minimum) stays ≤ maxSkew. Score: fewer
 * matching pods in the node's domains for ScheduleAnyway (or default) constraints is better
 * (upstream PodTopologySpread). Counts are taken once per pod at PreFilter/PreScore.
 */
export class PodTopologySpread implements FilterScorePlugin {
  readonly name = POD_TOPOLOGY_SPREAD;
  /** PreFilter extensions: preemption adds and removes pods from the counts. */
  readonly addPod = EXTENSIONS.addPod;
  readonly removePod = EXTENSIONS.removePod;
  private readonly defaults: Omit<TopologySpreadConstraint, 'labelSelector'>[];
  private readonly systemDefaulted: boolean;
  /** Per-node match counts reused across cycles while nodes do not change. */
  private readonly matchCounts = new MatchCounts();

  constructor(
    private readonly handle: Handle,
    args: PodTopologySpreadArgs = {},
  ) {
    this.systemDefaulted = (args.defaultingType ?? 'System') === 'System';
    this.defaults = this.systemDefaulted ? SYSTEM_DEFAULT_CONSTRAINTS : (args.defaultConstraints ?? []);
  }

  /** The pod's own constraints of kind `action`, or the defaults with the owner-derived selector. */
  private constraintsFor(pod: PodInfo, action: Action): SpreadConstraint[] {
    const own = pod.pod.spec.topologySpreadConstraints;
    if (own?.length) return filterConstraints(own, pod.labels, action);
    const defaults = this.defaults.filter((c) => c.whenUnsatisfiable === action);
    if (!defaults.length) return [];
    const selector = this.handle.defaultSpreadSelector?.(pod.pod);
    if (!selector || selector.empty()) return [];
    return filterConstraints(defaults, pod.labels, action).map((c) => ({ ...c, selector }));
  }

  /** The pod's constraints of `action`, or the Error status of reading them (hard: DoNotSchedule, soft: ScheduleAnyway). */
  private constraintsOrError(pod: PodInfo, action: Action): SpreadConstraint[] | Status {
    try {
      return this.constraintsFor(pod, action);
    } catch (e) {
      return Status.error(`obtaining pod's ${action === 'DoNotSchedule' ? 'hard' : 'soft'} topology spread constraints: ${(e as Error).message}`);
    }
  }

  preFilter(state: CycleState, pod: PodInfo): Status {
    const constraints = this.constraintsOrError(pod, 'DoNotSchedule');
    if (constraints instanceof Status) return constraints;
    if (constraints.length === 0) return Status.skip();
    const required = new RequiredNodeAffinity(pod);
    const counts = constraints.map(() => new Map<string, number>());
    const counters = constraints.map((c) => this.matchCounts.counter(c.selector, pod.namespace));
    for (const node of this.handle.snapshot().nodeInfoList) {
      if (!nodeHasAllKeys(node, constraints)) continue;
      const labels = node.labels;
      for (let i = 0; i < constraints.length; i++) {
        const c = constraints[i];
        if (!nodeIncluded(c, pod, node, required)) continue;
        const v = labels[c.topologyKey];
        counts[i].set(v, (counts[i].get(v) ?? 0) + counters[i](node));
      }
    }
    const paths = counts.map((m) => {
      const p = new CriticalPaths();
      for (const [v, n] of m) p.update(v, n);
      return p;
    });
    const selfMatch = constraints.map((c) => (c.selector.matches(pod.labels) ? 1 : 0));
    state.write(PRE_FILTER_KEY, new PreFilterState(constraints, counts, paths, counts.map((m) => m.size), required, selfMatch));
    return Status.success();
  }

  filter(state: CycleState, pod: PodInfo, nodeInfo: NodeInfo): Status {
    const s = state.read<PreFilterState>(PRE_FILTER_KEY);
    if (!s) return stateNotFound(PRE_FILTER_KEY);
    const labels = nodeInfo.labels;
    for (let i = 0; i < s.constraints.length; i++) {
      const c = s.constraints[i];
      const value = labels[c.topologyKey];
      if (value === undefined) return REJECT_LABEL;
      const minMatch = s.domainsNum[i] < c.minDomains ? 0 : s.criticalPaths[i].nums[0];
      const skew = (s.tpValueToMatchNum[i].get(value) ?? 0) + s.selfMatch[i] - minMatch;
      if (skew > c.maxSkew) return REJECT_SKEW;
    }
    return Status.success();
  }

  preScore(state: CycleState, pod: PodInfo, filteredNodes: readonly NodeInfo[]): Status {
    const allNodes = this.handle.snapshot().nodeInfoList;
    if (allNodes.length === 0) return Status.skip();
    const constraints = this.constraintsOrError(pod, 'ScheduleAnyway');
    if (constraints instanceof Status) return constraints;
    if (constraints.length === 0) return Status.skip();
    // Only non-system-default spreading requires nodes to have every topology key.
    const requireAll = !!pod.pod.spec.topologySpreadConstraints?.length || !this.systemDefaulted;
    const ignored = new Set<string>();
    const counts = constraints.map(() => new Map<string, number>());
    const sizes = constraints.map(() => 0);
    for (const node of filteredNodes) {
      if (requireAll && !nodeHasAllKeys(node, constraints)) {
        ignored.add(node.name);
        continue;
      }
      constraints.forEach((c, i) => {
        if (c.topologyKey === LABEL_HOSTNAME) return;
        const v = node.labels[c.topologyKey];
        if (!counts[i].has(v)) {
          counts[i].set(v, 0);
          sizes[i]++;
        }
      });
    }
    const weights = constraints.map((c, i) => topologyNormalizingWeight(c.topologyKey === LABEL_HOSTNAME ? filteredNodes.length - ignored.size : sizes[i]));
    const required = new RequiredNodeAffinity(pod);
    const counters = constraints.map((c) => this.matchCounts.counter(c.selector, pod.namespace));
    for (const node of allNodes) {
      if (requireAll && !nodeHasAllKeys(node, constraints)) continue;
      for (let i = 0; i < constraints.length; i++) {
        const c = constraints[i];
        if (!nodeIncluded(c, pod, node, required)) continue;
        const v = node.labels[c.topologyKey];
        const cur = counts[i].get(v);
        // Domains without a candidate node are not counted; hostname counts are per node, at Score.
        if (cur === undefined) continue;
        counts[i].set(v, cur + counters[i](node));
      }
    }
    state.writeImmutable<PreScoreState>(PRE_SCORE_KEY, { constraints, ignoredNodes: ignored, tpValueToPodCounts: counts, normalizingWeights: weights, counters });
    return Status.success();
  }

  score(state: CycleState, pod: PodInfo, nodeInfo: NodeInfo): number | Status {
    const s = state.readImmutable<PreScoreState>(PRE_SCORE_KEY);
    if (!s) return stateNotFound(PRE_SCORE_KEY);
    if (s.ignoredNodes.has(nodeInfo.name)) return 0;
    let score = 0;
    const labels = nodeInfo.labels;
    s.constraints.forEach((c, i) => {
      const v = labels[c.topologyKey];
      if (v === undefined) return;
      const cnt = c.topologyKey === LABEL_HOSTNAME ? s.counters[i](nodeInfo) : (s.tpValueToPodCounts[i].get(v) ?? 0);
      score += scoreForCount(cnt, c.maxSkew, s.normalizingWeights[i]);
    });
    return Math.round(score);
  }

  /** upstream NormalizeScore: fewer matching pods → higher score; ignored nodes get 0. */
  normalizeScore(state: CycleState, _pod: PodInfo, nodes: readonly NodeInfo[], scores: number[]): Status {
    const s = state.readImmutable<PreScoreState>(PRE_SCORE_KEY);
    if (!s) return Status.success();
    let min = Number.MAX_SAFE_INTEGER;
    let max = 0;
    nodes.forEach((n, i) => {
      if (s.ignoredNodes.has(n.name)) return;
      min = Math.min(min, scores[i]);
      max = Math.max(max, scores[i]);
    });
    nodes.forEach((n, i) => {
      if (s.ignoredNodes.has(n.name)) scores[i] = 0;
      else if (max === 0) scores[i] = MAX_NODE_SCORE;
      else scores[i] = Math.trunc((MAX_NODE_SCORE * (max + min - scores[i])) / max);
    });
    return Status.success();
  }

  eventsToRegister(): ClusterEventWithHint[] {
    return [
      { event: { resource: 'Pod', action: ActionType.Add | ActionType.Delete | ActionType.UpdatePodLabel, label: 'AssignedPodChange' } },
      { event: { resource: 'Node', action: ActionType.Add | ActionType.Delete | ActionType.UpdateNodeLabel | ActionType.UpdateNodeTaint, label: 'NodeChange' } },
    ];
  }
}

/** Validates PodTopologySpreadArgs (upstream ValidatePodTopologySpreadArgs). */
export function validatePodTopologySpreadArgs(args: unknown, path: string): FieldError[] {
  if (typeof args !== 'object' || args === null) return [FieldError.typeInvalid(path, args, 'must be an object')];
  const a = args as { defaultingType?: unknown; defaultConstraints?: Array<Record<string, unknown>> };
  const errs: FieldError[] = [];
  if (a.defaultingType !== undefined && a.defaultingType !== 'System' && a.defaultingType !== 'List') {
    errs.push(FieldError.notSupported(`${path}.defaultingType`, a.defaultingType, ['System', 'List']));
  }
  if (a.defaultingType !== 'List' && a.defaultConstraints?.length) {
    errs.push(FieldError.invalid(`${path}.defaultingType`, a.defaultingType ?? 'System', 'when .defaultConstraints are not empty, defaultingType must be List'));
  }
  const seen = new Set<string>();
  (a.defaultConstraints ?? []).forEach((c, i) => {
    const at = `${path}.defaultConstraints[${i}]`;
    if (!Number.isInteger(c.maxSkew) || (c.maxSkew as number) <= 0) errs.push(FieldError.invalid(`${at}.maxSkew`, c.maxSkew, 'not in valid range (0, inf)'));
    if (typeof c.topologyKey !== 'string' || !c.topologyKey) errs.push(FieldError.required(`${at}.topologyKey`, 'can not be empty'));
    if (c.whenUnsatisfiable !== 'DoNotSchedule' && c.whenUnsatisfiable !== 'ScheduleAnyway') {
      errs.push(FieldError.notSupported(`${at}.whenUnsatisfiable`, c.whenUnsatisfiable, ['DoNotSchedule', 'ScheduleAnyway']));
    }
    if (c.labelSelector !== undefined) errs.push(FieldError.forbidden(`${at}.labelSelector`, 'constraint must not define a selector, as they deduced for each pod'));
    const key = `${c.topologyKey}/${c.whenUnsatisfiable}`;
    if (seen.has(key)) errs.push(FieldError.duplicate(at, `{${c.topologyKey}, ${c.whenUnsatisfiable}}`));
    seen.add(key);
  });
  return errs;
}

export const podTopologySpreadRegistration: PluginRegistration = {
  factory: (args, handle) => new PodTopologySpread(handle, (args ?? {}) as PodTopologySpreadArgs),
  validateArgs: validatePodTopologySpreadArgs,
};
