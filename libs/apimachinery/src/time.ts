import { StatusError } from './errors';

// metav1.Time (RFC 3339, whole seconds, UTC), metav1.MicroTime (six fraction digits)
// and upstream duration.HumanDuration for Age columns.

const RFC3339_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** metav1.Time JSON form: `2024-01-02T03:04:05Z` (fractions are dropped, not rounded). */
export function formatTime(t: Date | number): string {
  const ms = typeof t === 'number' ? t : t.getTime();
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** metav1.MicroTime JSON form: `2024-01-02T03:04:05.123456Z`, from microseconds since the epoch. */
export function formatMicroTime(epochMicros: number): string {
  const seconds = Math.floor(epochMicros / 1e6);
  const micros = epochMicros - seconds * 1e6;
  return `${formatTime(seconds * 1000).slice(0, -1)}.${String(Math.floor(micros)).padStart(6, '0')}Z`;
}

interface Rfc3339 {
  /** Whole seconds since the epoch, in UTC. */
  seconds: number;
  /** Fraction digits as written. */
  fraction: string;
}

function parseRfc3339(s: string): Rfc3339 {
  const m = RFC3339_RE.exec(s);
  const bad = (why: string): StatusError => StatusError.badRequest(`parsing time ${JSON.stringify(s)} as RFC 3339: ${why}`);
  if (!m) throw bad('expected YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)');
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12) throw bad('month out of range');
  if (day < 1 || day > daysInMonth) throw bad('day out of range');
  if (hour > 23 || minute > 59 || second > 59) throw bad('time out of range');
  let offsetMinutes = 0;
  if (m[8] !== 'Z') {
    const [oh, om] = m[8].slice(1).split(':').map(Number);
    if (oh > 23 || om > 59) throw bad('time zone offset out of range');
    offsetMinutes = (m[8][0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  // Date.UTC treats years 0-99 as 1900+; set the full year explicitly.
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second));
  date.setUTCFullYear(year);
  return { seconds: date.getTime() / 1000 - offsetMinutes * 60, fraction: (m[7] ?? '.').slice(1) };
}

/** Parses a metav1.Time (any RFC 3339 time; fractions kept to the millisecond) to epoch ms. Invalid → 400. */
export function parseTime(s: string): number {
  const { seconds, fraction } = parseRfc3339(s);
  return seconds * 1000 + Number(fraction.padEnd(3, '0').slice(0, 3));
}

/** Parses a metav1.MicroTime (exactly six fraction digits, as upstream) to epoch microseconds. Invalid → 400. */
export function parseMicroTime(s: string): number {
  const { seconds, fraction } = parseRfc3339(s);
  if (fraction.length !== 6) throw StatusError.badRequest(`parsing time ${JSON.stringify(s)} as RFC 3339 with microseconds: expected six fraction digits`);
  return seconds * 1e6 + Number(fraction);
}

/**
 * upstream duration.HumanDuration: about two significant units (`45s`, `3m15s`, `10m`,
 * `2h5m`, `3d4h`, `10d`, `2y100d`, `8y`). Up to 2s in the future (clock skew) reads `0s`;
 * more is `<invalid>`.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    const years = Math.trunc(hours / 24 / 365);
    return dy === 0 ? `${years}y` : `${years}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** The Age cell of a Table row (upstream translateTimestampSince): `<unknown>` without a timestamp. */
export function ageSince(timestamp: string | undefined, nowMs: number): string {
  if (!timestamp) return '<unknown>';
  return humanDuration(nowMs - parseTime(timestamp));
}
