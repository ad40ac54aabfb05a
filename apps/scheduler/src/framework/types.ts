import { LabelSelector, labelSelectorFromObject, type LabelRequirement, type Labels } from '@orch/apimachinery';
import type { Node, Pod, PodAffinityTerm, Taint, WeightedPodAffinityTerm } from './api';
import { podKey, podPriority } from './api';
import { computePodRequests, Resource } from './resource';

// Scheduler-side views of pods and nodes, with everything a plugin needs precomputed once
// (upstream framework/types.go): parsed requests, affinity terms, aggregated node usage.

/**
 * A fast predicate equivalent to `sel.matches(labels)`: set-based requirements are compiled to
 * lookups (the selector is evaluated millions of times per second on the hot paths).
 */
export function labelMatcher(sel: LabelSelector): (labels: Labels) => boolean {
  if (sel.empty()) return () => true;
  const reqs = sel.requirements();
  if (reqs.length === 0) return () => false; // nothing()
  const checks: Array<(labels: Labels) => boolean> = [];
  for (const r of reqs) {
    const key = r.key;
    const values = new Set(r.values);
    switch (r.operator) {
      case '=':
      case '==':
      case 'in':
        if (r.values.length === 1) {
          const v = r.values[0];
          checks.push((l) => l[key] === v && Object.prototype.hasOwnProperty.call(l, key));
        } else checks.push((l) => Object.prototype.hasOwnProperty.call(l, key) && values.has(l[key]));
        break;
      case '!=':
      case 'notin':
        checks.push((l) => !Object.prototype.hasOwnProperty.call(l, key) || !values.has(l[key]));
        break;
      case 'exists':
        checks.push((l) => Object.prototype.hasOwnProperty.call(l, key));
        break;
      case '!':
        checks.push((l) => !Object.prototype.hasOwnProperty.call(l, key));
        break;
      default: {
        const single = LabelSelector.of([r]);
        checks.push((l) => single.matches(l));
      }
    }
  }
  if (checks.length === 1) return checks[0];
  return (l) => {
    for (let i = 0; i < checks.length; i++) if (!checks[i](l)) return false;
    return true;
  };
}

/** A parsed pod (anti-)affinity term (upstream framework.AffinityTerm). */
export class AffinityTerm {
  private readonly labelsMatch: (labels: Labels) => boolean;

  constructor(
    readonly namespaces: ReadonlySet<string>,
    readonly selector: LabelSelector,
    readonly topologyKey: string,
    /** Nothing when the term has no namespaceSelector. */
    readonly namespaceSelector: LabelSelector,
  ) {
    this.labelsMatch = labelMatcher(selector);
  }

  /**
   * upstream AffinityTerm.Matches: the pod is in one of the term's namespaces (or its
   * namespace's labels `nsLabels` match the namespace selector) and its labels match.
   */
  matches(pod: PodInfo, nsLabels: Labels | undefined): boolean {
    if (this.namespaces.has(pod.namespace) || this.namespaceSelector.matches(nsLabels)) return this.labelsMatch(pod.labels);
    return false;
  }

  /** A copy whose namespaces also include `extra` and whose namespace selector is cleared. */
  withNamespaces(extra: Iterable<string>): AffinityTerm {
    return new AffinityTerm(new Set([...this.namespaces, ...extra]), this.selector, this.topologyKey, LabelSelector.nothing());
  }
}

export interface WeightedAffinityTerm {
  term: AffinityTerm;
  weight: number;
}

/** True when every term matches `pod` (upstream podMatchesAllAffinityTerms); false for no terms. */
export function podMatchesAllAffinityTerms(terms: readonly AffinityTerm[], pod: PodInfo): boolean {
  if (terms.length === 0) return false;
  for (const t of terms) if (!t.matches(pod, undefined)) return false;
  return true;
}

function newAffinityTerm(pod: Pod, t: PodAffinityTerm): AffinityTerm {
  let selector = labelSelectorFromObject(t.labelSelector);
  // matchLabelKeys / mismatchLabelKeys: ANDed to the selector with the pod's own label values.
  const extra: LabelRequirement[] = [];
  const labels = pod.metadata.labels ?? {};
  for (const k of t.matchLabelKeys ?? []) if (k in labels) extra.push({ key: k, operator: 'in', values: [labels[k]] });
  for (const k of t.mismatchLabelKeys ?? []) if (k in labels) extra.push({ key: k, operator: 'notin', values: [labels[k]] });
  if (extra.length && t.labelSelector) selector = LabelSelector.of([...selector.requirements(), ...extra]);
  const namespaces = !t.namespaces?.length && !t.namespaceSelector ? [pod.metadata.namespace ?? ''] : (t.namespaces ?? []);
  return new AffinityTerm(new Set(namespaces), selector, t.topologyKey, labelSelectorFromObject(t.namespaceSelector));
}

function weightedTerms(pod: Pod, terms: WeightedPodAffinityTerm[] | undefined): WeightedAffinityTerm[] {
  return (terms ?? []).map((w) => ({ term: newAffinityTerm(pod, w.podAffinityTerm), weight: w.weight }));
}

