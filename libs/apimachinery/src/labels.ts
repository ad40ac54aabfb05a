import { FieldError, StatusError } from './errors';
import { isQualifiedName, isValidLabelValue } from './names';

// Label selectors with the semantics of upstream k8s.io/apimachinery/pkg/labels:
// the query-string syntax (`a=b,c in (x,y),!d`) and the metav1.LabelSelector object form.

/** Operators as upstream selection.Operator spells them. */
export type LabelOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

/** One ANDed term of a selector. `values` are sorted and unique when parsed. */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  readonly values: readonly string[];
}

export type Labels = Readonly<Record<string, string>>;

/**
 * An immutable label selector: the AND of its requirements, sorted by key.
 * `LabelSelector.nothing()` (from a null metav1.LabelSelector) matches no object at all.
 */
export class LabelSelector {
  private static readonly EVERYTHING = new LabelSelector([]);
  private static readonly NOTHING = new LabelSelector(null);

  private constructor(private readonly reqs: readonly LabelRequirement[] | null) {}

  /** Matches every label set (the empty selector). */
  static everything(): LabelSelector {
    return LabelSelector.EVERYTHING;
  }

  /** Matches no label set; `empty()` is false and `toString()` is "" as upstream. */
  static nothing(): LabelSelector {
    return LabelSelector.NOTHING;
  }

  /** Builds a selector from validated requirements (sorted by key here). */
  static of(reqs: readonly LabelRequirement[]): LabelSelector {
    if (reqs.length === 0) return LabelSelector.EVERYTHING;
    return new LabelSelector([...reqs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)));
  }

  /** True when every requirement holds for `labels` (missing labels count as absent). */
  matches(labels: Labels | undefined): boolean {
    if (this.reqs === null) return false;
    const ls = labels ?? {};
    return this.reqs.every((r) => requirementMatches(r, ls));
  }

  /** True when the selector does not restrict anything. */
  empty(): boolean {
    return this.reqs !== null && this.reqs.length === 0;
  }

  /** The requirements, sorted by key; empty for both everything() and nothing(). */
  requirements(): readonly LabelRequirement[] {
    return this.reqs ?? [];
  }

  /** The single value `key` must equal (`key=v`, `key==v`, `key in (v)`), if the selector requires one. */
  requiresExactMatch(key: string): string | undefined {
    const r = this.reqs?.find((x) => x.key === key);
    if (!r || r.values.length !== 1 || !['=', '==', 'in'].includes(r.operator)) return undefined;
    return r.values[0];
  }

  /** Canonical query-string form, e.g. `a=b,c in (x,y),!d`. */
  toString(): string {
    return (this.reqs ?? []).map(requirementString).join(',');
  }
}

function requirementMatches(r: LabelRequirement, labels: Labels): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  switch (r.operator) {
    case '=':
    case '==':
    case 'in':
      return has && r.values.includes(labels[r.key]);
    case '!=':
    case 'notin':
      return !has || !r.values.includes(labels[r.key]);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has || r.values.length !== 1) return false;
      const have = parseInt64(labels[r.key]);
      const want = parseInt64(r.values[0]);
      if (have === undefined || want === undefined) return false;
      return r.operator === 'gt' ? have > want : have < want;
    }
  }
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Go strconv.ParseInt(s, 10, 64). */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const v = BigInt(s);
  return v < INT64_MIN || v > INT64_MAX ? undefined : v;
}

function requirementString(r: LabelRequirement): string {
  const values = r.values.length === 1 ? r.values[0] : [...r.values].sort().join(',');
  switch (r.operator) {
    case '!':
      return `!${r.key}`;
    case 'exists':
      return r.key;
    case 'in':
      return `${r.key} in (${values})`;
    case 'notin':
      return `${r.key} notin (${values})`;
    case 'gt':
      return `${r.key}>${values}`;
    case 'lt':
      return `${r.key}<${values}`;
    default:
      return `${r.key}${r.operator}${values}`;
  }
}

/**
 * upstream NewRequirement: checks the key, the number of values for the operator and each
 * value's syntax. Returns the problems in upstream's field.Error text form.
 */
