import { FieldError, LabelSelector, parseLabelSelector, type Labels } from '@orch/apimachinery';
import { defaultPlugins as inTreeDefaultPlugins, inTreeRegistry } from '../plugins/registry';
import { Nominator } from '../queue/nominator';
import { SchedulingQueue } from '../queue/scheduling-queue';
import { DEFAULT_SCHEDULER_NAME, podKey, podRef, type Node, type Pod, type PodCondition } from './api';
import { SchedulerCache } from './cache';
import { realClock, type Clock } from './clock';
import { ConfigError, defaultSchedulerConfiguration, validateSchedulerConfiguration, type PluginSet, type SchedulerConfiguration } from './config';
import { CycleState } from './cycle-state';
import { ActionType, Events, nodeUpdateEvent } from './events';
import { Framework, type PluginEvent } from './framework';
import type { BindFunction, NamespaceLister, Registry } from './interface';
import type { AttemptResult, SchedulerMetrics } from './metrics';
import type { PriorityResolver } from './priority';
import { Snapshot } from './snapshot';
import { FitError, NodeToStatus, Status, type Diagnosis } from './status';
import type { NodeInfo, PodInfo, QueuedPodInfo } from './types';

/** Below this many nodes every node is filtered (upstream minFeasibleNodesToFind). */
export const MIN_FEASIBLE_NODES_TO_FIND = 100;
/** The adaptive percentage never goes below this (upstream minFeasibleNodesPercentageToFind). */
export const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5;
export const ERR_NO_NODES_AVAILABLE = 'no nodes available to schedule pods';

/**
 * upstream numFeasibleNodesToFind: how many feasible nodes to find before scoring. All of
 * them below 100 nodes; else `percentage`% (0 = adaptive: 50 − nodes/125, at least 5), at
 * least 100.
 */
export function numFeasibleNodesToFind(percentage: number, numAllNodes: number): number {
  if (numAllNodes < MIN_FEASIBLE_NODES_TO_FIND) return numAllNodes;
  let pct = percentage;
  if (pct === 0) pct = Math.max(50 - Math.trunc(numAllNodes / 125), MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND);
  return Math.max(Math.trunc((numAllNodes * pct) / 100), MIN_FEASIBLE_NODES_TO_FIND);
}

/** An event for the pod's event stream (`kubectl describe`). */
export interface SchedulerEvent {
  /** The object the event is about. */
  pod: Pod;
  type: 'Normal' | 'Warning';
  /** Scheduled, FailedScheduling or Preempted. */
  reason: string;
  message: string;
}

/** What the scheduler asks of the API; the caller implements these with a client. */
export interface SchedulerCallbacks {
  /** Creates the `pods/binding` subresource; rejects on failure. */
  bind: BindFunction;
  /**
   * Preemption chose `nominatedNodeName` for `pod`: delete `victims`. (The nomination itself
   * is written through `updatePodStatus`.)
   */
  preempt?: (pod: Pod, nominatedNodeName: string, victims: Pod[]) => Promise<void>;
  recordEvent?: (event: SchedulerEvent) => void;
  /**
   * Sets the PodScheduled=False condition of a pod that could not be scheduled and, when
   * `nominatedNodeName` is not undefined, `status.nominatedNodeName` ("" clears it).
   */
  updatePodStatus?: (pod: Pod, condition: PodCondition, nominatedNodeName?: string) => Promise<void>;
  /** Errors that have nowhere else to go (failed callbacks). */
  onError?: (message: string, err: unknown) => void;
}

export interface SchedulerOptions extends SchedulerCallbacks {
  /** Defaults to one `default-scheduler` profile with the default plugins. */
  config?: SchedulerConfiguration;
  registry?: Registry;
  /** Plugins enabled at multiPoint by default. */
  defaultPlugins?: PluginSet;
  clock?: Clock;
  random?: () => number;
  /** Labels of namespaces (for pod affinity namespaceSelector). */
  namespaces?: NamespaceLister;
  /** The `scheduler.alpha.orch.io/node-selector` annotation of a namespace, if any. */
  namespaceNodeSelector?: (namespace: string) => string | undefined;
  /** Selector of the owners of a pod, for default topology spreading. */
  defaultSpreadSelector?: (pod: Pod) => LabelSelector;
  /** Fills `spec.priority` from PriorityClasses for pods that lack it. */
  priorities?: PriorityResolver;
  metrics?: SchedulerMetrics;
}

