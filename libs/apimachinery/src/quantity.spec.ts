import { StatusError } from './errors';
import { Quantity } from './quantity';

function statusOf(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error('expected a StatusError');
}

describe('Quantity.parse and toString', () => {
  it.each([
    // zero
    { name: 'zero', input: '0', want: '0', format: 'DecimalSI' },
    { name: 'zero with suffix', input: '0Mi', want: '0', format: 'BinarySI' },
    { name: 'signed zero', input: '-0', want: '0', format: 'DecimalSI' },
    // decimal SI
    { name: 'integer', input: '2', want: '2', format: 'DecimalSI' },
    { name: 'milli', input: '100m', want: '100m', format: 'DecimalSI' },
    { name: 'milli to unit', input: '1000m', want: '1', format: 'DecimalSI' },
    { name: 'fraction to milli', input: '1.5', want: '1500m', format: 'DecimalSI' },
    { name: 'leading dot', input: '.5', want: '500m', format: 'DecimalSI' },
    { name: 'small fraction', input: '0.0001', want: '100u', format: 'DecimalSI' },
    { name: 'fractional milli', input: '0.5m', want: '500u', format: 'DecimalSI' },
    { name: 'mega kept', input: '500M', want: '500M', format: 'DecimalSI' },
    { name: 'kilo to mega', input: '1000k', want: '1M', format: 'DecimalSI' },
    { name: 'exa', input: '12E', want: '12E', format: 'DecimalSI' },
    { name: 'beyond exa uses an exponent', input: '1000E', want: '1e21', format: 'DecimalSI' },
    { name: 'many digits', input: '123456789012345678901', want: '123456789012345678901', format: 'DecimalSI' },
    { name: 'negative', input: '-100m', want: '-100m', format: 'DecimalSI' },
    { name: 'trimmed like JSON', input: ' 1 ', want: '1', format: 'DecimalSI' },
    // rounding up to nano
    { name: 'below nano', input: '1.5n', want: '2n', format: 'DecimalSI' },
    { name: 'far below nano', input: '0.0000000001', want: '1n', format: 'DecimalSI' },
    // binary SI
    { name: 'gibi', input: '1Gi', want: '1Gi', format: 'BinarySI' },
    { name: 'mebi to gibi', input: '1024Mi', want: '1Gi', format: 'BinarySI' },
    { name: 'fractional gibi', input: '1.5Gi', want: '1536Mi', format: 'BinarySI' },
    { name: 'half gibi', input: '0.5Gi', want: '512Mi', format: 'BinarySI' },
    { name: 'below 1024 is decimal', input: '0.5Ki', want: '512', format: 'BinarySI' },
    { name: 'fractional bytes are decimal', input: '1.1Ki', want: '1126400m', format: 'BinarySI' },
    { name: 'exbi', input: '1Ei', want: '1Ei', format: 'BinarySI' },
    { name: 'capped at int64', input: '8Ei', want: '9223372036854775807', format: 'BinarySI' },
    { name: 'negative binary', input: '-1.5Gi', want: '-1536Mi', format: 'BinarySI' },
    { name: 'tiny binary becomes decimal', input: '0.0001Ki', want: '102400u', format: 'DecimalSI' },
    // decimal exponent
    { name: 'exponent', input: '1e3', want: '1e3', format: 'DecimalExponent' },
    { name: 'upper exponent kept as written', input: '1E6', want: '1E6', format: 'DecimalExponent' },
    { name: 'exponent normalized', input: '1000e0', want: '1e3', format: 'DecimalExponent' },
    { name: 'negative exponent', input: '1e-3', want: '1e-3', format: 'DecimalExponent' },
    { name: 'fractional exponent', input: '1.5e3', want: '1500', format: 'DecimalExponent' },
    // upstream keeps canonical-looking input verbatim
    { name: 'plus sign kept', input: '+1', want: '+1', format: 'DecimalSI' },
    { name: 'leading zero kept', input: '01', want: '01', format: 'DecimalSI' },
  ])('$name: $input', ({ input, want, format }) => {
    const q = Quantity.parse(input);
    expect({ text: q.toString(), format: q.format }).toEqual({ text: want, format });
    expect(Quantity.parse(q.toString()).equal(q)).toBe(true);
  });

  it.each([
    { input: '', why: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" },
    { input: 'abc', why: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" },
    { input: '1GiB', why: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" },
    { input: '1.5.5', why: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" },
    { input: '1 Gi', why: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" },
    { input: '1e', why: "unable to parse quantity's suffix" },
    { input: '1i', why: "unable to parse quantity's suffix" },
    { input: '1Ki5', why: "unable to parse quantity's suffix" },
    { input: '1e99999', why: "unable to parse quantity's suffix" },
  ])('rejects $input', ({ input, why }) => {
    const err = statusOf(() => Quantity.parse(input));
    expect({ code: err.code, message: err.message }).toEqual({ code: 400, message: `cannot parse '${input.trim()}': ${why}` });
  });

  it.each([
    { name: 'integer number', input: 2, want: '2' },
    { name: 'fractional number', input: 0.25, want: '250m' },
    { name: 'large number (its JavaScript text)', input: 1e21, want: '1e+21' },
  ])('parses a JSON $name', ({ input, want }) => {
    expect(Quantity.parse(input).toString()).toBe(want);
  });
});

describe('Quantity values', () => {
  it.each([
    { input: '1Gi', value: 1073741824, milli: 1073741824000 },
    { input: '100m', value: 1, milli: 100 },
    { input: '1.5', value: 2, milli: 1500 },
    { input: '-1.5', value: -2, milli: -1500 },
    { input: '0.5m', value: 1, milli: 1 },
    { input: '2', value: 2, milli: 2000 },
    { input: '1e3', value: 1000, milli: 1000000 },
    { input: '0', value: 0, milli: 0 },
  ])('$input', ({ input, value, milli }) => {
    const q = Quantity.parse(input);
    expect({ value: q.value(), milli: q.milliValue() }).toEqual({ value, milli });
  });

  it.each([
    { input: '1000m', want: 1n },
    { input: '1Ki', want: 1024n },
    { input: '1500m', want: undefined },
    { input: '10E', want: undefined },
    { input: '-3', want: -3n },
  ])('asInt64 $input', ({ input, want }) => {
    expect(Quantity.parse(input).asInt64()).toBe(want);
  });

  it.each([
    { input: '1500m', want: 1.5 },
    { input: '1Ki', want: 1024 },
    { input: '-2e3', want: -2000 },
  ])('asApproximateFloat $input', ({ input, want }) => {
    expect(Quantity.parse(input).asApproximateFloat()).toBeCloseTo(want, 9);
  });
});

describe('Quantity arithmetic', () => {
  it.each([
    { name: 'equal across suffixes', a: '1Gi', b: '1024Mi', want: 0 },
    { name: 'milli vs unit', a: '1', b: '999m', want: 1 },
    { name: 'less', a: '100m', b: '0.2', want: -1 },
    { name: 'negative vs positive', a: '-1', b: '1m', want: -1 },
    { name: 'huge exponent', a: '1e100', b: '123456789', want: 1 },
    { name: 'negative magnitudes', a: '-1e100', b: '-1', want: -1 },
    { name: 'zero', a: '0', b: '0m', want: 0 },
  ])('cmp: $name', ({ a, b, want }) => {
    expect(Quantity.parse(a).cmp(Quantity.parse(b))).toBe(want);
    expect(Quantity.parse(b).cmp(Quantity.parse(a))).toBe(want === 0 ? 0 : -want);
  });

  it.each([
    { name: 'unit plus milli', a: '1', b: '500m', add: '1500m', sub: '500m' },
    { name: 'binary', a: '1Gi', b: '1Gi', add: '2Gi', sub: '0' },
    { name: 'zero takes the other format', a: '0', b: '1Gi', add: '1Gi', sub: '-1Gi' },
    { name: 'keeps the left format', a: '1k', b: '1Ki', add: '2024', sub: '-24' },
    { name: 'exponents', a: '1e3', b: '1e-3', add: '1000001e-3', sub: '999999e-3' },
  ])('add and sub: $name', ({ a, b, add, sub }) => {
    const [x, y] = [Quantity.parse(a), Quantity.parse(b)];
    expect({ add: x.add(y).toString(), sub: x.sub(y).toString() }).toEqual({ add, sub });
    expect(x.toString()).toBe(Quantity.parse(a).toString());
  });

  it.each([
    { name: 'value', q: Quantity.fromValue(1024, 'BinarySI'), want: '1Ki' },
    { name: 'value below 1024', q: Quantity.fromValue(1023, 'BinarySI'), want: '1023' },
    { name: 'milli', q: Quantity.fromMilliValue(1500), want: '1500m' },
    { name: 'milli to unit', q: Quantity.fromMilliValue(3000), want: '3' },
    { name: 'neg', q: Quantity.parse('2Gi').neg(), want: '-2Gi' },
  ])('constructors: $name', ({ q, want }) => {
    expect(q.toString()).toBe(want);
    expect(JSON.stringify({ q })).toBe(`{"q":"${want}"}`);
  });
});
