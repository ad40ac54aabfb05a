#!/usr/bin/env node
// `npm test`: installs what is missing, then lint, type-check, build, and every jest
// project (unit, integration against real etcd/NATS/Redis, multi-process e2e).
// Ends with the line `N passed, N failed` computed from jest's JSON results.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureInstalled } from './ensure.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
ensureInstalled({ debian: true });

function step(name, cmd, args) {
  const started = Date.now();
  console.log(`\n== ${name}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' } });
  console.log(`== ${name}: ${r.status === 0 ? 'ok' : `FAILED (exit ${r.status})`} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return r.status === 0;
}

const bin = (name) => join(root, 'node_modules', '.bin', name);
const checks = [
  // The module-boundary lint rule reads Nx's cached project graph: compute it first.
  ['project graph', bin('nx'), ['show', 'projects']],
  ['lint', bin('eslint'), ['apps', 'libs', 'e2e', 'bench', '--max-warnings=0']],
  ['typecheck', bin('tsc'), ['-p', 'tsconfig.json', '--noEmit']],
  ['typecheck dashboard UI', bin('tsc'), ['-p', 'apps/dashboard/ui/tsconfig.json']],
  ['build', process.execPath, ['scripts/build.mjs']],
];
let failedChecks = 0;
for (const [name, cmd, args] of checks) if (!step(name, cmd, args)) failedChecks++;

mkdirSync(join(root, 'tmp'), { recursive: true });
const resultsFile = join(root, 'tmp', 'jest-results.json');
const jestArgs = ['--json', `--outputFile=${resultsFile}`, ...process.argv.slice(2)];
// In CI a leaked handle must not hold the run open past its time limit.
if (process.env.CI) jestArgs.push('--ci', '--forceExit');
const jestOk = step('jest', bin('jest'), jestArgs);

let passed = 0;
let failed = failedChecks;
if (existsSync(resultsFile)) {
  const r = JSON.parse(readFileSync(resultsFile, 'utf8'));
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  // A suite that failed to run (syntax error, hook timeout) has no failed tests: count it.
  failed += r.testResults.filter((s) => s.status === 'failed' && s.assertionResults.every((a) => a.status !== 'failed')).length;
} else {
  failed += 1;
}
const summary = `${passed} passed, ${failed} failed`;
writeFileSync(join(root, 'tmp', 'test-summary.txt'), `${summary}\n`);
console.log(`\n${summary}`);
process.exit(failed === 0 && jestOk ? 0 : 1);
