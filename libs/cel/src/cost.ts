// Expression cost (SPEC "Limits": comparison 1 unit, list literal 40 base units, regex
// length(regex) × length(input); SPEC "Errors" 4). One table of unit costs serves both the
// static estimator (worst case over every value the declared schemas admit) and the runtime
// tracker (program.ts), so that an estimate is never below the cost actually charged for an
// input within the schema's bounds.

import { childSchema, maxSize, resolveSchema, schemaKind, type CelSchema, type SchemaContext } from './schema';

/** Runtime cost limit of one evaluation (upstream PerCallLimit). */
export const PER_CALL_COST_LIMIT = 1_000_000;
/** Estimated cost limit of one rule (upstream StaticEstimatedCostLimit). */
export const ESTIMATED_COST_LIMIT = 10_000_000;
/** Runtime budget shared by every rule evaluated for one object or one policy (upstream RuntimeCELCostBudget). */
export const RUNTIME_COST_BUDGET = 10_000_000;

/** Unit costs. */
export const COST = {
  /** A literal. */
  constant: 0,
  /** A variable, field selection or index. */
  select: 1,
  /** `==`, `!=`, `<`, `<=`, `>`, `>=` (SPEC). */
  comparison: 1,
  /** Arithmetic, negation, `in`, a function call. */
  call: 1,
  /** A list literal (SPEC), before its elements. */
  listLiteral: 40,
  /** A map literal, before its entries. */
  mapLiteral: 30,
  /** Per character of the strings a string function walks. */
  stringTraversalFactor: 0.1,
  /** An authorization check (it may reach another process). */
  authorizationCheck: 350_000,
} as const;

const COMPARISONS = new Set(['==', '!=', '<', '<=', '>', '>=']);
const ARITHMETIC = new Set(['+', '-', '*', '/', '%', 'in']);

/** Macros: how many surface arguments are per-iteration bodies (after the iteration variable). */
const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'filter', 'map']);

/** Functions whose cost grows with the strings they walk (receiver and arguments). */
const STRING_FUNCTIONS = new Set([
  'contains', 'startsWith', 'endsWith', 'indexOf', 'lastIndexOf', 'charAt', 'lowerAscii', 'upperAscii', 'replace', 'split',
  'substring', 'trim', 'join', 'quote', 'format', 'string', 'bytes', 'url', 'isURL', 'quantity', 'isQuantity', 'int', 'uint',
  'double', 'timestamp', 'duration', 'getQuery', 'getEscapedPath',
]);
/** Functions whose cost grows with the list they walk. */
const LIST_FUNCTIONS = new Set(['sum', 'min', 'max', 'isSorted', 'indexOf', 'lastIndexOf']);
/** Regular-expression functions: length(regex) × length(input). */
const REGEX_FUNCTIONS = new Set(['matches', 'find', 'findAll']);

/** A size that stands for "a value of this kind of unknown content". */
export type ValueKind = 'string' | 'bytes' | 'list' | 'map' | 'other' | 'unknown';

/** Size of a value at run time: characters, bytes, items or entries; 1 for other values. */
export function runtimeSize(v: unknown): number {
  if (typeof v === 'string' || v instanceof Uint8Array || Array.isArray(v)) return v.length;
  if (v instanceof Set || v instanceof Map) return v.size;
  if (v && typeof v === 'object' && (Object.getPrototypeOf(v) === null || Object.getPrototypeOf(v) === Object.prototype)) return Object.keys(v).length;
  return 1;
}

function traversal(chars: number): number {
  return Math.ceil(chars * COST.stringTraversalFactor);
}

/**
 * The cost a function call adds to its fixed call cost, from the sizes of its receiver and
 * arguments (`receiver` undefined for a global call). The same formula is used with estimated
 * maximum sizes and with actual sizes.
 */
