import { StatusError } from './errors';

// Resource quantities with the semantics of upstream k8s.io/apimachinery/pkg/api/resource:
// `<sign><digits>[.<digits>]<suffix>` with decimal SI (n u m k M G T P E), binary SI
// (Ki Mi Gi Ti Pi Ei) or decimal exponent (e3, E-2) suffixes.

/** How a quantity is written back: the format of the suffix it was parsed with. */
export type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

const FORMAT_RE_STRING = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
const ERR_FORMAT = `quantities must match the regular expression '${FORMAT_RE_STRING}'`;
const ERR_NUMERIC = 'unable to parse numeric part of quantity';
const ERR_SUFFIX = "unable to parse quantity's suffix";

const DECIMAL_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_SUFFIX_BY_EXP = new Map(Object.entries(DECIMAL_SUFFIXES).map(([s, e]) => [e, s]));
const BINARY_SUFFIX_BY_POWER = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/** Smallest representable scale (nano); finer input is rounded away from zero. */
const NANO = -9;
const MAX_INT64 = 2n ** 63n - 1n;
const MIN_INT64 = -(2n ** 63n);
/** Decimal exponents beyond this are rejected so arithmetic stays cheap. */
const MAX_EXPONENT = 10000;

class QuantityParseError extends Error {}

/**
 * An immutable quantity: value = unscaled × 10^exp, exact (arbitrary precision).
 * Parsing rounds to nano units as upstream; arithmetic is exact.
 */
export class Quantity {
  private constructor(
    private readonly unscaled: bigint,
    private readonly exp: number,
    /** The format used by toString(). */
    readonly format: QuantityFormat,
    /** The input text, kept when upstream keeps it (it is already canonical). */
    private readonly text?: string,
  ) {}

  /**
   * Parses a quantity (upstream ParseQuantity after UnmarshalJSON's whitespace trim; a JSON
   * number is parsed from its text). Invalid input is a 400 `cannot parse '<value>': <why>`.
   */
  static parse(input: string | number): Quantity {
    const str = (typeof input === 'number' ? String(input) : input).trim();
    try {
      const p = parseQuantity(str);
      return new Quantity(p.unscaled, p.exp, p.format, p.text);
    } catch (e) {
      if (e instanceof QuantityParseError) throw StatusError.badRequest(`cannot parse '${str}': ${e.message}`);
      throw e;
    }
  }

  /** upstream NewQuantity: an integer value. */
  static fromValue(value: number | bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(BigInt(value), 0, format);
  }

  /** upstream NewMilliQuantity: `milli` thousandths. */
  static fromMilliValue(milli: number | bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(BigInt(milli), -3, format);
  }

  isZero(): boolean {
    return this.unscaled === 0n;
  }

  /** -1, 0 or 1. */
  sign(): number {
    return this.unscaled === 0n ? 0 : this.unscaled < 0n ? -1 : 1;
  }

  /** -1, 0 or 1 as this is less than, equal to or greater than `other`. */
  cmp(other: Quantity): number {
    const [a, b] = [this.sign(), other.sign()];
    if (a !== b || a === 0) return Math.sign(a - b);
    // Same sign: compare magnitudes by order of magnitude first, so huge exponents never get expanded.
    const magA = digits(this.unscaled) + this.exp;
    const magB = digits(other.unscaled) + other.exp;
    if (magA !== magB) return magA > magB ? a : -a;
    const [x, y] = this.align(other);
    return x === y ? 0 : x > y ? 1 : -1;
  }

  equal(other: Quantity): boolean {
    return this.cmp(other) === 0;
  }

  /** this + other; the format is this one's unless this is zero (upstream Add). */
  add(other: Quantity): Quantity {
    const [x, y] = this.align(other);
    return new Quantity(x + y, Math.min(this.exp, other.exp), this.isZero() ? other.format : this.format);
  }

  /** this − other; the format is this one's unless this is zero (upstream Sub). */
  sub(other: Quantity): Quantity {
    const [x, y] = this.align(other);
    return new Quantity(x - y, Math.min(this.exp, other.exp), this.isZero() ? other.format : this.format);
  }

  /** Both unscaled values at the smaller exponent. */
  private align(other: Quantity): [bigint, bigint] {
    const exp = Math.min(this.exp, other.exp);
    return [this.unscaled * 10n ** BigInt(this.exp - exp), other.unscaled * 10n ** BigInt(other.exp - exp)];
  }

