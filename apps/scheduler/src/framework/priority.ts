import type { Pod, PriorityClass } from './api';

/**
 * Resolves pod priority from PriorityClasses (what upstream's Priority admission plugin does
 * at pod creation), for pods that reach the scheduler without `spec.priority`.
 */
export class PriorityResolver {
  private readonly classes = new Map<string, PriorityClass>();

  /** Adds or replaces a class (informer add/update). */
  set(pc: PriorityClass): void {
    this.classes.set(pc.metadata.name ?? '', pc);
  }

  delete(name: string): void {
    this.classes.delete(name);
  }

  /**
   * The pod with `spec.priority` (and `preemptionPolicy` when unset) filled in from its
   * `priorityClassName` (0 for an unknown class), or without a class name from the global
   * default class, else 0. A pod that has a priority is returned as is; otherwise a copy.
   */
  resolve(pod: Pod): Pod {
    if (pod.spec.priority !== undefined) return pod;
    const name = pod.spec.priorityClassName;
    const pc = name ? this.classes.get(name) : [...this.classes.values()].find((c) => c.globalDefault);
    const spec = { ...pod.spec, priority: pc?.value ?? 0 };
    if (pc?.preemptionPolicy && !spec.preemptionPolicy) spec.preemptionPolicy = pc.preemptionPolicy;
    return { ...pod, spec };
  }
}
