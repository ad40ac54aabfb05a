import type { RequestContext } from './strategy';

/** The identity the gateway uses for its own writes (bootstrap objects). */
export const SYSTEM_CONTEXT: RequestContext = {
  user: { username: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] },
  namespace: '',
  dryRun: false,
  warnings: [],
};
