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
  /** The expressions above in the order they run (see PolicyEvaluation). */
  steps: Step[];
}

type ValidatingCandidate = Candidate<ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, CompiledValidatingPolicy> & {
  /** See plainValidations (decided on first use). */
  plainValidations?: CelProgram[] | null;
};

/**
 * The validations' programs of a candidate whose policy runs nothing else for a request they
 * all admit: no parameters, matchConditions, variables or audit annotations, and every
 * validation compiled. Null for any other.
 */
function plainValidations(c: ValidatingCandidate): CelProgram[] | null {
  const cp = c.compiled;
  if (cp.policy.spec?.paramKind || cp.matchConditions.length || cp.variables.length || cp.auditAnnotations.length) return null;
  const programs = cp.validations.map((v) => v.program);
  return programs.every((p) => p !== undefined) ? (programs as CelProgram[]) : null;
}

/** withinLimits for objects no larger than `cap`, remembered on the candidate for the next request of the same cap. */
function withinCap(c: ValidatingCandidate, cap: number): boolean {
  const last = c.withinCap;
  if (last?.cap === cap) return last.within;
  const within = withinLimits(c.compiled, c.matched.kind, expressionsOf, cap);
  c.withinCap = { cap, within };
  return within;
}

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

/** A Forbidden denial (of a missing parameter object). */
const deniedForbidden = (a: AdmissionAttributes, c: ValidatingCandidate, message: string) => denial(a, c, message, 'Forbidden');

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
      const compiled = {
        ...shared,
        validations: (spec.validations ?? []).map((v) => ({
          ...compileExpression(v.expression, ['bool']),
          message: v.message,
          reason: v.reason,
          messageExpression: v.messageExpression ? compileExpression(v.messageExpression, ['string']) : undefined,
        })),
        auditAnnotations: (spec.auditAnnotations ?? []).map((x) => ({ key: x.key, ...compileExpression(x.valueExpression, ['string', 'null_type']) })),
      };
      return { ...compiled, steps: stepsOf(compiled) };
    },
  );

  /** Synchronous (the response) unless a step needs a promise: the namespace, a selector's namespace, a version conversion, an authorizer check. */
  validate(a: AdmissionAttributes): AdmissionResponse | void | Promise<AdmissionResponse | void> {
    const candidates = this.source.candidates(a);
    if (candidates.length === 0) return;
    const request = new PolicyRequest(this.state, a, this.source.readsOf(candidates, expressionsOf));
    const validation = new RequestValidation(this.source, this.state, candidates, request);
    const loading = request.load();
    return loading ? loading.then(() => validation.from(0)) : validation.from(0);
  }
}

/**
 * The validation of one request by its candidates' policies, in order: in one call while every
 * step is synchronous; from the first promise on (see ValidatingAdmissionPolicyPlugin.validate),
 * continued when it settles. No promise per request or policy otherwise.
 */
class RequestValidation {
  private readonly out: AdmissionResponse = {};
  private readonly audit: unknown[] = [];
  /** Reused by every evaluation of the request (they run one after the other); made for the first (candidates admitted at once need none). */
  private evaluation?: PolicyEvaluation;

  constructor(
    private readonly source: PolicySource<ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, CompiledValidatingPolicy>,
    private readonly state: StateAdmissionPlugin['state'],
    private readonly candidates: ValidatingCandidate[],
    private readonly request: PolicyRequest,
  ) {}

  /** Evaluates candidates from `k` on: the response, or a promise of it. A denial throws (or rejects) its StatusError. */
  from(k: number): AdmissionResponse | Promise<AdmissionResponse> {
    for (; k < this.candidates.length; k++) {
      const pending = this.candidate(this.candidates[k]);
      if (pending) {
        const next = k + 1;
        return pending.then(() => this.from(next));
      }
    }
    if (this.audit.length) (this.out.auditAnnotations ??= {})[AUDIT_VALIDATION_FAILURE] = JSON.stringify(this.audit);
    return this.out;
  }

  /** A candidate's selectors, then its evaluations: undefined when done synchronously, else a promise. */
  private candidate(c: ValidatingCandidate): void | Promise<void> {
    if (c.selectors.length) return this.source.selects(c, this.request.attributes).then((selected) => (selected ? this.selected(c) : undefined));
    return this.selected(c);
  }

  /** A selected candidate's evaluations; a failure (not a denial) follows the policy's failurePolicy. */
  private selected(c: ValidatingCandidate): void | Promise<void> {
    try {
      const pending = this.state.versioned(this.request.attributes, c.matched);
      if (pending === this.request.attributes && this.admitsAtOnce(c)) return;
      const evaluating = pending instanceof Promise ? pending.then((versioned) => this.evaluations(c, versioned)) : this.evaluations(c, pending);
      if (evaluating) return evaluating.then(undefined, (e: unknown) => this.failed(c, e));
    } catch (e) {
      this.failed(c, e);
    }
  }

