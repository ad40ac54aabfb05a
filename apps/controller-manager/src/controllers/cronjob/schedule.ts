/**
 * Cron schedules as upstream's CronJob controller reads them (robfig/cron v3
 * `ParseStandard`): five fields `minute hour day-of-month month day-of-week` with `*`, `?`,
 * lists, ranges, steps and month/day names; descriptors `@yearly`, `@annually`,
 * `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`, `@every <duration>`; an optional
 * `TZ=<zone>` or `CRON_TZ=<zone>` prefix. Times are evaluated on the wall clock of the zone
 * (IANA names through Intl), with robfig's DST handling.
 */

export class ScheduleError extends Error {}

/** A parsed schedule. */
export interface Schedule {
  /** The first activation strictly after `afterMs` (ms since the epoch, whole seconds); undefined if none within 5 years. */
  next(afterMs: number): number | undefined;
}

interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}

const MINUTES: Bounds = { min: 0, max: 59 };
const HOURS: Bounds = { min: 0, max: 23 };
const DOM: Bounds = { min: 1, max: 31 };
const MONTHS: Bounds = { min: 1, max: 12, names: { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 } };
const DOW: Bounds = { min: 0, max: 6, names: { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 } };

const DESCRIPTORS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** A field's allowed values; `star` when written as `*` / `?` (step 1), which matters for day matching. */
interface Field {
  values: Set<number>;
  star: boolean;
}

function parseNumber(s: string, bounds: Bounds): number {
  const named = bounds.names?.[s.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^-?\d+$/.test(s)) throw new ScheduleError(`failed to parse int from ${s}`);
  const n = Number(s);
  if (n < 0) throw new ScheduleError(`negative number (${n}) not allowed: ${s}`);
  return n;
}

/** robfig getRange: `*`, `a`, `a-b`, each with an optional `/step` (`a/step` means `a-max/step`). */
function parseRange(expr: string, bounds: Bounds): Field {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = rangeAndStep[0].split('-');
  let start: number;
  let end: number;
  let star = false;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = bounds.min;
    end = bounds.max;
    star = true;
  } else {
    start = parseNumber(lowAndHigh[0], bounds);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseNumber(lowAndHigh[1], bounds);
    else throw new ScheduleError(`too many hyphens: ${expr}`);
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = parseNumber(rangeAndStep[1], { min: 0, max: Infinity });
    if (lowAndHigh.length === 1) end = bounds.max;
    if (step > 1) star = false;
  } else if (rangeAndStep.length > 2) {
    throw new ScheduleError(`too many slashes: ${expr}`);
  }
  if (start < bounds.min) throw new ScheduleError(`beginning of range (${start}) below minimum (${bounds.min}): ${expr}`);
  if (end > bounds.max) throw new ScheduleError(`end of range (${end}) above maximum (${bounds.max}): ${expr}`);
  if (start > end) throw new ScheduleError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new ScheduleError(`step of range should be a positive number: ${expr}`);
  const values = new Set<number>();
  for (let v = start; v <= end; v += step) values.add(v);
  return { values, star };
}

function parseField(text: string, bounds: Bounds): Field {
  const out: Field = { values: new Set(), star: false };
  for (const part of text.split(',')) {
    const f = parseRange(part, bounds);
    for (const v of f.values) out.values.add(v);
    out.star ||= f.star;
  }
  return out;
}

// ---------------------------------------------------------------- time zones

interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formatters.set(zone, f);
  }
  return f;
}

/** Throws a ScheduleError unless `zone` is a known IANA time zone. */
export function checkTimeZone(zone: string): void {
  try {
    formatter(zone);
  } catch {
    throw new ScheduleError(`unknown time zone ${zone}`);
  }
}

/** The time zone of this process (a schedule without a zone runs on it, like upstream). */
export function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

function wallOf(ms: number, zone: string): Wall {
  if (zone === 'UTC') {
    const d = new Date(ms);
    return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() };
  }
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(ms))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { year: parts['year'], month: parts['month'], day: parts['day'], hour: parts['hour'], minute: parts['minute'], second: parts['second'] };
}

function wallAsUtc(w: Wall): number {
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
}

function offsetAt(ms: number, zone: string): number {
  const whole = Math.floor(ms / 1000) * 1000;
  return wallAsUtc(wallOf(whole, zone)) - whole;
}

/**
 * Go's time.Date: the instant of wall time `w` in `zone`; out-of-range fields normalise
 * (month 13 is January next year); a time in a DST gap resolves past the gap.
 */
function fromWall(w: Wall, zone: string): number {
  const local = wallAsUtc(w);
  const o1 = offsetAt(local, zone);
  const utc = local - o1;
  const o2 = offsetAt(utc, zone);
  return o1 === o2 ? utc : local - o2;
}

// ---------------------------------------------------------------- schedules

class SpecSchedule implements Schedule {
  constructor(
    private readonly minute: Field,
    private readonly hour: Field,
    private readonly dom: Field,
    private readonly month: Field,
    private readonly dow: Field,
    private readonly zone: string,
  ) {}

  /** robfig dayMatches: both day fields restricted → either matches; else both must. */
  private dayMatches(w: Wall): boolean {
    const domMatch = this.dom.values.has(w.day);
    const dowMatch = this.dow.values.has(new Date(Date.UTC(w.year, w.month - 1, w.day)).getUTCDay());
    if (this.dom.star || this.dow.star) return domMatch && dowMatch;
    return domMatch || dowMatch;
  }

