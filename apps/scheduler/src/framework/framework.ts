import { FieldError, type LabelSelector } from '@orch/apimachinery';
import type { Pod } from './api';
import { realClock, type Clock } from './clock';
import { ConfigError, EXTENSION_POINTS, mergePluginSet, type ExtensionPoint, type PluginRef, type PluginSet, type ProfileConfig } from './config';
import type { CycleState } from './cycle-state';
import { ActionType, type ClusterEvent } from './events';
import {
  isBind,
  isEnqueueExtensions,
  isFilter,
  isPermit,
  isPostBind,
  isPostFilter,
  isPreBind,
  isPreFilter,
  isPreScore,
  isQueueSort,
  isReserve,
  isScore,
  MAX_NODE_SCORE,
  MIN_NODE_SCORE,
  PreFilterResult,
  type BindFunction,
  type BindPlugin,
  type FilterPlugin,
  type Handle,
  type NamespaceLister,
  type PermitPlugin,
  type Plugin,
  type PostBindPlugin,
  type PostFilterPlugin,
  type PostFilterResult,
  type PreBindPlugin,
  type PreFilterPlugin,
  type PreScorePlugin,
  type QueueingHintFn,
  type QueueSortPlugin,
  type Registry,
  type ReservePlugin,
  type ScorePlugin,
  type WaitingPod,
} from './interface';
import type { Snapshot } from './snapshot';
import { Status, type NodeToStatus } from './status';
import type { NodeInfo, PodInfo, QueuedPodInfo } from './types';

/** Longest a Permit plugin may hold a pod (upstream maxTimeout). */
const MAX_PERMIT_TIMEOUT_MS = 15 * 60 * 1000;

/** Nominated pods by node, kept by the scheduling queue. */
export interface PodNominator {
  nominatedPodsForNode(nodeName: string): readonly PodInfo[];
  /** True when no pod is nominated anywhere (fast path for filters). */
  isEmpty(): boolean;
}

const EMPTY_NAMESPACES: NamespaceLister = { labels: () => undefined, list: () => [] };
const NO_NOMINATIONS: PodNominator = { nominatedPodsForNode: () => [], isEmpty: () => true };

/** What a Framework needs from the scheduler around it. */
export interface FrameworkOptions {
  registry: Registry;
  /** Plugins enabled at multiPoint unless the profile disables them. */
  defaultPlugins: PluginSet;
  /** The snapshot of the current cycle. */
  snapshot: () => Snapshot;
  namespaces?: NamespaceLister;
  nominator?: PodNominator;
  clock?: Clock;
  random?: () => number;
  bindFunction?: BindFunction;
  defaultSpreadSelector?: (pod: Pod) => LabelSelector;
}

/** A registered interest of one plugin in one event. */
export interface PluginEvent {
  plugin: string;
  event: ClusterEvent;
  hint?: QueueingHintFn;
}

class WaitingPodImpl implements WaitingPod {
  private readonly timers = new Map<string, unknown>();
  private resolve!: (s: Status) => void;
  readonly done: Promise<Status>;

  constructor(
    readonly pod: PodInfo,
    readonly nodeName: string,
    waits: Map<string, number>,
    private readonly clock: Clock,
  ) {
    this.done = new Promise((r) => (this.resolve = r));
    for (const [plugin, ms] of waits) {
      this.timers.set(
        plugin,
        clock.setTimeout(() => this.reject(plugin, `rejected due to timeout after waiting ${ms}ms at plugin ${plugin}`), ms),
      );
    }
  }

  pendingPlugins(): string[] {
    return [...this.timers.keys()];
  }

  allow(plugin: string): void {
    const t = this.timers.get(plugin);
    if (t === undefined) return;
    this.clock.clearTimeout(t);
    this.timers.delete(plugin);
    if (this.timers.size === 0) this.resolve(Status.success());
  }