  /**
   * Whether candidate `c`, for the request in its own version, admits it with nothing to record,
   * told without an evaluation: its policy has plainValidations, its expressions cannot overrun
   * their cost limits (uncounted, as an evaluation would run them) and each gives true by its
   * compiled form. Otherwise (a false included) its evaluation decides, which gives the same
   * answer for such a candidate. Saves a request's ten plain policies most of their evaluations' work.
   */
  private admitsAtOnce(c: ValidatingCandidate): boolean {
    if (c.plainValidations === undefined) c.plainValidations = plainValidations(c);
    const programs = c.plainValidations;
    if (!programs) return false;
    const activation = this.request.activation(this.request.attributes, null, false);
    if (!((c.withinLimits ??= withinLimits(c.compiled, c.matched.kind)) || withinCap(c, this.request.sizeCap(activation)))) return false;
    for (const p of programs) if (!p.compiledTrue(activation)) return false;
    return true;
  }

  /** The candidate's evaluations for the request as it matched (`versioned`), one per parameter object, from the `from`th. */
  private evaluations(c: ValidatingCandidate, versioned: AdmissionAttributes, params = this.source.params(c, this.request.attributes, deniedForbidden), from = 0): void | Promise<void> {
    for (let i = from; i < params.length; i++) {
      const evaluating = (this.evaluation ??= new PolicyEvaluation(this.request, this.out, this.audit)).start(c, this.request.activation(versioned, params[i], c.compiled.variables.length > 0));
      if (evaluating) return evaluating.then(() => this.evaluations(c, versioned, params, i + 1));
    }
  }

  /** A candidate's failure `e`: a denial is thrown as is; another error denies the request unless the policy's failurePolicy is Ignore. */
  private failed(c: ValidatingCandidate, e: unknown): void {
    if (e instanceof StatusError) throw e;
    if ((c.compiled.policy.spec?.failurePolicy ?? 'Fail') === 'Ignore') return;
    throw deniedForbidden(this.request.attributes, c, (e as Error).message);
  }
}

/** One expression of a policy's evaluation, in the order upstream runs them, and what its value is for. */
interface Step {
  kind: 'match' | 'variable' | 'validation' | 'message' | 'audit';
  compiled: Compiled;
  /** Of a variable: its name; of an audit annotation: its key. */
  name: string;
  /** Of a validation and its messageExpression: the validation's index. */
  index: number;
}

/** A policy's expressions as steps: matchConditions, variables, each validation (followed by its messageExpression, run only when it fails), auditAnnotations. */
function stepsOf(cp: Omit<CompiledValidatingPolicy, 'steps'>): Step[] {
  const steps: Step[] = [];
  for (const c of cp.matchConditions) steps.push({ kind: 'match', compiled: c, name: c.name, index: 0 });
  for (const c of cp.variables) steps.push({ kind: 'variable', compiled: c, name: c.name, index: 0 });
  cp.validations.forEach((v, index) => {
    steps.push({ kind: 'validation', compiled: v, name: '', index });
    if (v.messageExpression) steps.push({ kind: 'message', compiled: v.messageExpression, name: '', index });
  });
  for (const x of cp.auditAnnotations) steps.push({ kind: 'audit', compiled: x, name: x.key, index: 0 });
  return steps;
}

/** An expression's failure, as a step received it. */
interface Failure {
  error: unknown;
}

/**
 * The evaluation of one candidate's policy for its binding and one parameter object
 * (`activation`, one of `request`'s, holds `params` and an empty `variables`): its steps run
 * synchronously, in one call, until an expression gives a promise (it calls the authorizer);
 * from that step on it continues when the promise settles. No generator or promise per policy
 * otherwise (they were most of what a request allocated with 10 policies). One per request,
 * started again for each evaluation (see start).
 */
class PolicyEvaluation {
  private readonly run = new BudgetedRun();
  private c!: ValidatingCandidate;
  private activation!: Record<string, unknown>;

  constructor(
    private readonly request: PolicyRequest,
    private readonly out: AdmissionResponse,
    private readonly audit: unknown[],
  ) {}

  /** Starts the evaluation of candidate `c`'s policy with `activation` (the previous one must have ended): as `from(0)`. */
  start(c: ValidatingCandidate, activation: Record<string, unknown>): void | Promise<void> {
    const cp = c.compiled;
    this.c = c;
    this.activation = activation;
    // Counted unless the estimate proves the limits out of reach: for any object of the kind, or else for objects no larger than this one.
    this.run.reset((c.withinLimits ??= withinLimits(cp, c.matched.kind)) || withinCap(c, this.request.sizeCap(activation)));
    return this.from(0);
  }

