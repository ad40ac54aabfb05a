import type { RequestContext } from './strategy';

/**
 * The context of the gateway's own writes (bootstrap objects, repairs, legacy-token stamps),
 * as `system:apiserver` in `system:masters`. A fresh object per call: each write gets its own
 * warnings list, so nothing one write records leaks into another.
 */
export function systemContext(): RequestContext {
  return {
    user: { username: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] },
    namespace: '',
    dryRun: false,
    warnings: [],
  };
}