export function functionCost(name: string, receiverSize: number | undefined, argSizes: readonly number[], receiverKind?: ValueKind): number {
  if (REGEX_FUNCTIONS.has(name)) {
    // receiver form: input.matches(regex); global form: matches(input, regex)
    const [input, regex] = receiverSize !== undefined ? [receiverSize, argSizes[0] ?? 0] : [argSizes[0] ?? 0, argSizes[1] ?? 0];
    return input * regex;
  }
  if (name === 'check' && receiverKind === 'other') return COST.authorizationCheck;
  if (LIST_FUNCTIONS.has(name) && receiverKind === 'list') return receiverSize ?? 0;
  if (STRING_FUNCTIONS.has(name)) return traversal((receiverSize ?? 0) + argSizes.reduce((a, b) => a + b, 0));
  return 0;
}

/** Whether a call's cost depends on the sizes of its operands (so the runtime must see them). */
export function isSizeDependent(name: string): boolean {
  return REGEX_FUNCTIONS.has(name) || LIST_FUNCTIONS.has(name) || STRING_FUNCTIONS.has(name) || name === 'check' || name === '+' || name === 'in';
}

/** Cost of `left op right` beyond its operands, from their sizes and kinds. */
export function operatorCost(op: string, left: { size: number; kind: ValueKind }, right: { size: number; kind: ValueKind }): number {
  if (COMPARISONS.has(op)) return COST.comparison;
  if (op === '+' && (left.kind === 'string' || left.kind === 'bytes' || left.kind === 'unknown')) return COST.call + traversal(left.size + right.size);
  if (op === 'in' && (right.kind === 'list' || right.kind === 'unknown')) return COST.call + right.size;
  return COST.call;
}

export function runtimeKind(v: unknown): ValueKind {
  if (typeof v === 'string') return 'string';
  if (v instanceof Uint8Array) return 'bytes';
  if (Array.isArray(v) || v instanceof Set) return 'list';
  if (v instanceof Map || (v && typeof v === 'object' && (Object.getPrototypeOf(v) === null || Object.getPrototypeOf(v) === Object.prototype))) return 'map';
  return 'other';
}

// ---------------------------------------------------------------------------------------------
// Static estimate

/** The parts of the engine's syntax tree the estimator reads. */
export interface AstNode {
  readonly op: string;
  readonly args: any;
}

/** What the estimator knows of a variable: its schema (for sizes and fields), or nothing (dyn). */
export interface EstimateVariable {
  readonly schema?: CelSchema;
  /** The value's kind when it has no schema (`authorizer` is `other`). */
  readonly kind?: ValueKind;
}

interface Estimate {
  /** Worst-case cost. */
  cost: number;
  /** Worst-case size of the value (characters, items, entries). */
  size: number;
  kind: ValueKind;
  /** Schema of the value, when known (for field selection and element sizes). */
  schema?: CelSchema;
}

/**
 * Worst-case cost of evaluating `ast` once, for any values of the variables their schemas
 * admit (sizes without a declared maximum are bounded by the largest request body).
 * `sizeCap`: a bound of every size within the values of the variables that have a schema
 * (characters, bytes, items, entries, and the length of a map's keys, as {@link runtimeSize}
 * counts them; see CelValueConverter.largestSize); the estimate then holds for such values only.
 */
export function estimateCost(ast: AstNode, variables: ReadonlyMap<string, EstimateVariable>, ctx: SchemaContext = {}, sizeCap = Infinity): number {
  return new Estimator(variables, ctx, sizeCap).estimate(ast, new Map()).cost;
}

const UNKNOWN_SIZE = maxSize(undefined);

class Estimator {
  constructor(
    private readonly variables: ReadonlyMap<string, EstimateVariable>,
    private readonly ctx: SchemaContext,
    private readonly sizeCap: number,
  ) {}

  private fromSchema(schema: CelSchema | undefined, cost: number): Estimate {
    if (!schema) return { cost, size: UNKNOWN_SIZE, kind: 'unknown' };
    const s = resolveSchema(schema, this.ctx);
    const k = schemaKind(s);
    const kind: ValueKind = k === 'string' ? 'string' : k === 'bytes' ? 'bytes' : k === 'list' ? 'list' : k === 'map' || k === 'object' ? 'map' : k === 'dyn' || k === 'int-or-string' ? 'unknown' : 'other';
    return { cost, size: kind === 'other' ? 1 : Math.min(maxSize(s, this.ctx), this.sizeCap), kind, schema };
  }

