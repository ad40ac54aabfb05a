#!/usr/bin/env node
// `npm run bench`: builds, then runs every benchmark; each figure is printed beside a
// baseline measured in the same run and the ratio. Arguments are passed through
// (e.g. `npm run bench -- --only=gateway --duration=5s`).
//
// `--compare=<ref>` (a commit, branch or tag) is a regression check: it checks <ref> out in a git
// worktree under tmp/bench-compare/, builds it, runs the chosen benchmarks twice in this one run —
// this checkout's bench driving <ref>'s apps, then driving this checkout's apps — and prints both
// figures side by side with their ratio (each run's own baselines stay in its table above).
// `--compare-rounds=N` repeats that N times, alternating which side goes first (ref/this, this/ref,
// ...), so a machine that drifts during the run favours neither side; the table then gives each
// side's median and the spread of the per-round ratios.
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
const roundsArg = args.find((a) => a.startsWith('--compare-rounds='));
const rounds = roundsArg ? Number(roundsArg.slice('--compare-rounds='.length)) : 1;
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error(`--compare-rounds must be a whole number of at least 1, got ${roundsArg}`);
  process.exit(2);
}
const passOn = args.filter((a) => a !== compare && a !== roundsArg);
const refDir = checkoutAndBuild(ref);
const sides = [
  { name: ref, env: { ORCH_BENCH_APPS_ROOT: refDir }, rounds: [] },
  { name: 'this checkout', env: {}, rounds: [] },
];
for (let round = 0; round < rounds; round++) {
  for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
    console.log(`\n## apps of ${side.name}${rounds > 1 ? ` (round ${round + 1} of ${rounds})` : ''}`);
    const file = join(root, 'tmp', `bench-compare-${process.pid}-${side === sides[0] ? 'ref' : 'head'}-${round}.jsonl`);
    rmSync(file, { force: true });
    const r = runBench(passOn, { ...side.env, ORCH_BENCH_ROWS: file });
    if (r.status !== 0) process.exit(r.status ?? 1);
    side.rounds.push(readRows(file));
    rmSync(file, { force: true });
  }
}
printSideBySide(ref, sides[0].rounds, sides[1].rounds);

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

function median(values) {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The row of `metric` in group `title` of each round (undefined where a round lacks it). */
function rowsOf(roundsOfGroups, title, metric) {
  return roundsOfGroups.map((groups) => groups.find((g) => g.title === title)?.rows.find((r) => r.metric === metric));
}

/**
 * One table per group: each metric of this checkout beside <ref>'s (medians over the rounds), their
 * ratio and which way it moved; with several rounds, the range of the per-round ratios (round i of
 * this checkout ÷ round i of <ref>).
 */
function printSideBySide(refName, refRounds, headRounds) {
  const several = headRounds.length > 1;
  for (const head of headRounds[0]) {
    console.log(`\n### ${head.title}: this checkout vs ${refName} (same run${several ? `, medians of ${headRounds.length} alternating rounds` : ''})\n`);
    console.log(`| metric | this checkout | ${refName} | this / ${refName} |${several ? ' per-round range |' : ''} better? | orch / baseline (this, ${refName}) |`);
    console.log(`|---|---|---|---|${several ? '---|' : ''}---|---|`);
    for (const row of head.rows) {
      const mine = rowsOf(headRounds, head.title, row.metric);
      const theirs = rowsOf(refRounds, head.title, row.metric);
      const orch = (rows) => median(rows.map((r) => r?.orch));
      const relative = (rows) => median(rows.map((r) => (r ? r.orch / r.baseline : NaN)));
      const ratio = orch(mine) / orch(theirs);
      const perRound = mine.map((r, i) => (r && theirs[i] ? r.orch / theirs[i].orch : NaN)).filter(Number.isFinite);
      const range = perRound.length ? `${fmt(Math.min(...perRound))}–${fmt(Math.max(...perRound))}x` : 'n/a';
      const better = !Number.isFinite(ratio) ? '' : Math.abs(ratio - 1) < 0.05 ? 'same (±5%)' : ratio > 1 === row.higherIsBetter ? 'better' : 'worse';
      const theirsShown = theirs.some(Boolean) ? `${fmt(orch(theirs))} ${row.unit}` : 'n/a';
      console.log(`| ${row.metric} | ${fmt(orch(mine))} ${row.unit} | ${theirsShown} | ${fmt(ratio)}x |${several ? ` ${range} |` : ''} ${better} | ${fmt(relative(mine))}x, ${theirs.some(Boolean) ? `${fmt(relative(theirs))}x` : 'n/a'} |`);
    }
  }
}
