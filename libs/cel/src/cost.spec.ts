// Cost figures (SPEC "Limits": comparison 1 unit, list literal 40 base units, regex
// length(regex) × length(input)), the estimate refused at compile time (SPEC Errors 4), the
// runtime limit, and that an estimate is never below the actual cost within the schema's bounds.

import { ESTIMATED_COST_LIMIT, PER_CALL_COST_LIMIT } from './cost';
import { CelEnvironment } from './environment';
import { CelCostEstimateError, CelCostLimitError } from './errors';
import type { CelSchema } from './schema';

const self: CelSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 10 },
    items: { type: 'array', maxItems: 5, items: { type: 'string', maxLength: 4 } },
    labels: { type: 'object', maxProperties: 3, additionalProperties: { type: 'string', maxLength: 8 } },
    unbounded: { type: 'array', items: { type: 'string' } },
    n: { type: 'integer' },
  },
};
const env = new CelEnvironment({ variables: [{ name: 'self', schema: self }, { name: 'xs', type: 'list<int>' }] });
const value = { name: 'abc', items: ['a', 'bb', 'ccc'], labels: { a: 'x' }, unbounded: [], n: 2 };

function actual(expression: string, activation: Record<string, unknown> = {}): number {
  const r = env.compile(expression).evaluate({ self: env.toCel(value, self), xs: [], ...activation });
  if (r instanceof Promise) throw new Error('unexpected async');
  return r.cost;
}

describe('unit costs', () => {
  it.each([
    // expression, estimated worst case, actual on `value`
    ['1 == 2', 1, 1],
    ['1 < 2 && 2 <= 3', 2, 2],
    ['[1, 2, 3] == [1, 2, 3]', 81, 81],
    ['size([1, 2, 3])', 41, 41],
    ['{"a": 1}.a == 1', 32, 32],
    ['self.n == 2', 3, 3],
    // regex: 1 call + receiver (2) + length(regex) × length(input): 4 × 10 estimated, 4 × 3 actual
    ['self.name.matches("a.*c")', 43, 15],
    ['self.name.find("[a-z]")', 5 * 10 + 3, 5 * 3 + 3],
    // comprehension: call 1 + receiver 2 + items × (identifier 1 + comparison 1 + literal 0)
    ['self.items.all(i, i == "a")', 1 + 2 + 5 * 2, 1 + 2 + 2 * 2], // stops at the second item
    ['self.items.exists(i, i == "a")', 1 + 2 + 5 * 2, 1 + 2 + 1 * 2], // stops at the first item
    ['self.labels.all(k, k.size() < 3)', 1 + 2 + 3 * 3, 1 + 2 + 1 * 3],
  ])('%s: estimated %d, actual %d', (expression, estimated, cost) => {
    expect(env.compile(expression).estimatedCost).toBe(estimated);
    expect(actual(expression)).toBe(cost);
  });
});

describe('estimated cost budget (checked when the object holding the rule is written)', () => {
  it('refuses a rule over an unbounded list with the factor it exceeds by', () => {
    const expression = 'self.unbounded.all(x, x.matches("^[a-z]+$"))';
    expect(() => env.compile(expression, { costBudget: ESTIMATED_COST_LIMIT })).toThrow(CelCostEstimateError);
    expect(() => env.compile(expression, { costBudget: ESTIMATED_COST_LIMIT })).toThrow(/estimated rule cost exceeds budget by factor of/);
  });

  it('accepts the same rule once the list and strings are bounded', () => {
    expect(env.compile('self.items.all(x, x.matches("^[a-z]+$"))', { costBudget: ESTIMATED_COST_LIMIT }).estimatedCost).toBeLessThan(ESTIMATED_COST_LIMIT);
  });
});

describe('runtime cost limit', () => {
  const big = Array.from({ length: 2000 }, (_, i) => BigInt(i));

  it('halts an evaluation whose cost passes the limit', () => {
    const program = env.compile('xs.map(x, xs.map(y, x * y)).size() > 0');
    expect(() => program.evaluate({ self: {}, xs: big })).toThrow(CelCostLimitError);
    expect(() => program.evaluate({ self: {}, xs: big })).toThrow('operation cancelled: actual cost limit exceeded');
  });

  it('lets the same program finish on small input, and honours a caller limit', () => {
    const program = env.compile('xs.map(x, xs.map(y, x * y)).size() > 0');
    const r = program.evaluate({ self: {}, xs: big.slice(0, 10) });
    expect(r).toEqual({ value: true, cost: expect.any(Number) });
    expect((r as { cost: number }).cost).toBeLessThan(PER_CALL_COST_LIMIT);
    expect(() => program.evaluate({ self: {}, xs: big.slice(0, 10) }, { costLimit: 50 })).toThrow(CelCostLimitError);
  });
});

