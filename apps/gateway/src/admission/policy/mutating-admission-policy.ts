import { Injectable } from '@nestjs/common';
import { checkFields, objectSchemaOf, type ResourceDef } from '@orch/api';
import { applyJsonPatch, mergeTyped, SchemaCursor, StatusError, type KubeObject, type ObjectSchema } from '@orch/apimachinery';
import { analyseObjectLiterals, celToJson, JsonPatchLibrary } from '@orch/cel';
import { AdmissionPluginProvider, type AdmissionAttributes, type AdmissionPlugin, type AdmissionResponse } from '../../pipeline/admit';
import { kindSchema } from '../admission-request';
import { StateAdmissionPlugin } from '../admission-state';
import { mutatingPolicyEnv } from './policy-env';
import { BudgetedRun } from './validating-admission-policy';
import { PolicyRequest, PolicySource, type Compiled, type CompiledPolicy } from './policy-source';
import { mutationResultError } from './policy-validation';
import type { MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding } from './policy-types';

export const MUTATING_ADMISSION_POLICY = 'MutatingAdmissionPolicy';
const GROUP = 'admissionregistration.orch.io';
const VERSION = 'v1alpha1';

type PatchType = 'ApplyConfiguration' | 'JSONPatch';

interface CompiledMutation extends Compiled {
  patchType: PatchType;
  /** A construction named otherwise than its field's path: the mutation fails when it runs, as upstream's does. */
  typeMismatch?: string;
}

interface CompiledMutatingPolicy extends CompiledPolicy<MutatingAdmissionPolicy> {
  mutations: CompiledMutation[];
}

function compileMutation(patchType: PatchType, expression: string): CompiledMutation {
  try {
    const program = mutatingPolicyEnv().compile(expression);
    const wrong = mutationResultError(patchType, expression, program.resultType);
    if (wrong) return { patchType, expression, error: wrong };
    const { typeMismatch } = analyseObjectLiterals(expression);
    return { patchType, expression, program, ...(typeMismatch ? { typeMismatch } : {}) };
  } catch (e) {
    return { patchType, expression, error: (e as Error).message };
  }
}

type Kind = { group: string; version: string; kind: string };

/**
 * An apply configuration as upstream's merge takes it: declared by the kind's schema with values
 * of the declared types (else `failed to convert patch object to typed object: ...`) and setting
 * no atomic part (else `invalid ApplyConfiguration: ...`).
 */
function typedConfiguration(patch: object, kind: Kind, def: ResourceDef): object {
  if (!def.custom) {
    const checked = checkFields(patch, kind.group, kind.version, kind.kind);
    const first = checked.unknown[0] ? `${checked.unknown[0]}: field not declared in schema` : checked.typeErrors[0] ? typedError(checked.typeErrors[0].field, checked.typeErrors[0].detail, checked.typeErrors[0].value) : undefined;
    if (first) throw new Error(`error applying patch: failed to convert patch object to typed object: ${first}`);
  }
  const atomics = atomicPaths(patch, objectSchemaOf(def));
  if (atomics.length) throw new Error(`error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: ${atomics.join(', ')}`);
  return patch;
}

/** A JSON-patched object must decode strictly as its kind (upstream decodes the patched JSON with strict decoding). */
function decodableOrThrow(obj: KubeObject, kind: Kind, def: ResourceDef): void {
  if (def.custom) return;
  const checked = checkFields(obj, kind.group, kind.version, kind.kind);
  if (checked.unknown.length) throw new Error(`strict decoding error: ${checked.unknown.map((u) => `unknown field ${JSON.stringify(u.replace(/^\./, ''))}`).join(', ')}`);
  if (checked.typeErrors.length) throw new Error(checked.typeErrors[0].detail);
}

const pathText = (path: readonly string[]) => path.join('') || '.';

/**
 * The places where an apply configuration sets an atomic list, map or struct (upstream
 * validatePatch/findAtomics): merging it would silently drop what the object holds there and
 * the configuration does not repeat, so such a configuration is refused.
 */