interface Derived {
  requests: Resource;
  nonZeroCPU: number;
  nonZeroMemory: number;
  requiredAffinityTerms: readonly AffinityTerm[];
  requiredAntiAffinityTerms: readonly AffinityTerm[];
  preferredAffinityTerms: readonly WeightedAffinityTerm[];
  preferredAntiAffinityTerms: readonly WeightedAffinityTerm[];
  parseError?: string;
}

function derive(pod: Pod): Derived {
  const nonZero = computePodRequests(pod, true);
  const d: Derived = {
    requests: computePodRequests(pod),
    nonZeroCPU: nonZero.milliCPU,
    nonZeroMemory: nonZero.memory,
    requiredAffinityTerms: [],
    requiredAntiAffinityTerms: [],
    preferredAffinityTerms: [],
    preferredAntiAffinityTerms: [],
  };
  const a = pod.spec.affinity;
  if (a?.podAffinity || a?.podAntiAffinity) {
    try {
      d.requiredAffinityTerms = (a.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => newAffinityTerm(pod, t));
      d.requiredAntiAffinityTerms = (a.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => newAffinityTerm(pod, t));
      d.preferredAffinityTerms = weightedTerms(pod, a.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution);
      d.preferredAntiAffinityTerms = weightedTerms(pod, a.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution);
    } catch (e) {
      d.parseError = `parsing pod affinity terms: ${(e as Error).message}`;
    }
  }
  return d;
}

/**
 * A pod with its scheduling data parsed once (upstream framework.PodInfo). Immutable except
 * `namespaceNodeSelector`, which the scheduler sets before each attempt.
 */
export class PodInfo {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly labels: Labels;
  readonly priority: number;
  /** Effective requests: containers, init-container max rule, sidecars, overhead. */
  readonly requests: Resource;
  /** cpu (millicores) and memory with the scoring defaults for containers that state none. */
  readonly nonZeroCPU: number;
  readonly nonZeroMemory: number;
  readonly requiredAffinityTerms: readonly AffinityTerm[];
  readonly requiredAntiAffinityTerms: readonly AffinityTerm[];
  readonly preferredAffinityTerms: readonly WeightedAffinityTerm[];
  readonly preferredAntiAffinityTerms: readonly WeightedAffinityTerm[];
  /** Set when an affinity term has an invalid selector; InterPodAffinity rejects such pods. */
  readonly parseError?: string;
  /** The namespace's `scheduler.alpha.orch.io/node-selector`, parsed; an extra required node selector. */
  namespaceNodeSelector?: LabelSelector;

  /** Parses `pod`; with `base` (a PodInfo of the same spec) the parsed data is shared, not recomputed. */
  constructor(
    readonly pod: Pod,
    base?: PodInfo,
  ) {
    this.key = podKey(pod);
    this.namespace = pod.metadata.namespace ?? '';
    this.name = pod.metadata.name ?? '';
    this.labels = pod.metadata.labels ?? {};
    this.priority = podPriority(pod);
    const d: Derived = base ?? derive(pod);
    this.requests = d.requests;
    this.nonZeroCPU = d.nonZeroCPU;
    this.nonZeroMemory = d.nonZeroMemory;
    this.requiredAffinityTerms = d.requiredAffinityTerms;
    this.requiredAntiAffinityTerms = d.requiredAntiAffinityTerms;
    this.preferredAffinityTerms = d.preferredAffinityTerms;
    this.preferredAntiAffinityTerms = d.preferredAntiAffinityTerms;
    this.parseError = d.parseError;
    this.namespaceNodeSelector = base?.namespaceNodeSelector;
  }

  /** A PodInfo for a copy of the pod with `spec.nodeName` set (the assumed pod), sharing parsed data. */
  withNodeName(nodeName: string): PodInfo {
    return new PodInfo({ ...this.pod, spec: { ...this.pod.spec, nodeName } }, this);
  }

  /** upstream: the pod has pod affinity or anti-affinity of any kind. */
  hasAffinity(): boolean {
    const a = this.pod.spec.affinity;
    return !!(a?.podAffinity || a?.podAntiAffinity);
  }

  hasRequiredAntiAffinity(): boolean {
    return this.requiredAntiAffinityTerms.length > 0;
  }

  /** The pod is being deleted. */
  isTerminating(): boolean {
    return !!this.pod.metadata.deletionTimestamp;
  }
}

let generation = 0;
/** upstream nextGeneration: a process-wide counter bumped by every NodeInfo change. */
export function nextGeneration(): number {
  return ++generation;
}

/** upstream normalizedImageName: images without a tag get `:latest`. */
export function normalizedImageName(name: string): string {
  return name.lastIndexOf(':') <= name.lastIndexOf('/') ? `${name}:latest` : name;
}

const NO_LABELS: Labels = Object.freeze({});
const NO_TAINTS: readonly Taint[] = Object.freeze([]);