  reject(plugin: string, message: string): void {
    for (const t of this.timers.values()) this.clock.clearTimeout(t);
    this.timers.clear();
    this.resolve(Status.unschedulable(message).withPlugin(plugin));
  }
}

/**
 * One scheduling profile (upstream frameworkImpl): the plugins enabled at each extension point,
 * in order, with score weights, and the runners for each point. It is also the Handle its
 * plugins get. Construction validates the profile and throws ConfigError.
 */
export class Framework implements Handle {
  readonly profileName: string;
  readonly percentageOfNodesToScore?: number;
  readonly queueSortPlugin: QueueSortPlugin;
  readonly preFilterPlugins: PreFilterPlugin[] = [];
  readonly filterPlugins: FilterPlugin[] = [];
  readonly postFilterPlugins: PostFilterPlugin[] = [];
  readonly preScorePlugins: PreScorePlugin[] = [];
  readonly scorePlugins: ScorePlugin[] = [];
  readonly reservePlugins: ReservePlugin[] = [];
  readonly permitPlugins: PermitPlugin[] = [];
  readonly preBindPlugins: PreBindPlugin[] = [];
  readonly bindPlugins: BindPlugin[] = [];
  readonly postBindPlugins: PostBindPlugin[] = [];
  /** Score weight by plugin name. */
  readonly scoreWeights = new Map<string, number>();
  /** Every instantiated plugin by name. */
  readonly plugins = new Map<string, Plugin>();

  readonly namespaces: NamespaceLister;
  readonly clock: Clock;
  readonly bindFunction?: BindFunction;
  readonly defaultSpreadSelector?: (pod: Pod) => LabelSelector;
  private readonly snapshotFn: () => Snapshot;
  private readonly nominator: PodNominator;
  private readonly randomFn: () => number;
  private readonly waitingPods = new Map<string, WaitingPodImpl>();

  constructor(profile: ProfileConfig, opts: FrameworkOptions) {
    this.profileName = profile.schedulerName;
    this.percentageOfNodesToScore = profile.percentageOfNodesToScore;
    this.snapshotFn = opts.snapshot;
    this.namespaces = opts.namespaces ?? EMPTY_NAMESPACES;
    this.nominator = opts.nominator ?? NO_NOMINATIONS;
    this.clock = opts.clock ?? realClock;
    this.randomFn = opts.random ?? Math.random;
    this.bindFunction = opts.bindFunction;
    this.defaultSpreadSelector = opts.defaultSpreadSelector;

    const path = `profiles[${profile.schedulerName}].plugins`;
    const multi = mergePluginSet(opts.defaultPlugins, profile.plugins?.multiPoint).enabled ?? [];
    const perPoint = new Map<ExtensionPoint, PluginSet>(EXTENSION_POINTS.map((p) => [p, mergePluginSet({}, profile.plugins?.[p])]));
    const args = new Map((profile.pluginConfig ?? []).map((pc) => [pc.name, pc.args]));
    const errs: FieldError[] = [];

    const needed = new Set<string>(multi.map((r) => r.name));
    for (const set of perPoint.values()) for (const r of set.enabled ?? []) needed.add(r.name);
    for (const name of needed) {
      const reg = opts.registry[name];
      if (!reg) {
        errs.push(FieldError.invalid(path, name, 'plugin not found in the registry'));
        continue;
      }
      this.plugins.set(name, reg.factory(args.get(name), this));
    }
    if (errs.length) throw new ConfigError(errs);

    const multiByName = new Map(multi.map((r) => [r.name, r] as const));
    const queueSorts: QueueSortPlugin[] = [];
    for (const point of EXTENSION_POINTS) {
      const set = perPoint.get(point)!;
      const refs = this.expand(point, set, multi, multiByName, `${path}.${point}`, errs);
      for (const ref of refs) {
        const pl = this.plugins.get(ref.name)!;
        if (!IMPLEMENTS[point](pl)) continue;
        if (point === 'queueSort') queueSorts.push(pl as QueueSortPlugin);
        // The framework keeps each point's plugins in `<point>Plugins`.
        else (this[`${point}Plugins` as const] as Plugin[]).push(pl);
        if (point === 'score') {
          const w = ref.weight ?? multiByName.get(ref.name)?.weight ?? 0;
          this.scoreWeights.set(ref.name, w === 0 ? 1 : w);
        }
      }
    }
    if (queueSorts.length !== 1) errs.push(FieldError.invalid(`${path}.queueSort`, queueSorts.length, 'exactly one queue sort plugin must be enabled'));
    if (this.bindPlugins.length === 0) errs.push(FieldError.required(`${path}.bind`, 'at least one bind plugin is needed'));
    const totalWeight = [...this.scoreWeights.values()].reduce((a, b) => a + b, 0);
    if (totalWeight * MAX_NODE_SCORE > Number.MAX_SAFE_INTEGER) errs.push(FieldError.invalid(`${path}.score`, totalWeight, 'total score weight is too large'));
    if (errs.length) throw new ConfigError(errs);
    this.queueSortPlugin = queueSorts[0];
  }

