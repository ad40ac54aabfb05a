import type { FieldError, LabelSelector, Labels } from '@orch/apimachinery';
import type { Pod } from './api';
import type { Clock } from './clock';
import type { CycleState } from './cycle-state';
import type { ClusterEvent } from './events';
import type { Snapshot } from './snapshot';
import type { NodeToStatus, Status } from './status';
import type { NodeInfo, PodInfo, QueuedPodInfo } from './types';

// One small interface per extension point (upstream kube-scheduler/framework/interface.go).
// A plugin implements any subset; the framework calls them in profile order. Plugins never
// throw on the scheduling path: they return a Status.

/** Scores are integers in [MIN_NODE_SCORE, MAX_NODE_SCORE] after NormalizeScore. */
export const MAX_NODE_SCORE = 100;
export const MIN_NODE_SCORE = 0;

export interface Plugin {
  readonly name: string;
}

/** Orders the activeQ. Exactly one per scheduler, shared by all profiles. */
export interface QueueSortPlugin extends Plugin {
  less(a: QueuedPodInfo, b: QueuedPodInfo): boolean;
}

/** PreFilter may narrow the nodes to consider (e.g. matchFields on metadata.name). */
export class PreFilterResult {
  constructor(readonly nodeNames: ReadonlySet<string>) {}

  /** The intersection with `other` (undefined means all nodes). */
  merge(other: PreFilterResult | undefined): PreFilterResult {
    if (!other) return this;
    return new PreFilterResult(new Set([...this.nodeNames].filter((n) => other.nodeNames.has(n))));
  }
}

/**
 * Runs once per cycle before Filter; precomputes state into CycleState. Returns Skip to have
 * its Filter skipped for this pod, a rejection to fail the pod on every node, or a
 * PreFilterResult to restrict the nodes. `addPod`/`removePod` update the precomputed state
 * when preemption or nominated pods add/remove pods hypothetically.
 */
export interface PreFilterPlugin extends Plugin {
  preFilter(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): Status | PreFilterResult;
  addPod?(state: CycleState, podToSchedule: PodInfo, podToAdd: PodInfo, nodeInfo: NodeInfo): Status;
  removePod?(state: CycleState, podToSchedule: PodInfo, podToRemove: PodInfo, nodeInfo: NodeInfo): Status;
}

/** Decides whether the pod may run on one node; must not modify the NodeInfo. */
export interface FilterPlugin extends Plugin {
  filter(state: CycleState, pod: PodInfo, nodeInfo: NodeInfo): Status;
}

export interface PostFilterResult {
  status: Status;
  /** The node the pod should wait for (preemption's pick); "" clears a previous nomination. */
  nominatedNodeName?: string;
  /** Pods the caller must delete so the pod fits on the nominated node. */
  victims?: PodInfo[];
}

/** Runs only when no node passed Filter (e.g. preemption). */
export interface PostFilterPlugin extends Plugin {
  postFilter(state: CycleState, pod: PodInfo, statuses: NodeToStatus): PostFilterResult;
}

/** Runs once before Score with the feasible nodes; Skip skips its Score for this pod. */
export interface PreScorePlugin extends Plugin {
  preScore(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): Status;
}

/**
 * Ranks feasible nodes. `score` returns a number (or an Error status); `normalizeScore`, when
 * present, maps the raw scores (aligned with `nodes`) into [0, 100] in place.
 */
export interface ScorePlugin extends Plugin {
  score(state: CycleState, pod: PodInfo, nodeInfo: NodeInfo): number | Status;
  normalizeScore?(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[], scores: number[]): Status;
}

/** Reserves/unreserves plugin-side resources for the chosen node; unreserve must be idempotent. */
export interface ReservePlugin extends Plugin {
  reserve(state: CycleState, pod: PodInfo, nodeName: string): Status;
  unreserve(state: CycleState, pod: PodInfo, nodeName: string): void;
}

export interface PermitResult {
  /** Success, a rejection, or Wait (then `timeoutMs` bounds the wait). */
  status: Status;
  timeoutMs?: number;
}

/** Approves, rejects or delays binding. */
export interface PermitPlugin extends Plugin {
  permit(state: CycleState, pod: PodInfo, nodeName: string): PermitResult;
}

/** Work before binding (e.g. volumes); a failure unreserves the pod. */
export interface PreBindPlugin extends Plugin {
  preBind(state: CycleState, pod: PodInfo, nodeName: string): Promise<Status>;
}

/** Binds the pod; Skip passes to the next bind plugin. */
export interface BindPlugin extends Plugin {
  bind(state: CycleState, pod: PodInfo, nodeName: string): Promise<Status>;
}

/** Informational, after a successful bind. */
export interface PostBindPlugin extends Plugin {
  postBind(state: CycleState, pod: PodInfo, nodeName: string): void;
}

/** 'Queue' requeues the pod for the event; 'QueueSkip' leaves it where it is. */
export type QueueingHint = 'Queue' | 'QueueSkip';

