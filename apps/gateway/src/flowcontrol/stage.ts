import { StatusError } from '@orch/apimachinery';
import type { RequestInfo } from '../request/request-info';
import type { ApiRequest } from '../pipeline/api-request';
import { requestUser } from '../pipeline/api-request';
import { holdConnectionAfter } from './backoff';
import type { Admitted, FlowControl } from './flow-control';

/** Subresources that stream for a long time (upstream's default --long-running-request-regexp). */
const LONG_RUNNING_SUBRESOURCES = new Set(['log', 'exec', 'attach', 'portforward', 'proxy']);

/** Watches and streams: classified, never queued or held to a seat (upstream longRunningRequestCheck). */
export function isLongRunning(info: RequestInfo): boolean {
  return info.verb === 'watch' || (info.isResourceRequest && LONG_RUNNING_SUBRESOURCES.has(info.subresource));
}

/**
 * The priority-and-fairness stage (upstream WithPriorityAndFairness, between impersonation
 * and authorization): classifies the request, names the FlowSchema and priority level in the
 * response headers (`X-Kubernetes-PF-*` and `X-Orch-PF-*`), and waits for a seat of the
 * level; the seat is released when the response's body is written. A full queue or a too long
 * wait is a 429 with Retry-After (thrown by FlowControl.admit), after which an HTTP/1.1
 * connection is not read for Retry-After (holdConnectionAfter).
 */
export function flowControlStage(flowControl: FlowControl | undefined): (r: ApiRequest) => void | Promise<void> {
  return (r) => {
    if (!flowControl) return;
    const { info } = r;
    // An upgrade (exec, attach, port-forward) has no reply: it is classified, never held (long-running).
    const res = r.reply?.raw as typeof r.reply.raw | undefined;
    // Only a request that has to queue listens for its client going away.
    let onClose: (() => void) | undefined;
    const onGone = (cancel: () => void) => {
      onClose = cancel;
      res?.once('close', cancel);
    };
    const admitting = flowControl.admit(
      {
        user: requestUser(r),
        isResourceRequest: info.isResourceRequest,
        verb: String(info.verb),
        apiGroup: info.apiGroup,
        resource: info.resource,
        subresource: info.subresource,
        namespace: info.namespace,
        path: info.path,
        limit: Number(r.query.get('limit')) || undefined,
      },
      isLongRunning(info),
      onGone,
    );
    // Admitted at once (no seat to wait for): no promise, no await.
    if (!(admitting instanceof Promise)) return answer(r, res, admitting);
    return admitting.then(
      (admitted) => {
        if (onClose) res?.off('close', onClose);
        answer(r, res, admitted);
      },
      (err: unknown) => {
        if (onClose) res?.off('close', onClose);
        if (res && err instanceof StatusError && err.code === 429) holdConnectionAfter(res, err);
        throw err;
      },
    );
  };
}

/** Names the request's FlowSchema and priority level in the response headers and releases its seat when the response is written. */
function answer(r: ApiRequest, res: ApiRequest['reply']['raw'] | undefined, admitted: Admitted): void {
  if (!res) {
    admitted.release();
    return;
  }
  const fsUid = admitted.flowSchema.metadata.uid ?? '';
  const plUid = admitted.priorityLevel.metadata.uid ?? '';
  // Names in lower case, as Fastify stores and sends them (it lower-cases each name it is given).
  r.reply.header('x-kubernetes-pf-flowschema-uid', fsUid).header('x-kubernetes-pf-prioritylevel-uid', plUid);
  r.reply.header('x-orch-pf-flowschema-uid', fsUid).header('x-orch-pf-prioritylevel-uid', plUid);
  // Exempt and long-running requests hold no seat: nothing to release.
  if (!admitted.holdsSeat) return;
  if (res.writableFinished || res.destroyed) admitted.release();
  else {
    // The seat is held until the whole body is written (handed to the socket: 'prefinish' comes
    // from end() after a streamed body's last chunk), or the client went away ('close').
    res.once('prefinish', admitted.release);
    res.once('close', admitted.release);
  }
}
