import { lstat, mkdir, readFile, readdir, readlink, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { join } from 'node:path';
import { removeDir, tempDir } from '@orch/testing';
import type { ConfigMap, Pod, Secret } from '../../api/types';
import type { ObjectSource } from './env';
import { VolumeError, checkHostPath, containerMounts, containerRoot, materializeVolumes, writeAtomicDir } from './volumes';

const b64 = (s: string) => Buffer.from(s).toString('base64');
let dir: string;
beforeEach(async () => {
  dir = await tempDir('volumes-');
});
afterEach(() => removeDir(dir));

const files = (entries: Record<string, string>) => new Map(Object.entries(entries).map(([k, v]) => [k, { data: Buffer.from(v), mode: 0o644 }]));

describe('writeAtomicDir', () => {
  it('swaps the whole set through ..data and rewrites only on change', async () => {
    const d = join(dir, 'vol');
    expect(await writeAtomicDir(d, files({ a: '1', 'sub/b': '2' }))).toBe(true);
    expect(await readFile(join(d, 'a'), 'utf8')).toBe('1');
    expect(await readFile(join(d, 'sub', 'b'), 'utf8')).toBe('2');
    expect(await readlink(join(d, 'a'))).toBe('..data/a');
    const first = await readlink(join(d, '..data'));
    expect(await writeAtomicDir(d, files({ a: '1', 'sub/b': '2' }))).toBe(false);
    expect(await writeAtomicDir(d, files({ a: 'changed' }))).toBe(true);
    expect(await readFile(join(d, 'a'), 'utf8')).toBe('changed');
    const entries = await readdir(d);
    expect(entries).not.toContain('sub');
    expect(entries).not.toContain(first);
    expect(entries.filter((e) => e.startsWith('..')).length).toBe(2); // ..data and one payload dir
  });
});

describe('checkHostPath', () => {
  beforeEach(async () => {
    await mkdir(join(dir, 'd'));
    await writeFile(join(dir, 'f'), 'x');
  });

  it.each<{ type: string | undefined; path: string; want?: RegExp }>([
    { type: undefined, path: 'missing' },
    { type: '', path: 'missing' },
    { type: 'Directory', path: 'd' },
    { type: 'Directory', path: 'f', want: /hostPath type check failed: .*\/f is not a directory/ },
    { type: 'Directory', path: 'missing', want: /\/missing is not a directory/ },
    { type: 'DirectoryOrCreate', path: 'f', want: /\/f is not a directory/ },
    { type: 'File', path: 'f' },
    { type: 'File', path: 'd', want: /\/d is not a file/ },
    { type: 'FileOrCreate', path: 'd', want: /\/d is not a file/ },
    { type: 'FileOrCreate', path: 'no-dir/f', want: /cannot create .*no-dir\/f/ },
    { type: 'Socket', path: 'f', want: /is not a socket file/ },
    { type: 'CharDevice', path: 'f', want: /is not a character device/ },
    { type: 'BlockDevice', path: 'd', want: /is not a block device/ },
    { type: 'Pipe', path: 'd', want: /Pipe is an invalid volume type/ },
  ])('$type on $path', async ({ type, path, want }) => {
    const check = checkHostPath(join(dir, path), type);
    if (want) await expect(check).rejects.toThrow(want);
    else await expect(check).resolves.toBeUndefined();
  });

  it('creates what DirectoryOrCreate and FileOrCreate ask for, and leaves what exists alone', async () => {
    await checkHostPath(join(dir, 'new', 'deep'), 'DirectoryOrCreate');
    expect((await stat(join(dir, 'new', 'deep'))).mode & 0o777).toBe(0o755);
    await checkHostPath(join(dir, 'd', 'made'), 'FileOrCreate');
    expect(await stat(join(dir, 'd', 'made'))).toMatchObject({ size: 0 });
    await checkHostPath(join(dir, 'f'), 'FileOrCreate');
    expect(await readFile(join(dir, 'f'), 'utf8')).toBe('x');
    await checkHostPath('/dev/null', 'CharDevice');
  });

  it('accepts a listening unix socket as Socket', async () => {
    const server = net.createServer();
    const path = join(dir, 'sock');
    await new Promise<void>((r) => server.listen(path, r));
    try {
      await expect(checkHostPath(path, 'Socket')).resolves.toBeUndefined();
    } finally {
      server.close();
    }
  });

  it('fails the mount of a hostPath volume that is not what its type says', async () => {
    const p: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', uid: 'u' }, spec: { containers: [{ name: 'c' }], volumes: [{ name: 'h', hostPath: { path: join(dir, 'f'), type: 'Directory' } }] } };
    const ctx = { pod: p, facts: { podIP: '', hostIP: '', nodeName: 'n1', nodeAllocatable: {} }, source: { configMap: async () => undefined, secret: async () => undefined }, podDir: dir, rootCaPem: '', token: async () => undefined };
    await expect(materializeVolumes(ctx)).rejects.toThrow(/MountVolume.SetUp failed for volume "h": hostPath type check failed: .*\/f is not a directory/);
  });
});

describe('materializeVolumes', () => {
  const source: ObjectSource = {
    async configMap(_ns, name) {
      return name === 'cfg' ? ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { 'app.conf': 'x=1', other: 'y' } } as ConfigMap) : undefined;
    },
    async secret(_ns, name) {
      return name === 'creds' ? ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: { password: b64('pw') } } as Secret) : undefined;
    },
  };
  const pod = (volumes: Pod['spec']['volumes'], automount = false): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', uid: 'u', labels: { a: 'b' } },
    spec: { automountServiceAccountToken: automount, containers: [{ name: 'c', volumeMounts: [{ name: 'cfg', mountPath: '/etc/app' }] }], volumes },
  });
  const ctx = (p: Pod, token?: string) => ({
    pod: p,
    facts: { podIP: '127.1.1.2', hostIP: '127.0.0.1', nodeName: 'n1', nodeAllocatable: {} },
    source,
    podDir: dir,
    rootCaPem: 'CA PEM',
    token: async () => token,
  });

  it('writes config map, secret, downward API, projected and emptyDir volumes', async () => {
    const p = pod([
      { name: 'cfg', configMap: { name: 'cfg', items: [{ key: 'app.conf', path: 'conf/app.conf', mode: 0o600 }] } },
      { name: 'sec', secret: { secretName: 'creds' } },
      { name: 'info', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
      { name: 'proj', projected: { sources: [{ configMap: { name: 'cfg', items: [{ key: 'other', path: 'o' }] } }, { serviceAccountToken: { path: 'token' } }] } },
      { name: 'scratch', emptyDir: {} },
      { name: 'pvc', persistentVolumeClaim: { claimName: 'x' } },
    ]);
    const { paths, unsupported } = await materializeVolumes(ctx(p, 'tok'));
    expect(unsupported).toEqual(['pvc']);
    expect(await readFile(join(paths.get('cfg')!, 'conf', 'app.conf'), 'utf8')).toBe('x=1');
    expect((await stat(join(paths.get('cfg')!, 'conf', 'app.conf'))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(paths.get('sec')!, 'password'), 'utf8')).toBe('pw');
    expect(await readFile(join(paths.get('info')!, 'labels'), 'utf8')).toBe('a="b"');
    expect(await readFile(join(paths.get('proj')!, 'o'), 'utf8')).toBe('y');
    expect(await readFile(join(paths.get('proj')!, 'token'), 'utf8')).toBe('tok');
    expect((await stat(paths.get('scratch')!)).isDirectory()).toBe(true);
  });

  it.each([
    { name: 'missing config map', volume: { name: 'cfg', configMap: { name: 'nope' } }, want: /volume "cfg": configmap "nope" not found/ },
    { name: 'missing secret', volume: { name: 'cfg', secret: { secretName: 'nope' } }, want: /secret "nope" not found/ },
    { name: 'missing key', volume: { name: 'cfg', configMap: { name: 'cfg', items: [{ key: 'k', path: 'k' }] } }, want: /has no key "k"/ },
    { name: 'path escaping the volume', volume: { name: 'cfg', configMap: { name: 'cfg', items: [{ key: 'other', path: '../x' }] } }, want: /must not contain '\.\.'/ },
  ])('$name fails the mount', async ({ volume, want }) => {
    await expect(materializeVolumes(ctx(pod([volume])))).rejects.toThrow(VolumeError);
    await expect(materializeVolumes(ctx(pod([volume])))).rejects.toThrow(want);
  });

  it('optional sources may be missing', async () => {
    const { paths } = await materializeVolumes(ctx(pod([{ name: 'cfg', configMap: { name: 'nope', optional: true } }])));
    expect((await readdir(paths.get('cfg')!)).filter((e) => !e.startsWith('..'))).toEqual([]);
  });

  // The service-account volume as the gateway's ServiceAccount admission adds it (the agent adds none of its own).
  const apiAccess = { name: 'orch-api-access-x1y2z', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3607 } }, { configMap: { name: 'orch-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } }, { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } }] } };

  it('adds no volume or mount of its own: a pod without the service-account volume gets none', async () => {
    const p = pod([{ name: 'cfg', emptyDir: {} }], true);
    const { paths } = await materializeVolumes(ctx(p));
    expect([...paths.keys()]).toEqual(['cfg']);
    expect(containerMounts(p, p.spec.containers[0], paths).map((m) => m.target)).toEqual(['/etc/app']);
  });

  it('fills the service-account volume; without the root CA config map the agent’s CA, without TokenRequest no token', async () => {
    const p = pod([{ name: 'cfg', emptyDir: {} }, apiAccess], true);
    p.spec.containers = [{ name: 'c', volumeMounts: [{ name: apiAccess.name, mountPath: '/var/run/secrets/orch.io/serviceaccount', readOnly: true }, { name: apiAccess.name, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }] }];
    const { paths } = await materializeVolumes(ctx(p));
    const sa = paths.get(apiAccess.name)!;
    expect(await readFile(join(sa, 'ca.crt'), 'utf8')).toBe('CA PEM');
    expect(await readFile(join(sa, 'namespace'), 'utf8')).toBe('ns');
    expect((await readdir(sa)).includes('token')).toBe(false);
    // Projected volumes are read-only whatever the mount says.
    expect(containerMounts(p, p.spec.containers[0], paths).map((m) => [m.target, m.readOnly])).toEqual([
      ['/var/run/secrets/orch.io/serviceaccount', true],
      ['/var/run/secrets/kubernetes.io/serviceaccount', true],
    ]);
  });

  it('links mounts into the container root', async () => {
    const p = pod([{ name: 'cfg', configMap: { name: 'cfg' } }]);
    const { paths } = await materializeVolumes(ctx(p));
    const root = await containerRoot(p, dir, { name: 'c', volumeMounts: [{ name: 'cfg', mountPath: '/etc/app' }, { name: 'cfg', mountPath: '/one', subPath: 'other' }] }, paths, 'main');
    expect(root).toBe(join(dir, 'containers', 'c', 'root'));
    expect(await readFile(join(root, 'etc', 'app', 'app.conf'), 'utf8')).toBe('x=1');
    expect(await readFile(join(root, 'one'), 'utf8')).toBe('y');
    expect((await lstat(join(root, 'etc', 'app'))).isSymbolicLink()).toBe(true);
    await expect(containerRoot(p, dir, { name: 'c', volumeMounts: [{ name: 'nope', mountPath: '/x' }] }, paths, 'main')).rejects.toThrow(/names no volume/);
  });
});
