// Expression environments: the declared variables with their types, the SPEC libraries, and
// compilation (parse, type-check, regex validation, cost estimate) with a cache of programs.
//
// Each environment keeps two engine environments built on one shared library base: a typed one
// where variables with a schema get the SPEC type mapping (object types with their fields, so
// a misspelt field or a type mismatch is a compile error) and an evaluating one where those
// variables are dynamic, so values are plain converted JSON and never re-wrapped per access.

import { estimateCost, type EstimateVariable } from './cost';
import { rewriteObjectLiterals } from './object-literals';
import { CelTypeError, Environment, makeDuration, ParseError } from './engine';
import { CelCompileError, CelCostEstimateError } from './errors';
import { parseTimestamp } from './timestamps';
import { AUTHORIZER_TYPE, registerAuthorizer } from './library/authorizer';
import { registerCompat } from './library/compat';
import { JSONPATCH_TYPE, registerJsonPatch } from './library/jsonpatch';
import { registerLists } from './library/lists';
import { registerOptional } from './library/optional';
import { registerQuantity } from './library/quantity';
import { regexError, registerRegex } from './library/regex';
import { registerStrings } from './library/strings';
import { registerUrls } from './library/urls';
import { CelProgram, surfaceChildren, type EngineNode, type EngineProgram } from './program';
import { CelValueConverter, DeclaredTypes, type CelSchema, type SchemaContext, type ValueFactory } from './schema';

/** A variable expressions may use. */
export interface CelVariable {
  readonly name: string;
  /**
   * Its type in the engine's notation (`int`, `string`, `list<string>`, `map<string, dyn>`,
   * `dyn`, or a library type such as the authorizer's); ignored when `schema` is given.
   * Default `dyn`.
   */
  readonly type?: string;
  /** OpenAPI schema of the value: gives the declared type (SPEC type mapping) and size bounds for cost. */
  readonly schema?: CelSchema;
}

export interface CelEnvironmentOptions extends SchemaContext {
  readonly variables?: readonly CelVariable[];
  /** Declares `authorizer` (the authorizer library); values are {@link AuthorizerValue}s. */
  readonly authorizer?: boolean;
  /** Allow list and map literals mixing element types (off, as upstream's HomogeneousAggregateLiterals). */
  readonly heterogeneousLiterals?: boolean;
  /** Treat undeclared identifiers as dynamic variables instead of compile errors (conformance runs only). */
  readonly undeclaredAreDyn?: boolean;
  /**
   * Expressions build objects (mutating admission policies): message construction
   * (`Object{spec: Object.spec{...}}`, `JSONPatch{...}`) builds maps, and `jsonpatch`
   * (values: {@link JsonPatchLibrary}) is declared. Implies heterogeneous literals.
   */
  readonly objectLiterals?: boolean;
}

export interface CompileOptions {
  /** The types the result may have (the checker's `dyn` is always accepted). */
  readonly resultTypes?: readonly string[];
  /** Refuse the expression when its estimated worst-case cost exceeds this (SPEC Errors 4). */
  readonly costBudget?: number;
}

const CACHE_LIMIT = 2000;
/** How converters build durations and timestamps (one object for every converter: one is made per request). */
const VALUE_FACTORY: ValueFactory = { duration: makeDuration, timestamp: (s) => parseTimestamp(s) ?? new Date(s) };

let libraryBase: { strict: Environment; heterogeneous: Environment } | undefined;

/** The engine environment with every SPEC library, built once (cloning it is cheap). */
function base(heterogeneous: boolean): Environment {
  if (!libraryBase) {
    const build = (homogeneousAggregateLiterals: boolean) => {
      const env = new Environment({ enableOptionalTypes: true, unlistedVariablesAreDyn: false, homogeneousAggregateLiterals });
      registerStrings(env);
      registerLists(env);
      registerRegex(env);
      registerUrls(env);
      registerQuantity(env);
      registerAuthorizer(env);
      registerOptional(env);
      registerCompat(env);
      registerJsonPatch(env);
      return env;
    };
    libraryBase = { strict: build(true), heterogeneous: build(false) };
  }
  return heterogeneous ? libraryBase.heterogeneous : libraryBase.strict;
}

/**
 * Declared variables plus the libraries; compiles expressions into {@link CelProgram}s.
 * Compilation is cached per expression text and options, so compiling the same rule again (a
 * policy re-read, a second object) costs a map lookup.
 */
export class CelEnvironment {
  private readonly typed: Environment;
  private readonly evaluating: Environment;
  private readonly estimateVariables = new Map<string, EstimateVariable>();
  private readonly cache = new Map<string, CelProgram>();

  constructor(private readonly options: CelEnvironmentOptions = {}) {
    const heterogeneous = (options.heterogeneousLiterals ?? false) || (options.objectLiterals ?? false);
    const root = base(heterogeneous);
    const engineOptions = { enableOptionalTypes: true, unlistedVariablesAreDyn: options.undeclaredAreDyn ?? false, homogeneousAggregateLiterals: !heterogeneous };
    this.typed = root.clone(engineOptions);
    this.evaluating = root.clone(engineOptions);
    const declared = new DeclaredTypes(options);
    const variables: CelVariable[] = [...(options.variables ?? [])];
    if (options.authorizer) variables.push({ name: 'authorizer', type: AUTHORIZER_TYPE });
    if (options.objectLiterals) variables.push({ name: 'jsonpatch', type: JSONPATCH_TYPE });
    const typedVariables: [string, string][] = [];
    for (const v of variables) {
      const type = v.schema ? declared.typeOf(v.schema, v.name) : (v.type ?? 'dyn');
      typedVariables.push([v.name, type]);
      this.evaluating.registerVariable(v.name, v.schema ? 'dyn' : type);
      this.estimateVariables.set(v.name, v.schema ? { schema: v.schema } : { kind: v.type === AUTHORIZER_TYPE || v.type === JSONPATCH_TYPE ? 'other' : undefined });
    }
    for (const t of declared.objectTypes) {
      this.typed.registerType(t.name, { fields: t.fields });
      this.typed.registerOperator(`${t.name} == ${t.name}`, () => false);
    }
    for (const [name, type] of typedVariables) this.typed.registerVariable(name, type);
  }

