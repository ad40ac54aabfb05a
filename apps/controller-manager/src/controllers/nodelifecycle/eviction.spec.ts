import type { Taint, Toleration } from '../../framework/api';
import { evictionTime } from './eviction';

const T0 = 1_000_000;
const unreachable: Taint = { key: 'node.orch.io/unreachable', effect: 'NoExecute' };
const notReady: Taint = { key: 'node.orch.io/not-ready', effect: 'NoExecute' };
const noSchedule: Taint = { key: 'node.orch.io/unreachable', effect: 'NoSchedule' };
const tol = (key: string | undefined, seconds?: number, extra: Partial<Toleration> = {}): Toleration => ({ key, operator: 'Exists', effect: 'NoExecute', ...(seconds === undefined ? {} : { tolerationSeconds: seconds }), ...extra });
const added: Record<string, number> = { 'node.orch.io/unreachable': T0, 'node.orch.io/not-ready': T0 + 10_000 };

describe('evictionTime', () => {
  it.each([
    { name: 'no taints', taints: [], tolerations: [], want: undefined },
    { name: 'NoSchedule taints do not evict', taints: [noSchedule], tolerations: [], want: undefined },
    { name: 'not tolerated: now', taints: [unreachable], tolerations: [], want: 0 },
    { name: 'tolerated with seconds', taints: [unreachable], tolerations: [tol('node.orch.io/unreachable', 300)], want: T0 + 300_000 },
    { name: 'tolerated forever', taints: [unreachable], tolerations: [tol('node.orch.io/unreachable')], want: undefined },
    { name: 'negative seconds mean now', taints: [unreachable], tolerations: [tol('node.orch.io/unreachable', -5)], want: T0 },
    { name: 'earliest deadline over taints', taints: [unreachable, notReady], tolerations: [tol('node.orch.io/unreachable', 60), tol('node.orch.io/not-ready', 10)], want: T0 + 20_000 },
    { name: 'one taint not tolerated: now', taints: [unreachable, notReady], tolerations: [tol('node.orch.io/unreachable', 60)], want: 0 },
    { name: 'empty key with Exists tolerates all', taints: [unreachable, notReady], tolerations: [tol(undefined)], want: undefined },
    { name: 'Equal compares values', taints: [{ ...unreachable, value: 'x' }], tolerations: [tol('node.orch.io/unreachable', 5, { operator: 'Equal', value: 'y' })], want: 0 },
    { name: 'other effect does not tolerate', taints: [unreachable], tolerations: [tol('node.orch.io/unreachable', 5, { effect: 'NoSchedule' })], want: 0 },
  ])('$name', ({ taints, tolerations, want }) => {
    expect(evictionTime(taints, tolerations, (t) => added[t.key])).toBe(want);
  });
});
