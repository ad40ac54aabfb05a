/**
 * The outcome of a plugin call (upstream framework.Code). Plugins return these, they never throw:
 * - Success: the pod may continue (on this node).
 * - Unschedulable: rejected here, but preemption or a cluster change may help.
 * - UnschedulableAndUnresolvable: rejected here and preemption cannot help.
 * - Error: an internal failure; the pod is retried after backoff.
 * - Skip: PreFilter/PreScore say the plugin has nothing to do for this pod (its Filter/Score
 *   is not called); Bind says "not mine, try the next binder".
 * - Wait: a Permit plugin holds the pod until allowed, rejected or timed out.
 */
export type Code = 'Success' | 'Error' | 'Unschedulable' | 'UnschedulableAndUnresolvable' | 'Wait' | 'Skip';

/** An immutable plugin result: a code, human-readable reasons and the plugin that produced it. */
export class Status {
  private static readonly OK = new Status('Success', []);
  private static readonly SKIP = new Status('Skip', []);

  constructor(
    readonly code: Code,
    readonly reasons: readonly string[],
    /** The failing plugin, set by the framework. */
    readonly plugin?: string,
    /** The cause of an `Error` status. */
    readonly error?: Error,
  ) {}

  static success(): Status {
    return Status.OK;
  }
  static skip(): Status {
    return Status.SKIP;
  }
  static unschedulable(...reasons: string[]): Status {
    return new Status('Unschedulable', reasons);
  }
  static unresolvable(...reasons: string[]): Status {
    return new Status('UnschedulableAndUnresolvable', reasons);
  }
  static wait(...reasons: string[]): Status {
    return new Status('Wait', reasons);
  }
  /** An Error status from an exception or a message. */
  static error(err: unknown): Status {
    const e = err instanceof Error ? err : new Error(String(err));
    return new Status('Error', [e.message], undefined, e);
  }

  isSuccess(): boolean {
    return this.code === 'Success';
  }
  isSkip(): boolean {
    return this.code === 'Skip';
  }
  isWait(): boolean {
    return this.code === 'Wait';
  }
  /** Unschedulable or UnschedulableAndUnresolvable. */
  isRejected(): boolean {
    return this.code === 'Unschedulable' || this.code === 'UnschedulableAndUnresolvable';
  }

  /** The reasons joined by ", ". */
  message(): string {
    return this.reasons.join(', ');
  }

  /** This status attributed to `plugin` (a copy when it differs; shared constants stay untouched). */
  withPlugin(plugin: string): Status {
    return this.plugin === plugin ? this : new Status(this.code, this.reasons, plugin, this.error);
  }

  toString(): string {
    return `${this.code}${this.reasons.length ? `: ${this.message()}` : ''}`;
  }
}

/** Per-node filter outcomes of one scheduling attempt; nodes not in the map have `absent`. */
export class NodeToStatus {
  // Filter records thousands of rejections per attempt but they are read only when no node
  // fits: appends are cheap, the map is built on first read.
  private readonly names: string[] = [];
  private readonly statuses: Status[] = [];
  private map?: Map<string, Status>;

  /** `absent` is the status of nodes excluded before Filter (by a PreFilter result). */
  constructor(public absent: Status = Status.unresolvable()) {}

  /** The recorded statuses by node name. */
  get byNode(): ReadonlyMap<string, Status> {
    if (!this.map) {
      this.map = new Map();
      for (let i = 0; i < this.names.length; i++) this.map.set(this.names[i], this.statuses[i]);
    }
    return this.map;
  }

  /** Number of nodes with a recorded status. */
  get size(): number {
    return this.map ? this.map.size : this.names.length;
  }

  get(nodeName: string): Status {
    return this.byNode.get(nodeName) ?? this.absent;
  }

  set(nodeName: string, status: Status): void {
    if (this.map) this.map.set(nodeName, status);
    else {
      this.names.push(nodeName);
      this.statuses.push(status);
    }
  }
}

/** Why a pod did not fit (upstream framework.Diagnosis). */
export interface Diagnosis {
  nodeToStatus: NodeToStatus;
  /** Plugins that rejected the pod on some node; the queue requeues it on their events. */
  unschedulablePlugins: Set<string>;
  /** Set when a PreFilter plugin rejected the pod outright. */
  preFilterMsg?: string;
  /** Set when PostFilter (preemption) ran and did not help. */
  postFilterMsg?: string;
}

/** upstream FitError: no node fits. */
export class FitError extends Error {
  constructor(
    readonly numAllNodes: number,
    readonly diagnosis: Diagnosis,
  ) {
    super(fitErrorMessage(numAllNodes, diagnosis));
    this.name = 'FitError';
  }

  /** The `0/N nodes are available: ...` summary, including a PostFilter message set since construction. */
  describe(): string {
    return fitErrorMessage(this.numAllNodes, this.diagnosis);
  }
}

/** upstream FitError.Error(): reasons counted over nodes, sorted, then the PostFilter message. */
export function fitErrorMessage(numAllNodes: number, d: Diagnosis): string {
  let msg = `0/${numAllNodes} nodes are available:`;
  if (d.preFilterMsg) {
    msg += ` ${d.preFilterMsg}.`;
  } else {
    const histogram = new Map<string, number>();
    for (const status of d.nodeToStatus.byNode.values()) {
      for (const r of status.reasons) histogram.set(r, (histogram.get(r) ?? 0) + 1);
    }
    const absentCount = numAllNodes - d.nodeToStatus.size;
    if (absentCount > 0) for (const r of d.nodeToStatus.absent.reasons) histogram.set(r, (histogram.get(r) ?? 0) + absentCount);
    const parts = [...histogram].map(([r, n]) => `${n} ${r}`).sort();
    if (parts.length) msg += ` ${parts.join(', ')}.`;
  }
  if (d.postFilterMsg) msg += ` ${d.postFilterMsg}.`;
  return msg;
}