  /** robfig SpecSchedule.Next, field by field on the zone's wall clock. */
  next(afterMs: number): number | undefined {
    const zone = this.zone;
    let t = Math.floor(afterMs / 1000) * 1000 + 1000;
    let added = false;
    const yearLimit = wallOf(t, zone).year + 5;
    wrap: for (;;) {
      let w = wallOf(t, zone);
      if (w.year > yearLimit) return undefined;
      while (!this.month.values.has(w.month)) {
        if (!added) {
          added = true;
          t = fromWall({ ...w, day: 1, hour: 0, minute: 0, second: 0 }, zone);
          w = wallOf(t, zone);
        }
        t = fromWall({ ...w, month: w.month + 1 }, zone);
        w = wallOf(t, zone);
        if (w.month === 1) continue wrap;
      }
      while (!this.dayMatches(w)) {
        if (!added) {
          added = true;
          t = fromWall({ ...w, hour: 0, minute: 0, second: 0 }, zone);
          w = wallOf(t, zone);
        }
        t = fromWall({ ...w, day: w.day + 1 }, zone);
        w = wallOf(t, zone);
        // DST may leave us at 23:00 or 01:00: back to midnight.
        if (w.hour !== 0) {
          t += (w.hour > 12 ? 24 - w.hour : -w.hour) * 3_600_000;
          w = wallOf(t, zone);
        }
        if (w.day === 1) continue wrap;
      }
      while (!this.hour.values.has(w.hour)) {
        if (!added) {
          added = true;
          t = fromWall({ ...w, minute: 0, second: 0 }, zone);
        }
        t += 3_600_000;
        w = wallOf(t, zone);
        if (w.hour === 0) continue wrap;
      }
      while (!this.minute.values.has(w.minute)) {
        if (!added) {
          added = true;
          t = Math.floor(t / 60_000) * 60_000;
        }
        t += 60_000;
        w = wallOf(t, zone);
        if (w.minute === 0) continue wrap;
      }
      if (w.second !== 0) {
        // Standard schedules fire at second 0.
        if (!added) added = true;
        t = Math.floor(t / 60_000) * 60_000 + 60_000;
        continue wrap;
      }
      return t;
    }
  }
}

/** robfig ConstantDelaySchedule: every `delayMs` (whole seconds, at least one). */
class EverySchedule implements Schedule {
  constructor(private readonly delayMs: number) {}
  next(afterMs: number): number {
    return Math.floor(afterMs / 1000) * 1000 + this.delayMs;
  }
}

const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration (e.g. `1h30m`, `90s`, `1.5h`), in ms. */
export function parseGoDuration(text: string): number {
  const s = text.trim();
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
  let total = 0;
  let i = 0;
  let sign = 1;
  if (s[0] === '-' || s[0] === '+') {
    sign = s[0] === '-' ? -1 : 1;
    i = 1;
  }
  if (i >= s.length) throw new ScheduleError(`time: invalid duration "${text}"`);
  while (i < s.length) {
    re.lastIndex = i;
    const m = re.exec(s);
    if (!m) throw new ScheduleError(`time: invalid duration "${text}"`);
    total += Number(m[1]) * DURATION_UNITS[m[2]];
    i = re.lastIndex;
  }
  return sign * total;
}

/**
 * Parses a schedule (robfig cron.ParseStandard). `defaultZone` applies unless the spec has a
 * `TZ=` / `CRON_TZ=` prefix. Errors are ScheduleErrors with robfig's messages.
 */
export function parseSchedule(spec: string, defaultZone = localTimeZone()): Schedule {
  let text = spec.trim();
  if (!text) throw new ScheduleError('empty spec string');
  let zone = defaultZone;
  if (text.startsWith('TZ=') || text.startsWith('CRON_TZ=')) {
    const space = text.indexOf(' ');
    const eq = text.indexOf('=');
    if (space < 0) throw new ScheduleError(`missing schedule after time zone: ${spec}`);
    zone = text.slice(eq + 1, space);
    try {
      checkTimeZone(zone);
    } catch {
      throw new ScheduleError(`provided bad location ${zone}: unknown time zone ${zone}`);
    }
    text = text.slice(space).trim();
  }
  if (text.startsWith('@')) {
    if (text.startsWith('@every ')) {
      const ms = parseGoDuration(text.slice('@every '.length));
      if (ms < 0) throw new ScheduleError(`failed to parse duration ${text}: negative duration`);
      return new EverySchedule(Math.max(1000, Math.floor(ms / 1000) * 1000));
    }
    const expanded = DESCRIPTORS[text];
    if (!expanded) throw new ScheduleError(`unrecognized descriptor: ${text}`);
    text = expanded;
  }
  const fields = text.split(/\s+/);
  if (fields.length !== 5) throw new ScheduleError(`expected exactly 5 fields, found ${fields.length}: ${text}`);
  return new SpecSchedule(parseField(fields[0], MINUTES), parseField(fields[1], HOURS), parseField(fields[2], DOM), parseField(fields[3], MONTHS), parseField(fields[4], DOW), zone);
}
