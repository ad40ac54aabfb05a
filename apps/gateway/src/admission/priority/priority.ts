import { Injectable } from '@nestjs/common';
import { AdmissionPluginProvider, handling, admissionDenied, type AdmissionAttributes, type AdmissionPlugin } from '../../pipeline/admit';
import { StateAdmissionPlugin } from '../admission-state';
import type { AdmittedPod, PriorityClass } from '../api';
import { newest } from '../namespace-annotations';

export const PRIORITY = 'Priority';


/** The classes every cluster has (upstream creates them at start-up; here they exist even when not stored). */
export const SYSTEM_PRIORITY_CLASSES: readonly PriorityClass[] = [
  { apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name: 'system-node-critical' }, value: 2_000_001_000, preemptionPolicy: 'PreemptLowerPriority' },
  { apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name: 'system-cluster-critical' }, value: 2_000_000_000, preemptionPolicy: 'PreemptLowerPriority' },
];

/**
 * What a pod's priority becomes (upstream podpriority admission): its class by name, else the
 * global default class, else 0 with no class. A pod that states a priority or preemption
 * policy different from its class's is refused; so is a class that does not exist.
 * Mutates `pod`; returns the refusal reason, if any.
 */
export function resolvePriority(pod: AdmittedPod, classes: readonly PriorityClass[]): string | undefined {
  const spec = (pod.spec ??= {});
  const byName = (n: string) => classes.find((c) => c.metadata.name === n) ?? SYSTEM_PRIORITY_CLASSES.find((c) => c.metadata.name === n);
  let value = 0;
  let policy: string | undefined = 'PreemptLowerPriority';
  if (spec.priorityClassName) {
    const pc = byName(spec.priorityClassName);
    if (!pc) return `no PriorityClass with name ${spec.priorityClassName} was found`;
    value = pc.value ?? 0;
    policy = pc.preemptionPolicy ?? 'PreemptLowerPriority';
  } else {
    const def = newest(classes.filter((c) => c.globalDefault));
    if (def) {
      spec.priorityClassName = def.metadata.name;
      value = def.value ?? 0;
      policy = def.preemptionPolicy ?? 'PreemptLowerPriority';
    }
  }
  if (spec.priority !== undefined && spec.priority !== null && spec.priority !== value) {
    return `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${value} from the given PriorityClass name`;
  }
  spec.priority = value;
  if (spec.preemptionPolicy !== undefined && spec.preemptionPolicy !== null && spec.preemptionPolicy !== policy) {
    return `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`;
  }
  spec.preemptionPolicy = policy;
  return undefined;
}

/**
 * Priority (upstream plugin of the same name): pods get spec.priority and preemptionPolicy
 * from their PriorityClass (or the global default); at most one PriorityClass may be the
 * global default.
 */
@AdmissionPluginProvider()
@Injectable()
export class Priority extends StateAdmissionPlugin implements AdmissionPlugin {
  readonly name = PRIORITY;

  readonly handles = handling({ CREATE: ['pods', 'priorityclasses.scheduling.orch.io'], UPDATE: ['priorityclasses.scheduling.orch.io'] });

  mutate(a: AdmissionAttributes): void {
    if (a.resource.resource !== 'pods' || !a.object) return;
    const why = resolvePriority(a.object as AdmittedPod, this.classes());
    if (why) throw admissionDenied(a, why);
  }

  validate(a: AdmissionAttributes): void {
    if (a.resource.resource !== 'priorityclasses') return;
    const pc = a.object as PriorityClass | undefined;
    if (!pc?.globalDefault) return;
    const other = this.classes().find((c) => c.globalDefault && c.metadata.name !== pc.metadata.name);
    if (other) throw admissionDenied(a, `PriorityClass ${other.metadata.name} is already marked as default. Only one default can exist`);
  }

  private classes(): PriorityClass[] {
    return this.state.cache<PriorityClass>('scheduling.orch.io', 'priorityclasses').list();
  }
}