describe('an estimate bounds the actual cost at the schema maximum', () => {
  const atMax = { name: 'aaaaaaaaaa', items: ['aaaa', 'aaaa', 'aaaa', 'aaaa', 'aaaa'], labels: { aaaaaaaa: 'aaaaaaaa', b: 'bbbbbbbb', c: 'cccccccc' }, unbounded: [], n: 1 };
  it.each([
    'self.name.matches("a+") && self.name.startsWith("a")',
    'self.items.all(i, i.matches("^a") && i.size() == 4)',
    'self.items.map(i, i + "x").exists(j, j.contains("x"))',
    'self.labels.exists(k, self.labels[k].lowerAscii() == "x")',
    'self.items.filter(i, i in ["aaaa"]).size() == 5',
    'self.name.split("a").size() > 0 || self.name.replace("a", "b") == ""',
    'cel.bind(n, self.items.size(), n * 2 > 3)',
    '"%s".format([self.name]).size() > 0',
    'self.?name.orValue("") != "" && has(self.items)',
  ])('%s', (expression) => {
    const program = env.compile(expression);
    const r = program.evaluate({ self: env.toCel(atMax, self), xs: [] });
    if (r instanceof Promise) throw new Error('unexpected async');
    expect(r.cost).toBeLessThanOrEqual(program.estimatedCost);
  });
});

describe('the estimate of a dynamic variable given a schema (estimatedCostWith)', () => {
  // `object` is declared dynamic (as admission expressions' is): its estimate assumes a value of any shape up to the largest request.
  const dynEnv = new CelEnvironment({ variables: [{ name: 'object' }, { name: 'other' }] });
  it.each([
    // expression, estimate with `object` of schema `self`, and whether the dynamic estimate passes the per-call limit
    ["'a' in object.labels", 3, true],
    ['object.name.matches("a.*c")', 43, true],
    ['object.items.exists(i, i == "bb")', 1 + 2 + 5 * 2, true],
    ['object.unbounded.exists(i, i == "bb")', undefined, true],
    ["object.n == 2 && 'a' in other", undefined, true],
  ])('%s', (expression, withSchema, dynOverLimit) => {
    const p = dynEnv.compile(expression);
    expect(p.estimatedCost > PER_CALL_COST_LIMIT).toBe(dynOverLimit);
    const typed = p.estimatedCostWith({ object: self });
    if (withSchema === undefined) expect(typed).toBeGreaterThan(PER_CALL_COST_LIMIT);
    else expect(typed).toBe(withSchema);
    // A schema for a variable the environment does not declare changes nothing.
    expect(p.estimatedCostWith({ nothing: self })).toBe(p.estimatedCost);
  });
});

describe('the estimate with a size cap (estimatedCostWith sizeCap) bounds the cost of values within the cap', () => {
  const dynEnv = new CelEnvironment({ variables: [{ name: 'object' }] });
  const open: CelSchema = { type: 'object', properties: { name: { type: 'string' }, labels: { type: 'object', additionalProperties: { type: 'string' } }, items: { type: 'array', items: { type: 'string' } } } };
  const cap = 64;
  const full = 'a'.repeat(cap);
  const atCap = { name: full, labels: Object.fromEntries(Array.from({ length: cap }, (_, i) => [`${i}`.padStart(cap, 'a'), full])), items: Array.from({ length: cap }, () => full) };
  it.each([
    'object.name.matches("^a+$")',
    'object.labels.all(k, k.startsWith("a") && k.matches("a+"))',
    'object.labels.exists(k, object.labels[k].contains("b"))',
    'object.items.all(i, i.matches("^a") && i.size() == 64)',
    'object.items.map(i, i + "x").exists(j, j.endsWith("y"))',
  ])('%s', (expression) => {
    const p = dynEnv.compile(expression);
    const capped = p.estimatedCostWith({ object: open }, cap);
    expect(capped).toBeLessThan(p.estimatedCostWith({ object: open }));
    const r = p.evaluate({ object: dynEnv.toCel(atCap, open) });
    if (r instanceof Promise) throw new Error('unexpected async');
    expect(r.cost).toBeLessThanOrEqual(capped);
  });
});
