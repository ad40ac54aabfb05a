// Installs what a fresh clone is missing: npm packages (npm ci) and, for tests,
// the Debian packages of the real engines (etcd-server, nats-server, redis-server).
//
// node_modules counts as current when it was installed from the package-lock.json and patches/
// there are now: every install records their fingerprint (INSTALL_STAMP, written by the
// postinstall script, so a hand-run `npm ci` or `npm install` records it too; an older install
// without it is judged once by npm's own record). A checkout or rebase that rewrites
// package-lock.json with the same content changes nothing, so `npm start` and `npm test` never
// reinstall under running processes.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const INSTALL_STAMP = join('node_modules', '.orch-install-fingerprint');

function run(cmd, args) {
  console.log(`> ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed with exit ${r.status}`);
}

function onPath(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/** sha256 of what `npm ci` installs from: package-lock.json and each file of patches/ (name and content). */
function installFingerprint() {
  const hash = createHash('sha256').update(readFileSync(join(root, 'package-lock.json')));
  const patches = join(root, 'patches');
  if (existsSync(patches)) {
    for (const name of readdirSync(patches).sort()) hash.update(`\0${name}\0`).update(readFileSync(join(patches, name)));
  }
  return hash.digest('hex');
}

function npmUpToDate() {
  const stamp = join(root, INSTALL_STAMP);
  if (existsSync(stamp)) return readFileSync(stamp, 'utf8').trim() === installFingerprint();
  // Installed before installs recorded their fingerprint: trust npm's own record once.
  if (!npmRecordMatchesLock()) return false;
  recordInstall();
  return true;
}

/**
 * Whether npm's record of what it installed (node_modules/.package-lock.json) has exactly the
 * packages of package-lock.json (optional ones may be left out: other platforms').
 */
function npmRecordMatchesLock() {
  const record = join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(record)) return false;
  const want = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')).packages ?? {};
  const have = JSON.parse(readFileSync(record, 'utf8')).packages ?? {};
  for (const [path, p] of Object.entries(want)) {
    if (path === '') continue;
    const h = have[path];
    if (!h ? !p.optional : h.version !== p.version || h.resolved !== p.resolved || h.integrity !== p.integrity) return false;
  }
  return Object.keys(have).every((path) => path in want);
}

/** Records that node_modules matches the current package-lock.json and patches/ (the postinstall step). */
function recordInstall() {
  mkdirSync(join(root, 'node_modules'), { recursive: true });
  writeFileSync(join(root, INSTALL_STAMP), `${installFingerprint()}\n`);
}

export function ensureInstalled({ debian = false } = {}) {
  if (!npmUpToDate()) {
    run('npm', ['ci', '--no-audit', '--no-fund']);
    recordInstall();
  }
  if (debian) {
    const missing = [
      ['etcd', 'etcd-server'],
      ['nats-server', 'nats-server'],
      ['redis-server', 'redis-server'],
    ].filter(([cmd]) => !onPath(cmd));
    if (missing.length > 0) {
      if (process.getuid && process.getuid() !== 0) {
        console.warn(`missing ${missing.map((m) => m[1]).join(', ')}: install them with apt-get (needs root)`);
        return;
      }
      run('apt-get', ['update', '-qq']);
      run('apt-get', ['install', '-y', '-qq', ...missing.map((m) => m[1])]);
    }
  }
}

if (process.argv[1] && process.argv[1].endsWith('ensure.mjs')) {
  if (process.argv.includes('--record-install')) recordInstall();
  else ensureInstalled({ debian: process.argv.includes('--debian') });
}
export const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
