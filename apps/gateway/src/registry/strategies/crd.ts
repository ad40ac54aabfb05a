import {
  CRD_CLEANUP_FINALIZER,
  defaultCustomResourceDefinition,
  storageVersionOf,
  validateCustomResourceDefinition,
  type CustomResourceDefinition,
  type CustomResourceDefinitionCondition,
} from '@orch/api';
import type { FieldError, KubeObject } from '@orch/apimachinery';
import { nowTime } from '../object-meta';
import type { Strategy } from '../strategy';
import { statusSubresource } from './common';

/** Checks of a CRD beyond its shape: its schemas' validation rules compile within the cost budget. */
export type CrdRuleCheck = (crd: CustomResourceDefinition) => FieldError[];

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
export function crdStrategy(ruleCheck: CrdRuleCheck = () => []): Strategy {
  const errorsOf = (obj: KubeObject, old?: KubeObject) => {
    const crd = obj as CustomResourceDefinition;
    const errs = validateCustomResourceDefinition(crd, old as CustomResourceDefinition | undefined);
    return errs.length > 0 ? errs : ruleCheck(crd);
  };
  return {
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    prepareForCreate(obj) {
      const crd = obj as CustomResourceDefinition;
      defaultCustomResourceDefinition(crd);
      crd.status = { conditions: [], acceptedNames: { plural: '', kind: '' }, storedVersions: [] };
      recordStorageVersion(crd);
    },
    prepareForUpdate(obj) {
      const crd = obj as CustomResourceDefinition;
      defaultCustomResourceDefinition(crd);
      recordStorageVersion(crd);
    },
    validate: (obj) => errorsOf(obj),
    validateUpdate: (obj, old) => errorsOf(obj, old),
    finalizersOnDelete: () => [CRD_CLEANUP_FINALIZER],
    beforeDelete(obj) {
      setCrdCondition(obj as CustomResourceDefinition, {
        type: 'Terminating',
        status: 'True',
        reason: 'InstanceDeletionPending',
        message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
      });
    },
    subresources: {
      status: {
        prepareForUpdate(obj, old) {
          statusSubresource.prepareForUpdate(obj, old);
        },
        validateUpdate: (obj) => validateCustomResourceDefinition(obj as CustomResourceDefinition).filter((e) => e.field.startsWith('status.')),
      },
    },
  };
}
