import { FieldError } from '@orch/apimachinery';
import type { CycleState } from '../../framework/cycle-state';
import type { Handle, PluginRegistration, PostFilterPlugin, PostFilterResult } from '../../framework/interface';
import { fitErrorMessage, NodeToStatus, Status } from '../../framework/status';
import type { NodeInfo, PodInfo } from '../../framework/types';
import { DEFAULT_PREEMPTION } from '../names';

export const ERR_REASON_NO_VICTIMS = 'No preemption victims found for incoming pod';
export const ERR_REASON_NOT_HELPFUL = 'Preemption is not helpful for scheduling';

export interface DefaultPreemptionArgs {
  /** Dry-run at least this percentage of the nodes (default 10). */
  minCandidateNodesPercentage?: number;
  /** ... and at least this many nodes (default 100). */
  minCandidateNodesAbsolute?: number;
}

/** A node where preempting `victims` (most important first) lets the pod fit. */
export interface Candidate {
  nodeName: string;
  victims: PodInfo[];
}

/** The pod's start time in ms (now when it has not started, as upstream GetPodStartTime). */
export function podStartTime(p: PodInfo, now: number): number {
  const t = p.pod.status?.startTime;
  const ms = t ? Date.parse(t) : NaN;
  return Number.isNaN(ms) ? now : ms;
}

/** upstream MoreImportantPod: higher priority, then the earlier start. */
export function moreImportant(a: PodInfo, b: PodInfo, now: number): boolean {
  if (a.priority !== b.priority) return a.priority > b.priority;
  return podStartTime(a, now) < podStartTime(b, now);
}

/** upstream calculateNumCandidates: max(percentage of nodes, absolute), at most all nodes. */
export function numCandidates(numNodes: number, percentage: number, absolute: number): number {
  return Math.min(numNodes, Math.max(Math.floor((numNodes * percentage) / 100), absolute));
}

/**
 * upstream pickOneNodeForPreemption: of the candidates, the one with (in order of precedence)
 * the lowest highest-victim priority, the lowest sum of victim priorities, the fewest victims,
 * the latest start among its highest-priority victims; then the first.
 */
export function pickOneNodeForPreemption(candidates: readonly Candidate[], now: number): Candidate | undefined {
  if (candidates.length <= 1) return candidates[0];
  const MAX_INT32 = 2 ** 31 - 1;
  const criteria: Array<(c: Candidate) => number> = [
    (c) => -c.victims[0].priority,
    (c) => -c.victims.reduce((s, v) => s + v.priority + MAX_INT32 + 1, 0),
    (c) => -c.victims.length,
    (c) => {
      const top = c.victims[0].priority;
      return Math.min(...c.victims.filter((v) => v.priority === top).map((v) => podStartTime(v, now)));
    },
  ];
  let remaining = [...candidates];
  for (const score of criteria) {
    let best = -Infinity;
    let selected: Candidate[] = [];
    for (const c of remaining) {
      const s = score(c);
      if (s > best) {
        best = s;
        selected = [c];
      } else if (s === best) selected.push(c);
    }
    if (selected.length === 1) return selected[0];
    remaining = selected;
  }
  return remaining[0];
}

/**
 * PostFilter: when no node fits, finds nodes where deleting lower-priority pods makes room
 * and picks the cheapest (upstream DefaultPreemption). It does not delete anything: it returns
 * the victims and the nominated node; the caller deletes the victims through the API and sets
 * `status.nominatedNodeName`. PodDisruptionBudgets are not considered.
 */
export class DefaultPreemption implements PostFilterPlugin {
  readonly name = DEFAULT_PREEMPTION;
  private readonly percentage: number;
  private readonly absolute: number;

  constructor(
    private readonly handle: Handle,
    args: DefaultPreemptionArgs = {},
  ) {
    this.percentage = args.minCandidateNodesPercentage ?? 10;
    this.absolute = args.minCandidateNodesAbsolute ?? 100;
  }

  postFilter(state: CycleState, pod: PodInfo, statuses: NodeToStatus): PostFilterResult {
    const r = this.preempt(state, pod, statuses);
    return r.status.reasons.length ? { ...r, status: new Status(r.status.code, [`preemption: ${r.status.message()}`]) } : r;
  }

  private preempt(state: CycleState, pod: PodInfo, statuses: NodeToStatus): PostFilterResult {
    const why = this.ineligibleReason(pod, statuses);
    if (why) return { status: Status.unschedulable(why) };
    const allNodes = this.handle.snapshot().nodeInfoList;
    const potential = allNodes.filter((n) => statuses.get(n.name).code !== 'UnschedulableAndUnresolvable');
    const dryRunStatuses = new NodeToStatus(Status.unresolvable(ERR_REASON_NOT_HELPFUL));
    for (const n of allNodes) if (statuses.get(n.name).code === 'UnschedulableAndUnresolvable') dryRunStatuses.set(n.name, Status.unresolvable(ERR_REASON_NOT_HELPFUL));
    let candidates: Candidate[] = [];
    if (potential.length) {
      const offset = Math.floor(this.handle.random() * potential.length);
      candidates = this.dryRunPreemption(state, pod, potential, offset, numCandidates(potential.length, this.percentage, this.absolute), dryRunStatuses);
    }
    if (candidates.length === 0) {
      const msg = fitErrorMessage(allNodes.length, { nodeToStatus: dryRunStatuses, unschedulablePlugins: new Set() });
      // An empty nominated node clears a stale nomination.
      return { status: Status.unschedulable(msg), nominatedNodeName: '' };
    }
    const best = pickOneNodeForPreemption(candidates, this.handle.clock.now())!;
    return { status: Status.success(), nominatedNodeName: best.nodeName, victims: best.victims };
  }

