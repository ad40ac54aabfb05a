import type { Server, Socket } from 'node:net';
import { Counter, Gauge, type Registry } from 'prom-client';
import { StatusError } from '@orch/apimachinery';
import { AuthenticationFailureLimiter, failureSourceKey } from '@orch/auth';
import { formatDuration, type Logger } from '@orch/server-common';
import type { GatewayOptions } from '../options';

/** The flags of the limiter, by name (start-up errors name them). */
type LimitFlags = Pick<
  GatewayOptions,
  | 'authentication-failure-limit'
  | 'authentication-failure-window'
  | 'authentication-failure-cooloff'
  | 'authentication-failure-max-sources'
  | 'authentication-failure-exempt-cidrs'
>;

/**
 * The gateway's defence against credential floods (`--authentication-failure-*`): a client
 * address whose authentication failures (401s) pass the limit is refused for the cool-off
 * (rules: `AuthenticationFailureLimiter` in @orch/auth) —
 * - its new TCP connections are reset on 'connection', before the TLS handshake (`guard`);
 * - its requests on connections already open are 429 with Retry-After and `Connection: close`,
 *   before any authenticator runs (`refuseRequest`, the authenticate stage).
 * A source becoming limited logs one line (address, never a credential); the counters
 * `apiserver_authentication_failure_limited_total` (sources limited) and
 * `apiserver_authentication_failure_refused_total{at}` (connections and requests refused)
 * carry no address, so their cardinality stays fixed.
 */
export class AuthenticationFailureLimit {
  private readonly limited: Counter;
  private readonly refused: Counter<'at'>;

  private constructor(
    private readonly limiter: AuthenticationFailureLimiter,
    private readonly flags: LimitFlags,
    metrics: Registry,
    private readonly logger: Logger,
  ) {
    this.limited = new Counter({
      name: 'apiserver_authentication_failure_limited_total',
      help: 'Client sources (IPv4 addresses, IPv6 /64s) that reached --authentication-failure-limit and were refused for --authentication-failure-cooloff.',
      registers: [metrics],
    });
    this.refused = new Counter({
      name: 'apiserver_authentication_failure_refused_total',
      help: 'Connections reset before TLS (at="connection") and requests answered 429 (at="request") because their source was over --authentication-failure-limit.',
      labelNames: ['at'],
      registers: [metrics],
    });
    new Gauge({
      name: 'apiserver_authentication_failure_tracked_sources',
      help: 'Client sources with recent authentication failures the gateway keeps count of (at most --authentication-failure-max-sources).',
      registers: [metrics],
      collect() {
        this.set(limiter.size);
      },
    });
  }

  /** The limiter the flags ask for; undefined when `--authentication-failure-limit=0`. Throws naming the flag for a bad value. */
  static fromFlags(flags: LimitFlags, deps: { metrics: Registry; logger: Logger }): AuthenticationFailureLimit | undefined {
    const limit = flags['authentication-failure-limit'];
    if (limit < 0) throw new Error(`--authentication-failure-limit must be 0 (off) or more, not ${limit}`);
    if (limit === 0) return undefined;
    const positive = ['authentication-failure-window', 'authentication-failure-cooloff', 'authentication-failure-max-sources'] as const;
    for (const name of positive) if (!(flags[name] > 0)) throw new Error(`--${name} must be more than 0 while --authentication-failure-limit is on, not ${flags[name]}`);
    let limiter: AuthenticationFailureLimiter;
    try {
      limiter = new AuthenticationFailureLimiter({
        limit,
        windowMs: flags['authentication-failure-window'],
        cooloffMs: flags['authentication-failure-cooloff'],
        maxSources: flags['authentication-failure-max-sources'],
        exempt: flags['authentication-failure-exempt-cidrs'],
      });
    } catch (err) {
      throw new Error(`--authentication-failure-exempt-cidrs: ${(err as Error).message}`);
    }
    return new AuthenticationFailureLimit(limiter, flags, deps.metrics, deps.logger);
  }

  /**
   * Puts the limiter in front of the TLS layer: the server's one 'connection' listener (Node's
   * TLS wrapper; HTTP's on a plain server) runs only for sources that are not refused; a refused one is reset at once,
   * so it costs an accept and a Map lookup instead of a handshake. Call before listen.
   */
  guard(server: Server): void {
    const listeners = server.listeners('connection');
    if (listeners.length !== 1) throw new Error(`the HTTPS server has ${listeners.length} connection listeners, expected one (Node's TLS or HTTP layer)`);
    const tlsListener = listeners[0] as (this: Server, socket: Socket) => void;
    server.removeListener('connection', tlsListener);
    server.on('connection', (socket: Socket) => {
      if (this.limiter.refusedFor(socket.remoteAddress) > 0) {
        this.refused.inc({ at: 'connection' });
        socket.resetAndDestroy();
        return;
      }
      tlsListener.call(server, socket);
    });
  }

  /** Throws 429 TooManyRequests (Retry-After, closing the connection) when the request's source is refused; no authenticator runs. */
  refuseRequest(socket: Socket | undefined): void {
    const ms = this.limiter.refusedFor(socket?.remoteAddress);
    if (ms <= 0) return;
    this.refused.inc({ at: 'request' });
    const seconds = Math.ceil(ms / 1000);
    throw new StatusError(429, 'TooManyRequests', `too many failed authentication attempts from this address: refused for ${seconds} more seconds`, { retryAfterSeconds: seconds }, { 'Retry-After': String(seconds), connection: 'close' });
  }

  /** Counts one 401 of the request's source; logs and counts the source once when this one makes it limited. */
  failed(socket: Socket | undefined): void {
    const address = socket?.remoteAddress;
    if (!this.limiter.fail(address)) return;
    this.limited.inc();
    this.logger.warn('client source over the authentication failure limit: refusing its connections and requests', {
      source: failureSourceKey(address!),
      limit: this.flags['authentication-failure-limit'],
      window: formatDuration(this.flags['authentication-failure-window']),
      cooloff: formatDuration(this.flags['authentication-failure-cooloff']),
    });
  }
}