export function atomicPaths(patch: unknown, schema: ObjectSchema): string[] {
  const found: string[] = [];
  const walk = (value: unknown, cur: SchemaCursor, path: string[]) => {
    if (value === null || typeof value !== 'object') return;
    const shape = cur.shapeOf(value);
    if (path.length && (shape.kind === 'list' ? (shape.listType ?? 'atomic') === 'atomic' : !!shape.atomic)) {
      found.push(pathText(path));
      return;
    }
    if (Array.isArray(value)) {
      const itemCur = cur.item();
      value.forEach((item, i) => {
        const keys = shape.listType === 'map' && item && typeof item === 'object' ? (shape.listMapKeys ?? []).map((k) => `${k}=${JSON.stringify((item as Record<string, unknown>)[k])}`) : [];
        walk(item, itemCur, [...path, keys.length ? `[${keys.join(',')}]` : `[${i}]`]);
      });
      return;
    }
    for (const [k, v] of Object.entries(value)) walk(v, cur.child(k), [...path, `.${k}`]);
  };
  walk(patch, SchemaCursor.root(schema), []);
  return found;
}

/** Upstream's words for a value the kind's schema does not declare or type so (structured-merge-diff). */
function typedError(field: string, detail: string, value: unknown): string {
  const got = typeof value === 'number' ? (Number.isInteger(value) ? 'int64' : 'float64') : typeof value === 'boolean' ? 'bool' : Array.isArray(value) ? '[]interface {}' : value !== null && typeof value === 'object' ? 'map[string]interface {}' : 'string';
  const wanted = / of type (?:u?int\d*|float\d*)$/.test(detail) ? 'numeric (int or float)' : / of type string$/.test(detail) ? 'string' : / of type bool$/.test(detail) ? 'boolean' : / of type \[\]/.test(detail) ? 'list' : 'map';
  return `.${field}: expected ${wanted}, got ${got}`;
}

/** A refusal in upstream's words (`policy 'p' with binding 'b' denied request: ...`). */
function refusal(a: AdmissionAttributes, policy: string, binding: string, message: string): StatusError {
  return StatusError.forbidden({ group: a.resource.group, resource: a.resource.resource }, a.name, `policy '${policy}' with binding '${binding}' denied request: ${message}`);
}

/**
 * MutatingAdmissionPolicy (upstream plugin of the same name, alpha): for every binding whose
 * policy and match resources select the request, the policy's mutations run in order, once
 * per parameter object — an ApplyConfiguration expression returns an `Object{...}` merged into
 * the object with server-side apply's merge rules (maps by key, list-map items by their keys),
 * a JSONPatch expression returns `JSONPatch{...}` operations applied to it. matchConditions
 * select and variables are computed as for validating policies. A change asks the chain to run
 * again; on that second pass only IfNeeded policies run. A mutation fails (and failurePolicy
 * decides) when it does not evaluate, when a construction is not named by its field path, when
 * an apply configuration sets a field the kind does not declare, a value of the wrong type or
 * an atomic list, map or struct, and when a patched object no longer decodes as its kind — the
 * checks upstream makes when it converts the configuration or the patched object to the kind's
 * type (custom resources: atomic parts only). DELETE, as upstream 1.32: the policies that match
 * it resolve their parameters and evaluate their matchConditions (a missing parameter object
 * or a failing condition refuses the request under Fail), but there is no object to mutate.
 * Active only while the v1alpha1 resources are served.
 */
@AdmissionPluginProvider()
@Injectable()
export class MutatingAdmissionPolicyPlugin extends StateAdmissionPlugin implements AdmissionPlugin {
  readonly name = MUTATING_ADMISSION_POLICY;
  private readonly source = new PolicySource<MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding, CompiledMutatingPolicy>(this.state, GROUP, 'mutatingadmissionpolicies', 'mutatingadmissionpolicybindings', (policy, shared) => ({
    ...shared,
    mutations: (policy.spec?.mutations ?? []).map((m) => {
      const expression = (m.patchType === 'JSONPatch' ? m.jsonPatch?.expression : m.applyConfiguration?.expression) ?? '';
      return compileMutation(m.patchType === 'JSONPatch' ? 'JSONPatch' : 'ApplyConfiguration', expression);
    }),
  }));

