import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * scripts/ensure.mjs (run by `npm start`, `npm test`, `npm run bench`) reinstalls node_modules
 * only when package-lock.json or patches/ changed since the last install, never because a
 * checkout or rebase rewrote them unchanged (before: an mtime comparison ran `npm ci` in the
 * middle of e2e runs, from the `npm start` of an e2e suite). A real `npm ci` of a project
 * without dependencies, in a temporary copy.
 */
describe('scripts/ensure.mjs installs only when package-lock.json or patches/ changed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-ensure-'));
  // One local dependency, so that npm keeps its own record of the install (node_modules/.package-lock.json).
  const writeProject = (version: string) => {
    const dependencies = { 'local-dep': 'file:local-dep' };
    const pkg = { name: 'ensure-fixture', version, private: true, dependencies, scripts: { postinstall: 'node scripts/ensure.mjs --record-install' } };
    const lock = {
      name: 'ensure-fixture',
      version,
      lockfileVersion: 3,
      requires: true,
      packages: {
        '': { name: 'ensure-fixture', version, hasInstallScript: true, dependencies },
        'local-dep': { version: '1.0.0' },
        'node_modules/local-dep': { resolved: 'local-dep', link: true },
      },
    };
    writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
    writeFileSync(join(dir, 'package-lock.json'), JSON.stringify(lock, null, 2));
  };
  const marker = join(dir, 'node_modules', 'installed-before');
  const stamp = join(dir, 'node_modules', '.orch-install-fingerprint');
  const npmRecord = join(dir, 'node_modules', '.package-lock.json');
  /** Runs ensure.mjs; true when it ran `npm ci` (which also removes node_modules/installed-before). */
  const ensureInstalls = () => {
    if (existsSync(join(dir, 'node_modules'))) writeFileSync(marker, '');
    const r = spawnSync(process.execPath, ['scripts/ensure.mjs'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(r.status).toBe(0);
    const ranNpmCi = r.stdout.includes('> npm ci');
    expect(existsSync(marker)).toBe(!ranNpmCi);
    return ranNpmCi;
  };

  beforeAll(() => {
    mkdirSync(join(dir, 'scripts'));
    copyFileSync(join(__dirname, '..', 'scripts', 'ensure.mjs'), join(dir, 'scripts', 'ensure.mjs'));
    mkdirSync(join(dir, 'local-dep'));
    writeFileSync(join(dir, 'local-dep', 'package.json'), JSON.stringify({ name: 'local-dep', version: '1.0.0' }));
    mkdirSync(join(dir, 'patches'));
    writeFileSync(join(dir, 'patches', 'a+1.0.0.patch'), 'one\n');
    writeProject('1.0.0');
    // As a developer does once: `npm ci` by hand (its postinstall records the install).
    const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(r.stderr).not.toMatch(/ERR!/);
    expect(r.status).toBe(0);
  }, 150_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // In order: each case starts from the install the previous one left.
  it.each([
    { name: 'after a hand-run npm ci: nothing to do', change: () => undefined, installs: false },
    {
      name: 'package-lock.json rewritten unchanged with a newer mtime (a checkout): nothing to do',
      change: () => {
        writeFileSync(join(dir, 'package-lock.json'), readFileSync(join(dir, 'package-lock.json')));
        const later = new Date(Date.now() + 60_000);
        utimesSync(join(dir, 'package-lock.json'), later, later);
      },
      installs: false,
    },
    { name: 'package-lock.json changed: installs', change: () => writeProject('1.0.1'), installs: true },
    { name: 'a patch changed: installs', change: () => writeFileSync(join(dir, 'patches', 'a+1.0.0.patch'), 'two\n'), installs: true },
    { name: 'a patch added: installs', change: () => writeFileSync(join(dir, 'patches', 'b+1.0.0.patch'), 'three\n'), installs: true },
    { name: 'node_modules gone (a fresh clone): installs', change: () => rmSync(join(dir, 'node_modules'), { recursive: true }), installs: true },
    { name: 'right after an install by ensure.mjs: nothing to do', change: () => undefined, installs: false },
    { name: "installed before fingerprints were recorded, npm's record matches the lock: nothing to do", change: () => rmSync(stamp), installs: false },
    { name: '... and the fingerprint is recorded then', change: () => expect(existsSync(stamp)).toBe(true), installs: false },
    {
      name: "no fingerprint and npm's record lists other packages: installs",
      change: () => {
        rmSync(stamp);
        const record = JSON.parse(readFileSync(npmRecord, 'utf8'));
        record.packages['node_modules/left-over'] = { version: '1.0.0' };
        writeFileSync(npmRecord, JSON.stringify(record));
      },
      installs: true,
    },
  ])('$name', ({ change, installs }) => {
    change();
    expect(ensureInstalls()).toBe(installs);
  }, 150_000);
});
