// A compiled expression and its evaluation under a cost limit.
//
// Runtime cost: after compilation every node of the expression's syntax tree is given its own
// `evaluate` that charges the node's unit cost (cost.ts) to the tracker of the evaluation in
// progress before delegating to the engine, and, for calls whose cost depends on operand
// sizes, charges that part from the operand values once they are known. The tracker of an
// expression that may await (the authorizer) travels in the activation (under a key no
// identifier can spell, which every engine context reaches); any other evaluation runs to its
// end in one call and its tracker is the module's `current` meanwhile. Concurrent and
// asynchronous evaluations of one program never share a count. The same hook evaluates the
// operations overrides.ts replaces.

import { compile, type CompiledForm } from './compiled';
import { COST, functionCost, isSizeDependent, operatorCost, PER_CALL_COST_LIMIT, runtimeKind, runtimeSize, type AstNode } from './cost';
import { type EvaluationError } from './engine';
import { CelCostLimitError, CelEvaluationError } from './errors';
import { FUNCTION_OVERRIDES, OPERATOR_OVERRIDES, type Override } from './overrides';
import { readsOf, type Projection } from './projection';
import type { CelSchema } from './schema';

/** Values of the declared variables, already converted (see CelEnvironment.toCel). */
export type CelActivation = Readonly<Record<string, unknown>>;

export interface EvaluateOptions {
  /** Halt with {@link CelCostLimitError} once the actual cost passes this (default PER_CALL_COST_LIMIT). */
  readonly costLimit?: number;
  /**
   * Count no cost (the result's cost is 0): for callers that know the expression cannot reach
   * its limits, because its estimated worst-case cost (an upper bound of the actual cost) is
   * below them. Saves the counting on every node; the evaluation is otherwise the same.
   */
  readonly untracked?: boolean;
}

export interface CelResult {
  readonly value: unknown;
  /** Actual cost charged. */
  readonly cost: number;
}

/** The activation key of the cost tracker of an asynchronous evaluation: `@` cannot appear in an identifier. */
const TRACKER = '@cost';

/** The tracker of the synchronous evaluation in progress (evaluations of synchronous programs run to completion in one call). */
let current: CostTracker | undefined;

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
  private readonly reads = new Map<string, Projection | undefined>();
  /** Calls no asynchronous library function (the authorizer): its tracker is the module's {@link current} while it runs. */
  private readonly synchronous: boolean;

  /** The program evaluated untracked: parsed again, with the overrides but no counting hooks (made on first use). */
  private plain?: EngineProgram;
  /** The closure-compiled form for untracked evaluation (compiled.ts; made on first use, null: none). */
  private compiled?: CompiledForm | null;

  constructor(
    /** The expression as written. */
    readonly expression: string,
    private readonly program: EngineProgram,
    /** The type the checker inferred (`bool`, `string`, `dyn`, ...). */
    readonly resultType: string,
    /** Estimated worst-case cost over the values the declared schemas admit. */
    readonly estimatedCost: number,
    /** Parses the expression again (a second program for untracked evaluation). */
    private readonly reparse: () => EngineProgram = () => program,
    /** The estimate with some variables given a schema (see {@link estimatedCostWith}). */
    private readonly estimateWith: (schemas: Readonly<Record<string, CelSchema>>, sizeCap?: number) => number = () => estimatedCost,
  ) {
    this.synchronous = readsOf(program.ast, 'authorizer') === undefined;
    this.slotCount = instrument(program.ast, this.synchronous);
  }

  /**
   * Evaluates with `activation` as the variables. Returns synchronously unless the expression
   * calls an asynchronous library function (the authorizer), then a promise. Failures are
   * {@link CelEvaluationError} (thrown, or the promise rejects); a cost overrun is
   * {@link CelCostLimitError}.
   */
  evaluate(activation: CelActivation, options: EvaluateOptions = {}): CelResult | Promise<CelResult> {
    if (options.untracked) return this.evaluateUntracked(activation);
    const tracker: CostTracker = { cost: 0, limit: options.costLimit ?? PER_CALL_COST_LIMIT, slots: new Array(this.slotCount) };
    let value: unknown;
    if (this.synchronous) {
      // The whole evaluation happens in this call: the hooks read the tracker from `current`.
      const outer = current;
      current = tracker;
      try {
        value = this.program(activation);
      } catch (e) {
        throw this.failure(e);
      } finally {
        current = outer;
      }
      return { value, cost: tracker.cost };
    }
    // A copy with an added own key keeps the engine's property lookups fast (a prototype chain does not).
    const context: Record<string, unknown> = Object.assign({}, activation);
    context[TRACKER] = tracker;
    return this.run(this.program, context, () => tracker.cost);
  }

  /** Runs a program: its value and cost, or a promise of them; failures as {@link evaluate} says. */
  private run(program: EngineProgram, context: object, cost: () => number): CelResult | Promise<CelResult> {
    const value = this.valueOf(program, context);
    if (value instanceof Promise) return value.then((v) => ({ value: v, cost: cost() }));
    return { value, cost: cost() };
  }

  /** Runs a program: its value, or a promise of it; failures as {@link evaluate} says. */
  private valueOf(program: EngineProgram, context: object): unknown {
    let value: unknown;
    try {
      value = program(context);
    } catch (e) {
      throw this.failure(e);
    }
    if (value instanceof Promise) {
      return value.then(undefined, (e) => {
        throw this.failure(e);
      });
    }
    return value;
  }

  /**
   * Estimated worst-case cost when the variables named in `schemas` hold values of those
   * schemas (e.g. a dynamic `object` known to be of one kind): an upper bound of the actual
   * cost of such values, often far below {@link estimatedCost}. With `sizeCap`, of such values
   * in which no size is above it (see cost.ts largestSize). Not memoized.
   */
  estimatedCostWith(schemas: Readonly<Record<string, CelSchema>>, sizeCap?: number): number {
    return this.estimateWith(schemas, sizeCap);
  }

  /** What of variable `name` the expression can read (see {@link readsOf}); undefined when it does not use it. */
  readsOf(name: string): Projection | undefined {
    if (!this.reads.has(name)) this.reads.set(name, readsOf(this.program.ast, name));
    return this.reads.get(name);
  }

  /**
   * The value of an untracked evaluation ({@link evaluate} with `untracked`), without a
   * CelResult around it: synchronous unless the expression calls the authorizer, then a
   * promise. By the program's compiled form when it has one and that gives a value, else
   * by the program without counting hooks (the overrides still apply).
   */
  untrackedValue(activation: CelActivation): unknown {
    if (this.compiled === undefined) this.compiled = this.compiledForm();
    if (this.compiled) {
      try {
        return this.compiled(activation);
      } catch {
        // not the plain case: the engine's value or error is the result
      }
    }
    if (!this.plain) {
      const plain = this.reparse();
      if (plain !== this.program) installOverrides(plain.ast);
      this.plain = plain;
    }
    return this.valueOf(this.plain, activation);
  }

  /**
   * Whether the expression's value is `true`, as far as its compiled form tells without the
   * engine: true only where {@link untrackedValue} gives true; false for any other value, an
   * error, an expression without a compiled form, or a case the form leaves to the engine.
   */
  compiledTrue(activation: CelActivation): boolean {
    if (this.compiled === undefined) this.compiled = this.compiledForm();
    if (!this.compiled) return false;
    try {
      return this.compiled(activation) === true;
    } catch {
      return false;
    }
  }

  /** The closure-compiled form, null where there is none (an expression calling the authorizer is never compiled). */
  private compiledForm(): CompiledForm | null {
    return (this.synchronous && compile(this.program.ast)) || null;
  }

  private evaluateUntracked(activation: CelActivation): CelResult | Promise<CelResult> {
    const value = this.untrackedValue(activation);
    if (value instanceof Promise) return value.then((v) => ({ value: v, cost: 0 }));
    return { value, cost: 0 };
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
function instrument(root: EngineNode, synchronous: boolean): number {
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
    p.override = overrideOf(n);
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
    }
    for (const c of surfaceChildren(n)) visit(c as EngineNode);
  };
  visit(root);
  for (const [node, p] of plans) install(node, p, synchronous);
  return slots;
}