/** Decides, for one pod rejected by the plugin, whether an event may make it schedulable. */
export type QueueingHintFn = (pod: Pod, oldObj: unknown, newObj: unknown) => QueueingHint;

export interface ClusterEventWithHint {
  event: ClusterEvent;
  /** Without a hint the event always requeues the pods the plugin rejected. */
  hint?: QueueingHintFn;
}

/** Plugins that can reject pods say which events may make those pods schedulable. */
export interface EnqueueExtensions {
  eventsToRegister(): ClusterEventWithHint[];
}

/**
 * A plugin at every node-filtering and node-scoring extension point: state computed once per
 * cycle in PreFilter and PreScore, Filter and Score per node, and the events that may make the
 * pods it rejected schedulable (NodeAffinity, NodeResourcesFit, InterPodAffinity, PodTopologySpread).
 */
export interface FilterScorePlugin extends PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions {}

/** Labels of namespaces, for namespaceSelector in pod affinity terms. */
export interface NamespaceLister {
  labels(name: string): Labels | undefined;
  list(): Iterable<{ name: string; labels: Labels }>;
}

/** Binds `pod` to `nodeName` through the API (`pods/binding`); rejects on failure. */
export type BindFunction = (pod: Pod, nodeName: string) => Promise<void>;

/** A pod held at Permit; plugins allow or reject it through the handle. */
export interface WaitingPod {
  readonly pod: PodInfo;
  readonly nodeName: string;
  /** Plugins still holding the pod. */
  pendingPlugins(): string[];
  allow(plugin: string): void;
  reject(plugin: string, message: string): void;
}

/** What plugins get from the framework (upstream framework.Handle). */
export interface Handle {
  /** The snapshot of the current cycle. */
  snapshot(): Snapshot;
  readonly namespaces: NamespaceLister;
  readonly clock: Clock;
  /** Uniform in [0, 1); injectable for deterministic tests. */
  random(): number;
  /** Pods nominated to `nodeName` by earlier preemptions. */
  nominatedPodsForNode(nodeName: string): readonly PodInfo[];
  /** Runs the Filter plugins, first with nominated pods of equal or higher priority added. */
  runFilterPluginsWithNominatedPods(state: CycleState, pod: PodInfo, nodeInfo: NodeInfo): Status;
  runPreFilterExtensionAddPod(state: CycleState, podToSchedule: PodInfo, podToAdd: PodInfo, nodeInfo: NodeInfo): Status;
  runPreFilterExtensionRemovePod(state: CycleState, podToSchedule: PodInfo, podToRemove: PodInfo, nodeInfo: NodeInfo): Status;
  getWaitingPod(key: string): WaitingPod | undefined;
  /** Used by DefaultBinder. */
  readonly bindFunction?: BindFunction;
  /**
   * The selector of the services/controllers owning `pod`, for system-default topology
   * spreading (upstream helper.DefaultSelector). Absent: no default spreading.
   */
  readonly defaultSpreadSelector?: (pod: Pod) => LabelSelector;
}

/** Builds a plugin from its (already validated) args. */
export type PluginFactory = (args: unknown, handle: Handle) => Plugin;

/** How the registry knows a plugin: its factory and optional args validation. */
export interface PluginRegistration {
  factory: PluginFactory;
  /** Problems with `args` (given at `path` in the configuration file). */
  validateArgs?(args: unknown, path: string): FieldError[];
}

export type Registry = Readonly<Record<string, PluginRegistration>>;

// Type guards: a plugin belongs to an extension point when it has that point's method.
export const isQueueSort = (p: Plugin): p is QueueSortPlugin => typeof (p as QueueSortPlugin).less === 'function';
export const isPreFilter = (p: Plugin): p is PreFilterPlugin => typeof (p as PreFilterPlugin).preFilter === 'function';
export const isFilter = (p: Plugin): p is FilterPlugin => typeof (p as FilterPlugin).filter === 'function';
export const isPostFilter = (p: Plugin): p is PostFilterPlugin => typeof (p as PostFilterPlugin).postFilter === 'function';
export const isPreScore = (p: Plugin): p is PreScorePlugin => typeof (p as PreScorePlugin).preScore === 'function';
export const isScore = (p: Plugin): p is ScorePlugin => typeof (p as ScorePlugin).score === 'function';
export const isReserve = (p: Plugin): p is ReservePlugin => typeof (p as ReservePlugin).reserve === 'function';
export const isPermit = (p: Plugin): p is PermitPlugin => typeof (p as PermitPlugin).permit === 'function';
export const isPreBind = (p: Plugin): p is PreBindPlugin => typeof (p as PreBindPlugin).preBind === 'function';
export const isBind = (p: Plugin): p is BindPlugin => typeof (p as BindPlugin).bind === 'function';
export const isPostBind = (p: Plugin): p is PostBindPlugin => typeof (p as PostBindPlugin).postBind === 'function';
export const isEnqueueExtensions = (p: Plugin): p is Plugin & EnqueueExtensions =>
  typeof (p as unknown as EnqueueExtensions).eventsToRegister === 'function';
