import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** System directories searched after PATH (Debian puts some servers in sbin). */
const SBIN_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin'];

/** The absolute path of an executable named cmd on PATH or in an sbin directory, if any. */
export function findBinary(cmd: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...SBIN_DIRS];
  for (const dir of dirs) {
    const candidate = join(dir, cmd);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { maxBuffer: 16 * 1024 * 1024, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stdout}${stderr}`));
      else resolve();
    });
  });
}

/** Installs in flight, so concurrent callers share one apt-get run per package. */
const installing = new Map<string, Promise<void>>();

/** The file whose flock every orch process holds while it runs apt-get (apt's own locks fail at once instead of waiting). */
const APT_LOCK = '/run/lock/orch-apt-get.lock';
/** The apt-get runs of this process, one after another. */
let aptRuns: Promise<unknown> = Promise.resolve();

/**
 * apt-get with `args`, after this process's earlier runs and under APT_LOCK, so installs of two
 * packages at once (say nats-server and redis-server for one test) or by two jest workers wait for
 * each other instead of failing on apt's lock.
 */
function aptGet(args: string[]): Promise<void> {
  const next = aptRuns.then(() => run('flock', ['--wait', '900', APT_LOCK, 'apt-get', ...args]));
  aptRuns = next.catch(() => undefined);
  return next;
}

/**
 * The absolute path of cmd. When it is missing and we are root, installs debianPackage
 * with apt-get first; otherwise fails with an error that says what to install.
 */
export async function ensureBinary(cmd: string, debianPackage: string): Promise<string> {
  const found = findBinary(cmd);
  if (found) return found;
  await installDebianPackage(debianPackage, `${cmd} is not installed`);
  const installed = findBinary(cmd);
  if (!installed) throw new Error(`installed ${debianPackage} but ${cmd} is still not found`);
  return installed;
}

/** apt-get install (as root; otherwise an error saying what to install). Concurrent callers share one run. */
async function installDebianPackage(debianPackage: string, why: string): Promise<void> {
  if (process.getuid?.() !== 0) {
    throw new Error(`${why}; install it with: sudo apt-get install -y ${debianPackage}`);
  }
  let install = installing.get(debianPackage);
  if (!install) {
    install = aptGet(['update', '-qq']).then(() => aptGet(['install', '-y', '-qq', debianPackage]));
    installing.set(debianPackage, install);
  }
  try {
    await install;
  } finally {
    installing.delete(debianPackage);
  }
}

/** The Debian system Python (Debian's python3-* packages install their modules for it). */
export const SYSTEM_PYTHON = '/usr/bin/python3';

function pythonImports(module: string): Promise<boolean> {
  return new Promise((resolve) => execFile(SYSTEM_PYTHON, ['-c', `import ${module}`], (err) => resolve(!err)));
}

/**
 * `/usr/bin/python3` once it can import `module` (e.g. `kubernetes`, the official client from
 * Debian's python3-kubernetes); installs debianPackage with apt-get when it cannot.
 */
export async function ensurePythonModule(module: string, debianPackage: string): Promise<string> {
  if (await pythonImports(module)) return SYSTEM_PYTHON;
  await installDebianPackage(debianPackage, `${SYSTEM_PYTHON} cannot import ${module}`);
  if (!(await pythonImports(module))) throw new Error(`installed ${debianPackage} but ${SYSTEM_PYTHON} still cannot import ${module}`);
  return SYSTEM_PYTHON;
}
