#!/usr/bin/env node
// `npm run fuzz`: builds, then runs the property-based fuzz suite (e2e/fuzz) against a real
// gateway process for many generated requests. Prints the seed first; a failure is shrunk by
// fast-check to a minimal request and printed with the seed and path that replay it.
// Options: --runs=N (default 10000), --seed=N (default: random), --survey (record every
// failing request instead of stopping at the first one; no shrinking).
// `npm test` runs the same suite on a fixed seed with 2,000 requests.
import { spawnSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureInstalled } from './ensure.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
const args = process.argv.slice(2);
const arg = (name, fallback) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const runs = arg('runs', '10000');
const seed = arg('seed', String(Math.floor(Math.random() * 2 ** 31)));
for (const [name, value] of [['runs', runs], ['seed', seed]]) {
  if (!/^\d+$/.test(value)) {
    console.error(`--${name}=${value}: want a non-negative integer`);
    process.exit(2);
  }
}
console.log(`fuzz: seed ${seed}, ${runs} runs`);

ensureInstalled();
const build = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
const jest = spawnSync(join(root, 'node_modules', '.bin', 'jest'), ['-c', 'e2e/jest.config.js', '--runInBand', 'e2e/fuzz'], {
  stdio: 'inherit',
  env: { ...process.env, ORCH_FUZZ_RUNS: runs, ORCH_FUZZ_SEED: seed, ...(args.includes('--survey') ? { ORCH_FUZZ_SURVEY: '1' } : {}), NX_DAEMON: 'false', NX_NO_CLOUD: 'true' },
});
console.log(`fuzz: seed ${seed}, ${runs} runs: ${jest.status === 0 ? 'no failure' : 'FAILED (the counterexample above replays with the same seed)'}`);
process.exit(jest.status === 0 ? 0 : 1);
