import { Catalog } from '@orch/api';
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
