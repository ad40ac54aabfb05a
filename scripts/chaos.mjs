#!/usr/bin/env node
// `npm run chaos`: builds, then runs the chaos suites (e2e/chaos) with many cycles each and
// prints their figures as one table: cycles, acknowledged writes, lost (goal 0), duplicates and
// orphans (goal 0), recovery time p50/p99. `npm test` runs the same suites with their short
// fixed cycle counts. Options: --cycles=N (default 100), --only=<file pattern, e.g. gateway-kill>.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, dirname } from 'node:path';
import { clearInterval, setInterval } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { ensureInstalled } from './ensure.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
const arg = (name, fallback) => process.argv.slice(2).find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const cycles = arg('cycles', '100');
const only = arg('only', '');
if (!/^[1-9]\d*$/.test(cycles)) {
  console.error(`--cycles=${cycles}: want a positive integer`);
  process.exit(2);
}

ensureInstalled({ debian: true });
const build = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

mkdirSync(join(root, 'tmp'), { recursive: true });
const report = join(root, 'tmp', 'chaos-report.jsonl');
rmSync(report, { force: true });
const started = Date.now();
// The machine's 1-minute load average every 30 s while the suites run: recovery times mean
// little without it (printed with the table).
const loads = [loadavg()[0]];
const sampler = setInterval(() => loads.push(loadavg()[0]), 30_000);
const jest = await new Promise((resolve) => {
  const child = spawn(join(root, 'node_modules', '.bin', 'jest'), ['-c', 'e2e/jest.config.js', '--runInBand', `e2e/chaos/${only}`], {
    stdio: 'inherit',
    env: { ...process.env, ORCH_CHAOS_CYCLES: cycles, ORCH_CHAOS_REPORT: report, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' },
  });
  child.on('exit', (code) => resolve({ status: code }));
});
clearInterval(sampler);

const percentile = (values, p) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
const rows = existsSync(report) ? readFileSync(report, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
const table = [
  ['component', 'fault', 'cycles', 'acknowledged', 'lost', 'duplicates', 'orphans', 'recovery p50 ms', 'recovery p99 ms'],
  ...rows.map((r) => [r.component, r.fault, r.cycles, r.acknowledged, r.lost, r.duplicates, r.orphans, percentile(r.recoveryMs, 50), percentile(r.recoveryMs, 99)].map(String)),
];
const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
console.log(`\nchaos: ${cycles} cycles per scenario, ${((Date.now() - started) / 60_000).toFixed(1)} min, load average (1 min, every 30 s) min ${Math.min(...loads).toFixed(1)} p50 ${percentile(loads, 50).toFixed(1)} max ${Math.max(...loads).toFixed(1)} on ${availableParallelism()} CPUs`);
for (const row of table) console.log(row.map((c, i) => c.padEnd(widths[i])).join('  '));
process.exit(jest.status === 0 ? 0 : 1);
