import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, open, readFile, readdir, readlink, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import type { coreV1 } from '@orch/api';
import type { Container, ConfigMap, Pod, Secret } from '../../api/types';
import type { ContainerKind } from '../runtime';
import { fieldValue, resourceFieldValue, type ObjectSource, type PodFacts } from './env';

/** The config map holding the cluster's root CA in every namespace. */
export const ROOT_CA_CONFIGMAP = 'orch-root-ca.crt';

/** A volume cannot be set up (upstream FailedMount); the pod waits in ContainerCreating. */
export class VolumeError extends Error {
  override name = 'VolumeError';
}

/** What materializing volumes needs besides the pod. */
export interface VolumeContext {
  pod: Pod;
  facts: PodFacts;
  source: ObjectSource;
  /** `<root-dir>/pods/<uid>`. */
  podDir: string;
  /** A service-account token for the pod (TokenRequest), or undefined when none can be had. */
  token(audience: string | undefined, expirationSeconds: number): Promise<string | undefined>;
  /** The cluster CA, used when the `orch-root-ca.crt` config map is not there (yet). */
  rootCaPem: string;
}

interface FileData {
  data: Buffer;
  mode: number;
}

const DEFAULT_MODE = 0o644;

/** Rejects item paths that are absolute or climb out of the volume. */
function safeRelative(path: string): string {
  const n = posix.normalize(path);
  if (!path || posix.isAbsolute(path) || n === '..' || n.startsWith('../') || path.split('/').includes('..')) {
    throw new VolumeError(`invalid volume item path ${JSON.stringify(path)}: must be relative and must not contain '..'`);
  }
  return n;
}

/**
 * Writes `files` into `dir` atomically, as upstream's AtomicWriter: the payload goes into a
 * fresh `..<stamp>` directory, the `..data` symlink is swapped to it in one rename, and each
 * top-level entry is a symlink through `..data`. Readers never see a half-written set.
 * Returns false when the content was already identical (nothing written).
 */
export async function writeAtomicDir(dir: string, files: Map<string, FileData>): Promise<boolean> {
  await mkdir(dir, { recursive: true });
  const dataLink = join(dir, '..data');
  if (await sameContent(dataLink, files)) return false;
  const stamp = `..${Date.now()}_${randomBytes(4).toString('hex')}`;
  const target = join(dir, stamp);
  await mkdir(target, { recursive: true });
  for (const [path, f] of files) {
    const out = join(target, path);
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, f.data, { mode: f.mode });
    await chmod(out, f.mode);
  }
  const tmp = join(dir, `..data_tmp_${randomBytes(4).toString('hex')}`);
  await symlink(stamp, tmp);
  await rename(tmp, dataLink);
  const top = new Set([...files.keys()].map((p) => p.split('/')[0]));
  for (const name of top) {
    const link = join(dir, name);
    const want = posix.join('..data', name);
    const have = await readlink(link).catch(() => undefined);
    if (have === want) continue;
    await rm(link, { recursive: true, force: true });
    await symlink(want, link);
  }
  for (const entry of await readdir(dir)) {
    if (entry === '..data' || entry === stamp) continue;
    if (entry.startsWith('..') || !top.has(entry)) await rm(join(dir, entry), { recursive: true, force: true });
  }
  return true;
}

async function sameContent(dataLink: string, files: Map<string, FileData>): Promise<boolean> {
  try {
    await lstat(dataLink);
  } catch {
    return false;
  }
  const existing = await listFiles(dataLink);
  if (existing.length !== files.size) return false;
  for (const path of existing) {
    const want = files.get(path);
    if (!want) return false;
    const have = await readFile(join(dataLink, path)).catch(() => undefined);
    if (!have || !have.equals(want.data)) return false;
  }
  return true;
}

async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await listFiles(dir, rel)));
    else out.push(rel);
  }
  return out;
}

/** Picks the items of a config map or secret (all keys when `items` is unset). */
function keyFiles(kind: string, ref: string, all: Record<string, Buffer>, items: coreV1.KeyToPath[] | undefined, mode: number, optional: boolean): Map<string, FileData> {
  const out = new Map<string, FileData>();
  if (!items?.length) {
    for (const [k, data] of Object.entries(all)) out.set(safeRelative(k), { data, mode });
    return out;
  }
  for (const item of items) {
    const data = all[item.key];
    if (data === undefined) {
      if (optional) continue;
      throw new VolumeError(`${kind} ${ref} has no key ${JSON.stringify(item.key)}`);
    }
    out.set(safeRelative(item.path), { data, mode: item.mode ?? mode });
  }
  return out;
}

function configMapBytes(cm: ConfigMap): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries(cm.binaryData ?? {})) out[k] = Buffer.from(v, 'base64');
  for (const [k, v] of Object.entries(cm.data ?? {})) out[k] = Buffer.from(v, 'utf8');
  return out;
}

function secretBytes(s: Secret): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries(s.data ?? {})) out[k] = Buffer.from(v, 'base64');
  return out;
}

