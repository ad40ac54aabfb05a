import type { KubeObject } from '@orch/apimachinery';
import type { AdmissionState } from './admission-state';

/** The orch spelling of a well-known key and upstream's, which stock tools and charts set. */
export function brandSpellings(orchKey: string): string[] {
  return [orchKey, orchKey.replace('.orch.io/', '.kubernetes.io/')];
}

/** The first of `keys` set on the object, with its value. */
export function annotation(obj: KubeObject | undefined, keys: readonly string[]): string | undefined {
  const a = obj?.metadata.annotations;
  if (!a) return undefined;
  for (const k of keys) if (a[k] !== undefined) return a[k];
  return undefined;
}

/** The namespace (from the replica's cache, else the store) or undefined when it does not exist. */
export async function findNamespace(state: AdmissionState, name: string): Promise<KubeObject | undefined> {
  const cached = state.cache('', 'namespaces').get('', name);
  if (cached) return cached;
  try {
    return await state.registry('', 'namespaces').get('', name);
  } catch {
    return undefined;
  }
}

/** The object created last (by creationTimestamp, then name): upstream's pick among several defaults. */
export function newest<T extends KubeObject>(objects: readonly T[]): T | undefined {
  return [...objects].sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))[0];
}

/** Whether a pod write targets the pod itself (not a subresource). */
export function isPod(resource: { group: string; resource: string }, subresource: string): boolean {
  return resource.group === '' && resource.resource === 'pods' && subresource === '';
}
