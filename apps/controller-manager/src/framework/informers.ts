import type { KubeObject } from '@orch/apimachinery';
import { objectKey, unwrapTombstone, type DeletedFinalStateUnknown, type SharedInformer } from '@orch/client';
import { controllerRefOf } from './controller-ref';

/** Index of objects by the uid of their controller (owner reference with `controller: true`). */
export const CONTROLLER_UID_INDEX = 'workloads/controller-uid';

const indexed = new WeakSet<object>();

/**
 * Adds {@link CONTROLLER_UID_INDEX} to a (shared) informer once, however many controllers
 * ask for it; returns the informer.
 */
export function withControllerIndex<T extends KubeObject>(informer: SharedInformer<T>): SharedInformer<T> {
  if (!indexed.has(informer)) {
    informer.addIndexer(CONTROLLER_UID_INDEX, (obj) => {
      const ref = controllerRefOf(obj);
      return ref ? [ref.uid] : [];
    });
    indexed.add(informer);
  }
  return informer;
}

/** The key (`namespace/name`) of an object or of a delete tombstone. */
export function keyOf<T extends KubeObject>(obj: T | DeletedFinalStateUnknown<T>): string {
  return objectKey(unwrapTombstone(obj));
}

/**
 * Resolves true once every informer synced, false when `signal` aborts first (or an
 * informer stopped). Adds a single listener to `signal`, however many informers there are.
 */
export async function waitForInformers(informers: Pick<SharedInformer<KubeObject>, 'waitForSync'>[], signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<boolean>((resolve) => {
    onAbort = () => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const synced = Promise.all(informers.map((inf) => inf.waitForSync())).then((all) => all.every(Boolean));
    return await Promise.race([synced, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