/** The evaluation that replaces the engine's for a node (overrides.ts), if any. */
function overrideOf(n: EngineNode): NodePlan['override'] {
  const { op, args } = n;
  const operatorOverride = OPERATOR_OVERRIDES[op];
  if (operatorOverride) {
    // `.?` has one operand; its field name is a constant of the node, passed to the override as is.
    if (op === '.?') return applyTo([args[0]], operatorOverride, args[1]);
    return applyTo(op === '-_' ? [args] : args, operatorOverride);
  }
  if (op !== 'call' && op !== 'rcall') return undefined;
  const name: string = args[0];
  const receiver: EngineNode | undefined = op === 'rcall' ? args[1] : undefined;
  const argNodes: EngineNode[] = op === 'rcall' ? args[2] : args[1];
  const override = FUNCTION_OVERRIDES[name];
  const operands = receiver ? [receiver, ...argNodes] : argNodes;
  const arityMatches = override && (operands.length === override.arity || (override.arity2 && operands.length === override.arity + 1));
  if (!override || !arityMatches || (receiver?.op === 'id' && receiver.args === 'optional')) return undefined;
  return applyTo(operands, override.fn);
}

/**
 * Evaluates the one or two `operands` in order, then applies `fn` to their values, or to the one
 * value and `extra` (a constant of the node: the field of `.?`), waiting for any that is a promise
 * (asynchronous library calls). A call allocates no operand array (a request's evaluations run in
 * cold CPU caches, where each allocation costs); overrides take one or two operands (overrides.ts).
 */
function applyTo(operands: readonly EngineNode[], fn: Override, extra?: unknown): NonNullable<NodePlan['override']> {
  const [a, b] = operands;
  if (operands.length + (extra === undefined ? 0 : 1) > 2) throw new Error(`an override takes one or two operands, not ${operands.length} (extra: ${String(extra)})`);
  return (ev, ctx) => {
    const x = ev.run(a, ctx);
    const y = b ? ev.run(b, ctx) : extra;
    return x instanceof Promise || y instanceof Promise ? Promise.all([x, y]).then(([v, w]) => fn(v, w)) : fn(x, y);
  };
}

/** Installs only the overrides (no cost counting) on the surface nodes of a program evaluated untracked. */
function installOverrides(node: EngineNode): void {
  const override = overrideOf(node);
  if (override) node.evaluate = (ev, _ast, ctx) => override(ev, ctx);
  for (const c of surfaceChildren(node)) installOverrides(c as EngineNode);
}

function install(node: EngineNode, p: NodePlan, synchronous: boolean): void {
  const { before, slot, after, override } = p;
  node.evaluate = function evaluateCharged(ev, ast, ctx) {
    const t = synchronous ? current : (ctx.getValue(TRACKER) as CostTracker | undefined);
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
