import { Catalog, type ResourceDef } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import type { AdmissionAttributes } from '../../pipeline/admit';
import type { AdmissionState } from '../admission-state';
import type { MatchResources } from './policy-types';
import { PolicySource, type BindingObject, type CompiledPolicy, type PolicyObject } from './policy-source';

/** The replica's caches, as lists whose generation the test bumps. */
function fakeState(objects: Record<string, KubeObject[]>) {
  const caches: Record<string, { generation: number; list: () => KubeObject[]; get: (ns: string, name: string) => KubeObject | undefined }> = {};
  for (const [key, list] of Object.entries(objects)) caches[key] = { generation: 1, list: () => [...list], get: (_ns, name) => list.find((o) => o.metadata.name === name) };
  return { catalog: new Catalog(), cache: (group: string, resource: string) => caches[`${group}/${resource}`] } as unknown as AdmissionState;
}

const CONFIGMAPS = { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] };

function request(name: string, labels: Record<string, string> = {}, namespace = 'team-a'): AdmissionAttributes {
  return {
    operation: 'CREATE',
    object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels } },
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    subresource: '',
    namespace,
    name,
    userInfo: { username: 'u', groups: [] },
    dryRun: false,
  };
}

describe('PolicySource: the bindings whose rules and selectors select a request', () => {
  const policy = (name: string, matchConstraints: MatchResources): PolicyObject => ({ apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name, resourceVersion: '1' }, spec: { matchConstraints } });
  const binding = (name: string, policyName: string, matchResources?: MatchResources): BindingObject => ({ apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name }, spec: { policyName, ...(matchResources ? { matchResources } : {}) } });
  const state = fakeState({
    'admissionregistration.orch.io/validatingadmissionpolicies': [
      policy('all-configmaps', { resourceRules: [CONFIGMAPS] }),
      policy('named', { resourceRules: [{ ...CONFIGMAPS, resourceNames: ['special'] }] }),
      policy('excluding', { resourceRules: [CONFIGMAPS], excludeResourceRules: [{ ...CONFIGMAPS, resourceNames: ['exempt'] }] }),
      policy('labelled', { resourceRules: [CONFIGMAPS], objectSelector: { matchLabels: { checked: 'yes' } } }),
      policy('secrets', { resourceRules: [{ ...CONFIGMAPS, resources: ['secrets'] }] }),
    ],
    'admissionregistration.orch.io/validatingadmissionpolicybindings': [
      binding('b-all', 'all-configmaps'),
      binding('b-named', 'named'),
      binding('b-excluding', 'excluding'),
      binding('b-labelled', 'labelled'),
      binding('b-secrets', 'secrets'),
      binding('b-narrowed', 'all-configmaps', { namespaceSelector: {}, objectSelector: { matchLabels: { tier: 'web' } } }),
      binding('b-missing-policy', 'nope'),
    ],
    '/namespaces': [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } }],
  });
  const source = new PolicySource<PolicyObject, BindingObject, CompiledPolicy<PolicyObject>>(state, 'admissionregistration.orch.io', 'validatingadmissionpolicies', 'validatingadmissionpolicybindings', (_p, shared) => shared);

  async function selected(a: AdmissionAttributes): Promise<string[]> {
    const out: string[] = [];
    for (const c of source.candidates(a)) if (await source.selects(c, a)) out.push(c.binding.metadata.name!);
    return out;
  }

  it.each([
    ['a plain config map', request('plain'), ['b-all', 'b-excluding']],
    ['the named one (resourceNames)', request('special'), ['b-all', 'b-excluding', 'b-named']],
    ['the excluded one (excludeResourceRules with resourceNames)', request('exempt'), ['b-all']],
    ['one with the policy’s object labels', request('plain', { checked: 'yes' }), ['b-all', 'b-excluding', 'b-labelled']],
    ['one with the binding’s object labels', request('plain', { tier: 'web' }), ['b-all', 'b-excluding', 'b-narrowed']],
  ])('%s', async (_name, a, want) => {
    expect(await selected(a)).toEqual(want);
  });

  it('answers from its index on a second request for the same resource, with the name still deciding', async () => {
    expect(await selected(request('special'))).toEqual(['b-all', 'b-excluding', 'b-named']);
    expect(await selected(request('other'))).toEqual(['b-all', 'b-excluding']);
  });
});

