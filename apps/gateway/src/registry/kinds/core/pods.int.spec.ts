import { Catalog } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import { GenericStore } from '../../generic-store';
import { openRegistryFixture, TEST_REGISTRY_OPTIONS, type RegistryFixture } from '../../registry-fixture';
import type { RequestContext } from '../../strategy';
import { resolveKind } from '../index';

type Pod = KubeObject & { spec: { containers: object[]; ephemeralContainers?: object[] } };

const ctx: RequestContext = { user: { username: 'admin', groups: ['system:masters'] }, namespace: 'ns', dryRun: false, warnings: [] };
const dbg = { name: 'dbg', image: 'busybox', targetContainerName: 'main' };

/**
 * pods/ephemeralcontainers through the generic store and the pods binding (a real SQLite store):
 * an update of the subresource writes spec.ephemeralContainers (it was once bound to the status
 * strategy, which dropped it and answered 200), and nothing else; the pod's own updates keep them.
 */
describe('pods/ephemeralcontainers (real SQLite store)', () => {
  let fixture: RegistryFixture;
  let pods: GenericStore;

  beforeAll(async () => {
    fixture = await openRegistryFixture('ephemeral');
    const def = new Catalog().lookup('', 'v1', 'pods')!;
    pods = new GenericStore(def, resolveKind(def, { k8sCompatibility: true }), fixture.store, fixture.cache, TEST_REGISTRY_OPTIONS);
  });
  afterAll(() => fixture.close());

  const newPod = async (name: string) => (await pods.create('ns', { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'main', image: 'app' }] } } as KubeObject, ctx)).object as Pod;

  it.each([
    { name: 'through the subresource: added, the rest of the body ignored', subresource: 'ephemeralcontainers', want: [expect.objectContaining(dbg)], image: 'app' },
    { name: 'through the pod itself: ignored', subresource: '', want: undefined, image: 'app' },
  ])('$name', async ({ subresource, want, image }) => {
    const pod = await newPod(`p-${subresource || 'main'}`);
    const body = structuredClone(pod);
    body.spec.ephemeralContainers = [dbg];
    if (subresource) body.spec.containers = [{ name: 'main', image: 'changed' }];
    await pods.update('ns', pod.metadata.name!, body, ctx, subresource);
    const stored = (await pods.get('ns', pod.metadata.name!)) as Pod;
    expect(stored.spec.ephemeralContainers).toEqual(want);
    expect(stored.spec.containers).toEqual([expect.objectContaining({ name: 'main', image })]);
  });

  it('an invalid ephemeral container is a 422 naming the field', async () => {
    const pod = await newPod('p-invalid');
    const body = structuredClone(pod);
    body.spec.ephemeralContainers = [{ name: 'main', image: 'busybox' }];
    const err = await pods.update('ns', 'p-invalid', body, ctx, 'ephemeralcontainers').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).code).toBe(422);
    expect((err as StatusError).message).toContain('spec.ephemeralContainers[0].name');
  });
});
