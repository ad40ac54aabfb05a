import { appendFileSync } from 'node:fs';

/** One benchmark figure beside its same-run baseline. */
export interface Row {
  metric: string;
  orch: number;
  baseline: number;
  /** What the baseline is (measured in the same run). */
  baselineName: string;
  unit: string;
  /** true when higher is better (throughput), false for latency and memory. */
  higherIsBetter: boolean;
}

function fmt(v: number): string {
  return Number.isFinite(v) ? (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2)) : 'n/a';
}

/** Prints rows as a Markdown table with the orch/baseline ratio (and appends them as JSON to $ORCH_BENCH_ROWS when set). */
export function printRows(title: string, rows: Row[]): void {
  // `--compare=<ref>` (scripts/bench.mjs) collects the rows of each run here to print them side by side.
  if (process.env.ORCH_BENCH_ROWS) appendFileSync(process.env.ORCH_BENCH_ROWS, `${JSON.stringify({ title, rows })}\n`);
  console.log(`\n### ${title}\n`);
  console.log('| metric | orch | baseline | baseline is | orch / baseline |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) {
    console.log(`| ${r.metric} | ${fmt(r.orch)} ${r.unit} | ${fmt(r.baseline)} ${r.unit} | ${r.baselineName} | ${fmt(r.orch / r.baseline)}x |`);
  }
}
