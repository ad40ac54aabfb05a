import type { ConfigMap, Namespace } from '../../framework/api';
import { eventually, startHarness, storedObject, type Harness } from '../../framework/testing/harness';
import { DESCRIPTION, DESCRIPTION_ANNOTATION, ROOT_CA_CONFIGMAP, RootCaPublisher, UPSTREAM_ROOT_CA_CONFIGMAP, publishAction } from './publisher';

const CA = 'ROOT CA PEM\n';
const ns = (name: string, terminating = false): Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name }, status: { phase: terminating ? 'Terminating' : 'Active' } });
const cm = (data: Record<string, string>, annotations: Record<string, string> = { [DESCRIPTION_ANNOTATION]: DESCRIPTION }): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: ROOT_CA_CONFIGMAP, namespace: 'a', annotations, resourceVersion: '7' },
  data,
});

describe('publishAction', () => {
  it.each([
    { name: 'missing map is created', input: { ns: ns('a'), current: undefined }, want: 'create' },
    { name: 'correct map is left alone', input: { ns: ns('a'), current: cm({ 'ca.crt': CA }) }, want: 'none' },
    { name: 'edited data is restored', input: { ns: ns('a'), current: cm({ 'ca.crt': 'other' }) }, want: 'update' },
    { name: 'extra keys are removed', input: { ns: ns('a'), current: cm({ 'ca.crt': CA, extra: 'x' }) }, want: 'update' },
    { name: 'missing description is restored', input: { ns: ns('a'), current: cm({ 'ca.crt': CA }, {}) }, want: 'update' },
    { name: 'terminating namespace gets nothing', input: { ns: ns('a', true), current: undefined }, want: 'none' },
    { name: 'gone namespace gets nothing', input: { ns: undefined, current: undefined }, want: 'none' },
  ])('$name', ({ input, want }) => {
    const action = publishAction(input.ns, input.current, CA);
    expect(action.kind).toBe(want);
    if (action.kind !== 'none') {
      expect(action.configMap.data).toEqual({ 'ca.crt': CA });
      expect(action.configMap.metadata.annotations?.[DESCRIPTION_ANNOTATION]).toBe(DESCRIPTION);
    }
    if (action.kind === 'update') expect(action.configMap.metadata.resourceVersion).toBe('7');
  });
});

describe('RootCaPublisher against an API peer', () => {
  let h: Harness;
  afterEach(() => h.stop());

  it('publishes the CA in every namespace and undoes edits and deletions', async () => {
    h = await startHarness({ rootCaPem: CA, k8sCompatibility: false });
    h.peer.put('/v1/namespaces', ns('a'));
    h.start(new RootCaPublisher(h.ctx));
    const created = await eventually('published', () => storedObject<ConfigMap>(h.peer, '/v1/configmaps', ROOT_CA_CONFIGMAP, 'a'));
    expect(created.data).toEqual({ 'ca.crt': CA });
    h.peer.put('/v1/configmaps', { ...created, data: { 'ca.crt': 'tampered' } });
    await eventually('edit undone', () => (storedObject<ConfigMap>(h.peer, '/v1/configmaps', ROOT_CA_CONFIGMAP, 'a')?.data?.['ca.crt'] === CA ? true : undefined));
    h.peer.remove('/v1/configmaps', 'a', ROOT_CA_CONFIGMAP);
    await eventually('re-created', () => storedObject(h.peer, '/v1/configmaps', ROOT_CA_CONFIGMAP, 'a'));
  });

  it.each([
    { name: 'with the compatibility option also as kube-root-ca.crt', compat: true, want: [ROOT_CA_CONFIGMAP, UPSTREAM_ROOT_CA_CONFIGMAP] },
    { name: 'without it only as orch-root-ca.crt', compat: false, want: [ROOT_CA_CONFIGMAP] },
  ])('$name', async ({ compat, want }) => {
    h = await startHarness({ rootCaPem: CA, k8sCompatibility: compat });
    h.peer.put('/v1/namespaces', ns('a'));
    h.start(new RootCaPublisher(h.ctx));
    await eventually('published', () => storedObject<ConfigMap>(h.peer, '/v1/configmaps', want[want.length - 1], 'a'));
    const names = (h.peer.stored('/v1/configmaps') as ConfigMap[]).map((c) => c.metadata.name).sort();
    expect(names).toEqual([...want].sort());
    for (const name of want) expect(storedObject<ConfigMap>(h.peer, '/v1/configmaps', name, 'a')?.data).toEqual({ 'ca.crt': CA });
  });
});
