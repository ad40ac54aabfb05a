import type { ServerResponse } from 'node:http';
import type { StatusError } from '@orch/apimachinery';

/**
 * After a priority-and-fairness 429 on an HTTP/1.1 connection, the gateway stops reading that
 * connection for the Retry-After it sent (a deviation from upstream, which has many cores to
 * answer a 429 storm with): the client gets its 429 at once, and its next request on the
 * connection is read after Retry-After, so a client that ignores Retry-After (retries at once)
 * costs the event loop no more than one that honours it. Other connections are not affected.
 * HTTP/2 is left alone: its session may carry other requests, which must not stall.
 */
export function holdConnectionAfter(res: ServerResponse, rejection: StatusError): void {
  const seconds = rejection.details?.retryAfterSeconds;
  const socket = res.socket;
  if (!seconds || !socket || res.req.httpVersionMajor !== 1) return;
  // After Node's own 'finish' listener (it resumes the socket to read the next request).
  res.once('finish', () => {
    if (socket.destroyed) return;
    socket.pause();
    const timer = setTimeout(() => {
      socket.off('close', cancel);
      if (!socket.destroyed) socket.resume();
    }, seconds * 1000);
    const cancel = () => clearTimeout(timer);
    socket.once('close', cancel);
  });
}
