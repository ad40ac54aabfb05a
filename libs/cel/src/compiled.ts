// A closure-compiled form of the commonest expressions, for untracked synchronous evaluation
// (program.ts): each node of the engine's checked syntax tree becomes a closure over the
// activation, without the engine's dispatch, evaluation context and per-call overload
// resolution.
//
// Exact by construction: a closure computes only the plain case of its node — the value the
// engine computes there — and throws for anything else (an error, a value of another type, a
// map of non-string keys...), and an expression whose compiled form throws is evaluated again
// by the engine, whose value or error is the result (evaluation has no side effects: programs
// that call the authorizer are never compiled). An expression with a node kind not below is
// not compiled at all.

import type { CelActivation, EngineNode } from './program';
import { FUNCTION_OVERRIDES, OPERATOR_OVERRIDES } from './overrides';

/** An expression's compiled form: its value for an activation, or a throw that means "ask the engine". */
export type CompiledForm = (activation: CelActivation) => unknown;

/** Thrown where the compiled form leaves the case to the engine (never escapes {@link CelProgram}). */
class Unplain extends Error {}
const UNPLAIN = new Unplain('left to the engine');

function unplain(): never {
  throw UNPLAIN;
}

/** Whether `v` is a plain object of the engine's map representation (string keys). */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const c = (v as object).constructor;
  return c === undefined || c === Object;
}

/** A value the engine's dynamic field access returns as is (its debugType knows it without a registry lookup). */
function isPlainValue(v: unknown): boolean {
  switch (typeof v) {
    case 'string':
    case 'bigint':
    case 'number':
    case 'boolean':
      return true;
    case 'object': {
      if (v === null) return true;
      const c = (v as object).constructor;
      return c === undefined || c === Object || c === Map || c === Array || c === Set;
    }
    default:
      return false;
  }
}

/** The engine's `dyn` checked type. */
function isDyn(n: EngineNode): boolean {
  return (n as EngineNode & { checkedType?: { kind?: string } }).checkedType?.kind === 'dyn';
}

/** Size of a string (code points), list or plain map, as the engine's size overloads count them. */
function size(v: unknown): bigint {
  if (typeof v === 'string') {
    let count = 0;
    for (const _ of v) count++;
    return BigInt(count);
  }
  if (Array.isArray(v)) return BigInt(v.length);
  if (isPlainObject(v)) return BigInt(Object.keys(v).length);
  return unplain();
}

/** The compiled form of a checked expression, or undefined when it has a node kind this does not compile. */
export function compile(root: EngineNode): CompiledForm | undefined {
  try {
    return node(root, NO_ITERATION);
  } catch (e) {
    if (e instanceof Unsupported) return undefined;
    throw e;
  }
}

class Unsupported extends Error {}

function unsupported(): never {
  throw new Unsupported();
}

/** The value of a comprehension's iteration variable, while the comprehension iterates. */
interface IterationCell {
  value: unknown;
}
/** The iteration variables in scope at a node, innermost binding of each name. */
type Iteration = ReadonlyMap<string, IterationCell>;
const NO_ITERATION: Iteration = new Map();

function node(n: EngineNode, scope: Iteration): CompiledForm {
  const { op, args } = n;
  if ((n.meta.alternate && !isQuantifier(n)) || (n.meta.macro && !(op === 'call' && args[0] === 'has'))) unsupported();
  switch (op) {
    case 'value': {
      const v: unknown = args;
      return () => v;
    }
    case 'id': {
      if (!isDyn(n)) unsupported();
      const name: string = args;
      const cell = scope.get(name);
      if (cell) {
        return () => {
          const v = cell.value;
          return isPlainValue(v) ? v : unplain();
        };
      }
      return (a) => {
        const v = a[name];
        return isPlainValue(v) ? v : unplain();
      };
    }
    case '.': {
      const [operand, field] = args as [EngineNode, string];
      if (!isDyn(operand)) unsupported();
      const of = node(operand, scope);
      return (a) => {
        const o = of(a);
        if (!isPlainObject(o) || !Object.hasOwn(o, field)) return unplain();
        const v = o[field];
        return v !== undefined && isPlainValue(v) ? v : unplain();
      };
    }
    case '&&':
    case '||': {
      const [l, r] = [node(args[0], scope), node(args[1], scope)];
      const decisive = op === '||';
      return (a) => {
        const x = l(a);
        if (x === decisive) return x;
        if (x !== !decisive) return unplain();
        const y = r(a);
        return typeof y === 'boolean' ? y : unplain();
      };
    }
    case '?:': {
      const [c, t, f] = [node(args[0], scope), node(args[1], scope), node(args[2], scope)];
      return (a) => {
        const x = c(a);
        return x === true ? t(a) : x === false ? f(a) : unplain();
      };
    }
    case '!_': {
      const x = node(args, scope);
      return (a) => {
        const v = x(a);
        return typeof v === 'boolean' ? !v : unplain();
      };
    }
    case 'call':
    case 'rcall':
      return isQuantifier(n) ? quantifier(n, scope) : call(n, scope);
    default: {
      const fn = OPERATOR_OVERRIDES[op];
      if (!fn || op === '.?' || op === '[?]' || op === '-_' || !Array.isArray(args) || args.length !== 2) return unsupported();
      const [l, r] = [node(args[0], scope), node(args[1], scope)];
      return (a) => fn(l(a), r(a));
    }
  }
}

