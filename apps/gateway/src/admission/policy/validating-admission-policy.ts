import { Inject, Injectable } from '@nestjs/common';
import { parseApiVersion, type ResourceDef } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import { celToJson, CelCompileError, CelCostLimitError, PER_CALL_COST_LIMIT, RUNTIME_COST_BUDGET, type CelProgram, type CelResult } from '@orch/cel';
import { AdmissionPluginProvider, type AdmissionAttributes, type AdmissionPlugin, type AdmissionResponse } from '../../pipeline/admit';
import { admissionActivation } from '../admission-request';
import { AdmissionState } from '../admission-state';
import { matchingResource, namespaceSelectorMatches, objectSelectorMatches, selectorMatches, type MatchedAs } from '../matching';
import { findNamespace } from '../namespace-annotations';
import { policyEnv } from './policy-env';
import type { MatchResources, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from './policy-types';

export const VALIDATING_ADMISSION_POLICY = 'ValidatingAdmissionPolicy';
export const AUDIT_VALIDATION_FAILURE = 'validation.policy.admission.k8s.io/validation_failure';

/** An expression compiled once per policy generation, or the reason it does not compile. */
interface Compiled {
  expression: string;
  program?: CelProgram;
  error?: string;
}

interface CompiledPolicy {
  policy: ValidatingAdmissionPolicy;
  paramResource?: ResourceDef;
  matchConditions: (Compiled & { name: string })[];
  variables: (Compiled & { name: string })[];
  validations: (Compiled & { message?: string; messageExpression?: Compiled; reason?: string })[];
  auditAnnotations: (Compiled & { key: string })[];
}

function compile(expression: string, resultTypes?: string[]): Compiled {
  try {
    return { expression, program: policyEnv().compile(expression, resultTypes ? { resultTypes } : {}) };
  } catch (e) {
    return { expression, error: e instanceof CelCompileError ? e.message : String(e) };
  }
}

/** An evaluation failure of one expression: subject to the policy's failurePolicy. */
class PolicyError extends Error {}

/** The denial text of upstream: `ValidatingAdmissionPolicy 'p' with binding 'b' denied request: ...`. */
function denial(a: AdmissionAttributes, policy: string, binding: string, message: string, reason: string | undefined): StatusError {
  const text = `ValidatingAdmissionPolicy '${policy}' with binding '${binding}' denied request: ${message}`;
  const qr = `${a.resource.resource}${a.resource.group ? `.${a.resource.group}` : ''}`;
  switch (reason ?? 'Invalid') {
    case 'Unauthorized':
      return new StatusError(401, 'Unauthorized', text);
    case 'Forbidden':
      return StatusError.forbidden({ group: a.resource.group, resource: a.resource.resource }, a.name, text);
    case 'RequestEntityTooLarge':
      return new StatusError(413, 'RequestEntityTooLarge', text);
    default:
      return new StatusError(422, 'Invalid', `${qr} "${a.name}" is invalid: : ${text}`, { name: a.name, group: a.resource.group, kind: a.resource.resource, causes: [{ message: text, field: '' }] });
  }
}

/**
 * ValidatingAdmissionPolicy (upstream plugin of the same name): for every
 * ValidatingAdmissionPolicyBinding whose policy and match resources apply to the request, the
 * policy's expressions run (once per parameter object when the policy has a paramKind):
 * matchConditions select, variables are computed, each validation must be true — a false
 * one, per the binding's validationActions, refuses the request (Deny, with the message,
 * messageExpression or the expression itself), adds a warning (Warn) or an audit annotation
 * (Audit) — and auditAnnotations are recorded. Expressions are compiled once per policy
 * generation; an expression that fails to compile or evaluate (cost limit included) follows
 * the policy's failurePolicy.
 */
@AdmissionPluginProvider()
@Injectable()
export class ValidatingAdmissionPolicyPlugin implements AdmissionPlugin {
  readonly name = VALIDATING_ADMISSION_POLICY;
  private compiled = new Map<string, CompiledPolicy>();
  private generation = -1;
  /** The bindings in name order, sorted once per generation of the binding cache. */
  private sortedBindings: { generation: number; list: ValidatingAdmissionPolicyBinding[] } = { generation: -1, list: [] };
  /** `namespaceObject` of a request, converted once for all its bindings. */
  private readonly namespaceObjects = new WeakMap<AdmissionAttributes, Promise<unknown>>();

  constructor(@Inject(AdmissionState) private readonly state: AdmissionState) {}

  handles(): boolean {
    return true;
  }

  private bindings(): ValidatingAdmissionPolicyBinding[] {
    const cache = this.state.cache<ValidatingAdmissionPolicyBinding>('admissionregistration.orch.io', 'validatingadmissionpolicybindings');
    if (cache.generation !== this.sortedBindings.generation) {
      const name = (b: ValidatingAdmissionPolicyBinding) => b.metadata.name ?? '';
      this.sortedBindings = { generation: cache.generation, list: cache.list().sort((x, y) => (name(x) < name(y) ? -1 : name(x) > name(y) ? 1 : 0)) };
    }
    return this.sortedBindings.list;
  }

  /** Policies by name, compiled (recompiled only for changed policies). */
  private policies(): Map<string, CompiledPolicy> {
    const cache = this.state.cache<ValidatingAdmissionPolicy>('admissionregistration.orch.io', 'validatingadmissionpolicies');
    if (cache.generation === this.generation) return this.compiled;
    this.generation = cache.generation;
    const next = new Map<string, CompiledPolicy>();
    for (const p of cache.list()) {
      const old = this.compiled.get(p.metadata.name ?? '');
      next.set(p.metadata.name ?? '', old && old.policy.metadata.resourceVersion === p.metadata.resourceVersion ? old : this.compilePolicy(p));
    }
    this.compiled = next;
    return next;
  }

  private compilePolicy(policy: ValidatingAdmissionPolicy): CompiledPolicy {
    const spec = policy.spec ?? {};
    const pk = spec.paramKind;
    const gv = pk?.apiVersion ? parseApiVersion(pk.apiVersion) : undefined;
    return {
      policy,
      paramResource: gv && pk?.kind ? this.state.catalog.lookupKind(gv.group, gv.version, pk.kind) : undefined,
      matchConditions: (spec.matchConditions ?? []).map((c) => ({ name: c.name, ...compile(c.expression, ['bool']) })),
      variables: (spec.variables ?? []).map((v) => ({ name: v.name, ...compile(v.expression) })),
      validations: (spec.validations ?? []).map((v) => ({
        ...compile(v.expression, ['bool']),
        message: v.message,
        reason: v.reason,
        messageExpression: v.messageExpression ? compile(v.messageExpression, ['string']) : undefined,
      })),
      auditAnnotations: (spec.auditAnnotations ?? []).map((x) => ({ key: x.key, ...compile(x.valueExpression, ['string', 'null_type']) })),
    };
  }

  async validate(a: AdmissionAttributes): Promise<AdmissionResponse | void> {
    const bindings = this.bindings();
    if (bindings.length === 0) return;
    const policies = this.policies();
    const out: AdmissionResponse = {};
    const audit: unknown[] = [];
    for (const binding of bindings) {
      const cp = policies.get(binding.spec?.policyName ?? '');
      if (!cp) continue;
      const matched = await this.matches(cp.policy.spec?.matchConstraints, a, true);
      if (!matched) continue;
      if (binding.spec?.matchResources && !(await this.matches(binding.spec.matchResources, a, false))) continue;
      const failurePolicy = cp.policy.spec?.failurePolicy ?? 'Fail';
      try {
        await this.evaluate(cp, binding, await this.state.versioned(a, matched), out, audit);
      } catch (e) {
        if (e instanceof StatusError) throw e;
        if (failurePolicy === 'Ignore') continue;
        throw denial(a, cp.policy.metadata.name ?? '', binding.metadata.name ?? '', (e as Error).message, 'Forbidden');
      }
    }
    if (audit.length) (out.auditAnnotations ??= {})[AUDIT_VALIDATION_FAILURE] = JSON.stringify(audit);
    return out;
  }

  /**
   * Whether match resources select the request, and as which resource and kind (the policy's
   * decide the version its expressions see under matchPolicy Equivalent). A policy's must name
   * the resource in its resourceRules; a binding's may leave them out (then it narrows only by
   * selectors and exclusions).
   */
  private async matches(m: MatchResources | undefined, a: AdmissionAttributes, rulesRequired: boolean): Promise<MatchedAs | undefined> {
    if (!m) return undefined;
    const def = this.state.catalog.lookup(a.resource.group, a.resource.version, a.resource.resource);
    const target = { operation: a.operation, resource: a.resource, kind: a.kind, subresource: a.subresource, namespaced: def ? def.scope === 'Namespaced' : !!a.namespace, name: a.name };
    const own: MatchedAs = { resource: a.resource, kind: a.kind };
    const matched = rulesRequired || (m.resourceRules ?? []).length ? matchingResource(m.resourceRules ?? [], target, m.matchPolicy ?? 'Equivalent', this.state.catalog) : own;
    if (!matched) return undefined;
    if ((m.excludeResourceRules ?? []).length && matchingResource(m.excludeResourceRules ?? [], target, m.matchPolicy ?? 'Equivalent', this.state.catalog)) return undefined;
    if (!objectSelectorMatches(m.objectSelector, a)) return undefined;
    if (m.namespaceSelector && !namespaceSelectorMatches(m.namespaceSelector, a, a.namespace ? await findNamespace(this.state, a.namespace) : undefined)) return undefined;
    return matched;
  }

  /** The parameter objects of a binding (undefined entries: none needed); throws a denial when none is found and the binding says Deny. */
  private params(cp: CompiledPolicy, binding: ValidatingAdmissionPolicyBinding, a: AdmissionAttributes): (KubeObject | null)[] {
    if (!cp.policy.spec?.paramKind) return [null];
    const ref = binding.spec?.paramRef;
    if (!cp.paramResource) throw new PolicyError(`failed to find resource referenced by paramKind: '${cp.policy.spec.paramKind.apiVersion}, Kind=${cp.policy.spec.paramKind.kind}'`);
    if (!ref) throw new PolicyError('the binding has no paramRef but the policy has a paramKind');
    const cache = this.state.cache(cp.paramResource.group, cp.paramResource.resource);
    const namespaced = cp.paramResource.scope === 'Namespaced';
    const ns = namespaced ? (ref.namespace ?? a.namespace) : '';
    let found: KubeObject[];
    if (ref.name) {
      const one = cache.get(ns, ref.name);
      found = one ? [one] : [];
    } else found = cache.list(namespaced ? ns : undefined).filter((o) => selectorMatches(ref.selector ?? {}, o.metadata.labels));
    if (found.length === 0) {
      if ((ref.parameterNotFoundAction ?? 'Deny') === 'Allow') return [];
      throw denial(a, cp.policy.metadata.name ?? '', binding.metadata.name ?? '', 'failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction', 'Forbidden');
    }
    return found;
  }

  private async evaluate(cp: CompiledPolicy, binding: ValidatingAdmissionPolicyBinding, a: AdmissionAttributes, out: AdmissionResponse, audit: unknown[]): Promise<void> {
    const policyName = cp.policy.metadata.name ?? '';
    const bindingName = binding.metadata.name ?? '';
    const actions = binding.spec?.validationActions ?? [];
    const base = admissionActivation(policyEnv(), a, this.state.authorizer);
    const env = policyEnv();
    let nsPromise = this.namespaceObjects.get(a);
    if (!nsPromise) this.namespaceObjects.set(a, (nsPromise = a.namespace ? findNamespace(this.state, a.namespace).then((ns) => env.toCel(ns)) : Promise.resolve(null)));
    const namespaceObject = await nsPromise;
    let budget = RUNTIME_COST_BUDGET;
    const failed = (c: Compiled, e: unknown): PolicyError => {
      if (e instanceof CelCostLimitError && budget < PER_CALL_COST_LIMIT) return new PolicyError('validation failed due to running out of cost budget, no further validation rules will be run');
      return new PolicyError(`expression '${c.expression}' resulted in error: ${(e as Error).message}`);
    };
    const settle = (r: CelResult): unknown => {
      budget -= r.cost;
      return r.value;
    };
    /** An expression's value: synchronous unless the expression calls the authorizer (then a promise). */
    const run = (c: Compiled, activation: Record<string, unknown>): unknown => {
      if (c.error) throw new PolicyError(`compilation error: ${c.error}`);
      let pending: CelResult | Promise<CelResult>;
      try {
        pending = c.program!.evaluate(activation, { costLimit: Math.min(PER_CALL_COST_LIMIT, budget) });
      } catch (e) {
        throw failed(c, e);
      }
      if (!(pending instanceof Promise)) return settle(pending);
      return pending.then(settle, (e) => {
        throw failed(c, e);
      });
    };
    for (const param of this.params(cp, binding, a)) {
      const variables: Record<string, unknown> = Object.create(null);
      const activation: Record<string, unknown> = { ...base, params: param ? env.toCel(param) : null, namespaceObject, variables };
      let selected = true;
      for (const mc of cp.matchConditions) {
        const selects = run(mc, activation);
        if ((selects instanceof Promise ? await selects : selects) !== true) {
          selected = false;
          break;
        }
      }
      if (!selected) continue;
      for (const v of cp.variables) {
        try {
          const value = run(v, activation);
          variables[v.name] = value instanceof Promise ? await value : value;
        } catch (e) {
          // A variable that fails fails only the expressions that use it.
          Object.defineProperty(variables, v.name, { enumerable: true, get: () => { throw e; } });
        }
      }
      for (const [index, v] of cp.validations.entries()) {
        const holds = run(v, activation);
        if ((holds instanceof Promise ? await holds : holds) === true) continue;
        let message = v.message ?? `failed expression: ${v.expression}`;
        if (v.messageExpression) {
          try {
            const m = await run(v.messageExpression, activation);
            if (typeof m === 'string' && m.trim() !== '' && !m.includes('\n')) message = m;
          } catch {
            // upstream keeps the static message when messageExpression fails
          }
        }
        if (actions.includes('Deny')) throw denial(a, policyName, bindingName, message, v.reason);
        if (actions.includes('Warn')) (out.warnings ??= []).push(`Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}': ${message}`);
        if (actions.includes('Audit')) audit.push({ message, policy: policyName, binding: bindingName, expressionIndex: index, validationActions: actions });
      }
      for (const x of cp.auditAnnotations) {
        const value = await run(x, activation);
        if (value !== null && value !== undefined) (out.auditAnnotations ??= {})[`${policyName}/${x.key}`] = String(celToJson(value));
      }
    }
  }
}
