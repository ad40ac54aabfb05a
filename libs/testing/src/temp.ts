import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Creates a fresh directory under the OS temp dir whose name starts with `orch-<prefix>`. */
export function tempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `orch-${prefix}`));
}

/** Removes a directory tree (made by tempDir); a missing directory is not an error. */
export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
}
