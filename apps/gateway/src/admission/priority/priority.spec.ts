import type { KubeObject } from '@orch/apimachinery';
import { resolvePriority } from './priority';

const pc = (name: string, value: number, extra: Record<string, unknown> = {}) => ({ apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name, creationTimestamp: extra.created as string | undefined }, value, ...extra }) as KubeObject & { value: number };
const pod = (spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [], ...spec } }) as KubeObject & { spec: Record<string, unknown> };

describe('Priority', () => {
  const classes = [pc('high', 1000), pc('low', 10, { preemptionPolicy: 'Never' }), pc('base', 5, { globalDefault: true, created: '2024-01-01T00:00:00Z' })];
  it.each([
    { name: 'class by name', spec: { priorityClassName: 'high' }, classes, want: { priorityClassName: 'high', priority: 1000, preemptionPolicy: 'PreemptLowerPriority' } },
    { name: 'class preemption policy', spec: { priorityClassName: 'low' }, classes, want: { priorityClassName: 'low', priority: 10, preemptionPolicy: 'Never' } },
    { name: 'global default', spec: {}, classes, want: { priorityClassName: 'base', priority: 5, preemptionPolicy: 'PreemptLowerPriority' } },
    { name: 'no default: 0', spec: {}, classes: [pc('high', 1000)], want: { priority: 0, preemptionPolicy: 'PreemptLowerPriority' } },
    { name: 'system class without an object', spec: { priorityClassName: 'system-node-critical' }, classes: [], want: { priorityClassName: 'system-node-critical', priority: 2000001000, preemptionPolicy: 'PreemptLowerPriority' } },
    { name: 'stated priority that matches', spec: { priorityClassName: 'high', priority: 1000 }, classes, want: { priorityClassName: 'high', priority: 1000, preemptionPolicy: 'PreemptLowerPriority' } },
  ])('$name', ({ spec, classes: cs, want }) => {
    const p = pod(spec);
    expect(resolvePriority(p, cs)).toBeUndefined();
    expect(p.spec).toEqual({ containers: [], ...want });
  });

  it.each([
    [{ priorityClassName: 'missing' }, 'no PriorityClass with name missing was found'],
    [{ priorityClassName: 'high', priority: 7 }, 'the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name'],
    [{ priorityClassName: 'low', preemptionPolicy: 'PreemptLowerPriority' }, 'the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name'],
  ])('%j is refused', (spec, why) => {
    expect(resolvePriority(pod(spec), classes)).toBe(why);
  });
});