/** The outcome of the scheduling algorithm for one pod. */
export interface ScheduleResult {
  suggestedHost: string;
  evaluatedNodes: number;
  feasibleNodes: number;
}

const TERMINAL_PHASES = new Set(['Succeeded', 'Failed']);

const yieldToEventLoop = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * The scheduler core (upstream pkg/scheduler): feeds cluster events into the cache and the
 * queue (`on*` handlers), and runs `scheduleOne` in a loop: pop a pod, run its profile's
 * scheduling cycle on a fresh snapshot, assume the pod on the chosen node in the cache, then
 * bind asynchronously (forgetting the assumption if binding fails) while the next pod is
 * scheduled. Failures requeue the pod and report through the callbacks.
 */
export class Scheduler {
  readonly cache = new SchedulerCache();
  readonly queue: SchedulingQueue;
  readonly profiles = new Map<string, Framework>();
  private readonly snapshot = new Snapshot();
  private readonly config: SchedulerConfiguration;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly cb: SchedulerCallbacks;
  private readonly metrics?: SchedulerMetrics;
  private readonly nsSelectorFn?: (namespace: string) => string | undefined;
  private readonly priorities?: PriorityResolver;
  private readonly parsedSelectors = new Map<string, LabelSelector>();
  private readonly pending = new Set<Promise<void>>();
  private nextStartNodeIndex = 0;
  private loop?: Promise<void>;

  /** Builds every profile; throws ConfigError for an invalid configuration. */
  constructor(opts: SchedulerOptions) {
    this.config = opts.config ?? defaultSchedulerConfiguration();
    const registry = opts.registry ?? inTreeRegistry;
    const errs = validateSchedulerConfiguration(this.config, registry);
    if (errs.length) throw new ConfigError(errs);
    this.clock = opts.clock ?? realClock;
    this.random = opts.random ?? Math.random;
    this.cb = opts;
    this.metrics = opts.metrics;
    this.nsSelectorFn = opts.namespaceNodeSelector;
    this.priorities = opts.priorities;
    const events = new Map<string, PluginEvent[]>();
    const nominator = new Nominator();
    for (const profile of this.config.profiles) {
      const fwk = new Framework(profile, {
        registry,
        defaultPlugins: opts.defaultPlugins ?? inTreeDefaultPlugins,
        snapshot: () => this.snapshot,
        namespaces: opts.namespaces,
        nominator,
        clock: this.clock,
        random: this.random,
        bindFunction: opts.bind,
        defaultSpreadSelector: opts.defaultSpreadSelector,
      });
      this.profiles.set(profile.schedulerName, fwk);
      events.set(profile.schedulerName, fwk.eventsToRegister());
    }
    const fwks = [...this.profiles.values()];
    const sortName = fwks[0].queueSortPlugin.name;
    if (fwks.some((f) => f.queueSortPlugin.name !== sortName)) {
      throw new ConfigError([FieldError.invalid('profiles', sortName, 'all profiles must use the same queue sort plugin')]);
    }
    this.queue = new SchedulingQueue({
      less: (a, b) => fwks[0].queueSortLess(a, b),
      clock: this.clock,
      initialBackoffMs: this.config.podInitialBackoffSeconds * 1000,
      maxBackoffMs: this.config.podMaxBackoffSeconds * 1000,
      eventsFor: (name) => events.get(name) ?? [],
      nominator,
      onIncoming: (queue, event) => this.metrics?.queueIncomingPods.inc({ queue, event }),
    });
    this.metrics?.setPendingSource(() => this.queue.pendingPods());
  }

  // ---------------------------------------------------------------- event handlers

  /** True when one of the profiles schedules pods naming `pod.spec.schedulerName`. */
  responsibleFor(pod: Pod): boolean {
    return this.profiles.has(pod.spec.schedulerName || DEFAULT_SCHEDULER_NAME);
  }

  onNodeAdd(node: Node): void {
    this.cache.addNode(node);
    this.queue.moveAllToActiveOrBackoffQueue(Events.NodeAdd, undefined, node);
  }

  onNodeUpdate(oldNode: Node, newNode: Node): void {
    this.cache.updateNode(oldNode, newNode);
    const event = nodeUpdateEvent(oldNode, newNode);
    if (event) this.queue.moveAllToActiveOrBackoffQueue(event, oldNode, newNode);
  }

  onNodeDelete(node: Node): void {
    this.cache.removeNode(node);
  }

