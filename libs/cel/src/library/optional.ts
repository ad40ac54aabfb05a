// The parts of optional types (SPEC: "Optional types ... from 1.29") the engine lacks:
// optional.ofNonZeroValue, optMap, optFlatMap and the optional_type type. The engine provides optional.of/none,
// hasValue, value, or, orValue and the `.?field` / `[?index]` syntax.

import { evalError, Optional, TypeClass, UintClass, type Environment } from '../engine';

const sync = { async: false };

/** Whether a value is its type's zero value (upstream optional.ofNonZeroValue). */
export function isZeroValue(v: unknown): boolean {
  if (v === null || v === undefined) return true;
  switch (typeof v) {
    case 'bigint':
      return v === 0n;
    case 'number':
      return v === 0;
    case 'string':
      return v === '';
    case 'boolean':
      return v === false;
  }
  if (v instanceof UintClass) return v.value === 0n;
  if (v instanceof Uint8Array || Array.isArray(v)) return v.length === 0;
  if (v instanceof Set || v instanceof Map) return v.size === 0;
  if (v instanceof Date) return v.getTime() === 0;
  const proto = Object.getPrototypeOf(v);
  if (proto === null || proto === Object.prototype) return Object.keys(v as object).length === 0;
  return false;
}

/** Engine macro plumbing (the shapes the engine passes to `ast` overloads). */
interface MacroNode {
  readonly op: string;
  readonly args: unknown;
  setMeta(key: string, value: unknown): MacroNode;
  readonly maybeAsync?: boolean;
}
interface MacroContext {
  forkWithVariable(name: string, type: unknown): MacroContext & { reuse(ctx: unknown): { setIterValue(v: unknown, ev: unknown): unknown } };
}
interface Checker {
  check(node: MacroNode, ctx: unknown): { kind: string; valueType?: unknown };
  getType(name: string): unknown;
  createError(code: string, message: string, node: MacroNode): Error;
}
interface Evaluator {
  run(node: MacroNode, ctx: unknown): unknown;
}

interface OptMapMacro {
  ast: MacroNode;
  receiver: MacroNode;
  variable: string;
  body: MacroNode;
  flat: boolean;
  bindCtx?: ReturnType<MacroContext['forkWithVariable']>;
  typeCheck(chk: Checker, m: OptMapMacro, ctx: MacroContext): unknown;
  evaluate(ev: Evaluator, m: OptMapMacro, ctx: unknown): unknown;
}

function optMapMacro(flat: boolean) {
  return ({ ast, args, receiver }: { ast: MacroNode; args: MacroNode[]; receiver: MacroNode }): OptMapMacro => {
    const variable = args[0];
    if (variable.op !== 'id') throw evalError(`${flat ? 'optFlatMap' : 'optMap'}(var, expr): variable must be an identifier`);
    return {
      ast,
      receiver,
      variable: variable.args as string,
      body: args[1],
      flat,
      typeCheck(chk, m, ctx) {
        const recv = chk.check(m.receiver, ctx);
        const element = (recv.kind === 'optional' ? recv.valueType : undefined) ?? chk.getType('dyn');
        m.bindCtx = ctx.forkWithVariable(m.variable, element);
        const body = chk.check(m.body, m.bindCtx);
        if (m.flat) {
          if (body.kind !== 'optional' && body.kind !== 'dyn') throw chk.createError('optional_expected', `optFlatMap() expression must return an optional, got '${String(body)}'`, m.body);
          return body;
        }
        return chk.getType(`optional<${String(body)}>`);
      },
      evaluate(ev, m, ctx) {
        const opt = ev.run(m.receiver, ctx);
        if (!(opt instanceof Optional)) throw evalError(`${m.flat ? 'optFlatMap' : 'optMap'}() receiver must be optional`);
        if (!opt.hasValue()) return Optional.none();
        const inner = m.bindCtx!.reuse(ctx).setIterValue(opt.value(), ev);
        const result = ev.run(m.body, inner);
        if (!m.flat) return Optional.of(result);
        if (!(result instanceof Optional)) throw evalError('optFlatMap() expression must return an optional');
        return result;
      },
    };
  };
}

/** The type of optional values (`type(optional.none()) == optional_type`). */
const OPTIONAL_TYPE = new TypeClass('optional_type');

export function registerOptional(env: Environment): void {
  env.registerConstant('optional_type', 'type', OPTIONAL_TYPE);
  env.registerFunction('type(optional<A>): type', () => OPTIONAL_TYPE, sync);
  env.registerFunction('OptionalNamespace.ofNonZeroValue(A): optional<A>', (_ns: unknown, v: unknown) => (isZeroValue(v) ? Optional.none() : Optional.of(v)), sync);
  env.registerFunction('optional.optMap(ast, ast): optional<dyn>', optMapMacro(false) as never);
  env.registerFunction('optional.optFlatMap(ast, ast): optional<dyn>', optMapMacro(true) as never);
}
