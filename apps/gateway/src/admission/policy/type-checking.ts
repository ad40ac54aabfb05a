import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { canonicalGroup, type Catalog } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import { CelEnvironment } from '@orch/cel';
import { admissionVariables, kindSchema, resolveBuiltinRef } from '../admission-request';
import { ADMISSION_CONTEXT, AdmissionState } from '../admission-state';
import { expressions } from './policy-validation';
import { POLICY_VARIABLES, type ValidatingAdmissionPolicy } from './policy-types';

type Warning = { fieldRef: string; warning: string };

/**
 * Type checking of a policy (upstream TypeChecker): its expressions compiled with `object` and
 * `oldObject` typed by the schema of each kind its matchConstraints name exactly (wildcards
 * are not checked); each failure is a warning `<group/version, Kind=kind>: <error>`.
 */
export function typeCheck(p: ValidatingAdmissionPolicy, catalog: Catalog): Warning[] {
  const kinds = new Map<string, { group: string; version: string; kind: string }>();
  for (const rule of p.spec?.matchConstraints?.resourceRules ?? []) {
    for (const g of rule.apiGroups ?? []) {
      for (const v of rule.apiVersions ?? []) {
        for (const r of rule.resources ?? []) {
          if (g === '*' || v === '*' || r.includes('*') || r.includes('/')) continue;
          const def = catalog.lookup(canonicalGroup(g), v, r);
          if (def) kinds.set(`${def.group}/${def.version}/${def.kind}`, { group: def.group, version: def.version, kind: def.kind });
        }
      }
    }
  }
  const warnings: Warning[] = [];
  for (const k of kinds.values()) {
    const schema = kindSchema(k);
    if (!schema) continue;
    const env = new CelEnvironment({
      variables: admissionVariables(POLICY_VARIABLES).map((v) => (v.name === 'object' || v.name === 'oldObject' ? { name: v.name, schema } : v)),
      authorizer: true,
      resolveRef: resolveBuiltinRef,
    });
    for (const e of expressions(p)) {
      const r = env.check(e.expression);
      if ('error' in r) warnings.push({ fieldRef: e.fieldRef, warning: `${k.group ? `${k.group}/` : ''}${k.version}, Kind=${k.kind}: ${r.error}` });
    }
  }
  return warnings;
}

/**
 * Keeps status.typeChecking of every ValidatingAdmissionPolicy current: when a policy's
 * observedGeneration lags its generation, its type-checking warnings are computed and written
 * (conditioned on the policy's resourceVersion; a replica losing the race leaves it to the
 * winner).
 */
@Injectable()
export class PolicyTypeChecker implements OnApplicationBootstrap {
  private running = false;
  private again = false;

  constructor(@Inject(AdmissionState) private readonly state: AdmissionState) {}

  onApplicationBootstrap(): void {
    const cache = this.state.cache<ValidatingAdmissionPolicy>('admissionregistration.orch.io', 'validatingadmissionpolicies');
    const pass = () => this.pass().catch((err) => this.state.logger.warn(`policy type checking failed: ${(err as Error).message}`));
    cache.onChange(() => void pass());
    void pass();
  }

  private async pass(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      do {
        this.again = false;
        const cache = this.state.cache<ValidatingAdmissionPolicy>('admissionregistration.orch.io', 'validatingadmissionpolicies');
        for (const p of cache.list()) {
          if (p.status?.observedGeneration === p.metadata.generation && p.metadata.generation !== undefined) continue;
          await this.write(p);
        }
      } while (this.again);
    } finally {
      this.running = false;
    }
  }

  private async write(p: ValidatingAdmissionPolicy): Promise<void> {
    const status = { ...(p.status ?? {}), observedGeneration: p.metadata.generation, typeChecking: { expressionWarnings: typeCheck(p, this.state.catalog) } };
    const next = { ...structuredClone(p), status } as KubeObject;
    try {
      await this.state.registry('admissionregistration.orch.io', 'validatingadmissionpolicies').update('', p.metadata.name ?? '', next, ADMISSION_CONTEXT, 'status');
    } catch (err) {
      if (!(err instanceof StatusError && (err.code === 409 || err.code === 404))) throw err;
    }
  }
}