  /**
   * upstream expandMultiPointPlugins: plugins enabled at the point that are also multiPoint
   * plugins keep their place first, then the multiPoint plugins implementing the point (unless
   * disabled there), then the remaining plugins enabled at the point.
   */
  private expand(
    point: ExtensionPoint,
    set: PluginSet,
    multi: readonly PluginRef[],
    multiByName: ReadonlyMap<string, PluginRef>,
    path: string,
    errs: FieldError[],
  ): PluginRef[] {
    const explicit = set.enabled ?? [];
    const seen = new Set<string>();
    for (const r of explicit) {
      if (seen.has(r.name)) errs.push(FieldError.duplicate(path, r.name));
      seen.add(r.name);
      const pl = this.plugins.get(r.name);
      if (pl && !IMPLEMENTS[point](pl)) errs.push(FieldError.invalid(path, r.name, `plugin does not extend the ${point} extension point`));
    }
    const disabled = new Set((set.disabled ?? []).map((d) => d.name));
    const fromMulti = disabled.has('*') ? [] : multi.filter((r) => !disabled.has(r.name) && !seen.has(r.name) && IMPLEMENTS[point](this.plugins.get(r.name)!));
    return [...explicit.filter((r) => multiByName.has(r.name)), ...fromMulti, ...explicit.filter((r) => !multiByName.has(r.name))];
  }

  // ---------------------------------------------------------------- Handle

  snapshot(): Snapshot {
    return this.snapshotFn();
  }

  random(): number {
    return this.randomFn();
  }

  nominatedPodsForNode(nodeName: string): readonly PodInfo[] {
    return this.nominator.nominatedPodsForNode(nodeName);
  }

  getWaitingPod(key: string): WaitingPod | undefined {
    return this.waitingPods.get(key);
  }

  // ---------------------------------------------------------------- queue

  queueSortLess(a: QueuedPodInfo, b: QueuedPodInfo): boolean {
    return this.queueSortPlugin.less(a, b);
  }

  /**
   * The events each plugin that can reject pods wants (upstream fillEventToPluginMap); a
   * rejecting plugin without EnqueueExtensions gets every event.
   */
  eventsToRegister(): PluginEvent[] {
    const out: PluginEvent[] = [];
    const rejecting = new Set<Plugin>([...this.preFilterPlugins, ...this.filterPlugins, ...this.reservePlugins, ...this.permitPlugins]);
    for (const pl of rejecting) {
      if (isEnqueueExtensions(pl)) for (const e of pl.eventsToRegister()) out.push({ plugin: pl.name, event: e.event, hint: e.hint });
      else out.push({ plugin: pl.name, event: { resource: '*', action: ActionType.All, label: 'WildCard' } });
    }
    return out;
  }

  // ---------------------------------------------------------------- scheduling cycle