describe('PolicySource: what it keeps between requests follows the catalog and the request', () => {
  const GROUP = 'admissionregistration.orch.io';
  /** A served version of the custom resource widgets.example.com. */
  const widgets = (version: string, kind = 'Widget', resource = 'widgets'): ResourceDef => ({ group: 'example.com', version, resource, kind, listKind: `${kind}List`, singular: kind.toLowerCase(), shortNames: [], scope: 'Namespaced', verbs: ['create', 'get', 'list'], subresources: [], categories: [], enabledByDefault: true, virtual: false });
  const WIDGETS_V2 = { apiGroups: ['example.com'], apiVersions: ['v2'], operations: ['CREATE'], resources: ['widgets'] };
  const policies = [
    { apiVersion: `${GROUP}/v1`, kind: 'ValidatingAdmissionPolicy', metadata: { name: 'widgets-v2', resourceVersion: '1' }, spec: { matchConstraints: { resourceRules: [WIDGETS_V2] } } },
    { apiVersion: `${GROUP}/v1`, kind: 'ValidatingAdmissionPolicy', metadata: { name: 'configmaps', resourceVersion: '1' }, spec: { matchConstraints: { resourceRules: [{ ...CONFIGMAPS, resources: ['configmaps', 'secrets'] }] } } },
    { apiVersion: `${GROUP}/v1`, kind: 'ValidatingAdmissionPolicy', metadata: { name: 'with-params', resourceVersion: '1' }, spec: { paramKind: { apiVersion: 'example.com/v1', kind: 'Limit' }, matchConstraints: { resourceRules: [{ ...CONFIGMAPS, resources: ['secrets'] }] } } },
  ];
  const bindings = policies.map((p) => ({ apiVersion: `${GROUP}/v1`, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: `b-${p.metadata.name}` }, spec: { policyName: p.metadata.name } }));
  const create = (group: string, version: string, resource: string, kind: string, namespace = 'team-a'): AdmissionAttributes => ({ ...request('x', {}, namespace), kind: { group, version, kind }, resource: { group, version, resource } });
  const WIDGET_V1 = create('example.com', 'v1', 'widgets', 'Widget');

  function fresh() {
    const state = fakeState({ [`${GROUP}/validatingadmissionpolicies`]: policies as KubeObject[], [`${GROUP}/validatingadmissionpolicybindings`]: bindings as KubeObject[] });
    state.catalog.register(widgets('v1'));
    const source = new PolicySource<PolicyObject, BindingObject, CompiledPolicy<PolicyObject>>(state, GROUP, 'validatingadmissionpolicies', 'validatingadmissionpolicybindings', (_p, shared) => shared);
    /** The candidates' bindings, each with the version it matched as. */
    const found = (a: AdmissionAttributes) => source.candidates(a).map((c) => `${c.binding.metadata.name}@${c.matched.resource.version}`);
    return { catalog: state.catalog, source, found };
  }

  const serveV2 = (c: Catalog) => c.register(widgets('v2'));
  it.each([
    // Equivalent: a v1 widget is matched as v2 once v2 is served (then converted), and no longer once v2 is gone.
    ['a version served later (matchPolicy Equivalent)', () => undefined, serveV2, [], ['b-widgets-v2@v2']],
    ['a version no longer served', serveV2, (c: Catalog) => c.unregister('example.com', 'v2', 'widgets'), ['b-widgets-v2@v2'], []],
  ])('%s: the index answers as the catalog is now', (_name, setup, change, before, after) => {
    const { catalog, found } = fresh();
    setup(catalog);
    expect(found(WIDGET_V1)).toEqual(before);
    change(catalog);
    expect(found(WIDGET_V1)).toEqual(after);
  });

  it('a paramKind served after the policy was compiled is found', () => {
    const { catalog, source } = fresh();
    const secret = create('', 'v1', 'secrets', 'Secret');
    const paramResource = () => source.candidates(secret).find((c) => c.binding.metadata.name === 'b-with-params')?.compiled.paramResource?.resource;
    expect(paramResource()).toBeUndefined();
    catalog.register(widgets('v1', 'Limit', 'limits'));
    expect(paramResource()).toBe('limits');
  });

  it.each([
    ['configmaps, secrets, configmaps', [['configmaps', 'ConfigMap'], ['secrets', 'Secret'], ['configmaps', 'ConfigMap']], [['b-configmaps@v1'], ['b-configmaps@v1', 'b-with-params@v1'], ['b-configmaps@v1']]],
    ['secrets, then an update of one', [['secrets', 'Secret'], ['secrets', 'Secret', 'UPDATE']], [['b-configmaps@v1', 'b-with-params@v1'], []]],
  ])('requests in a row for other resources or operations: %s', (_name, requests, want) => {
    const { found } = fresh();
    expect(requests.map(([resource, kind, operation]) => found({ ...create('', 'v1', resource, kind), operation: (operation ?? 'CREATE') as AdmissionAttributes['operation'] }))).toEqual(want);
  });
});
