import { addDefaultTolerations } from './default-toleration-seconds';

const notReady = { key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 };
const unreachable = { key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 };

describe('DefaultTolerationSeconds', () => {
  it.each([
    { name: 'no tolerations: both added', input: undefined, want: [notReady, unreachable] },
    {
      name: 'own not-ready toleration kept, unreachable added',
      input: [{ key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }],
      want: [{ key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }, unreachable],
    },
    { name: 'tolerate-everything needs none', input: [{ operator: 'Exists' }], want: [{ operator: 'Exists' }] },
    { name: 'empty key with NoExecute needs none', input: [{ operator: 'Exists', effect: 'NoExecute' }], want: [{ operator: 'Exists', effect: 'NoExecute' }] },
    {
      name: 'key without effect counts',
      input: [{ key: 'node.orch.io/unreachable', operator: 'Exists' }],
      want: [{ key: 'node.orch.io/unreachable', operator: 'Exists' }, notReady],
    },
    {
      name: 'NoSchedule toleration does not count',
      input: [{ key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoSchedule' }],
      want: [{ key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoSchedule' }, notReady, unreachable],
    },
    { name: 'unrelated tolerations stay first', input: [{ key: 'gpu', operator: 'Exists' }], want: [{ key: 'gpu', operator: 'Exists' }, notReady, unreachable] },
    { name: 'own seconds per taint', input: [], want: [{ ...notReady, tolerationSeconds: 10 }, { ...unreachable, tolerationSeconds: 20 }], seconds: { notReady: 10, unreachable: 20 } },
  ])('$name', ({ input, want, seconds }) => {
    const pod = { spec: { containers: [], ...(input ? { tolerations: input } : {}) } };
    addDefaultTolerations(pod, seconds);
    expect(pod.spec).toEqual({ containers: [], tolerations: want });
    addDefaultTolerations(pod, seconds);
    expect(pod.spec.tolerations).toEqual(want);
  });
});