  /** A pod appeared: bound (live) pods go to the cache, unbound pods of our profiles to the queue. */
  onPodAdd(added: Pod): void {
    const pod = this.withPriority(added);
    if (pod.spec.nodeName) {
      if (TERMINAL_PHASES.has(pod.status?.phase ?? '')) return;
      this.cache.addPod(pod);
      this.queue.assignedPodAdded(pod);
    } else if (this.responsibleFor(pod) && !pod.metadata.deletionTimestamp) {
      this.queue.add(pod);
    }
  }

  onPodUpdate(oldObj: Pod, newObj: Pod): void {
    const oldPod = this.withPriority(oldObj);
    const newPod = this.withPriority(newObj);
    if (newPod.spec.nodeName) {
      if (!oldPod.spec.nodeName) {
        // Bound (by us or someone else): leaves the queue, joins the cache.
        this.queue.delete(newPod);
        this.onPodAdd(newPod);
      } else if (TERMINAL_PHASES.has(newPod.status?.phase ?? '')) {
        // Terminal pods no longer use their node's resources.
        this.onPodDelete(oldPod);
      } else {
        this.cache.updatePod(oldPod, newPod);
        this.queue.assignedPodUpdated(oldPod, newPod);
      }
    } else if (this.responsibleFor(newPod)) {
      if (this.cache.isAssumedPod(newPod)) return;
      if (newPod.metadata.deletionTimestamp) this.queue.delete(newPod);
      else this.queue.update(oldPod, newPod);
    }
  }

  onPodDelete(deleted: Pod): void {
    const pod = this.withPriority(deleted);
    if (pod.spec.nodeName) {
      this.cache.removePod(pod);
      this.queue.assignedPodDeleted(pod);
    } else {
      this.queue.delete(pod);
      for (const f of this.profiles.values()) f.getWaitingPod(podKey(pod))?.reject('', 'pod was deleted');
    }
  }

  private withPriority(pod: Pod): Pod {
    return this.priorities ? this.priorities.resolve(pod) : pod;
  }

  /**
   * A namespace appeared (`oldLabels` undefined) or changed: its labels matter to pod
   * affinity namespaceSelectors; pass `nodeSelectorChanged` when its
   * `scheduler.alpha.orch.io/node-selector` annotation changed (NodeAffinity).
   */
  onNamespaceChange(oldLabels: Labels | undefined, newLabels: Labels, nodeSelectorChanged = false): void {
    if (!oldLabels) {
      this.queue.moveAllToActiveOrBackoffQueue(Events.NamespaceAdd);
      return;
    }
    let action = 0;
    if (JSON.stringify(oldLabels) !== JSON.stringify(newLabels)) action |= ActionType.UpdateNamespaceLabel;
    if (nodeSelectorChanged) action |= ActionType.UpdateOther;
    if (action) this.queue.moveAllToActiveOrBackoffQueue({ resource: 'Namespace', action, label: 'NamespaceUpdate' });
  }

  // ---------------------------------------------------------------- loop

  /** Starts the queue timers and the scheduling loop. */
  run(): void {
    if (this.loop) return;
    this.queue.run();
    this.loop = (async () => {
      while (await this.scheduleOne()) await yieldToEventLoop();
    })();
  }

  /** Stops the loop, rejects pods waiting at Permit and waits for in-flight bindings. */
  async stop(): Promise<void> {
    this.queue.close();
    for (const f of this.profiles.values()) f.rejectWaitingPods('scheduler is stopping');
    await this.loop;
    await this.waitForBindings();
  }