  /**
   * Runs PreFilter plugins in order. Skips are recorded in `state`; the first rejection or
   * error ends the run. `result` restricts the nodes to consider (undefined: all);
   * `narrowedBy` names the plugins that restricted them.
   */
  runPreFilterPlugins(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): { status: Status; result?: PreFilterResult; narrowedBy: string[] } {
    let result: PreFilterResult | undefined;
    const narrowedBy: string[] = [];
    for (const pl of this.preFilterPlugins) {
      const r = pl.preFilter(state, pod, nodes);
      if (r instanceof PreFilterResult) {
        result = r.merge(result);
        narrowedBy.push(pl.name);
        if (result.nodeNames.size === 0) {
          return { status: Status.unresolvable(`node(s) didn't satisfy plugin(s) [${narrowedBy.join(' ')}] simultaneously`).withPlugin(pl.name), narrowedBy };
        }
        continue;
      }
      if (r.isSuccess()) continue;
      if (r.isSkip()) {
        state.skipFilterPlugins.add(pl.name);
        continue;
      }
      if (r.isRejected()) return { status: r.withPlugin(pl.name), narrowedBy };
      return { status: wrapError(r, 'PreFilter', pl.name), narrowedBy };
    }
    return { status: Status.success(), result, narrowedBy };
  }

  /** The Filter plugins not skipped for this cycle, in order. */
  activeFilterPlugins(state: CycleState): FilterPlugin[] {
    return state.skipFilterPlugins.size === 0 ? this.filterPlugins : this.filterPlugins.filter((p) => !state.skipFilterPlugins.has(p.name));
  }

  /** Runs `filters` on one node; the first non-success status (attributed to its plugin) wins. */
  static runFilters(filters: readonly FilterPlugin[], state: CycleState, pod: PodInfo, nodeInfo: NodeInfo): Status {
    for (let i = 0; i < filters.length; i++) {
      const s = filters[i].filter(state, pod, nodeInfo);
      if (s.code !== 'Success') return s.isRejected() ? s.withPlugin(filters[i].name) : wrapError(s, 'Filter', filters[i].name);
    }
    return Status.success();
  }

  runFilterPlugins(state: CycleState, pod: PodInfo, nodeInfo: NodeInfo): Status {
    return Framework.runFilters(this.activeFilterPlugins(state), state, pod, nodeInfo);
  }

  /**
   * upstream RunFilterPluginsWithNominatedPods: the pod must fit both with the nominated pods
   * of equal or higher priority added to the node and without them (they may not come).
   */
  runFilterPluginsWithNominatedPods(state: CycleState, pod: PodInfo, nodeInfo: NodeInfo, filters = this.activeFilterPlugins(state)): Status {
    if (this.nominator.isEmpty()) return Framework.runFilters(filters, state, pod, nodeInfo);
    const nominated = this.nominator.nominatedPodsForNode(nodeInfo.name).filter((p) => p.priority >= pod.priority && p.key !== pod.key);
    if (nominated.length === 0) return Framework.runFilters(filters, state, pod, nodeInfo);
    const stateOut = state.clone();
    const nodeOut = nodeInfo.clone();
    for (const p of nominated) {
      nodeOut.addPod(p);
      const s = this.runPreFilterExtensionAddPod(stateOut, pod, p, nodeOut);
      if (!s.isSuccess()) return s;
    }
    const withNominated = Framework.runFilters(filters, stateOut, pod, nodeOut);
    if (!withNominated.isSuccess()) return withNominated;
    return Framework.runFilters(filters, state, pod, nodeInfo);
  }

  runPreFilterExtensionAddPod(state: CycleState, podToSchedule: PodInfo, podToAdd: PodInfo, nodeInfo: NodeInfo): Status {
    return this.runPreFilterExtension('addPod', 'AddPod', state, podToSchedule, podToAdd, nodeInfo);
  }