  /** A converter for the values of one request (see {@link CelValueConverter}). */
  converter(): CelValueConverter {
    return new CelValueConverter(VALUE_FACTORY, this.options);
  }

  /** Converts one JSON value by schema (a fresh converter: use {@link converter} to share one per request). */
  toCel(json: unknown, schema?: CelSchema): unknown {
    return this.converter().convert(json, schema);
  }

  /**
   * Type-checks `expression` without caching or cost checks: its result type, or the reason it
   * does not compile (for status.typeChecking warnings).
   */
  check(expression: string): { type: string } | { error: string } {
    try {
      return { type: this.compile(expression).resultType };
    } catch (e) {
      return { error: (e as Error).message };
    }
  }

  /** Compiles (or returns the cached program). Throws {@link CelCompileError} or {@link CelCostEstimateError}. */
  compile(expression: string, options: CompileOptions = {}): CelProgram {
    const key = `${options.resultTypes?.join('|') ?? ''}\u0000${options.costBudget ?? ''}\u0000${expression}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const program = this.compileUncached(expression, options);
    if (this.cache.size >= CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, program);
    return program;
  }

  private compileUncached(expression: string, options: CompileOptions): CelProgram {
    if (expression.trim() === '') throw new CelCompileError('ERROR: <input>:1:1: expression is empty', expression);
    const source = this.options.objectLiterals ? rewriteObjectLiterals(expression) : expression;
    let typedResult;
    let parsed: EngineProgram;
    try {
      typedResult = this.typed.check(source);
      parsed = this.evaluating.parse(source) as unknown as EngineProgram;
    } catch (e) {
      throw new CelCompileError(compileMessage(source, e), expression);
    }
    if (!typedResult.valid) throw new CelCompileError(compileMessage(source, typedResult.error), expression);
    const resultType = typedResult.type ?? 'dyn';
    const dynChecked = (parsed as unknown as { check(): { valid: boolean; error?: unknown } }).check();
    if (!dynChecked.valid) throw new CelCompileError(compileMessage(source, dynChecked.error), expression);
    if (options.resultTypes && resultType !== 'dyn' && !options.resultTypes.includes(resultType)) {
      throw new CelCompileError(`ERROR: <input>:1:1: expression must evaluate to ${options.resultTypes.join(' or ')}, not ${resultType}`, expression);
    }
    const badRegex = invalidRegexLiteral(parsed.ast);
    if (badRegex) throw new CelCompileError(`ERROR: <input>:1:1: ${badRegex}`, expression);
    const estimated = estimateCost(parsed.ast, this.estimateVariables, this.options);
    if (options.costBudget !== undefined && estimated > options.costBudget) throw new CelCostEstimateError(expression, estimated, options.costBudget);
    const reparse = () => {
      const again = this.evaluating.parse(source) as unknown as EngineProgram & { check(): unknown };
      again.check();
      return again;
    };
    const estimateWith = (schemas: Readonly<Record<string, CelSchema>>, sizeCap?: number) => {
      const variables = new Map(this.estimateVariables);
      for (const [name, schema] of Object.entries(schemas)) if (variables.has(name)) variables.set(name, { schema });
      return estimateCost(parsed.ast, variables, this.options, sizeCap);
    };
    return new CelProgram(expression, parsed, resultType, estimated, reparse, estimateWith);
  }
}

/** `ERROR: <input>:line:column: reason`, as upstream reports compile errors. */
function compileMessage(expression: string, e: unknown): string {
  const err = e as (ParseError | CelTypeError) & { range?: { start: number }; summary?: string };
  const raw = err.summary ?? String(err.message ?? e).split('\n')[0];
  // The checker's wording for a field an object type does not declare, in upstream's words.
  const reason = raw.replace(/^No such key: (.+)$/, "undefined field '$1'");
  const offset = err.range?.start ?? 0;
  const before = expression.slice(0, offset).split('\n');
  return `ERROR: <input>:${before.length}:${before[before.length - 1].length + 1}: ${reason}`;
}

/** The reason a literal pattern given to matches/find/findAll is not RE2, if one is not. */
function invalidRegexLiteral(node: EngineNode): string | undefined {
  if (node.op === 'rcall' || node.op === 'call') {
    const name: string = node.args[0];
    if (name === 'matches' || name === 'find' || name === 'findAll') {
      const argNodes: EngineNode[] = node.op === 'rcall' ? node.args[2] : node.args[1].slice(1);
      const pattern = argNodes[0];
      if (pattern?.op === 'value' && typeof pattern.args === 'string') {
        const err = regexError(pattern.args);
        if (err) return err;
      }
    }
  }
  for (const c of surfaceChildren(node)) {
    const err = invalidRegexLiteral(c as EngineNode);
    if (err) return err;
  }
  return undefined;
}
