import { JsonPath, itemsOf, valuesOf, type CustomResourceDefinition, type JSONSchemaProps, type ValidationRule } from '@orch/api';
import { FieldError, type KubeObject } from '@orch/apimachinery';
import {
  CelCompileError,
  CelCostEstimateError,
  CelCostLimitError,
  CelEnvironment,
  ESTIMATED_COST_LIMIT,
  MAX_REQUEST_SIZE_BYTES,
  PER_CALL_COST_LIMIT,
  RUNTIME_COST_BUDGET,
  type CelProgram,
  type CelSchema,
  type CelValueConverter,
} from '@orch/cel';
import type { CustomResourceRules } from '../registry/kinds';

// x-kubernetes-validations of custom resources (SPEC "Validation expressions"; upstream
// apiextensions-apiserver/pkg/apiserver/schema/cel): every rule of a schema node is compiled
// once per CRD version with `self` (and `oldSelf`) typed by that node; on each write the rules
// run against every value at their node, transition rules (those naming oldSelf) only where
// an old value correlates (object fields, map values, items of list-type map by key), within
// the per-call limit and one runtime budget per object.

/** Upstream StaticEstimatedCRDCostLimit: the estimated cost of every rule of a CRD together. */
const CRD_ESTIMATED_COST_LIMIT = 100_000_000;

const VALUE_TYPE: Record<string, string> = { object: 'object', array: 'array', string: 'string', integer: 'integer', number: 'number', boolean: 'boolean' };

interface CompiledRule {
  rule: ValidationRule;
  program: CelProgram;
  message?: CelProgram;
  transition: boolean;
  /** The rule's fieldPath (relative to its node) in error-path form (`.x` → `x`). */
  fieldPath?: string;
}

/** A schema node with the rules on it and the nodes below it that hold rules. */
interface CompiledNode {
  schema: JSONSchemaProps;
  rules: CompiledRule[];
  env?: CelEnvironment;
  properties?: Map<string, CompiledNode>;
  items?: CompiledNode;
  values?: CompiledNode;
}

/** A compile problem at a schema path (`properties[spec].x-kubernetes-validations[0].rule`). */
interface RuleProblem {
  path: string;
  error: FieldError;
}

function referencesOldSelf(expression: string): boolean {
  return /\boldSelf\b/.test(expression);
}

/** How many times a node's rules may run for one object: the product of the list and map sizes above it. */
function sizeOf(s: JSONSchemaProps, element: JSONSchemaProps | undefined): number {
  const minItem = element?.type === 'string' || element?.type === 'object' || element?.type === 'array' ? 2 : 1;
  if (s.type === 'array') return s.maxItems ?? Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minItem + 1));
  return s.maxProperties ?? Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minItem + 4));
}

/**
 * The compiled rules of one CRD version's schema. `compile` never throws: rules that do not
 * compile (or cost too much) are reported as problems and left out.
 */
export class CompiledValidationRules implements CustomResourceRules {
  private constructor(
    private readonly root: CompiledNode | undefined,
    readonly problems: readonly RuleProblem[],
  ) {}

  static compile(schema: JSONSchemaProps): CompiledValidationRules {
    const problems: RuleProblem[] = [];
    const total = { cost: 0 };
    // At the root, `self` is the whole object: apiVersion, kind and metadata (name, generateName) included.
    const root = compileNode({ ...schema, 'x-kubernetes-embedded-resource': true }, '', true, 1, problems, total);
    if (total.cost > CRD_ESTIMATED_COST_LIMIT) {
      problems.push({ path: '', error: FieldError.forbidden('x-kubernetes-validations', 'contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema') });
    }
    return new CompiledValidationRules(root, problems);
  }

  get empty(): boolean {
    return !this.root;
  }

  validate(obj: KubeObject, old: KubeObject | undefined): FieldError[] {
    if (!this.root) return [];
    const errs: FieldError[] = [];
    const run: Run = { errs, budget: RUNTIME_COST_BUDGET, converter: undefined, exhausted: false };
    visit(this.root, obj, old, '', run);
    return errs;
  }
}