  /**
   * Runs the steps from `at` to the end: undefined when done synchronously, else a promise.
   * With `settled`, step `at`'s expression has already given that value or failure (its
   * promise settled). A failing matchCondition, validation or audit annotation throws its
   * PolicyError; a denial throws a StatusError.
   */
  from(at: number, settled?: { value: unknown } | Failure): void | Promise<void> {
    const steps = this.c.compiled.steps;
    for (let i = at; i < steps.length; i++) {
      let value: unknown;
      let failed: Failure | undefined;
      if (settled !== undefined && i === at) {
        if ('error' in settled) failed = settled;
        else value = settled.value;
      } else {
        try {
          value = this.run.value(steps[i].compiled, this.activation);
        } catch (error) {
          failed = { error };
        }
        if (value instanceof Promise) {
          return value.then(
            (v) => this.from(i, { value: v }),
            (error) => this.from(i, { error }),
          );
        }
      }
      i = this.apply(steps, i, value, failed);
    }
  }

  /** What step `i`'s value (or failure) does; the index of the last step it accounts for (`steps.length`: the evaluation ends). */
  private apply(steps: Step[], i: number, value: unknown, failed: Failure | undefined): number {
    const step = steps[i];
    switch (step.kind) {
      case 'variable':
        // A variable that fails fails only the expressions that use it.
        if (failed) Object.defineProperty(this.activation.variables, step.name, { enumerable: true, get: () => { throw failed.error; } });
        else (this.activation.variables as Record<string, unknown>)[step.name] = value;
        return i;
      case 'message':
        // upstream keeps the static message when messageExpression fails
        this.refused(step.index, !failed && typeof value === 'string' && value.trim() !== '' && !value.includes('\n') ? value : undefined);
        return i;
    }
    if (failed) throw failed.error;
    switch (step.kind) {
      case 'match':
        return value === true ? i : steps.length;
      case 'validation':
        if (steps[i + 1]?.kind === 'message') return value === true ? i + 1 : i;
        if (value !== true) this.refused(step.index, undefined);
        return i;
      default:
        if (value !== null && value !== undefined) (this.out.auditAnnotations ??= {})[`${this.c.compiled.policy.metadata.name ?? ''}/${step.name}`] = String(celToJson(value));
        return i;
    }
  }

  /** Validation `index` failed, with `message` from its messageExpression (else its message or the expression): as the binding's validationActions say. */
  private refused(index: number, message: string | undefined): void {
    const c = this.c;
    const v = c.compiled.validations[index];
    const text = message ?? v.message ?? `failed expression: ${v.expression}`;
    const actions = c.binding.spec?.validationActions ?? [];
    const policy = c.compiled.policy.metadata.name ?? '';
    const binding = c.binding.metadata.name ?? '';
    if (actions.includes('Deny')) throw denial(this.request.attributes, c, text, v.reason);
    if (actions.includes('Warn')) (this.out.warnings ??= []).push(`Validation failed for ValidatingAdmissionPolicy '${policy}' with binding '${binding}': ${text}`);
    if (actions.includes('Audit')) this.audit.push({ message: text, policy, binding, expressionIndex: index, validationActions: actions });
  }
}

/**
 * The expressions of one policy evaluation under one runtime cost budget (upstream's per-policy
 * budget): each expression may spend at most PER_CALL_COST_LIMIT and what is left.
 */
export class BudgetedRun {
  private budget = RUNTIME_COST_BUDGET;

  /** `untracked`: the expressions cannot overrun (see withinLimits), so their cost is not counted. */
  constructor(private untracked = false) {}

  /** Starts another evaluation's budget (`untracked` as for the constructor). */
  reset(untracked: boolean): void {
    this.budget = RUNTIME_COST_BUDGET;
    this.untracked = untracked;
  }

  /** An expression's value: synchronous unless the expression calls the authorizer (then a promise). Failures are PolicyErrors. */
  value(c: Compiled, activation: Record<string, unknown>): unknown {
    if (c.error) throw new PolicyError(`compilation error: ${c.error}`);
    let pending: unknown;
    try {
      pending = this.untracked ? c.program!.untrackedValue(activation) : c.program!.evaluate(activation, { costLimit: Math.min(PER_CALL_COST_LIMIT, this.budget) });
    } catch (e) {
      throw this.failed(c, e);
    }
    if (!(pending instanceof Promise)) return this.untracked ? pending : this.settle(pending as CelResult);
    return pending.then(
      (r: unknown) => (this.untracked ? r : this.settle(r as CelResult)),
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