  estimate(node: AstNode, scope: ReadonlyMap<string, Estimate>): Estimate {
    const { op, args } = node;
    switch (op) {
      case 'value': {
        const v = args;
        return { cost: COST.constant, size: runtimeSize(v), kind: runtimeKind(v) === 'other' ? 'other' : runtimeKind(v) };
      }
      case 'id': {
        const bound = scope.get(args);
        if (bound) return { ...bound, cost: COST.select };
        const variable = this.variables.get(args);
        if (variable?.schema) return this.fromSchema(variable.schema, COST.select);
        if (variable?.kind) return { cost: COST.select, size: variable.kind === 'other' ? 1 : UNKNOWN_SIZE, kind: variable.kind };
        return { cost: COST.select, size: UNKNOWN_SIZE, kind: 'unknown' };
      }
      case '.':
      case '.?': {
        const obj = this.estimate(args[0], scope);
        const child = obj.schema ? childSchema(obj.schema, { field: args[1] }, this.ctx) : undefined;
        const out = child ? this.fromSchema(child, 0) : { cost: 0, size: obj.kind === 'other' ? 1 : UNKNOWN_SIZE, kind: 'unknown' as ValueKind };
        return { ...out, cost: obj.cost + COST.select };
      }
      case '[]':
      case '[?]': {
        const obj = this.estimate(args[0], scope);
        const idx = this.estimate(args[1], scope);
        const child = obj.schema ? childSchema(obj.schema, { index: true }, this.ctx) : undefined;
        const out = child ? this.fromSchema(child, 0) : { cost: 0, size: obj.kind === 'string' ? obj.size : UNKNOWN_SIZE, kind: 'unknown' as ValueKind };
        return { ...out, cost: obj.cost + idx.cost + COST.select };
      }
      case 'list': {
        const items = (args as AstNode[]).map((a) => this.estimate(a, scope));
        return { cost: COST.listLiteral + sum(items.map((i) => i.cost)), size: items.length, kind: 'list' };
      }
      case 'map': {
        let cost = COST.mapLiteral;
        for (const [k, v] of args as [AstNode, AstNode][]) cost += this.estimate(k, scope).cost + this.estimate(v, scope).cost;
        return { cost, size: (args as unknown[]).length, kind: 'map' };
      }
      case '?:': {
        const [c, a, b] = (args as AstNode[]).map((x) => this.estimate(x, scope));
        const bigger = a.cost >= b.cost ? a : b;
        return { cost: c.cost + Math.max(a.cost, b.cost), size: Math.max(a.size, b.size), kind: a.kind === b.kind ? a.kind : 'unknown', schema: bigger.schema };
      }
      case '&&':
      case '||': {
        const [a, b] = (args as AstNode[]).map((x) => this.estimate(x, scope));
        return { cost: a.cost + b.cost, size: 1, kind: 'other' };
      }
      case '!_':
        return { cost: this.estimate(args, scope).cost, size: 1, kind: 'other' };
      case '-_':
        return { cost: this.estimate(args, scope).cost + COST.call, size: 1, kind: 'other' };
      case 'call':
        return this.call(args[0], undefined, args[1], scope);
      case 'rcall':
        return this.call(args[0], args[1], args[2], scope);
      default: {
        if (COMPARISONS.has(op) || ARITHMETIC.has(op)) {
          const [l, r] = (args as AstNode[]).map((x) => this.estimate(x, scope));
          const extra = operatorCost(op, l, r);
          const concat = op === '+' && (l.kind === 'list' || l.kind === 'string' || l.kind === 'bytes');
          return { cost: l.cost + r.cost + extra, size: concat ? l.size + r.size : 1, kind: concat ? l.kind : COMPARISONS.has(op) || op === 'in' ? 'other' : l.kind };
        }
        // Anything else the engine produces: count every operand once.
        return { cost: COST.call, size: UNKNOWN_SIZE, kind: 'unknown' };
      }
    }
  }