function compileNode(schema: JSONSchemaProps, path: string, correlatable: boolean, cardinality: number, problems: RuleProblem[], total: { cost: number }): CompiledNode | undefined {
  const node: CompiledNode = { schema, rules: [] };
  const rules = schema['x-kubernetes-validations'] ?? [];
  if (rules.length > 0) {
    const celSchema = schema as CelSchema;
    node.env = new CelEnvironment({ variables: [{ name: 'self', schema: celSchema }, { name: 'oldSelf', schema: celSchema }] });
    rules.forEach((rule, i) => {
      const at = `${path ? `${path}.` : ''}x-kubernetes-validations[${i}]`;
      const compiled = compileRule(node.env!, rule, at, correlatable, cardinality, problems, total);
      if (compiled) node.rules.push(compiled);
    });
  }
  const child = (p: string) => (path ? `${path}.${p}` : p);
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    if (name === 'metadata' && path === '') continue;
    const c = compileNode(prop, child(`properties[${name}]`), correlatable, cardinality, problems, total);
    if (c) (node.properties ??= new Map()).set(name, c);
  }
  const items = itemsOf(schema);
  if (items) {
    // Items of a list-type map correlate with the old list's item of the same keys; others do not.
    node.items = compileNode(items, child('items'), correlatable && schema['x-kubernetes-list-type'] === 'map', cardinality * sizeOf(schema, items), problems, total);
  }
  const values = valuesOf(schema);
  if (values) node.values = compileNode(values, child('additionalProperties'), correlatable, cardinality * sizeOf(schema, values), problems, total);
  return node.rules.length || node.properties || node.items || node.values ? node : undefined;
}

function compileRule(env: CelEnvironment, rule: ValidationRule, at: string, correlatable: boolean, cardinality: number, problems: RuleProblem[], total: { cost: number }): CompiledRule | undefined {
  const transition = referencesOldSelf(rule.rule);
  if (transition && !correlatable) {
    problems.push({ path: `${at}.rule`, error: FieldError.invalid(`${at}.rule`, rule.rule, 'oldSelf cannot be used on the uncorrelatable portion of the schema') });
    return undefined;
  }
  let program: CelProgram;
  try {
    program = env.compile(rule.rule, { resultTypes: ['bool'], costBudget: PER_CALL_COST_LIMIT });
  } catch (e) {
    if (e instanceof CelCostEstimateError) problems.push({ path: `${at}.rule`, error: FieldError.forbidden(`${at}.rule`, e.message) });
    else problems.push({ path: `${at}.rule`, error: FieldError.invalid(`${at}.rule`, rule.rule, `compilation failed: ${(e as Error).message}`) });
    return undefined;
  }
  let message: CelProgram | undefined;
  if (rule.messageExpression) {
    try {
      message = env.compile(rule.messageExpression, { resultTypes: ['string'], costBudget: PER_CALL_COST_LIMIT });
    } catch (e) {
      const why = e instanceof CelCompileError ? e.message : String(e);
      problems.push({ path: `${at}.messageExpression`, error: FieldError.invalid(`${at}.messageExpression`, rule.messageExpression, `messageExpression compilation failed: ${why}`) });
      return undefined;
    }
    if (referencesOldSelf(rule.messageExpression) && !transition) {
      problems.push({ path: `${at}.messageExpression`, error: FieldError.invalid(`${at}.messageExpression`, rule.messageExpression, 'messageExpression may only reference oldSelf if the rule does') });
      return undefined;
    }
  }
  const cost = (program.estimatedCost + (message?.estimatedCost ?? 0)) * cardinality;
  if (program.estimatedCost * cardinality > ESTIMATED_COST_LIMIT) {
    const factor = (program.estimatedCost * cardinality) / ESTIMATED_COST_LIMIT;
    problems.push({
      path: `${at}.rule`,
      error: FieldError.forbidden(`${at}.rule`, `estimated rule cost exceeds budget by factor of ${factor >= 100 ? factor.toFixed(0) : factor.toFixed(1)}x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`),
    });
    return undefined;
  }
  total.cost += cost;
  let fieldPath: string | undefined;
  if (rule.fieldPath) {
    try {
      JsonPath.parse(rule.fieldPath);
      fieldPath = rule.fieldPath.startsWith('.') ? rule.fieldPath.slice(1) : rule.fieldPath;
    } catch (e) {
      problems.push({ path: `${at}.fieldPath`, error: FieldError.invalid(`${at}.fieldPath`, rule.fieldPath, (e as Error).message) });
      return undefined;
    }
  }
  return { rule, program, message, transition, fieldPath };
}

interface Run {
  errs: FieldError[];
  budget: number;
  converter: CelValueConverter | undefined;
  exhausted: boolean;
}

function childPath(base: string, key: string): string {
  return base ? `${base}.${key}` : key;
}

function visit(node: CompiledNode, value: unknown, old: unknown, path: string, run: Run): void {
  if (run.exhausted || value === undefined || value === null) return;
  if (node.rules.length) evaluate(node, value, old, path, run);
  if (typeof value !== 'object') return;
  if (Array.isArray(value)) {
    const items = node.items;
    if (!items) return;
    const keys = node.schema['x-kubernetes-list-map-keys'];
    const oldItems = Array.isArray(old) && node.schema['x-kubernetes-list-type'] === 'map' && keys ? old : undefined;
    value.forEach((item, i) => {
      const match = oldItems?.find((o) => keys!.every((k) => JSON.stringify((o as Record<string, unknown>)?.[k]) === JSON.stringify((item as Record<string, unknown>)?.[k])));
      visit(items, item, match, `${path}[${i}]`, run);
    });
    return;
  }
  const obj = value as Record<string, unknown>;
  const oldObj = old && typeof old === 'object' && !Array.isArray(old) ? (old as Record<string, unknown>) : undefined;
  for (const [name, child] of node.properties ?? []) visit(child, obj[name], oldObj?.[name], childPath(path, name), run);
  if (node.values) for (const [k, v] of Object.entries(obj)) visit(node.values, v, oldObj?.[k], `${path}[${k}]`, run);
}