  runPreFilterExtensionRemovePod(state: CycleState, podToSchedule: PodInfo, podToRemove: PodInfo, nodeInfo: NodeInfo): Status {
    return this.runPreFilterExtension('removePod', 'RemovePod', state, podToSchedule, podToRemove, nodeInfo);
  }

  /** The PreFilter extensions `hook` of the plugins not skipped, in order; the first failure is returned. */
  private runPreFilterExtension(hook: 'addPod' | 'removePod', name: string, state: CycleState, podToSchedule: PodInfo, pod: PodInfo, nodeInfo: NodeInfo): Status {
    for (const pl of this.preFilterPlugins) {
      const extension = pl[hook];
      if (!extension || state.skipFilterPlugins.has(pl.name)) continue;
      const s = extension.call(pl, state, podToSchedule, pod, nodeInfo);
      if (!s.isSuccess()) return wrapError(s, name, pl.name);
    }
    return Status.success();
  }

  /**
   * Runs PostFilter plugins until one succeeds (its result is returned) or one errors; when
   * all reject, the result is Unschedulable with their reasons.
   */
  runPostFilterPlugins(state: CycleState, pod: PodInfo, statuses: NodeToStatus): PostFilterResult {
    const reasons: string[] = [];
    let last: PostFilterResult | undefined;
    for (const pl of this.postFilterPlugins) {
      const r = pl.postFilter(state, pod, statuses);
      if (r.status.isSuccess()) return r;
      if (!r.status.isRejected()) return { ...r, status: wrapError(r.status, 'PostFilter', pl.name) };
      reasons.push(...r.status.reasons);
      last = r;
    }
    return { ...last, status: Status.unschedulable(...reasons) };
  }

  /** Runs PreScore plugins; Skips are recorded in `state`, anything else but success is an error. */
  runPreScorePlugins(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): Status {
    for (const pl of this.preScorePlugins) {
      const s = pl.preScore(state, pod, nodes);
      if (s.isSkip()) state.skipScorePlugins.add(pl.name);
      else if (!s.isSuccess()) return wrapError(s, 'PreScore', pl.name);
    }
    return Status.success();
  }

  /**
   * Runs Score (+ NormalizeScore) of each non-skipped plugin over `nodes` and returns the
   * weighted sum per node, aligned with `nodes`.
   */
  runScorePlugins(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): { status: Status; totals: number[] } {
    const totals = new Array<number>(nodes.length).fill(0);
    for (const pl of this.scorePlugins) {
      if (state.skipScorePlugins.has(pl.name)) continue;
      const scores = new Array<number>(nodes.length);
      for (let i = 0; i < nodes.length; i++) {
        const s = pl.score(state, pod, nodes[i]);
        if (typeof s !== 'number') return { status: wrapError(s, 'Score', pl.name), totals };
        scores[i] = s;
      }
      if (pl.normalizeScore) {
        const s = pl.normalizeScore(state, pod, nodes, scores);
        if (!s.isSuccess()) return { status: wrapError(s, 'NormalizeScore', pl.name), totals };
      }
      const w = this.scoreWeights.get(pl.name) ?? 1;
      for (let i = 0; i < nodes.length; i++) {
        const s = scores[i];
        if (!(s >= MIN_NODE_SCORE && s <= MAX_NODE_SCORE)) {
          return { status: Status.error(`plugin "${pl.name}" returns an invalid score ${s}, it should in the range of [${MIN_NODE_SCORE}, ${MAX_NODE_SCORE}] after normalizing`), totals };
        }
        totals[i] += s * w;
      }
    }
    return { status: Status.success(), totals };
  }

  /** Runs Reserve plugins in order; the first failure is returned (the caller then unreserves). */
  runReservePluginsReserve(state: CycleState, pod: PodInfo, nodeName: string): Status {
    for (const pl of this.reservePlugins) {
      const s = pl.reserve(state, pod, nodeName);
      if (!s.isSuccess()) return s.isRejected() ? s.withPlugin(pl.name) : wrapError(s, 'Reserve', pl.name);
    }
    return Status.success();
  }

