// The JSONPatch library of mutating admission policies: `jsonpatch.escapeKey(k)` escapes a
// key for a JSON pointer path (RFC 6901: `~` → `~0`, `/` → `~1`).

import type { Environment } from '../engine';

/** The value of the `jsonpatch` variable (the library's namespace). */
export class JsonPatchLibrary {}

export const JSONPATCH_TYPE = 'orch.jsonpatch.Library';

export function registerJsonPatch(env: Environment): void {
  env.registerType(JSONPATCH_TYPE, JsonPatchLibrary);
  env.registerFunction(`${JSONPATCH_TYPE}.escapeKey(string): string`, (_lib: JsonPatchLibrary, key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1'));
}
