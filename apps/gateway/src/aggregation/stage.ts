import type { ApiRequest } from '../pipeline/api-request';
import { requestUser } from '../pipeline/api-request';
import type { Aggregator } from './aggregator';

/**
 * The aggregation stage (upstream kube-aggregator's proxy handler, after authorization):
 * requests under `/apis/<group>/<version>` of a group version an APIService serves remotely
 * (discovery of that group version included) are proxied to its extension server and answered
 * from there; everything else goes on to the local registry.
 */
export function aggregateStage(aggregator: Aggregator | undefined): (r: ApiRequest) => void | Promise<void> {
  // Synchronous unless proxied: the pipeline does not await a stage that returns nothing.
  return (r) => {
    const { info } = r;
    // Upgrade requests (no reply) to aggregated APIs are not proxied.
    if (!aggregator || !r.reply || info.apiPrefix !== 'apis' || !info.apiGroup || !info.apiVersion) return;
    const remote = aggregator.remoteFor(info.apiGroup, info.apiVersion);
    if (!remote) return;
    return aggregator.proxy(remote, r.req, r.reply, requestUser(r)).then((status) => {
      r.status = status;
      r.done = true;
    });
  };
}
