import { Inject, Injectable } from '@nestjs/common';
import { objectSchemaOf } from '@orch/api';
import { applyJsonPatch, mergeTyped, StatusError, type KubeObject } from '@orch/apimachinery';
import { celToJson, JsonPatchLibrary } from '@orch/cel';
import { AdmissionPluginProvider, type AdmissionAttributes, type AdmissionPlugin, type AdmissionResponse } from '../../pipeline/admit';
import { kindSchema } from '../admission-request';
import { AdmissionState } from '../admission-state';
import { mutatingPolicyEnv } from './policy-env';
import { BudgetedRun } from './validating-admission-policy';
import { PolicyRequest, PolicySource, type Compiled, type CompiledPolicy } from './policy-source';
import type { MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding } from './policy-types';

export const MUTATING_ADMISSION_POLICY = 'MutatingAdmissionPolicy';
const GROUP = 'admissionregistration.orch.io';
const VERSION = 'v1alpha1';

interface CompiledMutatingPolicy extends CompiledPolicy<MutatingAdmissionPolicy> {
  mutations: (Compiled & { patchType: 'ApplyConfiguration' | 'JSONPatch' })[];
}

function compileMutation(expression: string): Compiled {
  try {
    return { expression, program: mutatingPolicyEnv().compile(expression) };
  } catch (e) {
    return { expression, error: (e as Error).message };
  }
}

/** A refusal in upstream's words (`policy 'p' with binding 'b' denied request: ...`). */
function refusal(a: AdmissionAttributes, policy: string, binding: string, message: string): StatusError {
  return StatusError.forbidden({ group: a.resource.group, resource: a.resource.resource }, a.name, `policy '${policy}' with binding '${binding}' denied request: ${message}`);
}

/**
 * MutatingAdmissionPolicy (upstream plugin of the same name, alpha): for every binding whose
 * policy and match resources select the request, the policy's mutations run in order, once
 * per parameter object — an ApplyConfiguration expression returns an `Object{...}` merged into
 * the object with server-side apply's merge rules (maps by key, list-map items by their keys,
 * atomic lists replaced), a JSONPatch expression returns `JSONPatch{...}` operations applied to
 * it. matchConditions select and variables are computed as for validating policies. A change
 * asks the chain to run again; on that second pass only IfNeeded policies run. A mutation that
 * fails (evaluation, a patch that does not apply) follows failurePolicy. Active only while the
 * v1alpha1 resources are served.
 */
@AdmissionPluginProvider()
@Injectable()
export class MutatingAdmissionPolicyPlugin implements AdmissionPlugin {
  readonly name = MUTATING_ADMISSION_POLICY;
  private readonly source: PolicySource<MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding, CompiledMutatingPolicy>;

  constructor(@Inject(AdmissionState) private readonly state: AdmissionState) {
    this.source = new PolicySource(state, GROUP, 'mutatingadmissionpolicies', 'mutatingadmissionpolicybindings', (policy, shared) => ({
      ...shared,
      mutations: (policy.spec?.mutations ?? []).map((m) => {
        const expression = (m.patchType === 'JSONPatch' ? m.jsonPatch?.expression : m.applyConfiguration?.expression) ?? '';
        return { patchType: m.patchType === 'JSONPatch' ? 'JSONPatch' : 'ApplyConfiguration', ...compileMutation(expression) };
      }),
    }));
  }

  handles(): boolean {
    return !!this.state.catalog.lookup(GROUP, VERSION, 'mutatingadmissionpolicies');
  }

  async mutate(a: AdmissionAttributes): Promise<AdmissionResponse | void> {
    if (!a.object) return;
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
        const params = this.source.params(cp, c.binding, a, (m) => refusal(a, policyName, bindingName, m));
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
    const def = this.state.catalog.lookup(versioned.resource.group, versioned.resource.version, versioned.resource.resource);
    const before = versioned.object as KubeObject;
    let current: KubeObject = before;
    const act: Record<string, unknown> = { ...activation, jsonpatch: new JsonPatchLibrary() };
    for (const m of cp.mutations) {
      const value = celToJson(await run.value(m, act));
      if (m.patchType === 'JSONPatch') {
        if (!Array.isArray(value)) throw new Error(`expression '${m.expression}' must return a list of JSONPatch, not ${JSON.stringify(value)}`);
        try {
          current = applyJsonPatch(structuredClone(current), value) as KubeObject;
        } catch (e) {
          throw new Error(`JSON Patch: ${(e as Error).message}`);
        }
      } else {
        if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`expression '${m.expression}' must return an Object, not ${JSON.stringify(value)}`);
        current = mergeTyped(structuredClone(current), value, objectSchemaOf(def!)) as KubeObject;
      }
      // Later mutations of the policy see the object as mutated so far.
      act.object = mutatingPolicyEnv().toCel(current, kindSchema(versioned.kind));
    }
    return JSON.stringify(current) === JSON.stringify(before) ? undefined : current;
  }
}
