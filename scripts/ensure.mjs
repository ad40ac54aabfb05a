// Installs what a fresh clone is missing: npm packages (npm ci) and, for tests,
// the Debian packages of the real engines (etcd-server, nats-server, redis-server).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function run(cmd, args) {
  console.log(`> ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed with exit ${r.status}`);
}

function onPath(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function npmUpToDate() {
  const marker = join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(marker)) return false;
  return statSync(marker).mtimeMs >= statSync(join(root, 'package-lock.json')).mtimeMs;
}

export function ensureInstalled({ debian = false } = {}) {
  if (!npmUpToDate()) run('npm', ['ci', '--no-audit', '--no-fund']);
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

if (process.argv[1] && process.argv[1].endsWith('ensure.mjs')) ensureInstalled({ debian: process.argv.includes('--debian') });
export const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