  private call(name: string, receiver: AstNode | undefined, argNodes: AstNode[], scope: ReadonlyMap<string, Estimate>): Estimate {
    // Macros first: their arguments are not all evaluated once.
    if (receiver && COMPREHENSIONS.has(name) && argNodes.length >= 2 && argNodes[0].op === 'id') {
      const recv = this.estimate(receiver, scope);
      const elementSchema = recv.schema ? childSchema(recv.schema, { index: true }, this.ctx) : undefined;
      const element = recv.kind === 'map' ? { cost: 0, size: recv.schema ? Math.min(UNKNOWN_SIZE, this.sizeCap) : UNKNOWN_SIZE, kind: 'string' as ValueKind } : elementSchema ? this.fromSchema(elementSchema, 0) : { cost: 0, size: UNKNOWN_SIZE, kind: 'unknown' as ValueKind };
      const inner = new Map(scope).set(argNodes[0].args, element);
      const body = sum(argNodes.slice(1).map((a) => this.estimate(a, inner).cost));
      const n = recv.size;
      return { cost: COST.call + recv.cost + n * body, size: name === 'map' || name === 'filter' ? n : 1, kind: name === 'map' || name === 'filter' ? 'list' : 'other' };
    }
    if (!receiver && name === 'has' && argNodes.length === 1) {
      const sel = argNodes[0];
      const obj = sel.op === '.' ? this.estimate(sel.args[0], scope).cost : this.estimate(sel, scope).cost;
      return { cost: COST.call + obj, size: 1, kind: 'other' };
    }
    if (receiver && receiver.op === 'id' && receiver.args === 'cel' && name === 'bind' && argNodes.length === 3 && argNodes[0].op === 'id') {
      const init = this.estimate(argNodes[1], scope);
      const body = this.estimate(argNodes[2], new Map(scope).set(argNodes[0].args, { ...init, cost: 0 }));
      return { ...body, cost: init.cost + body.cost };
    }
    if (receiver && (name === 'optMap' || name === 'optFlatMap') && argNodes.length === 2 && argNodes[0].op === 'id') {
      const recv = this.estimate(receiver, scope);
      const body = this.estimate(argNodes[1], new Map(scope).set(argNodes[0].args, { ...recv, cost: 0 }));
      return { ...body, cost: COST.call + recv.cost + body.cost };
    }
    const recv = receiver ? this.estimate(receiver, scope) : undefined;
    const argEstimates = argNodes.map((a) => this.estimate(a, scope));
    const extra = functionCost(name, recv?.size, argEstimates.map((a) => a.size), recv?.kind);
    const cost = COST.call + (recv?.cost ?? 0) + sum(argEstimates.map((a) => a.cost)) + extra;
    return { cost, ...resultShape(name, recv, argEstimates) };
  }
}

/** Size and kind of a function's result, for the estimates of the expressions around it. */
function resultShape(name: string, recv: Estimate | undefined, args: Estimate[]): { size: number; kind: ValueKind; schema?: CelSchema } {
  const inputSize = (recv?.size ?? 0) + sum(args.map((a) => a.size));
  switch (name) {
    case 'lowerAscii':
    case 'upperAscii':
    case 'trim':
    case 'substring':
    case 'charAt':
    case 'find':
    case 'quote':
    case 'getScheme':
    case 'getHost':
    case 'getHostname':
    case 'getPort':
    case 'getEscapedPath':
      return { size: recv?.size ?? UNKNOWN_SIZE, kind: 'string' };
    case 'replace':
    case 'format':
    case 'join':
    case 'string':
      return { size: name === 'replace' ? (recv?.size ?? 0) * Math.max(1, args[1]?.size ?? 1) : inputSize, kind: 'string' };
    case 'split':
    case 'findAll':
      return { size: recv?.size ?? UNKNOWN_SIZE, kind: 'list' };
    case 'size':
      return { size: 1, kind: 'other' };
    case 'min':
    case 'max':
    case 'value':
    case 'orValue':
      return recv?.schema ? { size: recv.size, kind: 'unknown', schema: recv.schema } : { size: recv?.size ?? UNKNOWN_SIZE, kind: 'unknown' };
    default:
      return { size: 1, kind: 'other' };
  }
}

function sum(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s;
}