function downwardFiles(ctx: VolumeContext, items: coreV1.DownwardAPIVolumeFile[] | undefined, mode: number): Map<string, FileData> {
  const out = new Map<string, FileData>();
  for (const item of items ?? []) {
    const value = item.fieldRef
      ? fieldValue(ctx.pod, ctx.facts, item.fieldRef)
      : item.resourceFieldRef
        ? resourceFieldValue(ctx.pod, undefined, ctx.facts, item.resourceFieldRef)
        : '';
    out.set(safeRelative(item.path), { data: Buffer.from(value), mode: item.mode ?? mode });
  }
  return out;
}

async function configMapFiles(ctx: VolumeContext, name: string, items: coreV1.KeyToPath[] | undefined, mode: number, optional: boolean): Promise<Map<string, FileData>> {
  const ns = ctx.pod.metadata.namespace ?? 'default';
  const cm = await ctx.source.configMap(ns, name);
  if (!cm) {
    if (optional) return new Map();
    if (name === ROOT_CA_CONFIGMAP && ctx.rootCaPem) return keyFiles('configmap', name, { 'ca.crt': Buffer.from(ctx.rootCaPem) }, items, mode, optional);
    throw new VolumeError(`configmap "${name}" not found`);
  }
  return keyFiles('configmap', `${ns}/${name}`, configMapBytes(cm), items, mode, optional);
}

async function secretFiles(ctx: VolumeContext, name: string, items: coreV1.KeyToPath[] | undefined, mode: number, optional: boolean): Promise<Map<string, FileData>> {
  const ns = ctx.pod.metadata.namespace ?? 'default';
  const s = await ctx.source.secret(ns, name);
  if (!s) {
    if (optional) return new Map();
    throw new VolumeError(`secret "${name}" not found`);
  }
  return keyFiles('secret', `${ns}/${name}`, secretBytes(s), items, mode, optional);
}

async function projectedFiles(ctx: VolumeContext, sources: coreV1.VolumeProjection[], mode: number): Promise<Map<string, FileData>> {
  const out = new Map<string, FileData>();
  const add = (m: Map<string, FileData>) => m.forEach((v, k) => out.set(k, v));
  for (const s of sources) {
    if (s.configMap) add(await configMapFiles(ctx, s.configMap.name ?? '', s.configMap.items, mode, !!s.configMap.optional));
    if (s.secret) add(await secretFiles(ctx, s.secret.name ?? '', s.secret.items, mode, !!s.secret.optional));
    if (s.downwardAPI) add(downwardFiles(ctx, s.downwardAPI.items, mode));
    if (s.serviceAccountToken) {
      const token = await ctx.token(s.serviceAccountToken.audience, s.serviceAccountToken.expirationSeconds ?? 3600);
      if (token !== undefined) out.set(safeRelative(s.serviceAccountToken.path), { data: Buffer.from(token), mode: 0o600 });
    }
  }
  return out;
}

/** hostPath `type` checks (upstream pkg/volume/hostpath): what the path must be, and what the error says when it is not. */
const HOST_PATH_CHECKS: Record<string, { is(s: Stats): boolean; not: string; create?: 'dir' | 'file' }> = {
  DirectoryOrCreate: { is: (s) => s.isDirectory(), not: 'is not a directory', create: 'dir' },
  Directory: { is: (s) => s.isDirectory(), not: 'is not a directory' },
  FileOrCreate: { is: (s) => s.isFile(), not: 'is not a file', create: 'file' },
  File: { is: (s) => s.isFile(), not: 'is not a file' },
  Socket: { is: (s) => s.isSocket(), not: 'is not a socket file' },
  CharDevice: { is: (s) => s.isCharacterDevice(), not: 'is not a character device' },
  BlockDevice: { is: (s) => s.isBlockDevice(), not: 'is not a block device' },
};

/**
 * Checks a hostPath against its `type` (none or `""`: no check), creating it first for
 * `DirectoryOrCreate` (mode 0755, parents too) and `FileOrCreate` (an empty 0644 file; its
 * directory must exist), as upstream does.
 */
export async function checkHostPath(path: string, type: string | undefined): Promise<void> {
  if (!type) return;
  const check = HOST_PATH_CHECKS[type];
  if (!check) throw new VolumeError(`${type} is an invalid volume type`);
  let st = await stat(path).catch(() => undefined);
  if (!st && check.create === 'dir') await mkdir(path, { recursive: true, mode: 0o755 });
  if (!st && check.create === 'file') await (await open(path, 'a', 0o644).catch((err: Error) => {
    throw new VolumeError(`hostPath type check failed: cannot create ${path}: ${err.message}`);
  })).close();
  st ??= await stat(path).catch(() => undefined);
  if (!st || !check.is(st)) throw new VolumeError(`hostPath type check failed: ${path} ${check.not}`);
}

/**
 * Materializes (or refreshes) every volume of the pod as files under
 * `<podDir>/volumes/<name>` and returns each volume's host path. emptyDir volumes are plain
 * directories; config map, secret, downwardAPI and projected volumes are written atomically
 * and rewritten only when their content changed; hostPath volumes are the host path itself
 * (checked against their `type`).
 * Other volume types become empty directories (`unsupported` lists them).
 */