/** The engine's `string.<name>(string): bool` overloads, as it computes them (functions.js). */
const STRING_METHODS: Readonly<Record<string, (s: string, t: string) => boolean>> = {
  startsWith: (s, t) => s.startsWith(t),
  endsWith: (s, t) => s.endsWith(t),
  contains: (s, t) => s.includes(t),
};

/** `x.all(v, p)` or `x.exists(v, p)`: the engine evaluates its expansion (`alternate`), a quantifier comprehension. */
function isQuantifier(n: EngineNode): boolean {
  const { op, args } = n;
  const expansion = n.meta.alternate as (EngineNode & { args: { kind?: string } }) | undefined;
  return op === 'rcall' && expansion?.op === 'comprehension' && expansion.args.kind === 'quantifier' && (args[0] === 'all' || args[0] === 'exists') && args[2].length === 2 && args[2][0].op === 'id';
}

/**
 * `x.all(v, p)` / `x.exists(v, p)` over a list, a set or a plain map's keys, in the engine's
 * order (Object.keys for maps), stopping where the engine stops (the first false / true). The
 * engine absorbs a predicate's error when another element decides; any predicate value but a
 * boolean leaves the whole case to the engine instead.
 */
function quantifier(n: EngineNode, scope: Iteration): CompiledForm {
  const [name, receiver, [variable, predicateNode]] = n.args as [string, EngineNode, [EngineNode, EngineNode]];
  const of = node(receiver, scope);
  const cell: IterationCell = { value: undefined };
  const predicate = node(predicateNode, new Map(scope).set(variable.args, cell));
  const decisive = name === 'exists';
  return (a) => {
    const range = of(a);
    const items = Array.isArray(range) ? range : range instanceof Set ? [...range] : isPlainObject(range) ? Object.keys(range) : unplain();
    try {
      for (const item of items) {
        cell.value = item;
        const holds = predicate(a);
        if (holds === decisive) return decisive;
        if (holds !== !decisive) return unplain();
      }
    } finally {
      cell.value = undefined;
    }
    return !decisive;
  };
}

/** `has(x.f)`, `size`, startsWith / endsWith / contains, and the functions overrides.ts replaces, with one or two operands. */
function call(n: EngineNode, scope: Iteration): CompiledForm {
  const { op, args } = n;
  const name: string = args[0];
  if (op === 'call' && name === 'has') {
    const select = (n.meta.macro as unknown as { args: EngineNode[] }).args[0];
    const [operand, field] = select.args as [EngineNode, string];
    const of = node(operand, scope);
    return (a) => {
      const o = of(a);
      if (!isPlainObject(o)) return unplain();
      const v = Object.hasOwn(o, field) ? o[field] : undefined;
      return v === undefined ? false : isPlainValue(v) || unplain();
    };
  }
  const receiver: EngineNode | undefined = op === 'rcall' ? args[1] : undefined;
  if (receiver?.op === 'id' && receiver.args === 'optional') unsupported();
  const operands: EngineNode[] = receiver ? [receiver, ...(args[2] as EngineNode[])] : args[1];
  if (name === 'size' && operands.length === 1) {
    const x = node(operands[0], scope);
    return (a) => size(x(a));
  }
  const method = STRING_METHODS[name];
  if (method && receiver && operands.length === 2) {
    const [x, y] = [node(operands[0], scope), node(operands[1], scope)];
    return (a) => {
      const s = x(a);
      const t = y(a);
      return typeof s === 'string' && typeof t === 'string' ? method(s, t) : unplain();
    };
  }
  const override = FUNCTION_OVERRIDES[name];
  if (!override || !(operands.length === override.arity || (override.arity2 && operands.length === override.arity + 1))) return unsupported();
  const fn = override.fn;
  if (operands.length === 1) {
    const x = node(operands[0], scope);
    return (a) => fn(x(a));
  }
  if (operands.length !== 2) return unsupported();
  const [x, y] = [node(operands[0], scope), node(operands[1], scope)];
  return (a) => fn(x(a), y(a));
}
