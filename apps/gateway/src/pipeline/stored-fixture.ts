import type { KubeObject } from '@orch/apimachinery';
import type { KeyValue } from '@orch/storage';

// For the pipeline's specs of bodies written from stored values (never imported by the gateway itself).

/** A ConfigMap as the store holds it (its resourceVersion is the revision). */
export const storedConfigMap = (name: string, revision: number, data: Record<string, unknown> = { a: 'b' }): KeyValue => ({
  key: `/registry/core/configmaps/default/${name}`,
  value: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', uid: `u-${name}` }, data }),
  createRevision: revision,
  modRevision: revision,
});

/** The object the registry serves for a stored value (parsed, its modRevision as resourceVersion). */
export const servedObject = (kv: KeyValue): KubeObject => {
  const obj = JSON.parse(kv.value) as KubeObject;
  obj.metadata.resourceVersion = String(kv.modRevision);
  return obj;
};
