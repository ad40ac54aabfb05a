import { Catalog, type ResourceDef } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import type { NamespaceCondition, Pod } from '../../framework/api';
import { CONDITION_TYPES, FINALIZER_ESTIMATE_SECONDS, deletionConditions, mergeConditions, namespacedResources, podsGraceEstimate, remainingOutcome, type ResourceOutcome } from './deletion';

const NOW = '2026-01-01T00:00:00Z';

const def = (p: Partial<ResourceDef> & Pick<ResourceDef, 'group' | 'version' | 'resource'>): ResourceDef => ({
  kind: 'K',
  listKind: 'KList',
  singular: 'k',
  shortNames: [],
  scope: 'Namespaced',
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list'],
  subresources: [],
  categories: [],
  enabledByDefault: true,
  virtual: false,
  ...p,
});

describe('namespacedResources', () => {
  it.each([
    { name: 'namespaced and deletable', input: def({ group: '', version: 'v1', resource: 'configmaps' }), want: ['/v1/configmaps'] },
    { name: 'cluster-scoped is skipped', input: def({ group: '', version: 'v1', resource: 'nodes', scope: 'Cluster' }), want: [] },
    { name: 'virtual is skipped', input: def({ group: 'authorization.orch.io', version: 'v1', resource: 'localsubjectaccessreviews', virtual: true }), want: [] },
    { name: 'not deletable is skipped', input: def({ group: '', version: 'v1', resource: 'bindings', verbs: ['create'] }), want: [] },
    { name: 'delete without deletecollection is kept', input: def({ group: 'x.orch.io', version: 'v1', resource: 'things', verbs: ['delete', 'list'] }), want: ['x.orch.io/v1/things'] },
  ])('$name', ({ input, want }) => {
    expect(namespacedResources(new Catalog([input])).map((d) => `${d.group}/${d.version}/${d.resource}`)).toEqual(want);
  });

  it('keeps one version per group/resource', () => {
    const got = namespacedResources(
      new Catalog([def({ group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers' }), def({ group: 'autoscaling', version: 'v1', resource: 'horizontalpodautoscalers' })]),
    );
    expect(got.map((d) => d.version)).toEqual(['v2']);
  });

  it('covers the built-in content kinds and no cluster kinds', () => {
    const names = namespacedResources(new Catalog()).map((d) => `${d.resource}.${d.group}`);
    expect(names).toEqual(expect.arrayContaining(['pods.', 'configmaps.', 'secrets.', 'deployments.apps', 'leases.coordination.orch.io', 'endpointslices.discovery.orch.io']));
    expect(names).not.toContain('namespaces.');
    expect(names).not.toContain('nodes.');
  });
});

const pod = (phase: string | undefined, grace?: number): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [], terminationGracePeriodSeconds: grace }, status: { phase } });

describe('podsGraceEstimate', () => {
  it.each([
    { name: 'no pods', input: [], want: 0 },
    { name: 'default grace', input: [pod('Running')], want: 30 },
    { name: 'longest grace wins', input: [pod('Running', 5), pod('Pending', 90)], want: 90 },
    { name: 'terminal pods do not count', input: [pod('Succeeded', 90), pod('Failed', 60), pod('Running', 0)], want: 0 },
  ])('$name', ({ input, want }) => {
    expect(podsGraceEstimate(input)).toBe(want);
  });
});

const obj = (finalizers?: string[]): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', finalizers } });

describe('remainingOutcome', () => {
  it.each([
    { name: 'nothing left', left: [], grace: 30, want: { remaining: 0, estimateSeconds: 0, finalizers: {} } },
    { name: 'pods still terminating', left: [obj()], grace: 30, want: { remaining: 1, estimateSeconds: 30, finalizers: {} } },
    { name: 'finalizers hold content', left: [obj(['a/b']), obj(['a/b', 'c/d'])], grace: 0, want: { remaining: 2, estimateSeconds: FINALIZER_ESTIMATE_SECONDS, finalizers: { 'a/b': 2, 'c/d': 1 } } },
    {
      name: 'left without reason is an error',
      left: [obj()],
      grace: 0,
      want: { remaining: 1, estimateSeconds: 0, finalizers: {}, error: 'unexpected items still remain in namespace: ns for gvr: configmaps.' },
    },
  ])('$name', ({ left, grace, want }) => {
    expect(remainingOutcome('configmaps.', 'ns', left, grace)).toEqual({ resource: 'configmaps.', ...want });
  });
});

const outcome = (o: Partial<ResourceOutcome>): ResourceOutcome => ({ resource: 'pods.', remaining: 0, finalizers: {}, estimateSeconds: 0, ...o });
const byType = (cs: NamespaceCondition[]) => Object.fromEntries(cs.map((c) => [c.type, `${c.status}/${c.reason}: ${c.message}`]));

describe('deletionConditions', () => {
  it('reports every maintained type as ok when all went well', () => {
    const got = deletionConditions([outcome({})], NOW);
    expect(got.map((c) => c.type)).toEqual([...CONDITION_TYPES]);
    expect(byType(got)).toEqual({
      NamespaceDeletionDiscoveryFailure: 'False/ResourcesDiscovered: All resources successfully discovered',
      NamespaceDeletionGroupVersionParsingFailure: 'False/ParsedGroupVersions: All legacy kube types successfully parsed',
      NamespaceDeletionContentFailure: 'False/ContentDeleted: All content successfully deleted, may be waiting on finalization',
      NamespaceContentRemaining: 'False/ContentRemoved: All content successfully removed',
      NamespaceFinalizersRemaining: 'False/ContentHasNoFinalizers: All content-preserving finalizers finished',
    });
  });

  it.each([
    {
      name: 'content and finalizers remain',
      input: [outcome({ resource: 'pods.', remaining: 2 }), outcome({ resource: 'configmaps.', remaining: 1, finalizers: { 'x.io/hold': 1 } })],
      want: {
        NamespaceContentRemaining: 'True/SomeResourcesRemain: Some resources are remaining: configmaps. has 1 resource instances, pods. has 2 resource instances',
        NamespaceFinalizersRemaining: 'True/SomeFinalizersRemain: Some content in the namespace has finalizers remaining: x.io/hold in 1 resource instances',
      },
    },
    {
      name: 'a delete failed',
      input: [outcome({ error: 'secrets.: boom' })],
      want: { NamespaceDeletionContentFailure: 'True/ContentDeletionFailed: Failed to delete all resource types, 1 remaining: secrets.: boom' },
    },
  ])('$name', ({ input, want }) => {
    expect(byType(deletionConditions(input, NOW))).toMatchObject(want);
  });
});

describe('mergeConditions', () => {
  const c = (type: string, status: 'True' | 'False', message: string, t = NOW): NamespaceCondition => ({ type, status, reason: 'R', message, lastTransitionTime: t });
  it.each([
    { name: 'new type is added', current: [], computed: [c('A', 'False', 'ok')], want: [c('A', 'False', 'ok')] },
    { name: 'unchanged keeps its time', current: [c('A', 'False', 'ok', 'old')], computed: [c('A', 'False', 'ok')], want: undefined },
    { name: 'changed message replaces', current: [c('A', 'True', 'x', 'old')], computed: [c('A', 'True', 'y')], want: [c('A', 'True', 'y')] },
    { name: 'other conditions are kept', current: [c('Other', 'True', 'z', 'old')], computed: [c('A', 'False', 'ok')], want: [c('Other', 'True', 'z', 'old'), c('A', 'False', 'ok')] },
  ])('$name', ({ current, computed, want }) => {
    expect(mergeConditions(current, computed)).toEqual(want);
  });
});
