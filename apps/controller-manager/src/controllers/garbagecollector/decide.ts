import type { OwnerReference } from '@orch/apimachinery';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from './graph';

/**
 * What an owner reference points at (upstream classifyReferences): an existing owner
 * (`solid`), one that is gone or replaced (`dangling`), or one being deleted in the
 * foreground that waits for its dependents (`waiting`).
 */
export type OwnerState = 'solid' | 'dangling' | 'waiting';

export interface ClassifiedRef {
  ref: OwnerReference;
  state: OwnerState;
}

export type DeletePolicy = 'Orphan' | 'Foreground' | 'Background';

export type DependentDecision =
  /** At least one owner remains and no reference needs cleaning. */
  | { action: 'keep' }
  /** Owners remain: drop the references to gone or foreground-deleting owners. */
  | { action: 'removeOwnerRefs'; uids: string[] }
  /**
   * An owner waits in the foreground and this object has dependents: delete it in the
   * foreground too; `unblock` first clears blockOwnerDeletion when a dependent is itself
   * deleting dependents (a cycle).
   */
  | { action: 'deleteForeground'; unblock: boolean }
  /** No owner remains: collect it, keeping the propagation its finalizers asked for. */
  | { action: 'delete'; policy: DeletePolicy };

/**
 * upstream attemptToDeleteItem's decision for an object with owner references, given how
 * each reference classified, whether the object has dependents, whether one of them is
 * itself deleting dependents, and the object's finalizers.
 */
export function decideDependent(refs: readonly ClassifiedRef[], hasDependents: boolean, dependentDeletingDependents: boolean, finalizers: readonly string[]): DependentDecision {
  const solid = refs.filter((r) => r.state === 'solid');
  const dangling = refs.filter((r) => r.state === 'dangling');
  const waiting = refs.filter((r) => r.state === 'waiting');
  if (solid.length) {
    if (!dangling.length && !waiting.length) return { action: 'keep' };
    return { action: 'removeOwnerRefs', uids: [...dangling, ...waiting].map((r) => r.ref.uid) };
  }
  if (waiting.length && hasDependents) return { action: 'deleteForeground', unblock: dependentDeletingDependents };
  if (finalizers.includes(ORPHAN_FINALIZER)) return { action: 'delete', policy: 'Orphan' };
  if (finalizers.includes(FOREGROUND_FINALIZER)) return { action: 'delete', policy: 'Foreground' };
  return { action: 'delete', policy: 'Background' };
}
