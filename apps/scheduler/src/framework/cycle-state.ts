/** Per-cycle data a plugin writes at one extension point and reads at a later one. */
export interface StateData {
  /** A copy for preemption's what-if runs; immutable data may return itself. */
  clone(): StateData;
}

/** A value no plugin changes after writing it: every clone of the cycle state shares it. */
class ImmutableState<T> implements StateData {
  constructor(readonly value: T) {}
  clone(): StateData {
    return this;
  }
}

/**
 * The state of one scheduling cycle (upstream framework.CycleState): plugin data by key and
 * the plugins whose PreFilter/PreScore returned Skip. Only the scheduling goroutine touches it.
 */
export class CycleState {
  private readonly data = new Map<string, StateData>();
  /** Plugins whose Filter is not run this cycle. */
  readonly skipFilterPlugins = new Set<string>();
  /** Plugins whose Score is not run this cycle. */
  readonly skipScorePlugins = new Set<string>();

  read<T extends StateData>(key: string): T | undefined {
    return this.data.get(key) as T | undefined;
  }

  write(key: string, value: StateData): void {
    this.data.set(key, value);
  }

  /** Writes `value` as {@link ImmutableState}: the writer and every reader leave it unchanged, so clones share it. */
  writeImmutable<T>(key: string, value: T): void {
    this.data.set(key, new ImmutableState(value));
  }

  /** What {@link writeImmutable} wrote under `key`. */
  readImmutable<T>(key: string): T | undefined {
    return (this.data.get(key) as ImmutableState<T> | undefined)?.value;
  }

  delete(key: string): void {
    this.data.delete(key);
  }

  /** A deep copy (each StateData cloned), for evaluating hypothetical node states. */
  clone(): CycleState {
    const c = new CycleState();
    for (const [k, v] of this.data) c.data.set(k, v.clone());
    for (const p of this.skipFilterPlugins) c.skipFilterPlugins.add(p);
    for (const p of this.skipScorePlugins) c.skipScorePlugins.add(p);
    return c;
  }
}
