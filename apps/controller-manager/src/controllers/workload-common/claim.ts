import type { LabelSelector, KubeObject, OwnerReference } from '@orch/apimachinery';
import { isNotFound, type ResourceClient } from '@orch/client';
import { controllerRefOf, newControllerRef } from '../../framework/controller-ref';

export interface ClaimOptions<T extends KubeObject> {
  /** The controller claiming (a ReplicaSet, a Deployment, ...), as cached. */
  owner: KubeObject;
  ownerType: { apiVersion: string; kind: string };
  /** The owner's selector; matching orphans are adopted, owned non-matching ones released. */
  selector: LabelSelector;
  /** Writes to the claimed objects' resource. */
  client: ResourceClient<T>;
  /**
   * Checked once before the first adoption (upstream RecheckDeletionTimestamp): throws when
   * the owner is gone, replaced (other uid) or being deleted, so nothing is adopted by it.
   */
  canAdopt: () => Promise<void>;
  /** Further condition an object must meet to be adopted or kept (default: always). */
  filter?: (obj: T) => boolean;
}

/** What to do with one candidate object (upstream ClaimObject's decision table). */
export type ClaimDecision = 'keep' | 'adopt' | 'release' | 'ignore';

/**
 * upstream BaseControllerRefManager.ClaimObject, without the writes: owned by another
 * controller → ignore; owned by us and matching → keep; owned by us, not matching → release
 * (unless we are being deleted); an orphan that matches, in our namespace, not being
 * deleted, while we are not being deleted → adopt.
 */
export function claimDecision(obj: KubeObject, owner: KubeObject, matches: boolean): ClaimDecision {
  const ref = controllerRefOf(obj);
  const ownerDeleting = !!owner.metadata.deletionTimestamp;
  if (ref) {
    if (ref.uid !== owner.metadata.uid) return 'ignore';
    if (matches) return 'keep';
    return ownerDeleting ? 'ignore' : 'release';
  }
  if (ownerDeleting || !matches || obj.metadata.deletionTimestamp) return 'ignore';
  if (owner.metadata.namespace && owner.metadata.namespace !== obj.metadata.namespace) return 'ignore';
  return 'adopt';
}

/**
 * upstream ClaimPods / ClaimReplicaSets: returns the objects the owner controls after
 * adopting matching orphans and releasing owned objects that no longer match. Writes are
 * merge patches of `metadata.ownerReferences` conditioned on the object's uid and
 * resourceVersion (a stale cache gives 409 and the caller retries). Objects that vanished
 * (404) are skipped; other failures are thrown together after every object was tried.
 */
export async function claimObjects<T extends KubeObject>(objects: readonly T[], opts: ClaimOptions<T>): Promise<T[]> {
  const claimed: T[] = [];
  const errors: string[] = [];
  let adoptable: Promise<void> | undefined;
  for (const obj of objects) {
    const matches = opts.selector.matches(obj.metadata.labels) && (opts.filter?.(obj) ?? true);
    const decision = claimDecision(obj, opts.owner, matches);
    if (decision === 'ignore') continue;
    if (decision === 'keep') {
      claimed.push(obj);
      continue;
    }
    try {
      if (decision === 'adopt') {
        adoptable ??= opts.canAdopt();
        await adoptable;
        const refs = [...(obj.metadata.ownerReferences ?? []), newControllerRef(opts.owner, opts.ownerType)];
        claimed.push(await patchOwnerRefs(opts.client, obj, refs));
      } else {
        const refs = (obj.metadata.ownerReferences ?? []).filter((r) => r.uid !== opts.owner.metadata.uid);
        await patchOwnerRefs(opts.client, obj, refs.length ? refs : null);
      }
    } catch (err) {
      if (isNotFound(err)) continue;
      errors.push(`${decision} ${obj.metadata.namespace}/${obj.metadata.name}: ${(err as Error).message}`);
    }
  }
  if (errors.length) throw new Error(`claiming objects for ${opts.owner.metadata.namespace}/${opts.owner.metadata.name}: ${errors.join('; ')}`);
  return claimed;
}

function patchOwnerRefs<T extends KubeObject>(client: ResourceClient<T>, obj: T, refs: OwnerReference[] | null): Promise<T> {
  const meta = { uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion, ownerReferences: refs };
  return client.inNamespace(obj.metadata.namespace ?? '').patch(obj.metadata.name ?? '', 'merge', { metadata: meta });
}

/**
 * upstream RecheckDeletionTimestamp: a `canAdopt` that reads the owner fresh from the API
 * and refuses when it is gone, has another uid, or is being deleted.
 */
export function recheckOwner(client: ResourceClient, owner: KubeObject): () => Promise<void> {
  return async () => {
    const fresh = await client.inNamespace(owner.metadata.namespace ?? '').get(owner.metadata.name ?? '');
    if (fresh.metadata.uid !== owner.metadata.uid) {
      throw new Error(`original ${owner.kind} ${owner.metadata.namespace}/${owner.metadata.name} is gone: got uid ${fresh.metadata.uid}, wanted ${owner.metadata.uid}`);
    }
    if (fresh.metadata.deletionTimestamp) {
      throw new Error(`${owner.kind} ${owner.metadata.namespace}/${owner.metadata.name} has just been deleted at ${fresh.metadata.deletionTimestamp}`);
    }
  };
}
