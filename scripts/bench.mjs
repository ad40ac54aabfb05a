#!/usr/bin/env node
// `npm run bench`: builds, then runs every benchmark; each figure is printed beside a
// baseline measured in the same run and the ratio. Arguments are passed through
// (e.g. `npm run bench -- --only=gateway --duration=5s`).
//
// `--compare=<ref>` (a commit, branch or tag) is a regression check: it checks <ref> out in a git
// worktree under tmp/bench-compare/, builds it, runs the chosen benchmarks twice in this one run —
// this checkout's bench driving <ref>'s apps, then driving this checkout's apps — and prints both
// figures side by side with their ratio (each run's own baselines stay in its table above).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureInstalled } from './ensure.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
ensureInstalled();
const build = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const args = process.argv.slice(2);
const compare = args.find((a) => a.startsWith('--compare='));
if (!compare) process.exit(runBench(args, {}).status ?? 1);

const ref = compare.slice('--compare='.length);
const passOn = args.filter((a) => a !== compare);
const refDir = checkoutAndBuild(ref);
const rowsFile = (name) => join(root, 'tmp', `bench-compare-${process.pid}-${name}.jsonl`);
const runs = [
  { name: ref, file: rowsFile('ref'), env: { ORCH_BENCH_APPS_ROOT: refDir } },
  { name: 'this checkout', file: rowsFile('head'), env: {} },
];
for (const run of runs) {
  console.log(`\n## apps of ${run.name}`);
  rmSync(run.file, { force: true });
  const r = runBench(passOn, { ...run.env, ORCH_BENCH_ROWS: run.file });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
printSideBySide(ref, ...runs.map((r) => readRows(r.file)));
for (const run of runs) rmSync(run.file, { force: true });

function runBench(benchArgs, env) {
  return spawnSync(process.execPath, ['--expose-gc', 'dist/bench/src/main.js', ...benchArgs], { stdio: 'inherit', env: { ...process.env, ...env } });
}

function git(...gitArgs) {
  const r = spawnSync('git', gitArgs, { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${gitArgs.join(' ')}: ${r.stderr.trim()}`);
  return r.stdout.trim();
}

/** tmp/bench-compare/<sha>: a detached worktree of `ref`, its dependencies installed and built. */
function checkoutAndBuild(commitish) {
  const sha = git('rev-parse', '--verify', `${commitish}^{commit}`);
  const dir = join(root, 'tmp', 'bench-compare', sha.slice(0, 12));
  if (!existsSync(join(dir, '.git'))) {
    mkdirSync(dirname(dir), { recursive: true });
    git('worktree', 'add', '--detach', '--force', dir, sha);
  }
  // The same package-lock: share this checkout's node_modules; else install <ref>'s own.
  if (!existsSync(join(dir, 'node_modules'))) {
    const sameLock = readFileSync(join(root, 'package-lock.json'), 'utf8') === readFileSync(join(dir, 'package-lock.json'), 'utf8');
    if (sameLock) symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
    else if (spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' }).status !== 0) throw new Error(`npm ci failed in ${dir}`);
  }
  console.log(`building ${commitish} (${sha.slice(0, 12)}) in ${dir}`);
  const built = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: dir, stdio: 'inherit' });
  if (built.status !== 0) throw new Error(`build of ${commitish} failed`);
  return dir;
}

function readRows(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

function fmt(v) {
  return Number.isFinite(v) ? (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2)) : 'n/a';
}

/** One table per group: each metric of this checkout beside <ref>'s, and which way it moved. */
function printSideBySide(refName, refGroups, headGroups) {
  for (const head of headGroups) {
    const before = refGroups.find((g) => g.title === head.title);
    console.log(`\n### ${head.title}: this checkout vs ${refName} (same run)\n`);
    console.log(`| metric | this checkout | ${refName} | this / ${refName} | better? | orch / baseline (this, ${refName}) |`);
    console.log('|---|---|---|---|---|---|');
    for (const row of head.rows) {
      const old = before?.rows.find((r) => r.metric === row.metric);
      const ratio = old ? row.orch / old.orch : NaN;
      const better = !Number.isFinite(ratio) ? '' : Math.abs(ratio - 1) < 0.05 ? 'same (±5%)' : ratio > 1 === row.higherIsBetter ? 'better' : 'worse';
      console.log(`| ${row.metric} | ${fmt(row.orch)} ${row.unit} | ${old ? `${fmt(old.orch)} ${old.unit}` : 'n/a'} | ${fmt(ratio)}x | ${better} | ${fmt(row.orch / row.baseline)}x, ${old ? `${fmt(old.orch / old.baseline)}x` : 'n/a'} |`);
    }
  }
}
