import { mergeTolerations, withinWhitelist } from './pod-toleration-restriction';

const t = (key: string, effect = 'NoSchedule', value?: string) => ({ key, operator: value === undefined ? 'Exists' : 'Equal', ...(value !== undefined ? { value } : {}), effect });

describe('PodTolerationRestriction', () => {
  it.each([
    { name: 'defaults added', pod: [], defaults: [t('gpu')], want: [t('gpu')] },
    { name: 'pod keeps its own for the same key and effect', pod: [t('gpu', 'NoSchedule', 'x')], defaults: [t('gpu')], want: [t('gpu', 'NoSchedule', 'x')] },
    { name: 'other effect is added', pod: [t('gpu')], defaults: [t('gpu', 'NoExecute')], want: [t('gpu'), t('gpu', 'NoExecute')] },
  ])('merge: $name', ({ pod, defaults, want }) => {
    expect(mergeTolerations(pod, defaults)).toEqual(want);
  });

  it.each([
    { name: 'no whitelist allows all', tolerations: [t('any')], whitelist: undefined, want: true },
    { name: 'empty whitelist allows none', tolerations: [t('any')], whitelist: [], want: false },
    { name: 'listed key', tolerations: [t('gpu')], whitelist: [t('gpu')], want: true },
    { name: 'unlisted key', tolerations: [t('gpu'), t('ssd')], whitelist: [t('gpu')], want: false },
    { name: 'whitelist without effect covers every effect', tolerations: [t('gpu', 'NoExecute')], whitelist: [{ key: 'gpu', operator: 'Exists' }], want: true },
    { name: 'value must match an Equal entry', tolerations: [t('gpu', 'NoSchedule', 'b')], whitelist: [t('gpu', 'NoSchedule', 'a')], want: false },
  ])('whitelist: $name', ({ tolerations, whitelist, want }) => {
    expect(withinWhitelist(tolerations, whitelist)).toBe(want);
  });
});
