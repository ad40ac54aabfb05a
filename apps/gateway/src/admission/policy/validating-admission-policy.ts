import { Injectable } from '@nestjs/common';
import { StatusError } from '@orch/apimachinery';
import type { GroupVersionKind } from '@orch/api';
import { celToJson, CelCostLimitError, PER_CALL_COST_LIMIT, RUNTIME_COST_BUDGET, type CelProgram, type CelResult } from '@orch/cel';
import { AdmissionPluginProvider, type AdmissionAttributes, type AdmissionPlugin, type AdmissionResponse } from '../../pipeline/admit';
import { kindSchema } from '../admission-request';
import { StateAdmissionPlugin } from '../admission-state';
import { compileExpression, PolicyRequest, PolicySource, type Candidate, type Compiled, type CompiledPolicy, type PolicyObject } from './policy-source';
import type { ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from './policy-types';

export const VALIDATING_ADMISSION_POLICY = 'ValidatingAdmissionPolicy';
export const AUDIT_VALIDATION_FAILURE = 'validation.policy.admission.k8s.io/validation_failure';

interface CompiledValidatingPolicy extends CompiledPolicy<ValidatingAdmissionPolicy> {
  validations: (Compiled & { message?: string; messageExpression?: Compiled; reason?: string })[];
  auditAnnotations: (Compiled & { key: string })[];
}

type ValidatingCandidate = Candidate<ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, CompiledValidatingPolicy>;

/** Every compiled expression of a policy. */
const expressionsOf = (cp: CompiledValidatingPolicy): (Compiled | undefined)[] => [...cp.matchConditions, ...cp.variables, ...cp.validations, ...cp.validations.map((v) => v.messageExpression), ...cp.auditAnnotations];

const cannotOverrun = new WeakMap<object, WeakMap<GroupVersionKind, Map<number, boolean>>>();

/**
 * Whether a policy's expressions together cannot reach the per-expression cost limit (nor,
 * since that is lower, the policy's budget) for a request of `kind`: the sum of their
 * worst-case costs estimated with `object` and `oldObject` of the kind's schema (the values
 * they are converted by, which admission has validated against it), an upper bound of what
 * they cost, is below it. With `sizeCap`, of such objects in which no size is above it (see
 * PolicyRequest.sizeCap). Such a policy is evaluated without counting. Decided once per compiled policy,
 * kind object and cap (pass a candidate's `matched.kind`, the same object for every request
 * until the bindings index is rebuilt).
 */
export function withinLimits<T extends CompiledPolicy<PolicyObject>>(cp: T, kind: GroupVersionKind, expressions: (cp: T) => (Compiled | undefined)[] = expressionsOf as never, sizeCap = Infinity): boolean {
  let byKind = cannotOverrun.get(cp);
  if (!byKind) cannotOverrun.set(cp, (byKind = new WeakMap()));
  let byCap = byKind.get(kind);
  if (!byCap) byKind.set(kind, (byCap = new Map()));
  let within = byCap.get(sizeCap);
  if (within === undefined) {
    const schema = kindSchema(kind);
    const cost = (p: CelProgram) => (schema ? p.estimatedCostWith({ object: schema, oldObject: schema }, sizeCap) : p.estimatedCost);
    const all = expressions(cp).filter((e): e is Compiled => !!e);
    within = all.every((e) => e.program) && all.reduce((sum, e) => sum + cost(e.program!), 0) <= Math.min(PER_CALL_COST_LIMIT, RUNTIME_COST_BUDGET);
    byCap.set(sizeCap, within);
  }
  return within;
}

/** An evaluation failure of one expression: subject to the policy's failurePolicy. */
export class PolicyError extends Error {}

/** The denial of a request by a candidate's policy, with upstream's text: `ValidatingAdmissionPolicy 'p' with binding 'b' denied request: ...`. */
function denial(a: AdmissionAttributes, c: ValidatingCandidate, message: string, reason: string | undefined): StatusError {
  const text = `ValidatingAdmissionPolicy '${c.compiled.policy.metadata.name ?? ''}' with binding '${c.binding.metadata.name ?? ''}' denied request: ${message}`;
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
export class ValidatingAdmissionPolicyPlugin extends StateAdmissionPlugin implements AdmissionPlugin {
  readonly name = VALIDATING_ADMISSION_POLICY;
  private readonly source = new PolicySource<ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, CompiledValidatingPolicy>(
    this.state,
    'admissionregistration.orch.io',
    'validatingadmissionpolicies',
    'validatingadmissionpolicybindings',
    (policy, shared) => {
      const spec = policy.spec ?? {};
      return {
        ...shared,
        validations: (spec.validations ?? []).map((v) => ({
          ...compileExpression(v.expression, ['bool']),
          message: v.message,
          reason: v.reason,
          messageExpression: v.messageExpression ? compileExpression(v.messageExpression, ['string']) : undefined,
        })),
        auditAnnotations: (spec.auditAnnotations ?? []).map((x) => ({ key: x.key, ...compileExpression(x.valueExpression, ['string', 'null_type']) })),
      };
    },
  );

  async validate(a: AdmissionAttributes): Promise<AdmissionResponse | void> {
    const candidates = this.source.candidates(a);
    if (candidates.length === 0) return;
    const out: AdmissionResponse = {};
    const audit: unknown[] = [];
    const request = new PolicyRequest(this.state, a, this.source.readsOf(candidates, expressionsOf));
    const loading = request.load();
    if (loading) await loading;
    // Synchronous where it can be (a policy of synchronous expressions on the request's own kind): no promise, no await per policy.
    for (const c of candidates) {
      if (c.selectors.length && !(await this.source.selects(c, a))) continue;
      const cp = c.compiled;
      try {
        const pending = this.state.versioned(a, c.matched);
        const versioned = pending instanceof Promise ? await pending : pending;
        const params = this.source.params(cp, c.binding, a, (m) => denial(a, c, m, 'Forbidden'));
        for (let i = 0; i < params.length; i++) {
          const evaluating = settle(this.evaluation(c, request, request.activation(versioned, params[i], cp.variables.length > 0), out, audit));
          if (evaluating) await evaluating;
        }
      } catch (e) {
        if (e instanceof StatusError) throw e;
        if ((cp.policy.spec?.failurePolicy ?? 'Fail') === 'Ignore') continue;
        throw denial(a, c, (e as Error).message, 'Forbidden');
      }
    }
    if (audit.length) (out.auditAnnotations ??= {})[AUDIT_VALIDATION_FAILURE] = JSON.stringify(audit);
    return out;
  }

  /**
   * The evaluation of one candidate's policy for its binding and one parameter object
   * (`activation`, one of `request`'s, holds `params` and an empty `variables`), as steps run by {@link settle}:
   * a step yields the promise of an expression that calls the authorizer (other values are used as they come).
   */
  private *evaluation(c: ValidatingCandidate, request: PolicyRequest, activation: Record<string, unknown>, out: AdmissionResponse, audit: unknown[]): Generator<unknown, void, unknown> {
    const { compiled: cp, binding } = c;
    const policyName = cp.policy.metadata.name ?? '';
    const bindingName = binding.metadata.name ?? '';
    const actions = binding.spec?.validationActions ?? [];
    // Counted unless the estimate proves the limits out of reach: for any object of the kind, or else for objects no larger than this one.
    const run = new BudgetedRun((c.withinLimits ??= withinLimits(cp, c.matched.kind)) || withinLimits(cp, c.matched.kind, expressionsOf, request.sizeCap(activation)));
    const variables = activation.variables as Record<string, unknown>;
    for (const mc of cp.matchConditions) {
      const matches = run.value(mc, activation);
      if ((matches instanceof Promise ? yield matches : matches) !== true) return;
    }
    for (const v of cp.variables) {
      try {
        const value = run.value(v, activation);
        variables[v.name] = value instanceof Promise ? yield value : value;
      } catch (e) {
        // A variable that fails fails only the expressions that use it.
        Object.defineProperty(variables, v.name, { enumerable: true, get: () => { throw e; } });
      }
    }
    for (let index = 0; index < cp.validations.length; index++) {
      const v = cp.validations[index];
      const valid = run.value(v, activation);
      if ((valid instanceof Promise ? yield valid : valid) === true) continue;
      let message = v.message ?? `failed expression: ${v.expression}`;
      if (v.messageExpression) {
        try {
          const pending = run.value(v.messageExpression, activation);
          const m = pending instanceof Promise ? yield pending : pending;
          if (typeof m === 'string' && m.trim() !== '' && !m.includes('\n')) message = m;
        } catch {
          // upstream keeps the static message when messageExpression fails
        }
      }
      if (actions.includes('Deny')) throw denial(request.attributes, c, message, v.reason);
      if (actions.includes('Warn')) (out.warnings ??= []).push(`Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}': ${message}`);
      if (actions.includes('Audit')) audit.push({ message, policy: policyName, binding: bindingName, expressionIndex: index, validationActions: actions });
    }
    for (const x of cp.auditAnnotations) {
      const pending = run.value(x, activation);
      const value = pending instanceof Promise ? yield pending : pending;
      if (value !== null && value !== undefined) (out.auditAnnotations ??= {})[`${policyName}/${x.key}`] = String(celToJson(value));
    }
  }
}

/**
 * Runs `steps` to their end (from `resume`, else from the start), sending each yielded value back settled: synchronously (undefined)
 * while no step yields a promise; from the first that does, as a promise. A rejected promise is
 * thrown at the step that yielded it; so is a synchronous throw of a step, as in an async function.
 */
export function settle(steps: Generator<unknown, void, unknown>, resume?: () => IteratorResult<unknown, void>): void | Promise<void> {
  for (let r = resume ? resume() : steps.next(); !r.done; r = steps.next(r.value)) {
    const pending = r.value;
    if (pending instanceof Promise) {
      return pending.then(
        (v) => settle(steps, () => steps.next(v)),
        (e) => settle(steps, () => steps.throw(e)),
      );
    }
  }
}

/**
 * The expressions of one policy evaluation under one runtime cost budget (upstream's per-policy
 * budget): each expression may spend at most PER_CALL_COST_LIMIT and what is left.
 */
export class BudgetedRun {
  private budget = RUNTIME_COST_BUDGET;

  /** `untracked`: the expressions cannot overrun (see withinLimits), so their cost is not counted. */
  constructor(private readonly untracked = false) {}

  /** An expression's value: synchronous unless the expression calls the authorizer (then a promise). Failures are PolicyErrors. */
  value(c: Compiled, activation: Record<string, unknown>): unknown {
    if (c.error) throw new PolicyError(`compilation error: ${c.error}`);
    let pending: CelResult | Promise<CelResult>;
    try {
      pending = c.program!.evaluate(activation, this.untracked ? { untracked: true } : { costLimit: Math.min(PER_CALL_COST_LIMIT, this.budget) });
    } catch (e) {
      throw this.failed(c, e);
    }
    if (!(pending instanceof Promise)) return this.settle(pending);
    return pending.then(
      (r) => this.settle(r),
      (e) => {
        throw this.failed(c, e);
      },
    );
  }

  private settle(r: CelResult): unknown {
    this.budget -= r.cost;
    return r.value;
  }

  private failed(c: Compiled, e: unknown): PolicyError {
    if (e instanceof CelCostLimitError && this.budget < PER_CALL_COST_LIMIT) return new PolicyError('validation failed due to running out of cost budget, no further validation rules will be run');
    return new PolicyError(`expression '${c.expression}' resulted in error: ${(e as Error).message}`);
  }
}
