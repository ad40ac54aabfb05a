import { StatusError } from '@orch/apimachinery';
import type { ApiRequest } from '../pipeline/api-request';
import { requestUser } from '../pipeline/api-request';
import { isLongRunning } from './stage';

/** Limits of the max-in-flight stage (upstream --max-requests-inflight, --max-mutating-requests-inflight). */
export interface MaxInFlightLimits {
  /** Read requests served at once (0: no limit). */
  readOnly: number;
  /** Write requests served at once (0: no limit). */
  mutating: number;
}

const READ_VERBS = new Set(['get', 'list', 'watch']);
const MASTERS = 'system:masters';

/**
 * The max-in-flight stage, in the flow-control position when API Priority and Fairness is off
 * (upstream WithMaxInFlightLimit): at most `readOnly` reads and `mutating` writes are served at
 * once; one more is refused at once with 429 and `Retry-After: 1`. Watches and streams are not
 * counted, nor are members of system:masters (as upstream). A seat is given back as soon as its
 * response is ended (upstream: when the handler returns), so a client that read the answer never
 * finds its own seat still taken.
 */
export function maxInFlightStage(limits: MaxInFlightLimits): (r: ApiRequest) => void {
  let reads = 0;
  let writes = 0;
  return (r) => {
    if (isLongRunning(r.info) || requestUser(r).groups.includes(MASTERS)) return;
    const read = READ_VERBS.has(String(r.info.verb)) || !r.info.isResourceRequest;
    const limit = read ? limits.readOnly : limits.mutating;
    if (limit <= 0) return;
    if ((read ? reads : writes) >= limit) {
      throw StatusError.tooManyRequests(`too many requests, please try again later: ${limit} ${read ? 'read' : 'mutating'} requests are in flight (--max-${read ? '' : 'mutating-'}requests-inflight)`, 1);
    }
    if (read) reads++;
    else writes++;
    let given = false;
    const giveBack = () => {
      if (given) return;
      given = true;
      if (read) reads--;
      else writes--;
    };
    const res = r.reply.raw;
    if (res.writableFinished || res.destroyed) giveBack();
    else {
      // 'prefinish' comes synchronously from end() once the body is queued; 'close' only after the
      // socket write completes, which may be after the client has read the answer and asked again.
      res.once('prefinish', giveBack);
      res.once('close', giveBack);
    }
  };
}
