import { Catalog } from '@orch/api';
import { Discovery } from './discovery';

type Json = Record<string, any>;

const withAliases = new Discovery(new Catalog(), { k8sAliases: true });
const withoutAliases = new Discovery(new Catalog(), { k8sAliases: false });
const names = (d: Discovery) => (d.apiGroupList().groups as Json[]).map((g) => g.name as string);

describe('discovery of both brands (compatibility option)', () => {
  it('declares every *.orch.io group again under its *.k8s.io name, after all primary groups', () => {
    const groups = names(withAliases);
    const orch = groups.filter((g) => g.endsWith('.orch.io'));
    const k8s = groups.filter((g) => g.endsWith('.k8s.io'));
    expect(k8s.sort()).toEqual(orch.map((g) => g.replace(/\.orch\.io$/, '.k8s.io')).sort());
    // Clients that pick the first group serving a resource (kubectl get roles) pick the orch one.
    const firstAlias = groups.findIndex((g) => g.endsWith('.k8s.io'));
    expect(groups.slice(firstAlias).every((g) => g.endsWith('.k8s.io'))).toBe(true);
    expect(groups).toEqual(expect.arrayContaining(['apps', 'batch', 'policy', 'autoscaling']));
    expect(names(withoutAliases).some((g) => g.endsWith('.k8s.io'))).toBe(false);
  });

  it.each([
    { name: 'group', got: () => withAliases.apiGroup('networking.k8s.io'), want: { name: 'networking.k8s.io', preferredVersion: { groupVersion: 'networking.k8s.io/v1', version: 'v1' } } },
    { name: 'resource list', got: () => withAliases.apiResourceList('rbac.authorization.k8s.io', 'v1'), want: { groupVersion: 'rbac.authorization.k8s.io/v1' } },
    { name: 'group with the option off', got: () => withoutAliases.apiGroup('networking.k8s.io'), want: undefined },
    { name: 'resource list with the option off', got: () => withoutAliases.apiResourceList('rbac.authorization.k8s.io', 'v1'), want: undefined },
    { name: 'unknown k8s.io group', got: () => withAliases.apiGroup('nope.k8s.io'), want: undefined },
  ])('legacy discovery under the alias: $name', ({ got, want }) => {
    if (want === undefined) expect(got()).toBeUndefined();
    else expect(got()).toMatchObject(want);
  });

  it('short names and categories stay on the primary brand only (kubectl api-resources lists each resource once per brand)', () => {
    const entry = (d: Json | undefined, resource: string): Json => (d!.resources as Json[]).find((r) => r.name === resource)!;
    expect(entry(withAliases.apiResourceList('networking.orch.io', 'v1')!, 'networkpolicies').shortNames).toEqual(['netpol']);
    expect(entry(withAliases.apiResourceList('networking.k8s.io', 'v1')!, 'networkpolicies').shortNames).toBeUndefined();
    expect(entry(withAliases.apiResourceList('admissionregistration.orch.io', 'v1')!, 'validatingwebhookconfigurations').categories).toEqual(['api-extensions']);
    expect(entry(withAliases.apiResourceList('admissionregistration.k8s.io', 'v1')!, 'validatingwebhookconfigurations').categories).toBeUndefined();
  });

  it('aggregated discovery: alias items name their group in every responseKind', () => {
    const items = withAliases.aggregated(false, 'v2').items as Json[];
    const certs = items.find((i) => i.metadata.name === 'certificates.k8s.io')!;
    const csr = certs.versions[0].resources.find((r: Json) => r.resource === 'certificatesigningrequests');
    expect(csr.responseKind).toEqual({ group: 'certificates.k8s.io', version: 'v1', kind: 'CertificateSigningRequest' });
    expect(csr.shortNames).toBeUndefined();
    expect(csr.subresources.map((s: Json) => s.responseKind.group)).toEqual(['certificates.k8s.io', 'certificates.k8s.io']);
    expect(items.filter((i) => i.metadata.name === 'certificates.orch.io')[0].versions[0].resources[0].shortNames).toEqual(['csr']);
    expect((withoutAliases.aggregated(false, 'v2').items as Json[]).some((i) => i.metadata.name.endsWith('.k8s.io'))).toBe(false);
  });

  it('the core group is not aliased; its subresources keep their groups', () => {
    const core = withAliases.apiResourceList('', 'v1')!;
    expect(core.groupVersion).toBe('v1');
    expect((core.resources as Json[]).find((r) => r.name === 'pods/eviction')).toMatchObject({ group: 'policy', version: 'v1', kind: 'Eviction' });
  });
});

