import type { KubeObject } from '@orch/apimachinery';
import type { StatusStrategy, Strategy } from '../strategy';
import { deepCopy } from '../object-meta';

/** The strategy of kinds with nothing special: DNS-subdomain names, PUT never creates. */
export const defaultStrategy: Strategy = {
  nameRule: 'dns1123Subdomain',
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};

/** Replaces every field of obj by old's, then restores the fields `keep` lists from obj. */
export function resetExcept(obj: KubeObject, old: KubeObject, keep: (incoming: KubeObject, reset: KubeObject) => void): void {
  const incoming = deepCopy(obj);
  for (const k of Object.keys(obj)) delete (obj as Record<string, unknown>)[k];
  Object.assign(obj, deepCopy(old));
  keep(incoming, obj);
}

/** `status` subresource: only status changes; metadata, spec and the rest stay as they were. */
export const statusSubresource: StatusStrategy = {
  prepareForUpdate(obj, old) {
    resetExcept(obj, old, (incoming, reset) => {
      const status = (incoming as Record<string, unknown>).status;
      if (status === undefined) delete (reset as Record<string, unknown>).status;
      else (reset as Record<string, unknown>).status = status;
    });
  },
};

export function get(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** Field-selector attributes read from the given dotted paths ('' when unset). */
export function fieldsFrom(paths: string[]): (obj: KubeObject) => Record<string, string> {
  return (obj) => {
    const out: Record<string, string> = {};
    for (const p of paths) {
      const v = get(obj, p);
      out[p] = v === undefined || v === null ? '' : String(v);
    }
    return out;
  };
}