/**
 * A node with the pods on it and their aggregated requests (upstream framework.NodeInfo).
 * The cache mutates its own NodeInfos (each change bumps `generation`); snapshots hold
 * clones that plugins treat as read-only, except the clones preemption makes on purpose.
 */
export class NodeInfo {
  node: Node | undefined = undefined;
  pods: PodInfo[] = [];
  podsWithAffinity: PodInfo[] = [];
  podsWithRequiredAntiAffinity: PodInfo[] = [];
  /** Sum of the pods' requests. */
  requested = new Resource();
  /** Sum of the pods' requests with the scoring defaults for unset cpu/memory (cpu and memory only). */
  nonZeroRequested = new Resource();
  allocatable = new Resource();
  /** Normalized image name → size in bytes, for images present on the node. */
  imageSizes: Map<string, number> = new Map();
  generation = 0;

  constructor(node?: Node) {
    if (node) this.setNode(node);
    else this.generation = nextGeneration();
  }

  /** The node's name, labels and taints (empty without a node object), cached for the hot paths. */
  name = '';
  labels: Labels = NO_LABELS;
  taints: readonly Taint[] = NO_TAINTS;

  /** Sets the node object: parses allocatable and images. */
  setNode(node: Node): void {
    this.node = node;
    this.name = node.metadata.name ?? '';
    this.labels = node.metadata.labels ?? NO_LABELS;
    this.taints = node.spec?.taints ?? NO_TAINTS;
    this.allocatable = Resource.fromList(node.status?.allocatable);
    this.imageSizes = new Map();
    for (const img of node.status?.images ?? []) {
      for (const n of img.names ?? []) this.imageSizes.set(normalizedImageName(n), img.sizeBytes ?? 0);
    }
    this.generation = nextGeneration();
  }

  /** Forgets the node object but keeps its pods (pods may outlive their node in the cache). */
  removeNode(): void {
    this.node = undefined;
    this.name = '';
    this.labels = NO_LABELS;
    this.taints = NO_TAINTS;
    this.generation = nextGeneration();
  }

  /** Adds a pod and its requests. */
  addPod(pi: PodInfo): void {
    this.pods.push(pi);
    if (pi.hasAffinity()) this.podsWithAffinity.push(pi);
    if (pi.hasRequiredAntiAffinity()) this.podsWithRequiredAntiAffinity.push(pi);
    this.updateUsage(pi, 1);
  }

  /** Removes the pod with `key`; false when it is not on this node. */
  removePod(key: string): boolean {
    const i = this.pods.findIndex((p) => p.key === key);
    if (i < 0) return false;
    const pi = this.pods[i];
    swapRemove(this.pods, i);
    const a = this.podsWithAffinity.findIndex((p) => p.key === key);
    if (a >= 0) swapRemove(this.podsWithAffinity, a);
    const r = this.podsWithRequiredAntiAffinity.findIndex((p) => p.key === key);
    if (r >= 0) swapRemove(this.podsWithRequiredAntiAffinity, r);
    this.updateUsage(pi, -1);
    return true;
  }

  private updateUsage(pi: PodInfo, sign: number): void {
    this.requested.add(pi.requests, sign);
    this.nonZeroRequested.milliCPU += sign * pi.nonZeroCPU;
    this.nonZeroRequested.memory += sign * pi.nonZeroMemory;
    this.generation = nextGeneration();
  }

  /** A copy whose pod lists and sums can change without touching this one (same generation). */
  clone(): NodeInfo {
    const c = new NodeInfo();
    c.copyFrom(this);
    c.pods = [...this.pods];
    c.podsWithAffinity = [...this.podsWithAffinity];
    c.podsWithRequiredAntiAffinity = [...this.podsWithRequiredAntiAffinity];
    c.requested = this.requested.clone();
    c.nonZeroRequested = this.nonZeroRequested.clone();
    return c;
  }

  /** Makes this an alias of `other`'s state (arrays shared; used when refreshing snapshots in place). */
  copyFrom(other: NodeInfo): void {
    this.node = other.node;
    this.name = other.name;
    this.labels = other.labels;
    this.taints = other.taints;
    this.pods = other.pods;
    this.podsWithAffinity = other.podsWithAffinity;
    this.podsWithRequiredAntiAffinity = other.podsWithRequiredAntiAffinity;
    this.requested = other.requested;
    this.nonZeroRequested = other.nonZeroRequested;
    this.allocatable = other.allocatable;
    this.imageSizes = other.imageSizes;
    this.generation = other.generation;
  }
}

function swapRemove<T>(arr: T[], i: number): void {
  arr[i] = arr[arr.length - 1];
  arr.pop();
}

/** A pod waiting in the scheduling queue (upstream framework.QueuedPodInfo). */
export interface QueuedPodInfo {
  podInfo: PodInfo;
  /** When the pod was last added to the queue (ms). */
  timestamp: number;
  /** When the pod was first popped for scheduling. */
  initialAttemptTimestamp?: number;
  /** Number of scheduling attempts so far. */
  attempts: number;
  /** Plugins that rejected the pod in its last attempt; their events requeue it. */
  unschedulablePlugins: Set<string>;
}
