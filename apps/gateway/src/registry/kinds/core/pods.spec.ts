import type { KubeObject } from '@orch/apimachinery';
import { ephemeralContainersWrites, podStrategy, validateEphemeralContainers } from './pods';

type Pod = KubeObject & { spec: Record<string, unknown> };
const pod = (ephemeral?: Record<string, unknown>[]): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns' },
  spec: { containers: [{ name: 'main', image: 'x' }], initContainers: [{ name: 'init', image: 'x' }], ...(ephemeral ? { ephemeralContainers: ephemeral } : {}) },
});
const dbg = (extra: Record<string, unknown> = {}) => ({ name: 'dbg', image: 'busybox', ...extra });

describe('pods/ephemeralcontainers', () => {
  it.each([
    { name: 'adding one', before: undefined, after: [dbg()], want: [] },
    { name: 'adding a second', before: [dbg()], after: [dbg(), { name: 'dbg2', image: 'busybox', targetContainerName: 'main' }], want: [] },
    { name: 'empty resources as kubectl sends them', before: undefined, after: [dbg({ resources: {} })], want: [] },
    { name: 'a name a container has', before: undefined, after: [{ name: 'main', image: 'b' }], want: ['spec.ephemeralContainers[0].name: Duplicate value: "main"'] },
    { name: 'no image', before: undefined, after: [{ name: 'dbg' }], want: ['spec.ephemeralContainers[0].image: Required value'] },
    { name: 'ports', before: undefined, after: [dbg({ ports: [{ containerPort: 80 }] })], want: ['spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container'] },
    { name: 'an unknown target', before: undefined, after: [dbg({ targetContainerName: 'nope' })], want: [expect.stringContaining('spec.ephemeralContainers[0].targetContainerName: Unsupported value: "nope"')] },
    { name: 'removing one', before: [dbg()], after: [], want: ['spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be removed'] },
    { name: 'changing one', before: [dbg()], after: [dbg({ image: 'alpine' })], want: ['spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be changed'] },
  ])('$name', ({ before, after, want }) => {
    expect(validateEphemeralContainers(pod(after) as never, pod(before) as never).map((e) => e.toString())).toEqual(want);
  });

  it('the subresource writes only spec.ephemeralContainers; updates of the pod keep them', () => {
    const incoming = pod([dbg()]);
    incoming.spec.containers = [{ name: 'changed', image: 'y' }];
    ephemeralContainersWrites.prepareForUpdate(incoming as never, pod() as never);
    expect(incoming.spec).toEqual(pod([dbg()]).spec);
    const update = pod();
    podStrategy.prepareForUpdate!(update as never, pod([dbg()]) as never, { user: { username: 'u', groups: [] }, namespace: 'ns', dryRun: false, warnings: [] });
    expect(update.spec.ephemeralContainers).toEqual([dbg()]);
  });
});
