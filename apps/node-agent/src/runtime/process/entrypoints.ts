import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { ContainerConfigError } from './env';

/**
 * What an image runs when the container names no command (its ENTRYPOINT and CMD): the
 * process runtime runs host programs and has no image to read them from, so the node-agent
 * configuration maps image repositories to them.
 */
export interface ImageEntrypoint {
  /** ENTRYPOINT; replaced by the container's `command`. */
  entrypoint?: string[];
  /** CMD; replaced by the container's `args`. */
  cmd?: string[];
}

export type EntrypointTable = ReadonlyMap<string, ImageEntrypoint>;

/**
 * The usual entrypoints of common images, run with the host's programs of the same name.
 * `--image-entrypoints` adds to and overrides these.
 */
export const DEFAULT_IMAGE_ENTRYPOINTS: Readonly<Record<string, ImageEntrypoint>> = {
  busybox: { cmd: ['sh'] },
  alpine: { cmd: ['/bin/sh'] },
  debian: { cmd: ['bash'] },
  ubuntu: { cmd: ['/bin/bash'] },
  python: { cmd: ['python3'] },
  node: { cmd: ['node'] },
  nginx: { cmd: ['nginx', '-g', 'daemon off;'] },
  redis: { cmd: ['redis-server'] },
  postgres: { cmd: ['postgres'] },
};

/**
 * The repository of an image reference without registry host, tag or digest, as the table
 * keys it: `docker.io/library/python:3.12` → `python`, `registry.example.com/team/app@sha256:…`
 * → `team/app`.
 */
export function imageRepository(image: string): string {
  let ref = image.trim();
  const at = ref.indexOf('@');
  if (at >= 0) ref = ref.slice(0, at);
  const slash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  if (colon > slash) ref = ref.slice(0, colon);
  const parts = ref.split('/');
  // A first component with a dot or port, or `localhost`, is a registry host.
  if (parts.length > 1 && (parts[0].includes('.') || parts[0].includes(':') || parts[0] === 'localhost')) parts.shift();
  if (parts.length > 1 && parts[0] === 'library') parts.shift();
  return parts.join('/');
}

/** The table entry of an image: by its repository, else by the repository's last component. */
export function lookupEntrypoint(table: EntrypointTable, image: string | undefined): ImageEntrypoint | undefined {
  if (!image) return undefined;
  const repo = imageRepository(image);
  return table.get(repo) ?? table.get(repo.slice(repo.lastIndexOf('/') + 1));
}

/**
 * upstream's rule for the command line: `command` replaces the image ENTRYPOINT and `args`
 * replaces its CMD (an image CMD is dropped when `command` is given). With neither in the
 * container nor in the image table there is nothing to run: CreateContainerConfigError.
 */
export function commandLine(container: { name: string; image?: string; command?: string[]; args?: string[] }, table: EntrypointTable): string[] {
  const image = container.command?.length ? undefined : lookupEntrypoint(table, container.image);
  const command = container.command?.length ? container.command : (image?.entrypoint ?? []);
  const args = container.args?.length ? container.args : container.command?.length ? [] : (image?.cmd ?? []);
  const line = [...command, ...args];
  if (line.length === 0) {
    throw new ContainerConfigError(
      `container "${container.name}" has no command and no args, and image ${JSON.stringify(container.image ?? '')} is not in the node agent's image entrypoint table (--image-entrypoints): the process runtime runs host programs and cannot read an image's entrypoint`,
    );
  }
  return line;
}

/**
 * The entrypoint table: the defaults, then the entries of `file` (YAML or JSON mapping an image
 * repository to `{entrypoint: [...], cmd: [...]}`). A malformed file is a start-up error.
 */
export async function loadEntrypointTable(file: string): Promise<EntrypointTable> {
  const table = new Map(Object.entries(DEFAULT_IMAGE_ENTRYPOINTS));
  if (!file) return table;
  let doc: unknown;
  try {
    doc = parseYaml(await readFile(file, 'utf8'));
  } catch (err) {
    throw new Error(`--image-entrypoints ${file}: ${(err as Error).message}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error(`--image-entrypoints ${file}: want a map of image repository to {entrypoint, cmd}`);
  for (const [repo, entry] of Object.entries(doc as Record<string, unknown>)) {
    const e = (entry ?? {}) as Record<string, unknown>;
    const list = (field: string): string[] | undefined => {
      const v = e[field];
      if (v === undefined || v === null) return undefined;
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new Error(`--image-entrypoints ${file}: ${repo}.${field} must be a list of strings`);
      return v as string[];
    };
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new Error(`--image-entrypoints ${file}: ${repo} must be a map with entrypoint and/or cmd`);
    table.set(imageRepository(repo), { entrypoint: list('entrypoint'), cmd: list('cmd') });
  }
  return table;
}