function requirementErrors(key: string, op: LabelOperator, values: readonly string[]): string[] {
  const errs: FieldError[] = [];
  const keyErrs = isQualifiedName(key);
  if (keyErrs.length) errs.push(FieldError.invalid('key', key, keyErrs.join('; ')));
  switch (op) {
    case 'in':
    case 'notin':
      if (values.length === 0) errs.push(FieldError.invalid('values', values, "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1) errs.push(FieldError.invalid('values', values, 'exact-match compatibility requires one single value'));
      break;
    case 'exists':
    case '!':
      if (values.length !== 0) errs.push(FieldError.invalid('values', values, 'values set must be empty for exists and does not exist'));
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1) errs.push(FieldError.invalid('values', values, "for 'Gt', 'Lt' operators, exactly one value is required"));
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) errs.push(FieldError.invalid(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
      });
      break;
  }
  values.forEach((v, i) => {
    const valueErrs = isValidLabelValue(v);
    if (valueErrs.length) errs.push(FieldError.invalid(`values[${i}][${key}]`, v, valueErrs.join('; ')));
  });
  return errs.map((e) => e.toString());
}

/** Joins errors as upstream utilerrors.Aggregate does. */
function aggregate(msgs: string[]): string {
  return msgs.length === 1 ? msgs[0] : `[${msgs.join(', ')}]`;
}

// ---------------------------------------------------------------- lexer

type Token =
  | 'error'
  | 'eos'
  | 'closedPar'
  | 'comma'
  | 'doesNotExist'
  | 'doubleEquals'
  | 'equals'
  | 'greaterThan'
  | 'identifier'
  | 'in'
  | 'lessThan'
  | 'notEquals'
  | 'notIn'
  | 'openPar';

interface Scanned {
  tok: Token;
  lit: string;
}

const STRING_TO_TOKEN: Record<string, Token> = {
  ')': 'closedPar',
  ',': 'comma',
  '!': 'doesNotExist',
  '==': 'doubleEquals',
  '=': 'equals',
  '>': 'greaterThan',
  in: 'in',
  '<': 'lessThan',
  '!=': 'notEquals',
  notin: 'notIn',
  '(': 'openPar',
};

const BINARY_OPERATORS = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];
const BINARY_OPERATOR_TOKENS: Partial<Record<Token, LabelOperator>> = {
  in: 'in',
  notIn: 'notin',
  equals: '=',
  doubleEquals: '==',
  notEquals: '!=',
  greaterThan: 'gt',
  lessThan: 'lt',
};

function isWhitespace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
}

function isSpecialSymbol(ch: string): boolean {
  return ch === '=' || ch === '!' || ch === '(' || ch === ')' || ch === ',' || ch === '>' || ch === '<';
}

function tokenOf(s: string): Token | undefined {
  return Object.prototype.hasOwnProperty.call(STRING_TO_TOKEN, s) ? STRING_TO_TOKEN[s] : undefined;
}

/** upstream Lexer: longest-match operators, identifiers up to whitespace or an operator character. */
function lex(s: string): Scanned[] {
  const out: Scanned[] = [];
  let pos = 0;
  for (;;) {
    while (pos < s.length && isWhitespace(s[pos])) pos++;
    if (pos >= s.length) {
      out.push({ tok: 'eos', lit: '' });
      return out;
    }
    if (isSpecialSymbol(s[pos])) {
      let buffer = '';
      let last: Scanned | undefined;
      while (pos < s.length && isSpecialSymbol(s[pos])) {
        buffer += s[pos];
        const tok = tokenOf(buffer);
        if (tok) last = { tok, lit: buffer };
        else if (last) break;
        pos++;
      }
      out.push(last ?? { tok: 'error', lit: `error expected: keyword found '${buffer}'` });
    } else {
      const start = pos;
      while (pos < s.length && !isSpecialSymbol(s[pos]) && !isWhitespace(s[pos])) pos++;
      const lit = s.slice(start, pos);
      out.push({ tok: tokenOf(lit) ?? 'identifier', lit });
    }
  }
}

// ---------------------------------------------------------------- parser

class SelectorParseError extends Error {}

/** upstream Parser: recursive descent over the scanned tokens; `in`/`notin` are identifiers in value position. */
class Parser {
  private position = 0;

  constructor(private readonly items: Scanned[]) {}

  private lookahead(values: boolean): Scanned {
    return asValue(this.items[this.position], values);
  }