  neg(): Quantity {
    return new Quantity(-this.unscaled, this.exp, this.format);
  }

  /** The value in units of 10^scale, rounded away from zero (upstream ScaledValue). */
  scaledValue(scale: number): number {
    const diff = this.exp - scale;
    if (diff > 400) return this.sign() * Infinity;
    if (diff >= 0) return Number(this.unscaled * 10n ** BigInt(diff));
    const d = 10n ** BigInt(-diff);
    let q = this.unscaled / d;
    if (this.unscaled % d !== 0n) q += this.unscaled < 0n ? -1n : 1n;
    return Number(q);
  }

  /** The integer value, rounded away from zero (upstream Value). */
  value(): number {
    return this.scaledValue(0);
  }

  /** The value in thousandths, rounded away from zero (upstream MilliValue). */
  milliValue(): number {
    return this.scaledValue(-3);
  }

  /** The exact value when it is an integer within int64, else undefined. */
  asInt64(): bigint | undefined {
    let v: bigint;
    if (this.exp >= 0) {
      if (this.exp > 19) return this.isZero() ? 0n : undefined;
      v = this.unscaled * 10n ** BigInt(this.exp);
    } else {
      const d = 10n ** BigInt(-this.exp);
      if (this.unscaled % d !== 0n) return undefined;
      v = this.unscaled / d;
    }
    return v < MIN_INT64 || v > MAX_INT64 ? undefined : v;
  }

  /** A float approximation (upstream AsApproximateFloat64). */
  asApproximateFloat(): number {
    return Number(this.unscaled) * 10 ** this.exp;
  }

  /**
   * The canonical text (upstream String): the largest suffix of the format that keeps an
   * integer mantissa (`1000m` → `1`, `1536Mi` stays, `1024Mi` → `1Gi`); BinarySI values
   * below 1024 or with fractions are written as DecimalSI.
   */
  toString(): string {
    return this.text ?? this.canonical();
  }

  toJSON(): string {
    return this.toString();
  }

  private canonical(): string {
    if (this.unscaled === 0n) return '0';
    let format = this.format;
    if (format === 'BinarySI') {
      const small = this.cmp(Quantity.fromValue(-1024)) > 0 && this.cmp(Quantity.fromValue(1024)) < 0;
      if (small || this.asInt64() === undefined) format = 'DecimalSI';
    }
    if (format === 'BinarySI') {
      let v = this.asInt64()!;
      let power = 0;
      const abs = (x: bigint): bigint => (x < 0n ? -x : x);
      while (power < 6 && abs(v) >= 1024n && v % 1024n === 0n) {
        v /= 1024n;
        power++;
      }
      return `${v}${BINARY_SUFFIX_BY_POWER[power]}`;
    }
    let mantissa = this.unscaled;
    let exp = this.exp;
    while (mantissa % 10n === 0n) {
      mantissa /= 10n;
      exp++;
    }
    while (exp % 3 !== 0) {
      mantissa *= 10n;
      exp--;
    }
    // DecimalSI has no suffix beyond E (10^18) or below n: fall back to an exponent.
    const suffix = format === 'DecimalSI' ? DECIMAL_SUFFIX_BY_EXP.get(exp) : undefined;
    return `${mantissa}${suffix ?? (exp === 0 ? '' : `e${exp}`)}`;
  }
}

/** Number of decimal digits of |v| (1 for 0). */
function digits(v: bigint): number {
  return (v < 0n ? -v : v).toString().length;
}

interface QuantityParts {
  positive: boolean;
  /** Sign and digits before the suffix. */
  value: string;
  /** Integer digits without leading zeros ("0" when none). */
  num: string;
  /** Fraction digits. */
  denom: string;
  suffix: string;
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** upstream parseQuantityString: splits sign, number and suffix. */
function splitQuantity(str: string): QuantityParts {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (str[0] === '-' || str[0] === '+') {
    positive = str[0] === '+';
    pos++;
  }
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };
  let start = pos;
  while (pos < end && isDigit(str[pos])) pos++;
  const num = str.slice(start, pos) || '0';
  let denom = '';
  if (str[pos] === '.') {
    start = ++pos;
    while (pos < end && isDigit(str[pos])) pos++;
    denom = str.slice(start, pos);
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  while (pos < end && 'eEinumkKMGTP'.includes(str[pos])) pos++;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos < end) throw new QuantityParseError(ERR_FORMAT);
  return { positive, value, num, denom, suffix: str.slice(suffixStart) };
}