  /** Runs Unreserve of every Reserve plugin, in reverse order. */
  runReservePluginsUnreserve(state: CycleState, pod: PodInfo, nodeName: string): void {
    for (let i = this.reservePlugins.length - 1; i >= 0; i--) this.reservePlugins[i].unreserve(state, pod, nodeName);
  }

  /**
   * Runs Permit plugins. A rejection or error ends the run; if some plugins ask to wait, the
   * pod becomes a WaitingPod and Wait is returned (the binding cycle then awaits waitOnPermit).
   */
  runPermitPlugins(state: CycleState, pod: PodInfo, nodeName: string): Status {
    const waits = new Map<string, number>();
    for (const pl of this.permitPlugins) {
      const r = pl.permit(state, pod, nodeName);
      if (r.status.isSuccess()) continue;
      if (r.status.isRejected()) return r.status.withPlugin(pl.name);
      if (r.status.isWait()) waits.set(pl.name, Math.min(r.timeoutMs ?? MAX_PERMIT_TIMEOUT_MS, MAX_PERMIT_TIMEOUT_MS));
      else return wrapError(r.status, 'Permit', pl.name);
    }
    if (waits.size === 0) return Status.success();
    this.waitingPods.set(pod.key, new WaitingPodImpl(pod, nodeName, waits, this.clock));
    return Status.wait(`one or more plugins asked to wait: ${[...waits.keys()].join(', ')}`);
  }

  /** Resolves when the pod, if waiting at Permit, is allowed (Success) or rejected/timed out. */
  async waitOnPermit(pod: PodInfo): Promise<Status> {
    const wp = this.waitingPods.get(pod.key);
    if (!wp) return Status.success();
    try {
      return await wp.done;
    } finally {
      this.waitingPods.delete(pod.key);
    }
  }

  /** Rejects every waiting pod (on shutdown). */
  rejectWaitingPods(message: string): void {
    for (const wp of this.waitingPods.values()) wp.reject('', message);
  }

  async runPreBindPlugins(state: CycleState, pod: PodInfo, nodeName: string): Promise<Status> {
    for (const pl of this.preBindPlugins) {
      const s = await pl.preBind(state, pod, nodeName);
      if (!s.isSuccess()) return s.isRejected() ? s.withPlugin(pl.name) : wrapError(s, 'PreBind', pl.name);
    }
    return Status.success();
  }

  /** Runs Bind plugins until one does not Skip; Skip when all skip. */
  async runBindPlugins(state: CycleState, pod: PodInfo, nodeName: string): Promise<Status> {
    for (const pl of this.bindPlugins) {
      const s = await pl.bind(state, pod, nodeName);
      if (s.isSkip()) continue;
      if (!s.isSuccess()) return s.isRejected() ? s.withPlugin(pl.name) : wrapError(s, 'Bind', pl.name);
      return s;
    }
    return Status.skip();
  }

  runPostBindPlugins(state: CycleState, pod: PodInfo, nodeName: string): void {
    for (const pl of this.postBindPlugins) pl.postBind(state, pod, nodeName);
  }
}

/** Whether a plugin extends an extension point: it has the point's method. */
const IMPLEMENTS: { readonly [P in ExtensionPoint]: (pl: Plugin) => boolean } = {
  queueSort: isQueueSort,
  preFilter: isPreFilter,
  filter: isFilter,
  postFilter: isPostFilter,
  preScore: isPreScore,
  score: isScore,
  reserve: isReserve,
  permit: isPermit,
  preBind: isPreBind,
  bind: isBind,
  postBind: isPostBind,
};

/** An Error status naming the point and plugin (non-error statuses are passed through with the plugin set). */
function wrapError(s: Status, point: string, plugin: string): Status {
  if (s.code !== 'Error') return s.withPlugin(plugin);
  return new Status('Error', [`running ${point} plugin "${plugin}": ${s.message()}`], plugin, s.error);
}