  private consume(values: boolean): Scanned {
    return asValue(this.items[this.position++], values);
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead(true);
      if (tok === 'eos') return reqs;
      if (tok !== 'identifier' && tok !== 'doesNotExist') throw new SelectorParseError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      try {
        reqs.push(this.parseRequirement());
      } catch (e) {
        if (e instanceof SelectorParseError) throw new SelectorParseError(`unable to parse requirement: ${e.message}`);
        throw e;
      }
      const next = this.consume(true);
      if (next.tok === 'eos') return reqs;
      if (next.tok !== 'comma') throw new SelectorParseError(`found '${next.lit}', expected: ',' or 'end of string'`);
      const after = this.lookahead(true);
      if (after.tok !== 'identifier' && after.tok !== 'doesNotExist') throw new SelectorParseError(`found '${after.lit}', expected: identifier after ','`);
    }
  }

  private parseRequirement(): LabelRequirement {
    const { key, operator } = this.parseKeyAndInferOperator();
    if (operator === 'exists' || operator === '!') return newRequirement(key, operator, []);
    const op = this.parseOperator();
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    return newRequirement(key, op, [...values].sort());
  }

  private parseKeyAndInferOperator(): { key: string; operator?: LabelOperator } {
    let operator: LabelOperator | undefined;
    let { tok, lit } = this.consume(true);
    if (tok === 'doesNotExist') {
      operator = '!';
      ({ tok, lit } = this.consume(true));
    }
    if (tok !== 'identifier') throw new SelectorParseError(`found '${lit}', expected: identifier`);
    const keyErrs = isQualifiedName(lit);
    if (keyErrs.length) throw new SelectorParseError(FieldError.invalid('<nil>', lit, keyErrs.join('; ')).toString());
    const next = this.lookahead(true).tok;
    if ((next === 'eos' || next === 'comma') && operator !== '!') operator = 'exists';
    return { key: lit, operator };
  }

  private parseOperator(): LabelOperator {
    const { tok, lit } = this.consume(false);
    const op = BINARY_OPERATOR_TOKENS[tok];
    if (!op) throw new SelectorParseError(`found '${lit}', expected: ${BINARY_OPERATORS.join(', ')}`);
    return op;
  }

  private parseValues(): Set<string> {
    const open = this.consume(true);
    if (open.tok !== 'openPar') throw new SelectorParseError(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.lookahead(true);
    if (tok === 'identifier' || tok === 'comma') {
      const s = this.parseIdentifiersList();
      if (this.consume(true).tok !== 'closedPar') throw new SelectorParseError(`found '${lit}', expected: ')'`);
      return s;
    }
    if (tok === 'closedPar') {
      this.consume(true);
      return new Set(['']);
    }
    throw new SelectorParseError(`found '${lit}', expected: ',', ')' or identifier`);
  }

  /** A comma-separated list of possibly empty identifiers: `(a,,b)` and `(,a)` contain "". */
  private parseIdentifiersList(): Set<string> {
    const s = new Set<string>();
    for (;;) {
      const { tok, lit } = this.consume(true);
      if (tok === 'identifier') {
        s.add(lit);
        const next = this.lookahead(true);
        if (next.tok === 'comma') continue;
        if (next.tok === 'closedPar') return s;
        throw new SelectorParseError(`found '${next.lit}', expected: ',' or ')'`);
      }
      if (tok === 'comma') {
        if (s.size === 0) s.add('');
        const next = this.lookahead(true).tok;
        if (next === 'closedPar') {
          s.add('');
          return s;
        }
        if (next === 'comma') {
          this.consume(true);
          s.add('');
        }
        continue;
      }
      throw new SelectorParseError(`found '${lit}', expected: ',', or identifier`);
    }
  }

  private parseExactValue(): Set<string> {
    const next = this.lookahead(true).tok;
    if (next === 'eos' || next === 'comma') return new Set(['']);
    const { tok, lit } = this.consume(true);
    if (tok === 'identifier') return new Set([lit]);
    throw new SelectorParseError(`found '${lit}', expected: identifier`);
  }
}

function asValue(item: Scanned, values: boolean): Scanned {
  return values && (item.tok === 'in' || item.tok === 'notIn') ? { tok: 'identifier', lit: item.lit } : item;
}

function newRequirement(key: string, operator: LabelOperator, values: string[]): LabelRequirement {
  const errs = requirementErrors(key, operator, values);
  if (errs.length) throw new SelectorParseError(aggregate(errs));
  return { key, operator, values };
}

/**
 * Parses the query-string selector syntax (upstream labels.Parse). Whitespace is free,
 * commas AND the terms. A malformed selector is a 400 naming the selector and the problem.
 */
export function parseLabelSelector(s: string): LabelSelector {
  try {
    return LabelSelector.of(new Parser(lex(s)).parse());
  } catch (e) {
    if (e instanceof SelectorParseError) throw StatusError.badRequest(`invalid label selector ${JSON.stringify(s)}: ${e.message}`);
    throw e;
  }
}

/** A selector matching exactly the given labels (upstream SelectorFromSet; no validation). */
export function labelSelectorFromSet(set: Labels | undefined): LabelSelector {
  return LabelSelector.of(Object.entries(set ?? {}).map(([key, value]) => ({ key, operator: '=' as const, values: [value] })));
}

