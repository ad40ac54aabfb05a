import { BUILTIN_RESOURCES } from './catalog-data';
import { Catalog, compareVersionPriority, parseRuntimeConfig, RuntimeConfigError } from './catalog';

describe('Catalog', () => {
  // SPEC "Resource types": group/version, resource, short names, scope.
  it.each([
    { gv: 'v1', resource: 'pods', kind: 'Pod', short: ['po'], scope: 'Namespaced' },
    { gv: 'v1', resource: 'namespaces', kind: 'Namespace', short: ['ns'], scope: 'Cluster' },
    { gv: 'v1', resource: 'componentstatuses', kind: 'ComponentStatus', short: ['cs'], scope: 'Cluster' },
    { gv: 'v1', resource: 'resourcequotas', kind: 'ResourceQuota', short: ['quota'], scope: 'Namespaced' },
    { gv: 'apps/v1', resource: 'deployments', kind: 'Deployment', short: ['deploy'], scope: 'Namespaced' },
    { gv: 'apiextensions.orch.io/v1', resource: 'customresourcedefinitions', kind: 'CustomResourceDefinition', short: ['crd', 'crds'], scope: 'Cluster' },
    { gv: 'authorization.orch.io/v1', resource: 'localsubjectaccessreviews', kind: 'LocalSubjectAccessReview', short: [], scope: 'Namespaced' },
    { gv: 'networking.orch.io/v1', resource: 'ingressclasses', kind: 'IngressClass', short: [], scope: 'Cluster' },
    { gv: 'storage.orch.io/v1', resource: 'csistoragecapacities', kind: 'CSIStorageCapacity', short: [], scope: 'Namespaced' },
    { gv: 'scheduling.orch.io/v1', resource: 'priorityclasses', kind: 'PriorityClass', short: ['pc'], scope: 'Cluster' },
  ])('serves $gv $resource', ({ gv, resource, kind, short, scope }) => {
    const [group, version] = gv.includes('/') ? gv.split('/') : ['', gv];
    const def = new Catalog().lookup(group, version, resource);
    expect(def).toMatchObject({ kind, shortNames: short, scope, listKind: `${kind}List` });
  });

  it('resolves *.k8s.io aliases to *.orch.io groups', () => {
    expect(new Catalog().lookup('rbac.authorization.k8s.io', 'v1', 'roles')?.group).toBe('rbac.authorization.orch.io');
  });

  it('has no duplicate group/version/resource', () => {
    const keys = BUILTIN_RESOURCES.map((r) => `${r.group}/${r.version}/${r.resource}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  // SPEC Versioning 2.
  it.each([
    { name: 'disable a group version', rc: 'batch/v1=false', gv: ['batch', 'v1', 'jobs'], served: false },
    { name: 'missing value means true', rc: 'storage.orch.io/v1beta1/csistoragecapacities', gv: ['storage.orch.io', 'v1beta1', 'csistoragecapacities'], served: true },
    { name: 'beta off by default', rc: '', gv: ['storage.orch.io', 'v1beta1', 'csistoragecapacities'], served: false },
    { name: 'single resource off', rc: 'apps/v1/deployments=false', gv: ['apps', 'v1', 'deployments'], served: false },
    { name: 'sibling stays on', rc: 'apps/v1/deployments=false', gv: ['apps', 'v1', 'replicasets'], served: true },
    { name: 'core via api/v1', rc: 'api/v1=false', gv: ['', 'v1', 'pods'], served: false },
    { name: 'api/all=false then enable one', rc: 'api/all=false,apps/v1=true', gv: ['apps', 'v1', 'deployments'], served: true },
    { name: 'api/all=false', rc: 'api/all=false,apps/v1=true', gv: ['batch', 'v1', 'jobs'], served: false },
    { name: 'alpha group version in the k8s.io spelling', rc: 'admissionregistration.k8s.io/v1alpha1=true', gv: ['admissionregistration.orch.io', 'v1alpha1', 'mutatingadmissionpolicies'], served: true },
    { name: 'alpha off by default', rc: '', gv: ['admissionregistration.orch.io', 'v1alpha1', 'mutatingadmissionpolicies'], served: false },
  ])('runtime-config: $name', ({ rc, gv, served }) => {
    const c = new Catalog(undefined, parseRuntimeConfig(rc));
    expect(c.lookup(gv[0], gv[1], gv[2]) !== undefined).toBe(served);
  });

  it('a disabled group version disappears from groups()', () => {
    const c = new Catalog(undefined, parseRuntimeConfig('batch/v1=false'));
    expect(c.groups().map((g) => g.name)).not.toContain('batch');
  });

  it.each([
    { rc: 'nosuch.orch.io/v1=false', err: /unknown api groupVersion/ },
    { rc: 'apps/v1/nosuch=false', err: /unknown resource/ },
    { rc: 'apps/v1=maybe', err: /must be true or false/ },
  ])('runtime-config error: $rc', ({ rc, err }) => {
    expect(() => new Catalog(undefined, parseRuntimeConfig(rc))).toThrow(err);
    expect(() => new Catalog(undefined, parseRuntimeConfig(rc))).toThrow(RuntimeConfigError);
  });

  it.each([
    { of: ['autoscaling', 'v1', 'horizontalpodautoscalers'], rc: '', want: ['autoscaling/v1/horizontalpodautoscalers', 'autoscaling/v2/horizontalpodautoscalers'] },
    { of: ['autoscaling', 'v2', 'horizontalpodautoscalers'], rc: '', want: ['autoscaling/v2/horizontalpodautoscalers', 'autoscaling/v1/horizontalpodautoscalers'] },
    { of: ['events.orch.io', 'v1', 'events'], rc: '', want: ['events.orch.io/v1/events', '/v1/events'] },
    { of: ['', 'v1', 'events'], rc: '', want: ['/v1/events', 'events.orch.io/v1/events'] },
    { of: ['storage.orch.io', 'v1', 'csistoragecapacities'], rc: '', want: ['storage.orch.io/v1/csistoragecapacities'] },
    { of: ['storage.orch.io', 'v1', 'csistoragecapacities'], rc: 'storage.orch.io/v1beta1=true', want: ['storage.orch.io/v1/csistoragecapacities', 'storage.orch.io/v1beta1/csistoragecapacities'] },
    { of: ['', 'v1', 'configmaps'], rc: '', want: ['/v1/configmaps'] },
  ])('equivalent resources of $of (runtime-config "$rc")', ({ of, rc, want }) => {
    const c = new Catalog(undefined, parseRuntimeConfig(rc));
    const def = c.lookup(of[0], of[1], of[2])!;
    expect(c.equivalents(def).map((d) => `${d.group}/${d.version}/${d.resource}`)).toEqual(want);
  });

  it('orders versions like upstream', () => {
    expect(['v1beta1', 'v1alpha1', 'v2', 'v1', 'v2beta2', 'v1beta2'].sort(compareVersionPriority)).toEqual(['v2', 'v1', 'v2beta2', 'v1beta2', 'v1beta1', 'v1alpha1']);
  });
});
