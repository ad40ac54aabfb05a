import { API_ACCESS_VOLUME_PREFIX, SERVICE_ACCOUNT_MOUNT_PATHS, apiAccessVolume, mountServiceAccountToken, shouldAutomount, unmountableSecret, type AdmittedPodSpec } from './service-account';
import type { ServiceAccount } from '../api';

const account = (over: Partial<ServiceAccount> = {}, enforce = false): ServiceAccount => ({
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: { name: 'builder', namespace: 'ns', ...(enforce ? { annotations: { 'orch.io/enforce-mountable-secrets': 'true' } } : {}) },
  ...over,
});
const VOLUME = `${API_ACCESS_VOLUME_PREFIX}abcde`;
const mountsAt = (name = VOLUME) => SERVICE_ACCOUNT_MOUNT_PATHS.map((mountPath) => ({ name, readOnly: true, mountPath }));

describe('ServiceAccount admission: automount', () => {
  it.each([
    { name: 'neither says: mounted', sa: undefined, pod: undefined, want: true },
    { name: 'the account says no', sa: false, pod: undefined, want: false },
    { name: 'the pod says no', sa: undefined, pod: false, want: false },
    { name: 'the pod overrides the account', sa: false, pod: true, want: true },
  ])('$name', ({ sa, pod, want }) => {
    expect(shouldAutomount(account({ automountServiceAccountToken: sa }), { automountServiceAccountToken: pod })).toBe(want);
  });
});

describe('ServiceAccount admission: the API-access volume', () => {
  it.each([
    {
      name: 'every container and init container, at both paths',
      spec: { initContainers: [{ name: 'i' }], containers: [{ name: 'a' }, { name: 'b' }] },
      want: { initContainers: [{ name: 'i', volumeMounts: mountsAt() }], containers: [{ name: 'a', volumeMounts: mountsAt() }, { name: 'b', volumeMounts: mountsAt() }], volumes: [apiAccessVolume(VOLUME)] },
    },
    {
      name: 'not over a container’s own mount at a path',
      spec: { containers: [{ name: 'a', volumeMounts: [{ name: 'mine', mountPath: SERVICE_ACCOUNT_MOUNT_PATHS[1] }] }] },
      want: { containers: [{ name: 'a', volumeMounts: [{ name: 'mine', mountPath: SERVICE_ACCOUNT_MOUNT_PATHS[1] }, mountsAt()[0]] }], volumes: [apiAccessVolume(VOLUME)] },
    },
    {
      name: 'no volume when every container mounts its own',
      spec: { containers: [{ name: 'a', volumeMounts: SERVICE_ACCOUNT_MOUNT_PATHS.map((mountPath) => ({ name: 'mine', mountPath })) }] },
      want: { containers: [{ name: 'a', volumeMounts: SERVICE_ACCOUNT_MOUNT_PATHS.map((mountPath) => ({ name: 'mine', mountPath })) }] },
    },
    {
      name: 'a volume added before is reused (reinvocation)',
      spec: { containers: [{ name: 'a', volumeMounts: mountsAt(`${API_ACCESS_VOLUME_PREFIX}zzzzz`) }, { name: 'sidecar' }], volumes: [apiAccessVolume(`${API_ACCESS_VOLUME_PREFIX}zzzzz`)] },
      want: { containers: [{ name: 'a', volumeMounts: mountsAt(`${API_ACCESS_VOLUME_PREFIX}zzzzz`) }, { name: 'sidecar', volumeMounts: mountsAt(`${API_ACCESS_VOLUME_PREFIX}zzzzz`) }], volumes: [apiAccessVolume(`${API_ACCESS_VOLUME_PREFIX}zzzzz`)] },
    },
    {
      name: 'ephemeral containers get none',
      spec: { containers: [{ name: 'a' }], ephemeralContainers: [{ name: 'debug' }] },
      want: { containers: [{ name: 'a', volumeMounts: mountsAt() }], ephemeralContainers: [{ name: 'debug' }], volumes: [apiAccessVolume(VOLUME)] },
    },
  ])('$name', ({ spec, want }) => {
    const s = structuredClone(spec) as AdmittedPodSpec;
    mountServiceAccountToken(s, 'abcde');
    expect(s).toEqual(want);
  });

  it('projects a bound token, the root CA and the namespace', () => {
    expect(apiAccessVolume('v').projected).toEqual({
      defaultMode: 0o644,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'orch-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    });
  });
});

describe('ServiceAccount admission: orch.io/enforce-mountable-secrets', () => {
  const listed = { secrets: [{ name: 'ok' }], imagePullSecrets: [{ name: 'pull-ok' }] };
  it.each([
    { name: 'not enforced: anything goes', enforce: false, spec: { volumes: [{ name: 'v', secret: { secretName: 'other' } }] }, want: undefined },
    { name: 'listed secrets are allowed', enforce: true, spec: { volumes: [{ name: 'v', secret: { secretName: 'ok' } }], imagePullSecrets: [{ name: 'pull-ok' }], containers: [{ name: 'c', envFrom: [{ secretRef: { name: 'ok' } }] }] }, want: undefined },
    { name: 'a secret volume', enforce: true, spec: { volumes: [{ name: 'v', secret: { secretName: 'other' } }] }, want: 'volume with secret.secretName="other" is not allowed because service account builder does not reference that secret' },
    { name: 'an init container env var', enforce: true, spec: { initContainers: [{ name: 'i', env: [{ name: 'PW', valueFrom: { secretKeyRef: { name: 'other' } } }] }] }, want: 'init container i with envVar PW referencing secret.secretName="other" is not allowed because service account builder does not reference that secret' },
    { name: 'a container envFrom', enforce: true, spec: { containers: [{ name: 'c', envFrom: [{ secretRef: { name: 'other' } }] }] }, want: 'container c with envFrom referencing secret.secretName="other" is not allowed because service account builder does not reference that secret' },
    { name: 'an ephemeral container env var', enforce: true, spec: { ephemeralContainers: [{ name: 'd', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'other' } } }] }] }, want: 'ephemeral container d with envVar X referencing secret.secretName="other" is not allowed because service account builder does not reference that secret' },
    { name: 'an image pull secret', enforce: true, spec: { imagePullSecrets: [{ name: 'pull-ok' }, { name: 'pull-other' }] }, want: 'imagePullSecrets[1].name="pull-other" is not allowed because service account builder does not reference that imagePullSecret' },
  ])('$name', ({ enforce, spec, want }) => {
    expect(unmountableSecret(account(listed, enforce), spec as AdmittedPodSpec)).toBe(want);
  });

  it('honours the kubernetes.io spelling', () => {
    const sa = account({ metadata: { name: 'builder', annotations: { 'kubernetes.io/enforce-mountable-secrets': 'true' } } });
    expect(unmountableSecret(sa, { volumes: [{ name: 'v', secret: { secretName: 'x' } }] })).toMatch(/is not allowed/);
  });
});
