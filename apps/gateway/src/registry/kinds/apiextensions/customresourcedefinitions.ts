import {
  CRD_CLEANUP_FINALIZER,
  defaultCustomResourceDefinition,
  storageVersionOf,
  validateCustomResourceDefinition,
  type CustomResourceDefinition,
  type CustomResourceDefinitionCondition,
} from '@orch/api';
import { nowTime } from '../../object-meta';
import type { Served, Strategy } from '../../strategy';
import { defaultStrategy, defineKind, part, statusSubresource, type CrdRuleCheck } from '../binding';

type Crd = Served<CustomResourceDefinition>;

/** Sets (or replaces) a condition, keeping lastTransitionTime when the status does not change. */
export function setCrdCondition(crd: CustomResourceDefinition, cond: Omit<CustomResourceDefinitionCondition, 'lastTransitionTime'>): void {
  const status = (crd.status ??= {});
  const conditions = (status.conditions ??= []);
  const i = conditions.findIndex((c) => c.type === cond.type);
  const lastTransitionTime = i >= 0 && conditions[i].status === cond.status ? conditions[i].lastTransitionTime : nowTime();
  const next = { type: cond.type, status: cond.status, lastTransitionTime, reason: cond.reason, message: cond.message };
  if (i >= 0) conditions[i] = next;
  else conditions.push(next);
}

/** The storage version joins status.storedVersions (upstream: every version ever used for storage stays listed). */
function recordStorageVersion(crd: CustomResourceDefinition): void {
  const storage = storageVersionOf(crd);
  if (!storage) return;
  const status = (crd.status ??= {});
  const stored = (status.storedVersions ??= []);
  if (!stored.includes(storage)) stored.push(storage);
}

/**
 * CustomResourceDefinitions (upstream apiextensions strategy): v1 defaulting and rules,
 * storedVersions kept, status only through /status. Deleting one holds it with the cleanup
 * finalizer and the Terminating condition until the CRD controller removed its custom
 * resources.
 */
export function crdStrategy(ruleCheck: CrdRuleCheck = () => []): Strategy<Crd> {
  const errorsOf = (crd: Crd, old?: Crd) => {
    const errs = validateCustomResourceDefinition(crd, old);
    return errs.length > 0 ? errs : ruleCheck(crd);
  };
  return {
    ...defaultStrategy,
    prepareForCreate(crd) {
      defaultCustomResourceDefinition(crd);
      crd.status = { conditions: [], acceptedNames: { plural: '', kind: '' }, storedVersions: [] };
      recordStorageVersion(crd);
    },
    prepareForUpdate(crd) {
      defaultCustomResourceDefinition(crd);
      recordStorageVersion(crd);
    },
    validate: (crd) => errorsOf(crd),
    validateUpdate: (crd, old) => errorsOf(crd, old),
    finalizersOnDelete: () => [CRD_CLEANUP_FINALIZER],
    beforeDelete(crd) {
      setCrdCondition(crd, {
        type: 'Terminating',
        status: 'True',
        reason: 'InstanceDeletionPending',
        message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
      });
    },
  };
}

/** customresourcedefinitions/status: status only, its part of the definition's rules. */
const statusWrites = part<Crd>({
  prepareForUpdate: statusSubresource.prepareForUpdate,
  validateUpdate: (crd) => validateCustomResourceDefinition(crd).filter((e) => e.field.startsWith('status.')),
});

/** apiextensions.orch.io/v1 CustomResourceDefinitions (apiextensions/ serves their custom resources, kinds/custom.ts binds them). */
export const customResourceDefinitions = defineKind<CustomResourceDefinition>({
  group: 'apiextensions.orch.io',
  resource: 'customresourcedefinitions',
  strategy: (deps) => crdStrategy(deps.crdRuleCheck),
  subresources: { status: statusWrites },
});