  /** Resolves when every binding and callback started so far has settled. */
  async waitForBindings(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  /**
   * Schedules the next pod (waiting for one): the scheduling cycle runs synchronously, the
   * binding cycle is started in the background. False once the queue is closed.
   */
  async scheduleOne(): Promise<boolean> {
    const qp = await this.queue.pop();
    if (!qp) return false;
    const pi = qp.podInfo;
    const fwk = this.profiles.get(pi.pod.spec.schedulerName || DEFAULT_SCHEDULER_NAME);
    if (!fwk || this.skipPodSchedule(pi.pod)) {
      this.queue.done(pi.key);
      return true;
    }
    pi.namespaceNodeSelector = this.namespaceSelector(pi.namespace);
    const start = this.clock.now();
    const state = new CycleState();
    let result: { host: string; assumed: PodInfo } | undefined;
    try {
      result = this.schedulingCycle(fwk, state, qp, start);
    } catch (e) {
      // A plugin threw: undo a possible assumption and retry after backoff.
      this.cache.forgetPod(pi.pod);
      this.handleFailure(fwk, qp, Status.error(e), '', start);
    }
    if (result) this.track(this.bindingCycle(fwk, state, qp, result.host, result.assumed, start));
    return true;
  }

  /** upstream skipPodSchedule: pods being deleted, and pods already assumed (a stale queue entry). */
  private skipPodSchedule(pod: Pod): boolean {
    return !!pod.metadata.deletionTimestamp || this.cache.isAssumedPod(pod);
  }

  private namespaceSelector(namespace: string): LabelSelector | undefined {
    const text = this.nsSelectorFn?.(namespace);
    if (!text) return undefined;
    let sel = this.parsedSelectors.get(text);
    if (!sel) {
      try {
        sel = parseLabelSelector(text);
      } catch {
        // An invalid namespace selector admits no node (upstream PodNodeSelector rejects such pods).
        sel = LabelSelector.nothing();
      }
      this.parsedSelectors.set(text, sel);
    }
    return sel;
  }

  /** Runs the algorithm, PostFilter on failure, then assume → Reserve → Permit. Returns the host on success. */
  private schedulingCycle(fwk: Framework, state: CycleState, qp: QueuedPodInfo, start: number): { host: string; assumed: PodInfo } | undefined {
    const pi = qp.podInfo;
    let result: ScheduleResult;
    try {
      result = this.schedulePod(fwk, state, pi);
    } catch (e) {
      if (!(e instanceof FitError)) throw e;
      let nominated: string | undefined;
      if (fwk.postFilterPlugins.length && e.numAllNodes > 0) {
        const r = fwk.runPostFilterPlugins(state, pi, e.diagnosis.nodeToStatus);
        nominated = r.nominatedNodeName;
        if (!r.status.isSuccess()) e.diagnosis.postFilterMsg = r.status.message();
        else if (r.victims?.length && r.nominatedNodeName) this.startPreemption(pi.pod, r.nominatedNodeName, r.victims);
      }
      qp.unschedulablePlugins = e.diagnosis.unschedulablePlugins;
      this.handleFailure(fwk, qp, Status.unschedulable(e.describe()), nominated, start);
      return undefined;
    }
    const host = result.suggestedHost;
    const assumed = pi.withNodeName(host);
    this.cache.assumePod(assumed);
    this.queue.nominator.delete(assumed.key);
    const reserved = fwk.runReservePluginsReserve(state, assumed, host);
    if (!reserved.isSuccess()) {
      fwk.runReservePluginsUnreserve(state, assumed, host);
      this.cache.forgetPod(assumed.pod);
      if (reserved.plugin) qp.unschedulablePlugins.add(reserved.plugin);
      this.handleFailure(fwk, qp, reserved, '', start);
      return undefined;
    }
    const permitted = fwk.runPermitPlugins(state, assumed, host);
    if (!permitted.isSuccess() && !permitted.isWait()) {
      fwk.runReservePluginsUnreserve(state, assumed, host);
      this.cache.forgetPod(assumed.pod);
      if (permitted.isRejected() && permitted.plugin) qp.unschedulablePlugins.add(permitted.plugin);
      this.handleFailure(fwk, qp, permitted, '', start);
      return undefined;
    }
    return { host, assumed };
  }

  /** WaitOnPermit → PreBind → Bind → PostBind; on failure the assumption is undone and the pod requeued. */
  private async bindingCycle(fwk: Framework, state: CycleState, qp: QueuedPodInfo, host: string, assumed: PodInfo, start: number): Promise<void> {
    let status: Status;
    try {
      status = await fwk.waitOnPermit(assumed);
      if (status.isSuccess()) status = await fwk.runPreBindPlugins(state, assumed, host);
      if (status.isSuccess()) {
        status = await fwk.runBindPlugins(state, assumed, host);
        if (status.isSkip()) status = Status.error(`no bind plugin bound pod ${podRef(assumed.pod)}`);
        this.cache.finishBinding(assumed.pod);
      }
    } catch (e) {
      status = Status.error(e);
    }
    if (!status.isSuccess()) {
      fwk.runReservePluginsUnreserve(state, assumed, host);
      this.cache.forgetPod(assumed.pod);
      // The forgotten pod freed its resources: like a deletion of an assigned pod.
      this.queue.moveAllToActiveOrBackoffQueue(Events.AssignedPodDelete, assumed.pod, undefined, (p) => p.podInfo.key !== assumed.key);
      if (status.isRejected() && status.plugin) qp.unschedulablePlugins.add(status.plugin);
      this.handleFailure(fwk, qp, status, '', start);
      return;
    }
    this.queue.done(assumed.key);
    this.observeAttempt(fwk, 'scheduled', start);
    this.metrics?.podSchedulingAttempts.observe(qp.attempts);
    this.cb.recordEvent?.({ pod: assumed.pod, type: 'Normal', reason: 'Scheduled', message: `Successfully assigned ${podRef(assumed.pod)} to ${host}` });
    fwk.runPostBindPlugins(state, assumed, host);
  }

  /**
   * upstream handleSchedulingFailure: requeue (unless deleted or bound meanwhile), record the
   * nomination, report a FailedScheduling event and the PodScheduled=False condition.
   */
  private handleFailure(fwk: Framework, qp: QueuedPodInfo, status: Status, nominatedNodeName: string | undefined, start: number): void {
    const reason = status.isRejected() ? 'Unschedulable' : 'SchedulerError';
    this.observeAttempt(fwk, reason === 'Unschedulable' ? 'unschedulable' : 'error', start);
    const pod = qp.podInfo.pod;
    let requeued = false;
    try {
      requeued = this.queue.addUnschedulableIfNotPresent(qp, this.queue.schedulingCycle);
    } catch (e) {
      this.cb.onError?.(`requeueing pod ${podRef(pod)}`, e);
    }
    this.queue.done(qp.podInfo.key);
    // Deleted or bound meanwhile: nothing to report.
    if (!requeued) return;
    if (nominatedNodeName !== undefined) this.queue.nominator.add(qp.podInfo, nominatedNodeName);
    const message = status.message();
    this.cb.recordEvent?.({ pod, type: 'Warning', reason: 'FailedScheduling', message });
    const condition: PodCondition = { type: 'PodScheduled', status: 'False', reason, message };
    if (this.cb.updatePodStatus) this.track(this.cb.updatePodStatus(pod, condition, nominatedNodeName), `updating status of pod ${podRef(pod)}`);
  }

  private startPreemption(pod: Pod, nodeName: string, victims: PodInfo[]): void {
    this.metrics?.preemptionAttempts.inc();
    this.metrics?.preemptionVictims.observe(victims.length);
    for (const v of victims) {
      this.cb.recordEvent?.({ pod: v.pod, type: 'Normal', reason: 'Preempted', message: `Preempted by pod ${pod.metadata.uid ?? podRef(pod)} on node ${nodeName}` });
    }
    if (this.cb.preempt) {
      this.track(
        this.cb.preempt(
          pod,
          nodeName,
          victims.map((v) => v.pod),
        ),
        `preempting for pod ${podRef(pod)}`,
      );
    }
  }

  private observeAttempt(fwk: Framework, result: AttemptResult, start: number): void {
    if (!this.metrics) return;
    const labels = { result, profile: fwk.profileName };
    this.metrics.scheduleAttempts.inc(labels);
    this.metrics.attemptDuration.observe(labels, (this.clock.now() - start) / 1000);
  }

  /** Keeps `p` until it settles (for waitForBindings); a rejection is reported through onError. */
  private track(p: Promise<void>, what = 'binding'): void {
    const tracked = p.catch((e) => this.cb.onError?.(what, e)).finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }

  // ---------------------------------------------------------------- algorithm

  /**
   * upstream schedulePod: refreshes the snapshot, finds feasible nodes and picks the best.
   * Throws FitError when no node fits.
   */
  schedulePod(fwk: Framework, state: CycleState, pod: PodInfo): ScheduleResult {
    this.cache.updateSnapshot(this.snapshot);
    const numAll = this.snapshot.numNodes();
    if (numAll === 0) {
      throw new FitError(0, { nodeToStatus: new NodeToStatus(), unschedulablePlugins: new Set(), preFilterMsg: ERR_NO_NODES_AVAILABLE });
    }
    const { feasible, diagnosis } = this.findNodesThatFitPod(fwk, state, pod);
    if (feasible.length === 0) throw new FitError(numAll, diagnosis);
    const evaluatedNodes = feasible.length + diagnosis.nodeToStatus.size;
    if (feasible.length === 1) return { suggestedHost: feasible[0].name, evaluatedNodes, feasibleNodes: 1 };
    const totals = this.prioritizeNodes(fwk, state, pod, feasible);
    return { suggestedHost: this.selectHost(feasible, totals), evaluatedNodes, feasibleNodes: feasible.length };
  }

  private findNodesThatFitPod(fwk: Framework, state: CycleState, pod: PodInfo): { feasible: NodeInfo[]; diagnosis: Diagnosis } {
    const diagnosis = emptyDiagnosis();
    const allNodes = this.snapshot.nodeInfoList;
    const pre = fwk.runPreFilterPlugins(state, pod, allNodes);
    if (!pre.status.isSuccess()) {
      if (!pre.status.isRejected()) throw statusError(pre.status);
      diagnosis.nodeToStatus.absent = pre.status;
      diagnosis.preFilterMsg = pre.status.message();
      if (pre.status.plugin) diagnosis.unschedulablePlugins.add(pre.status.plugin);
      return { feasible: [], diagnosis };
    }
    const nominated = pod.pod.status?.nominatedNodeName;
    if (nominated) {
      const node = this.snapshot.get(nominated);
      if (node?.node && (!pre.result || pre.result.nodeNames.has(nominated))) {
        const feasible = this.findNodesThatPassFilters(fwk, state, pod, emptyDiagnosis(), [node], false);
        if (feasible.length) return { feasible, diagnosis };
      }
    }
    let nodes = allNodes;
    if (pre.result) {
      const names = pre.result.nodeNames;
      nodes = allNodes.filter((n) => names.has(n.name));
      diagnosis.nodeToStatus.absent = Status.unresolvable(`node(s) didn't satisfy plugin(s) [${pre.narrowedBy.join(' ')}]`);
      for (const p of pre.narrowedBy) diagnosis.unschedulablePlugins.add(p);
    }
    return { feasible: this.findNodesThatPassFilters(fwk, state, pod, diagnosis, nodes, true), diagnosis };
  }

  /**
   * Filters `nodes` from a rotating start index until enough feasible nodes are found
   * (numFeasibleNodesToFind); rejected nodes are recorded in `diagnosis`.
   */
  private findNodesThatPassFilters(fwk: Framework, state: CycleState, pod: PodInfo, diagnosis: Diagnosis, nodes: readonly NodeInfo[], rotate: boolean): NodeInfo[] {
    const n = nodes.length;
    if (n === 0) return [];
    const want = numFeasibleNodesToFind(fwk.percentageOfNodesToScore ?? this.config.percentageOfNodesToScore, n);
    const start = rotate ? this.nextStartNodeIndex % n : 0;
    const filters = fwk.activeFilterPlugins(state);
    const feasible: NodeInfo[] = [];
    let processed = 0;
    for (let i = 0; i < n && feasible.length < want; i++) {
      const node = nodes[(start + i) % n];
      processed++;
      const s = fwk.runFilterPluginsWithNominatedPods(state, pod, node, filters);
      if (s.isSuccess()) feasible.push(node);
      else if (s.isRejected()) {
        diagnosis.nodeToStatus.set(node.name, s);
        if (s.plugin) diagnosis.unschedulablePlugins.add(s.plugin);
      } else throw statusError(s);
    }
    if (rotate) this.nextStartNodeIndex = (start + processed) % n;
    return feasible;
  }

  /** Weighted scores of `nodes` (all 1 when the profile has no Score plugins). */
  private prioritizeNodes(fwk: Framework, state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): number[] {
    if (fwk.scorePlugins.length === 0) return new Array<number>(nodes.length).fill(1);
    const pre = fwk.runPreScorePlugins(state, pod, nodes);
    if (!pre.isSuccess()) throw statusError(pre);
    const { status, totals } = fwk.runScorePlugins(state, pod, nodes);
    if (!status.isSuccess()) throw statusError(status);
    return totals;
  }

  /** upstream selectHost: the highest total; ties broken uniformly at random (reservoir sampling). */
  private selectHost(nodes: readonly NodeInfo[], totals: readonly number[]): string {
    let best = 0;
    let ties = 1;
    for (let i = 1; i < nodes.length; i++) {
      if (totals[i] > totals[best]) {
        best = i;
        ties = 1;
      } else if (totals[i] === totals[best]) {
        ties++;
        if (this.random() * ties < 1) best = i;
      }
    }
    return nodes[best].name;
  }
}

function emptyDiagnosis(): Diagnosis {
  return { nodeToStatus: new NodeToStatus(), unschedulablePlugins: new Set() };
}

function statusError(s: Status): Error {
  return s.error ?? new Error(s.message());
}
