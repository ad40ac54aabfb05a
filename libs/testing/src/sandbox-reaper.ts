import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** How deep under a root dir pod directories may sit (`<root>/[<agent>/]pods/<uid>/pids/sandbox`). */
const MAX_DEPTH = 6;

/** The `pids/sandbox` files under `dir`: where a node agent records each pod's namespace holder. */
async function holderPidFiles(dir: string, depth = 0): Promise<string[]> {
  if (depth > MAX_DEPTH) return [];
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const sub = join(dir, e.name);
    if (e.name === 'pids') {
      if ((await readdir(sub).catch(() => [] as string[])).includes('sandbox')) found.push(join(sub, 'sandbox'));
    } else {
      found.push(...(await holderPidFiles(sub, depth + 1)));
    }
  }
  return found;
}

/**
 * Kills the pod namespace holders (`sleep infinity`) that node agents under `rootDir` left
 * running, and answers how many. A clean agent stop releases them; an agent killed with SIGKILL
 * leaves them for its restarted self to adopt, so a test that ends there must reap them.
 * Only processes that still run `sleep infinity` are signalled, never a reused pid.
 */
export async function reapSandboxHolders(rootDir: string): Promise<number> {
  let reaped = 0;
  for (const file of await holderPidFiles(rootDir)) {
    const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim());
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmd !== 'sleep\0infinity\0') continue;
    try {
      process.kill(pid, 'SIGKILL');
      reaped++;
    } catch {
      // It ended meanwhile.
    }
  }
  return reaped;
}
