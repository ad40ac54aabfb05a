import { randomUUID } from 'node:crypto';
import { KeyExistsError, type Store } from '@orch/storage';

/** Where a store keeps its cluster's identity: outside `/registry/`, so no API serves it and no watch cache follows it. */
export const CLUSTER_IDENTITY_KEY = '/orch/cluster-identity';

/** The names one cluster uses on engines it may share with other clusters. */
export interface WatchChannels {
  /** The cluster's identity (a UID kept in its store). */
  cluster: string;
  /** NATS subject of the watch bus. */
  subject: string;
  /** Redis stream of the watch history. */
  historyKey: string;
}

/**
 * The identity of the cluster a store holds: a random UID that the first gateway to start on
 * the store writes into it (create-if-absent), and that every later replica reads back. All
 * replicas of a cluster share it because they share the store; two clusters never do (two
 * etcd clusters, two prefixes of one etcd, two SQLite files), whatever their flags say.
 */
export async function clusterIdentity(store: Store): Promise<string> {
  for (;;) {
    const kv = await store.get(CLUSTER_IDENTITY_KEY);
    if (kv) {
      const uid = (JSON.parse(kv.value) as { uid?: unknown }).uid;
      if (typeof uid !== 'string' || !/^[0-9a-f-]{36}$/.test(uid)) throw new Error(`the store's cluster identity at ${CLUSTER_IDENTITY_KEY} is malformed: ${kv.value}`);
      return uid;
    }
    try {
      const uid = randomUUID();
      await store.create(CLUSTER_IDENTITY_KEY, JSON.stringify({ uid, createdAt: new Date().toISOString() }));
      return uid;
    } catch (err) {
      if (!(err instanceof KeyExistsError)) throw err;
      // Another replica created it first: read theirs.
    }
  }
}

/**
 * The watch bus subject and history key of a cluster, so that clusters sharing one NATS or one
 * Redis never see each other's events.
 */
export function watchChannels(cluster: string): WatchChannels {
  return { cluster, subject: `orch.watch.${cluster}`, historyKey: `orch:watch:${cluster}:history` };
}
