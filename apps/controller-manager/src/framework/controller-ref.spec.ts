import type { KubeObject } from '@orch/apimachinery';
import type { metaV1 } from '@orch/api';
import { controllersSelecting } from './controller-ref';

type Selecting = KubeObject & { spec: { selector?: metaV1.LabelSelector } };

const controller = (name: string, namespace: string, selector?: metaV1.LabelSelector): Selecting => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name, namespace }, spec: { selector } });
const cache = (items: Selecting[]) => ({ listInNamespace: (ns: string) => items.filter((c) => c.metadata.namespace === ns) });
const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'a', labels: { app: 'web', tier: 'front' } } };

describe('controllersSelecting', () => {
  it.each([
    { name: 'matching matchLabels', items: [controller('rs', 'a', { matchLabels: { app: 'web' } })], want: ['rs'] },
    { name: 'matching expression', items: [controller('rs', 'a', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'back'] }] })], want: ['rs'] },
    { name: 'labels that do not match', items: [controller('rs', 'a', { matchLabels: { app: 'db' } })], want: [] },
    { name: 'an empty selector selects nothing', items: [controller('rs', 'a', {})], want: [] },
    { name: 'no selector selects nothing', items: [controller('rs', 'a')], want: [] },
    { name: 'an invalid selector selects nothing', items: [controller('rs', 'a', { matchExpressions: [{ key: 'app', operator: 'Nope', values: [] }] })], want: [] },
    { name: 'another namespace', items: [controller('rs', 'b', { matchLabels: { app: 'web' } })], want: [] },
    { name: 'several, in cache order', items: [controller('one', 'a', { matchLabels: { app: 'web' } }), controller('no', 'a', { matchLabels: { app: 'x' } }), controller('two', 'a', { matchLabels: { tier: 'front' } })], want: ['one', 'two'] },
  ])('$name', ({ items, want }) => {
    expect(controllersSelecting(cache(items), pod).map((c) => c.metadata.name)).toEqual(want);
  });
});
