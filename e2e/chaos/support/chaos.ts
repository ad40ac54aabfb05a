import { execFile } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiClient } from '../../support/api-client';
import { GATEWAY_MAIN, type GatewayProcess } from '../../support/gateway';

/**
 * Cycles each chaos scenario runs: `ORCH_CHAOS_CYCLES` (`npm run chaos` sets it, 100 by
 * default), else the short fixed run CI does (`ciCycles`).
 */
export function chaosCycles(ciCycles: number): number {
  const n = Number(process.env['ORCH_CHAOS_CYCLES']);
  return Number.isInteger(n) && n > 0 ? n : ciCycles;
}

/** A jest timeout for `cycles` cycles of at most `perCycleMs` each after `setupMs` of set-up. */
export const chaosTimeout = (cycles: number, perCycleMs: number, setupMs = 30_000) => setupMs + cycles * perCycleMs;

/** The figures one scenario reports (`npm run chaos` prints them as a table). */
export interface ChaosFigures {
  /** e.g. `gateway (sqlite)`. */
  component: string;
  /** What was done each cycle, e.g. `kill -9 during creates`. */
  fault: string;
  cycles: number;
  /** Writes the clients saw acknowledged (201/200) before the faults. */
  acknowledged: number;
  /** Acknowledged writes missing afterwards (goal 0). */
  lost: number;
  /** Objects that exist twice (two pods for one slot, two uids for one name...) (goal 0). */
  duplicates: number;
  /** Objects or processes nobody owns any more (goal 0). */
  orphans: number;
  /** Per cycle, from the fault to the component serving again (ms). */
  recoveryMs: number[];
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * Records a scenario's figures: a line on stdout, and a JSON line appended to
 * `ORCH_CHAOS_REPORT` when set (`npm run chaos` collects them into its table).
 */
export function recordChaos(f: ChaosFigures): void {
  const line = `chaos: ${f.component}, ${f.fault}: ${f.cycles} cycles, ${f.acknowledged} acknowledged, ${f.lost} lost, ${f.duplicates} duplicates, ${f.orphans} orphans, recovery p50 ${percentile(f.recoveryMs, 50)} ms p99 ${percentile(f.recoveryMs, 99)} ms`;
  process.stdout.write(`${line}\n`);
  const report = process.env['ORCH_CHAOS_REPORT'];
  if (report) appendFileSync(report, `${JSON.stringify(f)}\n`);
}

/**
 * Runs `gateway verify-store <args>` (read-only integrity check), after `launcher` when given
 * (see StartGatewayOptions.launcher); resolves with its verdict and output.
 */
export function verifyStore(args: string[], launcher: string[] = []): Promise<{ ok: boolean; output: string }> {
  const command = [...launcher, process.execPath, GATEWAY_MAIN, 'verify-store', ...args];
  return new Promise((resolve) => {
    execFile(command[0], command.slice(1), { timeout: 60_000 }, (err, stdout, stderr) => resolve({ ok: !err, output: `${stdout}${stderr}` }));
  });
}

/** A separate admin client of a gateway (its own connections, so closing the gateway's clients leaves it alone). */
export async function adminClient(gw: GatewayProcess, pkiDir = join(gw.dataDir, 'pki')): Promise<ApiClient> {
  const [ca, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(pkiDir, f), 'utf8')));
  return new ApiClient(gw.url, { ca, cert, key });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A uniformly random integer in [min, max]. */
export const between = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));