interface Suffix {
  base: 2 | 10;
  exponent: number;
  format: QuantityFormat;
}

/** upstream suffixHandler.interpret. */
function interpretSuffix(suffix: string): Suffix | undefined {
  if (Object.hasOwn(DECIMAL_SUFFIXES, suffix)) return { base: 10, exponent: DECIMAL_SUFFIXES[suffix], format: 'DecimalSI' };
  if (Object.hasOwn(BINARY_SUFFIXES, suffix)) return { base: 2, exponent: BINARY_SUFFIXES[suffix], format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E') && /^[+-]?[0-9]+$/.test(suffix.slice(1))) {
    const exponent = Number(suffix.slice(1));
    if (Math.abs(exponent) > MAX_EXPONENT) return undefined;
    return { base: 10, exponent, format: 'DecimalExponent' };
  }
  return undefined;
}

/** A parsed quantity: value = unscaled × 10^exp. */
interface ParsedQuantity {
  unscaled: bigint;
  exp: number;
  format: QuantityFormat;
  text?: string;
}

/** |unscaled| × 10^exp compared with an integer. */
function cmpMagnitude(unscaled: bigint, exp: number, n: bigint): number {
  const [x, y] = exp >= 0 ? [unscaled * 10n ** BigInt(exp), n] : [unscaled, n * 10n ** BigInt(-exp)];
  return x === y ? 0 : x > y ? 1 : -1;
}

/** upstream ParseQuantity. */
function parseQuantity(str: string): ParsedQuantity {
  if (str.length === 0) throw new QuantityParseError(ERR_FORMAT);
  if (str === '0') return { unscaled: 0n, exp: 0, format: 'DecimalSI', text: '0' };
  const { positive, value, num, denom, suffix } = splitQuantity(str);
  const sfx = interpretSuffix(suffix);
  if (!sfx) throw new QuantityParseError(ERR_SUFFIX);
  const { base, exponent } = sfx;
  let format = sfx.format;

  // Fast path (upstream int64Amount): few enough digits to be exact without rounding.
  let precision: number;
  let scale = 0;
  let mantissa = 1n;
  if (format !== 'BinarySI') {
    scale = exponent;
    precision = 18 - (num.length + denom.length);
  } else if (exponent >= 0 && denom.length === 0) {
    mantissa = 1n << BigInt(exponent);
    precision = 15 - num.length - Math.trunc((exponent * 3) / 10) - 1;
  } else {
    precision = -1;
  }
  if (precision >= 0) {
    scale -= denom.length;
    if (scale >= NANO) {
      const shifted = num + denom;
      const v = BigInt(shifted);
      const result = v * mantissa;
      if (result <= MAX_INT64) {
        // Upstream keeps the input text when it is already in canonical form.
        const canonical =
          format === 'BinarySI' ? exponent % 10 === 0 && (v & 7n) !== 0n : scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
        return { unscaled: positive ? result : -result, exp: scale, format, text: canonical ? str : undefined };
      }
    }
  }

  // Slow path (upstream inf.Dec): exact decimal magnitude, rounded up to nano units.
  const m = /^[+-]?(\d*)(?:\.(\d*))?$/.exec(value);
  if (!m || (m[1] === '' && !m[2])) throw new QuantityParseError(ERR_NUMERIC);
  const frac = m[2] ?? '';
  let unscaled = BigInt((m[1] || '0') + frac);
  let exp = -frac.length;
  if (base === 10) exp += exponent;
  else unscaled <<= BigInt(exponent);
  if (unscaled !== 0n && exp < NANO) {
    const d = 10n ** BigInt(NANO - exp);
    unscaled = unscaled / d + (unscaled % d === 0n ? 0n : 1n);
    exp = NANO;
  }
  if (format === 'BinarySI' && cmpMagnitude(unscaled, exp, MAX_INT64) > 0) [unscaled, exp] = [MAX_INT64, 0];
  if (format === 'BinarySI' && unscaled !== 0n && cmpMagnitude(unscaled, exp, 1n) < 0) format = 'DecimalSI';
  return { unscaled: positive ? unscaled : -unscaled, exp, format };
}
