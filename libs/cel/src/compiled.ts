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
    return node(root);
  } catch (e) {
    if (e instanceof Unsupported) return undefined;
    throw e;
  }
}

class Unsupported extends Error {}

function unsupported(): never {
  throw new Unsupported();
}

function node(n: EngineNode): CompiledForm {
  const { op, args } = n;
  if (n.meta.alternate || (n.meta.macro && !(op === 'call' && args[0] === 'has'))) unsupported();
  switch (op) {
    case 'value': {
      const v: unknown = args;
      return () => v;
    }
    case 'id': {
      if (!isDyn(n)) unsupported();
      const name: string = args;
      return (a) => {
        const v = a[name];
        return isPlainValue(v) ? v : unplain();
      };
    }
    case '.': {
      const [operand, field] = args as [EngineNode, string];
      if (!isDyn(operand)) unsupported();
      const of = node(operand);
      return (a) => {
        const o = of(a);
        if (!isPlainObject(o) || !Object.hasOwn(o, field)) return unplain();
        const v = o[field];
        return v !== undefined && isPlainValue(v) ? v : unplain();
      };
    }
    case '&&':
    case '||': {
      const [l, r] = [node(args[0]), node(args[1])];
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
      const [c, t, f] = [node(args[0]), node(args[1]), node(args[2])];
      return (a) => {
        const x = c(a);
        return x === true ? t(a) : x === false ? f(a) : unplain();
      };
    }
    case '!_': {
      const x = node(args);
      return (a) => {
        const v = x(a);
        return typeof v === 'boolean' ? !v : unplain();
      };
    }
    case 'call':
    case 'rcall':
      return call(n);
    default: {
      const fn = OPERATOR_OVERRIDES[op];
      if (!fn || op === '.?' || op === '[?]' || op === '-_' || !Array.isArray(args) || args.length !== 2) return unsupported();
      const [l, r] = [node(args[0]), node(args[1])];
      return (a) => fn(l(a), r(a));
    }
  }
}

/** `has(x.f)`, `size`, and the functions overrides.ts replaces, with one or two operands. */
function call(n: EngineNode): CompiledForm {
  const { op, args } = n;
  const name: string = args[0];
  if (op === 'call' && name === 'has') {
    const select = (n.meta.macro as unknown as { args: EngineNode[] }).args[0];
    const [operand, field] = select.args as [EngineNode, string];
    const of = node(operand);
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
    const x = node(operands[0]);
    return (a) => size(x(a));
  }
  const override = FUNCTION_OVERRIDES[name];
  if (!override || !(operands.length === override.arity || (override.arity2 && operands.length === override.arity + 1))) return unsupported();
  const fn = override.fn;
  if (operands.length === 1) {
    const x = node(operands[0]);
    return (a) => fn(x(a));
  }
  if (operands.length !== 2) return unsupported();
  const [x, y] = [node(operands[0]), node(operands[1])];
  return (a) => fn(x(a), y(a));
}