describe('discovery order from the APIServices (groupPriorityMinimum, versionPriority)', () => {
  // autoscaling serves v2 and v1; a made-up priority table over the catalog's groups.
  const groupPriority: Record<string, number> = { batch: 20000, autoscaling: 100 };
  const versionPriority: Record<string, number> = { 'autoscaling/v1': 20, 'autoscaling/v2': 10 };
  const d = new Discovery(new Catalog(), {
    k8sAliases: false,
    priorities: { group: (g) => groupPriority[g], version: (g, v) => versionPriority[`${g}/${v}`] },
  });

  it('orders groups by groupPriorityMinimum, highest first; unnamed groups keep the catalog order at 18000', () => {
    const groups = names(d);
    expect(groups[0]).toBe('batch');
    expect(groups[groups.length - 1]).toBe('autoscaling');
    const rest = names(withoutAliases).filter((g) => g !== 'batch' && g !== 'autoscaling');
    expect(groups.slice(1, -1)).toEqual(rest);
  });

  it('orders versions by versionPriority, highest first: the preferred version', () => {
    expect(d.apiGroup('autoscaling')).toMatchObject({ preferredVersion: { version: 'v1' }, versions: [{ version: 'v1' }, { version: 'v2' }] });
    expect(withoutAliases.apiGroup('autoscaling')).toMatchObject({ preferredVersion: { version: 'v2' } });
    expect((d.aggregated(false, 'v2').items as Json[]).find((i) => i.metadata.name === 'autoscaling')!.versions.map((v: Json) => v.version)).toEqual(['v1', 'v2']);
  });
});

describe('group versions of unavailable APIServices (upstream lists them; aggregated discovery marks them Stale)', () => {
  const unavailable = [
    { group: 'lost.example.com', version: 'v1' },
    { group: 'metrics.orch.io', version: 'v1beta1' },
  ];
  const d = new Discovery(new Catalog(), { k8sAliases: true, unavailable: () => unavailable });
  const aggregatedVersion = (group: string, version: string) =>
    (d.aggregated(false, 'v2').items as Json[]).find((i) => i.metadata.name === group)?.versions.find((v: Json) => v.version === version);

  it.each([
    { group: 'lost.example.com', version: 'v1' },
    { group: 'metrics.orch.io', version: 'v1beta1' },
    { group: 'metrics.k8s.io', version: 'v1beta1' },
  ])('$group/$version is in /apis, /apis/<group> and aggregated discovery (Stale, no resources)', ({ group, version }) => {
    expect(names(d)).toContain(group);
    expect(d.apiGroup(group)).toMatchObject({ name: group, versions: [{ groupVersion: `${group}/${version}`, version }] });
    expect(aggregatedVersion(group, version)).toEqual({ version, freshness: 'Stale', resources: [] });
    // Not served locally: the aggregation stage answers /apis/<group>/<version> (503 while unavailable).
    expect(d.apiResourceList(group, version)).toBeUndefined();
  });

  it('served group versions stay Current', () => {
    expect(aggregatedVersion('apps', 'v1')).toMatchObject({ freshness: 'Current' });
    expect(names(new Discovery(new Catalog(), { k8sAliases: true }))).not.toContain('lost.example.com');
  });
});