function evaluate(node: CompiledNode, value: unknown, old: unknown, path: string, run: Run): void {
  const env = node.env!;
  const converter = (run.converter ??= env.converter());
  const self = converter.convert(value, node.schema as CelSchema);
  const oldSelf = old === undefined || old === null ? undefined : converter.convert(old, node.schema as CelSchema);
  const type = node.schema['x-kubernetes-int-or-string'] ? 'integer or string' : (VALUE_TYPE[node.schema.type ?? ''] ?? 'object');
  for (const c of node.rules) {
    if (c.transition && oldSelf === undefined) continue;
    const at = c.fieldPath ? (c.fieldPath.startsWith('[') ? `${path}${c.fieldPath}` : childPath(path, c.fieldPath)) : path;
    const activation = { self, oldSelf: oldSelf ?? null };
    let result: unknown;
    try {
      const out = c.program.evaluate(activation, { costLimit: Math.min(PER_CALL_COST_LIMIT, run.budget) });
      if (out instanceof Promise) throw new Error('asynchronous functions are not available in validation rules');
      run.budget -= out.cost;
      result = out.value;
    } catch (e) {
      if (e instanceof CelCostLimitError) {
        if (run.budget <= PER_CALL_COST_LIMIT) {
          run.errs.push(FieldError.invalid(at || '<nil>', type, 'validation failed due to running out of cost budget, no further validation rules will be run'));
          run.exhausted = true;
          return;
        }
        run.errs.push(FieldError.invalid(at || '<nil>', type, `call cost exceeds limit for rule: ${c.rule.rule}`));
      } else {
        run.errs.push(FieldError.invalid(at || '<nil>', type, (e as Error).message));
      }
      continue;
    }
    if (result === true) continue;
    run.errs.push(errorFor(at || '<nil>', type, messageOf(c, activation, run), c.rule.reason));
  }
}

/** The rule's message: messageExpression's result when it yields a non-empty string, else message, else the rule. */
function messageOf(c: CompiledRule, activation: Record<string, unknown>, run: Run): string {
  if (c.message) {
    try {
      const out = c.message.evaluate(activation, { costLimit: Math.min(PER_CALL_COST_LIMIT, run.budget) });
      if (!(out instanceof Promise)) {
        run.budget -= out.cost;
        if (typeof out.value === 'string' && out.value.trim() !== '' && !/[\r\n]/.test(out.value)) return out.value.trim();
      }
    } catch {
      // upstream logs a failed messageExpression and falls back to message
    }
  }
  return c.rule.message?.trim() || `failed rule: ${c.rule.rule}`;
}

function errorFor(path: string, type: string, detail: string, reason: string | undefined): FieldError {
  switch (reason) {
    case 'FieldValueForbidden':
      return FieldError.forbidden(path, detail);
    case 'FieldValueRequired':
      return FieldError.required(path, detail);
    case 'FieldValueDuplicate':
      return FieldError.duplicate(path, type);
    default:
      return FieldError.invalid(path, type, detail);
  }
}

const compiledBySchema = new WeakMap<JSONSchemaProps, CompiledValidationRules>();

/** The compiled rules of a schema (compiled once per schema object: a CRD version as served). */
export function validationRulesFor(schema: JSONSchemaProps): CompiledValidationRules {
  let rules = compiledBySchema.get(schema);
  if (!rules) compiledBySchema.set(schema, (rules = CompiledValidationRules.compile(schema)));
  return rules;
}

/** The CRD's rules that do not compile or cost too much, as errors on the CRD (its strategy's rule check). */
export function crdRuleErrors(crd: CustomResourceDefinition): FieldError[] {
  const errs: FieldError[] = [];
  (crd.spec?.versions ?? []).forEach((v, i) => {
    const schema = v.schema?.openAPIV3Schema;
    if (!schema) return;
    const base = `spec.versions[${i}].schema.openAPIV3Schema`;
    for (const p of CompiledValidationRules.compile(schema).problems) {
      const e = p.error;
      errs.push(new FieldError(e.type, e.field ? `${base}.${e.field}` : base, e.value, e.detail));
    }
  });
  return errs;
}