  handles(): boolean {
    return !!this.state.catalog.lookup(GROUP, VERSION, 'mutatingadmissionpolicies');
  }

  async mutate(a: AdmissionAttributes): Promise<AdmissionResponse | void> {
    if (!a.object && a.operation !== 'DELETE') return;
    const candidates = this.source.candidates(a);
    if (candidates.length === 0) return;
    const reinvoking = a.reinvocation?.isReinvoke ?? false;
    for (const c of candidates) {
      const cp = c.compiled;
      if (reinvoking && cp.policy.spec?.reinvocationPolicy !== 'IfNeeded') continue;
      if (c.selectors.length && !(await this.source.selects(c, a))) continue;
      const policyName = cp.policy.metadata.name ?? '';
      const bindingName = c.binding.metadata.name ?? '';
      try {
        const params = this.source.params(c, a, (_, __, m) => refusal(a, policyName, bindingName, m));
        for (const param of params) {
          // Each parameter object sees the object as the previous mutations left it.
          const request = new PolicyRequest(this.state, a);
          await request.load();
          const versioned = await this.state.versioned(a, c.matched);
          const changed = await this.apply(cp, versioned, request.activation(versioned, param, cp.variables.length > 0));
          if (changed) {
            await this.state.applyVersioned(a, changed);
            if (a.reinvocation && !a.reinvocation.isReinvoke) a.reinvocation.shouldReinvoke = true;
          }
        }
      } catch (e) {
        if (e instanceof StatusError) throw e;
        if ((cp.policy.spec?.failurePolicy ?? 'Fail') === 'Ignore') continue;
        throw refusal(a, policyName, bindingName, (e as Error).message);
      }
    }
  }

  /** Runs a policy's mutations on the (versioned) object; returns the mutated object, or undefined when nothing changed. */
  private async apply(cp: CompiledMutatingPolicy, versioned: AdmissionAttributes, activation: Record<string, unknown>): Promise<KubeObject | undefined> {
    const run = new BudgetedRun();
    const variables = activation.variables as Record<string, unknown>;
    for (const mc of cp.matchConditions) if ((await run.value(mc, activation)) !== true) return undefined;
    for (const v of cp.variables) {
      try {
        variables[v.name] = await run.value(v, activation);
      } catch (e) {
        Object.defineProperty(variables, v.name, { enumerable: true, get: () => { throw e; } });
      }
    }
    // DELETE: nothing to mutate (upstream calls no patcher without an object).
    if (!versioned.object) return undefined;
    const def = this.state.catalog.lookup(versioned.resource.group, versioned.resource.version, versioned.resource.resource)!;
    const before = versioned.object;
    let current: KubeObject = before;
    const act: Record<string, unknown> = { ...activation, jsonpatch: new JsonPatchLibrary() };
    for (const m of cp.mutations) {
      const value = celToJson(await run.value(m, act));
      if (m.typeMismatch) throw new Error(m.typeMismatch);
      if (m.patchType === 'JSONPatch') {
        if (!Array.isArray(value)) throw new Error(`expression '${m.expression}' must return a list of JSONPatch, not ${JSON.stringify(value)}`);
        try {
          current = applyJsonPatch(structuredClone(current), value) as KubeObject;
        } catch (e) {
          throw new Error(`JSON Patch: ${(e as Error).message}`);
        }
        decodableOrThrow(current, versioned.kind, def);
      } else {
        if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`expression '${m.expression}' must return an Object, not ${JSON.stringify(value)}`);
        current = mergeTyped(structuredClone(current), typedConfiguration(value, versioned.kind, def), objectSchemaOf(def)) as KubeObject;
      }
      // Later mutations of the policy see the object as mutated so far.
      act.object = mutatingPolicyEnv().toCel(current, kindSchema(versioned.kind));
    }
    return JSON.stringify(current) === JSON.stringify(before) ? undefined : current;
  }
}