// ---------------------------------------------------------------- metav1.LabelSelector

export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirementObject {
  key: string;
  /** A LabelSelectorOperator once validated (validateLabelSelectorObject); any string on the wire. */
  operator: LabelSelectorOperator | (string & {});
  values?: string[];
}

/** The metav1.LabelSelector object form used in specs (`spec.selector`). */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirementObject[];
}

const OBJECT_OPERATORS: Record<LabelSelectorOperator, LabelOperator> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/** upstream ValidateLabelName: the key of a label. */
export function validateLabelName(name: string, field: string): FieldError[] {
  return isQualifiedName(name).map((m) => FieldError.invalid(field, name, m));
}

/** upstream ValidateLabels: every key is a qualified name, every value a label value. */
export function validateLabels(labels: Labels | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels ?? {})) {
    errs.push(...validateLabelName(k, field));
    errs.push(...isValidLabelValue(v).map((m) => FieldError.invalid(field, v, m)));
  }
  return errs;
}

/** upstream ValidateLabelSelector for a metav1.LabelSelector at `field` (e.g. `spec.selector`). */
export function validateLabelSelectorObject(sel: LabelSelectorObject | null | undefined, field: string): FieldError[] {
  if (!sel) return [];
  const errs = validateLabels(sel.matchLabels, `${field}.matchLabels`);
  (sel.matchExpressions ?? []).forEach((expr, i) => {
    const path = `${field}.matchExpressions[${i}]`;
    const values = expr.values ?? [];
    switch (expr.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) errs.push(FieldError.required(`${path}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) errs.push(FieldError.forbidden(`${path}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        errs.push(FieldError.invalid(`${path}.operator`, expr.operator, 'not a valid selector operator'));
    }
    errs.push(...validateLabelName(expr.key, `${path}.key`));
    values.forEach((v, j) => errs.push(...isValidLabelValue(v).map((m) => FieldError.invalid(`${path}.values[${j}]`, v, m))));
  });
  return errs;
}

/**
 * upstream LabelSelectorAsSelector: null/undefined selects nothing, `{}` selects everything.
 * An invalid selector is a 400 whose causes are the validation errors (field `selector`).
 */
export function labelSelectorFromObject(sel: LabelSelectorObject | null | undefined): LabelSelector {
  if (!sel) return LabelSelector.nothing();
  const errs = validateLabelSelectorObject(sel, 'selector');
  if (errs.length) {
    throw StatusError.badRequest(
      `invalid label selector: ${aggregate(errs.map((e) => e.toString()))}`,
      errs.map((e) => ({ reason: e.type, message: e.detailMessage(), field: e.field })),
    );
  }
  const reqs: LabelRequirement[] = Object.entries(sel.matchLabels ?? {}).map(([key, value]) => ({ key, operator: '=', values: [value] }));
  for (const expr of sel.matchExpressions ?? []) {
    reqs.push({ key: expr.key, operator: OBJECT_OPERATORS[expr.operator as LabelSelectorOperator], values: [...(expr.values ?? [])] });
  }
  return LabelSelector.of(reqs);
}

/** The query-string form of a metav1.LabelSelector (for `?labelSelector=`); `{}` gives "". */
export function labelSelectorObjectToString(sel: LabelSelectorObject): string {
  return labelSelectorFromObject(sel).toString();
}

/**
 * upstream ParseToLabelSelector: the object form of a selector. `=`/`==` become matchLabels;
 * `!=`, `gt` and `lt` have no object form and are a 400.
 */
export function labelSelectorToObject(selector: LabelSelector): LabelSelectorObject {
  const out: LabelSelectorObject = { matchLabels: {}, matchExpressions: [] };
  for (const r of selector.requirements()) {
    switch (r.operator) {
      case '=':
      case '==':
        out.matchLabels![r.key] = r.values[0];
        break;
      case 'in':
        out.matchExpressions!.push({ key: r.key, operator: 'In', values: [...r.values] });
        break;
      case 'notin':
        out.matchExpressions!.push({ key: r.key, operator: 'NotIn', values: [...r.values] });
        break;
      case 'exists':
        out.matchExpressions!.push({ key: r.key, operator: 'Exists' });
        break;
      case '!':
        out.matchExpressions!.push({ key: r.key, operator: 'DoesNotExist' });
        break;
      case 'gt':
      case 'lt':
        throw StatusError.badRequest(`"${r.operator}" isn't supported in label selectors`);
      default:
        throw StatusError.badRequest(`"${r.operator}" is not a valid label selector operator`);
    }
  }
  return out;
}
