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

/**
 * The absolute path of cmd. When it is missing and we are root, installs debianPackage
 * with apt-get first; otherwise fails with an error that says what to install.
 */
export async function ensureBinary(cmd: string, debianPackage: string): Promise<string> {
  const found = findBinary(cmd);
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new Error(`${cmd} is not installed; install it with: sudo apt-get install -y ${debianPackage}`);
  }
  let install = installing.get(debianPackage);
  if (!install) {
    install = run('apt-get', ['update', '-qq']).then(() => run('apt-get', ['install', '-y', '-qq', debianPackage]));
    installing.set(debianPackage, install);
  }
  try {
    await install;
  } finally {
    installing.delete(debianPackage);
  }
  const installed = findBinary(cmd);
  if (!installed) throw new Error(`installed ${debianPackage} but ${cmd} is still not found`);
  return installed;
}
