// Go time.Duration text form (metav1.Duration's JSON, `format: duration` strings) as int64 nanoseconds.

const UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  '\u00b5s': 1_000n,
  '\u03bcs': 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const PART = /^(\d*)(?:\.(\d*))?(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/;

/** Parses a Go duration (`1h2m3.5s`, `-300ms`, `0`) to nanoseconds; throws on malformed input. */
export function parseGoDuration(text: string): bigint {
  let s = text;
  let sign = 1n;
  if (s[0] === '-' || s[0] === '+') {
    if (s[0] === '-') sign = -1n;
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') throw new Error(`time: invalid duration ${JSON.stringify(text)}`);
  let total = 0n;
  while (s !== '') {
    const m = PART.exec(s);
    if (!m || (m[1] === '' && (m[2] ?? '') === '')) throw new Error(`time: invalid duration ${JSON.stringify(text)}`);
    const unit = UNITS[m[3]];
    const frac = m[2] ?? '';
    total += BigInt(m[1] || '0') * unit;
    if (frac) total += (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    s = s.slice(m[0].length);
  }
  return sign * total;
}

/** `d` nanoseconds as Go's Duration.String prints it: `1h2m3.5s`, `1.5ms`, `0s`. */
export function formatGoDuration(d: bigint): string {
  const neg = d < 0n;
  const u = neg ? -d : d;
  const sign = neg ? '-' : '';
  if (u === 0n) return '0s';
  if (u < 1_000_000_000n) {
    if (u < 1_000n) return `${sign}${u}ns`;
    if (u < 1_000_000n) return `${sign}${fraction(u, 1_000n)}\u00b5s`;
    return `${sign}${fraction(u, 1_000_000n)}ms`;
  }
  const seconds = u / 1_000_000_000n;
  const nanos = u % 1_000_000_000n;
  let out = `${fraction((seconds % 60n) * 1_000_000_000n + nanos, 1_000_000_000n)}s`;
  const minutes = seconds / 60n;
  if (minutes > 0n) {
    out = `${minutes % 60n}m${out}`;
    const hours = minutes / 60n;
    if (hours > 0n) out = `${hours}h${out}`;
  }
  return sign + out;
}

/** `v / unit` in decimal with trailing zeros of the fraction dropped. */
function fraction(v: bigint, unit: bigint): string {
  const whole = v / unit;
  const rest = v % unit;
  if (rest === 0n) return String(whole);
  const digits = String(unit).length - 1;
  return `${whole}.${String(rest).padStart(digits, '0').replace(/0+$/, '')}`;
}
