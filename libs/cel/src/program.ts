// A compiled expression and its evaluation under a cost limit.
//
// Runtime cost: after compilation every node of the expression's syntax tree is given its own
// `evaluate` that charges the node's unit cost (cost.ts) to the tracker of the evaluation in
// progress before delegating to the engine, and, for calls whose cost depends on operand
// sizes, charges that part from the operand values once they are known. The tracker travels in
// the activation (under a key no identifier can spell, which every engine context reaches), so concurrent and
// asynchronous evaluations of one program never share a count. The same hook evaluates the
// operations overrides.ts replaces.

import { COST, functionCost, isSizeDependent, operatorCost, PER_CALL_COST_LIMIT, runtimeKind, runtimeSize, type AstNode } from './cost';
import { type EvaluationError } from './engine';
import { CelCostLimitError, CelEvaluationError } from './errors';
import { FUNCTION_OVERRIDES, OPERATOR_OVERRIDES } from './overrides';

/** Values of the declared variables, already converted (see CelEnvironment.toCel). */
export type CelActivation = Readonly<Record<string, unknown>>;

export interface EvaluateOptions {
  /** Halt with {@link CelCostLimitError} once the actual cost passes this (default PER_CALL_COST_LIMIT). */
  readonly costLimit?: number;
}

export interface CelResult {
  readonly value: unknown;
  /** Actual cost charged. */
  readonly cost: number;
}

/** The activation key of the cost tracker: `@` cannot appear in an identifier. */
const TRACKER = '@cost';

interface CostTracker {
  cost: number;
  readonly limit: number;
  readonly slots: unknown[];
}

/** The engine's callable parse result (see engine.ts). */
export interface EngineProgram {
  (context?: object): unknown;
  readonly ast: EngineNode;
}

/** A node of the engine's syntax tree, as the instrumentation sees it. */
export interface EngineNode extends AstNode {
  readonly meta: { alternate?: EngineNode; macro?: { evaluate(ev: unknown, macro: unknown, ctx: unknown): unknown }; evaluate(ev: unknown, ast: unknown, ctx: unknown): unknown };
  evaluate: (ev: EngineEvaluator, ast: EngineNode, ctx: EngineContext) => unknown;
}

interface EngineEvaluator {
  run(node: EngineNode, ctx: EngineContext): unknown;
}

interface EngineContext {
  getValue(key: unknown): unknown;
}

/** A compiled expression: immutable, reusable, safe to evaluate concurrently. */
export class CelProgram {
  private readonly slotCount: number;

  constructor(
    /** The expression as written. */
    readonly expression: string,
    private readonly program: EngineProgram,
    /** The type the checker inferred (`bool`, `string`, `dyn`, ...). */
    readonly resultType: string,
    /** Estimated worst-case cost over the values the declared schemas admit. */
    readonly estimatedCost: number,
  ) {
    this.slotCount = instrument(program.ast);
  }

  /**
   * Evaluates with `activation` as the variables. Returns synchronously unless the expression
   * calls an asynchronous library function (the authorizer), then a promise. Failures are
   * {@link CelEvaluationError} (thrown, or the promise rejects); a cost overrun is
   * {@link CelCostLimitError}.
   */
  evaluate(activation: CelActivation, options: EvaluateOptions = {}): CelResult | Promise<CelResult> {
    const tracker: CostTracker = { cost: 0, limit: options.costLimit ?? PER_CALL_COST_LIMIT, slots: new Array(this.slotCount) };
    // A copy with an added own key keeps the engine's property lookups fast (a prototype chain does not).
    const context: Record<string, unknown> = Object.assign({}, activation);
    context[TRACKER] = tracker;
    let value: unknown;
    try {
      value = this.program(context);
    } catch (e) {
      throw this.failure(e);
    }
    if (value instanceof Promise) {
      return value.then(
        (v) => ({ value: v, cost: tracker.cost }),
        (e) => {
          throw this.failure(e);
        },
      );
    }
    return { value, cost: tracker.cost };
  }

  /** Evaluates and always returns a promise (for callers that may meet the authorizer). */
  async evaluateAsync(activation: CelActivation, options: EvaluateOptions = {}): Promise<CelResult> {
    return this.evaluate(activation, options);
  }

  private failure(e: unknown): Error {
    if (e instanceof CelEvaluationError) return e;
    if (e instanceof CostOverrun) return new CelCostLimitError(this.expression, e.limit);
    const err = e as EvaluationError & { summary?: string };
    const message = err.summary ?? String(err.message ?? e).split('\n')[0];
    return new CelEvaluationError(message, this.expression);
  }
}

class CostOverrun extends Error {
  constructor(readonly limit: number) {
    super('cost limit exceeded');
  }
}

function charge(t: CostTracker, units: number): void {
  t.cost += units;
  if (t.cost > t.limit) throw new CostOverrun(t.limit);
}

// ---------------------------------------------------------------------------------------------
// Instrumentation

function isNode(x: unknown): x is EngineNode {
  return typeof x === 'object' && x !== null && typeof (x as EngineNode).op === 'string' && 'args' in x;
}

