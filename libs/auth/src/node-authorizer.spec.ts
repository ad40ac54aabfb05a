import { resourceAttributes, type AuthorizationAttributes } from './authz';
import { nodeAuthorizer, podReferences, type PodReferences } from './node-authorizer';

const node1 = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const impostor = { username: 'system:node:n1', groups: ['system:authenticated'] };
const res = (user: AuthorizationAttributes['user'], verb: string, resource: string, namespace = '', name = '', subresource = '', apiGroup = ''): AuthorizationAttributes =>
  resourceAttributes(user, { verb, resource, namespace, name, subresource, apiGroup, apiVersion: 'v1' });

const POD: PodReferences = {
  spec: {
    nodeName: 'n1',
    serviceAccountName: 'runner',
    imagePullSecrets: [{ name: 'registry' }],
    volumes: [
      { name: 'v1', secret: { secretName: 'tls' } },
      { name: 'v2', configMap: { name: 'settings' } },
      { name: 'v3', persistentVolumeClaim: { claimName: 'data' } },
      { name: 'v4', projected: { sources: [{ secret: { name: 'projected-secret' } }] } },
    ],
    containers: [{ name: 'c', env: [{ name: 'E', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'k' } } }], envFrom: [{ configMapRef: { name: 'env-cm' } }] }],
  },
};

describe('Node authorizer', () => {
  const authz = nodeAuthorizer(async (ns, node) => (ns === 'team' && node === 'n1' ? [POD] : []));
  it.each([
    { name: 'a secret of a volume', a: res(node1, 'get', 'secrets', 'team', 'tls'), want: 'allow' },
    { name: 'an image pull secret', a: res(node1, 'get', 'secrets', 'team', 'registry'), want: 'allow' },
    { name: 'a projected secret', a: res(node1, 'get', 'secrets', 'team', 'projected-secret'), want: 'allow' },
    { name: 'an env secret', a: res(node1, 'get', 'secrets', 'team', 'env-secret'), want: 'allow' },
    { name: 'a config map of envFrom', a: res(node1, 'get', 'configmaps', 'team', 'env-cm'), want: 'allow' },
    { name: 'the root CA config map', a: res(node1, 'get', 'configmaps', 'team', 'orch-root-ca.crt'), want: 'allow' },
    { name: 'a claim', a: res(node1, 'get', 'persistentvolumeclaims', 'team', 'data'), want: 'allow' },
    { name: 'a token for the pod’s account', a: res(node1, 'create', 'serviceaccounts', 'team', 'runner', 'token'), want: 'allow' },
    { name: 'a secret no pod on it uses', a: res(node1, 'get', 'secrets', 'team', 'other'), want: 'no-opinion' },
    { name: 'the same secret in another namespace', a: res(node1, 'get', 'secrets', 'elsewhere', 'tls'), want: 'no-opinion' },
    { name: 'listing secrets', a: res(node1, 'list', 'secrets', 'team'), want: 'no-opinion' },
    { name: 'deleting a used secret', a: res(node1, 'delete', 'secrets', 'team', 'tls'), want: 'no-opinion' },
    { name: 'a token for another account', a: res(node1, 'create', 'serviceaccounts', 'team', 'default', 'token'), want: 'no-opinion' },
    { name: 'node rules: its pods’ status', a: res(node1, 'patch', 'pods', 'team', 'p', 'status'), want: 'allow' },
    { name: 'node rules: nodes', a: res(node1, 'create', 'nodes', '', 'n1'), want: 'allow' },
    { name: 'node rules: leases', a: res(node1, 'update', 'leases', 'orch-node-lease', 'n1', '', 'coordination.k8s.io'), want: 'allow' },
    { name: 'outside the node rules: deployments', a: res(node1, 'list', 'deployments', '', '', '', 'apps'), want: 'no-opinion' },
    { name: 'not a node (group missing)', a: res(impostor, 'get', 'secrets', 'team', 'tls'), want: 'no-opinion' },
  ])('$name → $want', async ({ a, want }) => {
    expect((await authz.authorize(a)).decision).toBe(want);
  });

  // Every place a pod names a secret or a config map, in app, init and ephemeral containers.
  const everywhere: PodReferences = {
    spec: {
      imagePullSecrets: [{ name: 'pull' }],
      volumes: [
        { name: 'a', secret: { secretName: 's-volume' } },
        { name: 'b', configMap: { name: 'cm-volume' } },
        { name: 'c', projected: { sources: [{ secret: { name: 's-projected' } }, { configMap: { name: 'cm-projected' } }] } },
      ],
      containers: [{ name: 'app', envFrom: [{ secretRef: { name: 's-envfrom' } }, { configMapRef: { name: 'cm-envfrom' } }] }],
      initContainers: [{ name: 'init', env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 's-env', key: 'k' } } }] }],
      ephemeralContainers: [{ name: 'debug', env: [{ name: 'B', valueFrom: { configMapKeyRef: { name: 'cm-env', key: 'k' } } }] }],
    },
  };
  it.each([
    { kind: 'secrets' as const, want: ['pull', 's-volume', 's-projected', 's-envfrom', 's-env'] },
    { kind: 'configmaps' as const, want: ['orch-root-ca.crt', 'kube-root-ca.crt', 'cm-volume', 'cm-projected', 'cm-envfrom', 'cm-env'] },
  ])('the $kind a pod names', ({ kind, want }) => {
    expect([...podReferences(everywhere, kind)].sort()).toEqual([...want].sort());
  });

  it('automountServiceAccountToken: false drops the root CA config map', () => {
    expect(podReferences({ spec: { automountServiceAccountToken: false } }, 'configmaps').has('orch-root-ca.crt')).toBe(false);
  });
});
