import { randomUUID } from 'node:crypto';
import type { Lease, LeaseLock } from '@orch/client';
import { KeyExistsError, KeyNotFoundError, RevisionConflictError, type Store } from '@orch/storage';

/**
 * A Lease kept directly in the store at `key`, in the stored form of every object (apiVersion,
 * kind and metadata first, resourceVersion = the store revision), so the API serves it like
 * any Lease (`kubectl get lease -n orch-system`). The gateway's pump elects its leader through
 * the store, not through its own API: the gateway is the only one touching the store.
 */
export function storeLeaseLock(store: Store, key: string): LeaseLock {
  const read = (value: string, revision: number): Lease => {
    const lease = JSON.parse(value) as Lease;
    lease.metadata.resourceVersion = String(revision);
    return lease;
  };
  const encode = (lease: Lease): string => {
    const { apiVersion, kind, metadata, ...rest } = lease;
    const { resourceVersion: _rv, ...meta } = metadata;
    return JSON.stringify({ apiVersion, kind, metadata: meta, ...rest });
  };
  return {
    async get() {
      const kv = await store.get(key);
      return kv ? read(kv.value, kv.modRevision) : undefined;
    },
    async create(lease) {
      const created: Lease = {
        ...lease,
        metadata: { ...lease.metadata, uid: randomUUID(), creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') },
      };
      try {
        const kv = await store.create(key, encode(created));
        return read(kv.value, kv.modRevision);
      } catch (err) {
        if (err instanceof KeyExistsError) throw new Error(`lease ${key} was created by another candidate`);
        throw err;
      }
    },
    async update(lease) {
      try {
        const kv = await store.update(key, encode(lease), Number(lease.metadata.resourceVersion));
        return read(kv.value, kv.modRevision);
      } catch (err) {
        if (err instanceof RevisionConflictError || err instanceof KeyNotFoundError) throw new Error(`lease ${key} was changed by another candidate`);
        throw err;
      }
    },
  };
}