export async function materializeVolumes(ctx: VolumeContext): Promise<{ paths: Map<string, string>; unsupported: string[] }> {
  const paths = new Map<string, string>();
  const unsupported: string[] = [];
  for (const v of ctx.pod.spec.volumes ?? []) {
    const dir = join(ctx.podDir, 'volumes', v.name);
    try {
      if (v.hostPath) {
        await checkHostPath(v.hostPath.path, v.hostPath.type);
        paths.set(v.name, v.hostPath.path);
        continue;
      }
      if (v.configMap) {
        const mode = v.configMap.defaultMode ?? DEFAULT_MODE;
        await writeAtomicDir(dir, await configMapFiles(ctx, v.configMap.name ?? '', v.configMap.items, mode, !!v.configMap.optional));
      } else if (v.secret) {
        const mode = v.secret.defaultMode ?? DEFAULT_MODE;
        await writeAtomicDir(dir, await secretFiles(ctx, v.secret.secretName ?? '', v.secret.items, mode, !!v.secret.optional));
      } else if (v.downwardAPI) {
        await writeAtomicDir(dir, downwardFiles(ctx, v.downwardAPI.items, v.downwardAPI.defaultMode ?? DEFAULT_MODE));
      } else if (v.projected) {
        await writeAtomicDir(dir, await projectedFiles(ctx, v.projected.sources ?? [], v.projected.defaultMode ?? DEFAULT_MODE));
      } else {
        if (!v.emptyDir) unsupported.push(v.name);
        await mkdir(dir, { recursive: true });
      }
    } catch (err) {
      if (err instanceof VolumeError) throw new VolumeError(`MountVolume.SetUp failed for volume "${v.name}": ${err.message}`);
      throw err;
    }
    paths.set(v.name, dir);
  }
  return { paths, unsupported };
}

/** One volume mount of a container, resolved to the host path it shows. */
export interface MountEntry {
  volume: string;
  /** Host path of the volume (or of its subPath). */
  source: string;
  /** Absolute, normalized path inside the container. */
  target: string;
  readOnly: boolean;
}

/** Volume types the kubelet always mounts read-only (their content is the API's, not the pod's). */
const READ_ONLY_KINDS = ['configMap', 'secret', 'downwardAPI', 'projected'] as const;

/**
 * The mounts of a container, parents before children: its volumeMounts (the service-account
 * volume among them: the gateway's ServiceAccount admission adds it). Config map, secret,
 * downward API and projected volumes are read-only whatever the mount says.
 */
export function containerMounts(pod: Pod, container: Container, volumes: Map<string, string>): MountEntry[] {
  const defs = new Map((pod.spec.volumes ?? []).map((v) => [v.name, v]));
  const mounts = [...(container.volumeMounts ?? [])];
  const out: MountEntry[] = [];
  for (const m of mounts) {
    const src = volumes.get(m.name);
    if (src === undefined) throw new VolumeError(`volume mount ${JSON.stringify(m.name)} of container ${JSON.stringify(container.name)} names no volume of the pod`);
    const target = posix.normalize(`/${m.mountPath}`);
    if (target === '/' || m.mountPath.split('/').includes('..') || m.mountPath.includes('\n')) throw new VolumeError(`invalid mountPath ${JSON.stringify(m.mountPath)}`);
    const def = defs.get(m.name);
    const apiContent = !!def && READ_ONLY_KINDS.some((k) => def[k] !== undefined);
    out.push({ volume: m.name, source: m.subPath ? join(src, safeRelative(m.subPath)) : src, target, readOnly: !!m.readOnly || apiContent });
  }
  return out.sort((a, b) => a.target.split('/').length - b.target.split('/').length);
}

/** Where a container's files live in the pod directory, by kind. */
export function containerDir(podDir: string, kind: ContainerKind, name: string): string {
  return join(podDir, kind === 'init' ? 'init-containers' : kind === 'ephemeral' ? 'ephemeral-containers' : 'containers', name);
}

/**
 * Builds a container's root directory `<containerDir>/root`: each volume mount appears at
 * `<root><mountPath>` as a symlink to the volume (or its `subPath`). The process gets this
 * directory as `ORCH_CONTAINER_ROOT` and, without a workingDir, as its working dir.
 */
export async function containerRoot(pod: Pod, podDir: string, container: Container, volumes: Map<string, string>, kind: ContainerKind): Promise<string> {
  const root = join(containerDir(podDir, kind, container.name), 'root');
  await mkdir(root, { recursive: true });
  for (const m of containerMounts(pod, container, volumes)) {
    const at = join(root, m.target);
    if (m.source !== volumes.get(m.volume)) await mkdir(m.source, { recursive: true }).catch(() => undefined);
    await mkdir(dirname(at), { recursive: true });
    const have = await readlink(at).catch(() => undefined);
    if (have === m.source) continue;
    await rm(at, { recursive: true, force: true });
    await symlink(m.source, at);
  }
  return root;
}