/** The nodes below `node` in the expression as written (not the engine's macro expansions). */
export function surfaceChildren(node: AstNode): AstNode[] {
  const { op, args } = node;
  switch (op) {
    case 'value':
    case 'id':
      return [];
    case '.':
    case '.?':
      return [args[0]];
    case 'call':
      return args[1];
    case 'rcall':
      return [args[1], ...args[2]];
    case 'map':
      return (args as AstNode[][]).flat();
    case '!_':
    case '-_':
      return [args];
    default:
      return Array.isArray(args) ? args.filter(isNode) : [];
  }
}

interface NodePlan {
  /** Cost charged before the node evaluates. */
  before: number;
  /** Slot this node's value is recorded in, for its parent's size-dependent cost. */
  slot?: number;
  /** Cost charged after the node evaluates, from its operands' recorded values. */
  after?: (slots: unknown[]) => number;
  override?: (ev: EngineEvaluator, ctx: EngineContext) => unknown;
}

const COMPARISON_OPS = new Set(['==', '!=', '<', '<=', '>', '>=']);
const ARITHMETIC_OPS = new Set(['+', '-', '*', '/', '%', 'in']);

/** Installs the cost-charging `evaluate` on every surface node; returns the number of value slots used. */
function instrument(root: EngineNode): number {
  let slots = 0;
  const plans = new Map<EngineNode, NodePlan>();
  const plan = (n: EngineNode): NodePlan => {
    let p = plans.get(n);
    if (!p) plans.set(n, (p = { before: 0 }));
    return p;
  };
  const slotOf = (n: EngineNode): number => {
    const p = plan(n);
    if (p.slot === undefined) p.slot = slots++;
    return p.slot;
  };
  const visit = (n: EngineNode): void => {
    const p = plan(n);
    const { op, args } = n;
    const operatorOverride = OPERATOR_OVERRIDES[op];
    if (operatorOverride) {
      if (op === '.?') p.override = (ev, ctx) => thenApply([ev.run(args[0], ctx), args[1]], operatorOverride);
      else {
        const operands: EngineNode[] = op === '-_' ? [args] : args;
        p.override = (ev, ctx) => thenApply(operands.map((o) => ev.run(o, ctx)), operatorOverride);
      }
    }
    if (op === 'id' || op === '.' || op === '.?' || op === '[]' || op === '[?]') p.before = COST.select;
    else if (op === 'list') p.before = COST.listLiteral;
    else if (op === 'map') p.before = COST.mapLiteral;
    else if (op === '-_') p.before = COST.call;
    else if (COMPARISON_OPS.has(op)) p.before = COST.comparison;
    else if (ARITHMETIC_OPS.has(op)) {
      if (op === '+' || op === 'in') {
        const [l, r] = [slotOf(args[0]), slotOf(args[1])];
        p.after = (s) => operatorCost(op, { size: runtimeSize(s[l]), kind: runtimeKind(s[l]) }, { size: runtimeSize(s[r]), kind: runtimeKind(s[r]) });
      } else p.before = COST.call;
    } else if (op === 'call' || op === 'rcall') {
      const name: string = args[0];
      const receiver: EngineNode | undefined = op === 'rcall' ? args[1] : undefined;
      const argNodes: EngineNode[] = op === 'rcall' ? args[2] : args[1];
      const isBind = receiver?.op === 'id' && receiver.args === 'cel' && name === 'bind';
      p.before = isBind ? 0 : COST.call;
      if (isSizeDependent(name)) {
        const r = receiver ? slotOf(receiver) : undefined;
        const a = argNodes.map(slotOf);
        p.after = (s) => functionCost(name, r === undefined ? undefined : runtimeSize(s[r]), a.map((i) => runtimeSize(s[i])), r === undefined ? undefined : runtimeKind(s[r]));
      }
      const override = FUNCTION_OVERRIDES[name];
      const operands = receiver ? [receiver, ...argNodes] : argNodes;
      const arityMatches = override && (operands.length === override.arity || (override.arity2 && operands.length === override.arity + 1));
      if (override && arityMatches && !(receiver?.op === 'id' && receiver.args === 'optional')) {
        p.override = (ev, ctx) => thenApply(operands.map((o) => ev.run(o, ctx)), override.fn);
      }
    }
    for (const c of surfaceChildren(n)) visit(c as EngineNode);
  };
  visit(root);
  for (const [node, p] of plans) install(node, p);
  return slots;
}

/** Applies `fn` to the operand values, waiting for any that are promises (asynchronous library calls). */
function thenApply(values: unknown[], fn: (...operands: unknown[]) => unknown): unknown {
  if (values.some((v) => v instanceof Promise)) return Promise.all(values).then((vs) => fn(...vs));
  return fn(...values);
}

function install(node: EngineNode, p: NodePlan): void {
  const { before, slot, after, override } = p;
  node.evaluate = function evaluateCharged(ev, ast, ctx) {
    const t = ctx.getValue(TRACKER) as CostTracker | undefined;
    if (t && before) charge(t, before);
    let value: unknown;
    if (override) value = override(ev, ctx);
    else {
      const meta = node.meta;
      value = meta.alternate ? meta.alternate.evaluate(ev as never, meta.alternate, ctx) : meta.macro ? meta.macro.evaluate(ev, meta.macro, ctx) : meta.evaluate(ev, ast, ctx);
    }
    if (t) {
      if (slot !== undefined) t.slots[slot] = value;
      if (after) {
        if (value instanceof Promise) return value.then((v) => (charge(t, after(t.slots)), v));
        charge(t, after(t.slots));
      }
    }
    return value;
  };
}