  /**
   * upstream PodEligibleToPreemptOthers: not with preemptionPolicy Never, and not while a
   * lower-priority pod on its nominated node is still terminating (an earlier preemption is
   * in progress) unless that node became unresolvable.
   */
  private ineligibleReason(pod: PodInfo, statuses: NodeToStatus): string | undefined {
    if (pod.pod.spec.preemptionPolicy === 'Never') return 'not eligible due to preemptionPolicy=Never.';
    const nominated = pod.pod.status?.nominatedNodeName;
    if (!nominated || statuses.get(nominated).code === 'UnschedulableAndUnresolvable') return undefined;
    const node = this.handle.snapshot().get(nominated);
    if (node?.pods.some((p) => p.priority < pod.priority && p.isTerminating())) return 'not eligible due to a terminating pod on the nominated node.';
    return undefined;
  }

  /** Evaluates nodes from `offset` (wrapping) until `wanted` candidates are found; failures go to `statuses`. */
  private dryRunPreemption(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[], offset: number, wanted: number, statuses: NodeToStatus): Candidate[] {
    const out: Candidate[] = [];
    for (let i = 0; i < nodes.length && out.length < wanted; i++) {
      const node = nodes[(offset + i) % nodes.length];
      const r = this.selectVictimsOnNode(state.clone(), pod, node.clone());
      if (r instanceof Status) statuses.set(node.name, r);
      else out.push({ nodeName: node.name, victims: r });
    }
    return out;
  }

  /**
   * upstream SelectVictimsOnNode: removes every lower-priority pod; if the pod then fits,
   * adds them back most important first, keeping as victims only those without which it
   * no longer fits. Works on copies of the state and node.
   */
  selectVictimsOnNode(state: CycleState, pod: PodInfo, node: NodeInfo): PodInfo[] | Status {
    const potential = node.pods.filter((p) => p.priority < pod.priority);
    if (potential.length === 0) return Status.unresolvable(ERR_REASON_NO_VICTIMS);
    for (const v of potential) {
      node.removePod(v.key);
      const s = this.handle.runPreFilterExtensionRemovePod(state, pod, v, node);
      if (!s.isSuccess()) return s;
    }
    const fits = this.handle.runFilterPluginsWithNominatedPods(state, pod, node);
    if (!fits.isSuccess()) return fits;
    const now = this.handle.clock.now();
    potential.sort((a, b) => (moreImportant(a, b, now) ? -1 : moreImportant(b, a, now) ? 1 : 0));
    const victims: PodInfo[] = [];
    for (const v of potential) {
      node.addPod(v);
      const added = this.handle.runPreFilterExtensionAddPod(state, pod, v, node);
      if (!added.isSuccess()) return added;
      if (this.handle.runFilterPluginsWithNominatedPods(state, pod, node).isSuccess()) continue;
      node.removePod(v.key);
      const removed = this.handle.runPreFilterExtensionRemovePod(state, pod, v, node);
      if (!removed.isSuccess()) return removed;
      victims.push(v);
    }
    return victims;
  }
}

/** Validates DefaultPreemptionArgs (upstream ValidateDefaultPreemptionArgs). */
export function validateDefaultPreemptionArgs(args: unknown, path: string): FieldError[] {
  if (typeof args !== 'object' || args === null) return [FieldError.typeInvalid(path, args, 'must be an object')];
  const a = args as DefaultPreemptionArgs;
  const errs: FieldError[] = [];
  const pct = a.minCandidateNodesPercentage;
  const abs = a.minCandidateNodesAbsolute;
  if (pct !== undefined && (!Number.isInteger(pct) || pct < 0 || pct > 100)) errs.push(FieldError.invalid(`${path}.minCandidateNodesPercentage`, pct, 'not in valid range [0, 100]'));
  if (abs !== undefined && (!Number.isInteger(abs) || abs < 0)) errs.push(FieldError.invalid(`${path}.minCandidateNodesAbsolute`, abs, 'not in valid range [0, inf)'));
  if (pct === 0 && abs === 0) errs.push(FieldError.invalid(path, args, 'both minCandidateNodesPercentage and minCandidateNodesAbsolute cannot be zero'));
  return errs;
}

export const defaultPreemptionRegistration: PluginRegistration = {
  factory: (args, handle) => new DefaultPreemption(handle, (args ?? {}) as DefaultPreemptionArgs),
  validateArgs: validateDefaultPreemptionArgs,
};
