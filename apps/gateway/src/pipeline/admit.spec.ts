import { selectAdmissionPlugins } from '../admission/plugins';
import type { KubeObject } from '@orch/apimachinery';
import { AdmissionChain, handling, type AdmissionOperation, type AdmissionPlugin, type AdmissionResource } from './admit';

// The chain keeps the answers of fixed `handles` per (operation, resource, subresource): the
// hooks it calls must be those of asking every plugin on every request.

type Hooks = 'mutate' | 'validate';
type Handles = NonNullable<AdmissionPlugin['handles']>;

function plugin(name: string, calls: string[], hooks: Hooks[], handles?: Handles, fixed = false): AdmissionPlugin {
  const p: { -readonly [K in keyof AdmissionPlugin]: AdmissionPlugin[K] } = { name };
  if (handles) p.handles = handles;
  if (fixed) p.handlesFixed = true;
  for (const h of hooks) p[h] = () => void calls.push(`${name}.${h}`);
  return p;
}

/** The calls of a chain that asks every plugin its `handles` each time. */
function expected(plugins: readonly AdmissionPlugin[], operation: AdmissionOperation, r: AdmissionResource, sub: string): string[] {
  const out: string[] = [];
  for (const hook of ['mutate', 'validate'] as const) for (const p of plugins) if (p[hook] && (!p.handles || p.handles(operation, r, sub))) out.push(`${p.name}.${hook}`);
  return out;
}

async function admit(chain: AdmissionChain, operation: AdmissionOperation, r: AdmissionResource, sub: string): Promise<void> {
  const admission = chain.forRequest({ kind: { group: r.group, version: r.version, kind: 'X' }, resource: r, subresource: sub, namespace: 'ns', name: 'n', userInfo: { username: 'u', groups: [] }, dryRun: false, warnings: [] });
  await admission.mutate(operation, undefined, undefined);
  await admission.validate(operation, undefined, undefined);
}

const res = (resource: string, group = '', version = 'v1'): AdmissionResource => ({ group, version, resource });

describe('AdmissionChain: plugins indexed by (operation, resource, subresource)', () => {
  const calls: string[] = [];
  let open = false;
  let fixedAsked = 0;
  const plugins = [
    plugin('Pods', calls, ['mutate', 'validate'], handling({ CREATE: ['pods'], UPDATE: ['pods/ephemeralcontainers'] })),
    plugin('Always', calls, ['mutate', 'validate']),
    plugin('AppsCreates', calls, ['validate'], (op, r) => (fixedAsked++, op === 'CREATE' && r.group === 'apps'), true),
    // Follows state (as the webhook plugins follow their configurations): asked every time.
    plugin('Dynamic', calls, ['mutate', 'validate'], () => open),
    plugin('ConfigMapMutator', calls, ['mutate'], handling({ CREATE: ['configmaps'] })),
    plugin('Quota', calls, ['validate'], (op, _r, sub) => (op === 'CREATE' || op === 'UPDATE') && sub === '', true),
  ];
  const chain = new AdmissionChain(plugins);

  it.each([
    { operation: 'CREATE', r: res('configmaps'), sub: '' },
    { operation: 'CREATE', r: res('pods'), sub: '' },
    { operation: 'UPDATE', r: res('pods'), sub: '' },
    { operation: 'UPDATE', r: res('pods'), sub: 'ephemeralcontainers' },
    { operation: 'UPDATE', r: res('pods'), sub: 'status' },
    { operation: 'CREATE', r: res('deployments', 'apps'), sub: '' },
    { operation: 'CREATE', r: res('deployments', 'apps', 'v1beta1'), sub: '' },
    { operation: 'DELETE', r: res('configmaps'), sub: '' },
    { operation: 'CONNECT', r: res('pods'), sub: 'exec' },
  ] as { operation: AdmissionOperation; r: AdmissionResource; sub: string }[])('$operation $r.group/$r.version/$r.resource/$sub: the hooks of asking every plugin', async ({ operation, r, sub }) => {
    for (const state of [false, true, false, true]) {
      open = state;
      calls.length = 0;
      await admit(chain, operation, r, sub);
      expect(calls).toEqual(expected(plugins, operation, r, sub));
    }
  });

  it('asks a fixed `handles` once per (operation, resource, subresource)', async () => {
    const before = fixedAsked;
    for (let i = 0; i < 3; i++) await admit(chain, 'CREATE', res('replicasets', 'apps'), '');
    expect(fixedAsked - before).toBe(1);
  });
});

describe('AdmissionChain over the plugins --enable/--disable-admission-plugins select', () => {
  const calls: string[] = [];
  const provided = [
    plugin('NamespaceLifecycle', calls, ['validate']),
    plugin('LimitRanger', calls, ['mutate', 'validate'], handling({ CREATE: ['pods'] })),
    plugin('PodNodeSelector', calls, ['mutate', 'validate'], handling({ CREATE: ['pods'] })),
    plugin('ResourceQuota', calls, ['validate'], (op, _r, sub) => op === 'CREATE' && sub === '', true),
  ];
  it.each([
    { flags: 'defaults', enable: [], disable: [], want: ['LimitRanger.mutate', 'NamespaceLifecycle.validate', 'LimitRanger.validate', 'ResourceQuota.validate'] },
    { flags: 'PodNodeSelector enabled', enable: ['PodNodeSelector'], disable: [], want: ['LimitRanger.mutate', 'PodNodeSelector.mutate', 'NamespaceLifecycle.validate', 'LimitRanger.validate', 'PodNodeSelector.validate', 'ResourceQuota.validate'] },
    { flags: 'LimitRanger and ResourceQuota disabled', enable: [], disable: ['LimitRanger', 'ResourceQuota'], want: ['NamespaceLifecycle.validate'] },
  ])('pod create, $flags', async ({ enable, disable, want }) => {
    const chosen = selectAdmissionPlugins(
      provided.map((p) => p.name),
      enable,
      disable,
    );
    const chain = AdmissionChain.ordered(provided.filter((p) => chosen.includes(p.name)));
    for (let i = 0; i < 2; i++) {
      calls.length = 0;
      await admit(chain, 'CREATE', res('pods'), '');
      expect(calls).toEqual(want);
    }
  });
});

describe('AdmissionChain: the check of a mutated object', () => {
  const broken = () => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'n' }, data: 'not a map' }) as unknown as KubeObject;
  const mutation = (handles: Handles, keepsObject = false) => {
    const chain = new AdmissionChain([{ ...plugin('Mutator', [], ['mutate'], handles), keepsObject }]);
    return chain.forRequest({ kind: { group: '', version: 'v1', kind: 'ConfigMap' }, resource: res('configmaps'), subresource: '', namespace: 'ns', name: 'n', userInfo: { username: 'u', groups: [] }, dryRun: false, warnings: [] }).mutate('CREATE', broken(), undefined);
  };
  it('runs when a mutating plugin saw the object', async () => {
    await expect(mutation(handling({ CREATE: ['configmaps'] }))).rejects.toMatchObject({ code: 400 });
    await expect(mutation(() => true)).rejects.toMatchObject({ code: 400 });
  });
  it('is left to the caller when no mutating plugin handled the request', async () => {
    await expect(mutation(handling({ CREATE: ['pods'] }))).resolves.toBeUndefined();
    await expect(mutation(() => false)).resolves.toBeUndefined();
  });
  it('is left to the caller when the mutating plugins that ran keep the object', async () => {
    await expect(mutation(() => true, true)).resolves.toBeUndefined();
  });
});
