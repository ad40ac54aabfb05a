import type { EventEmitter } from 'node:events';
import type { Logger } from '@orch/server-common';
import { Balancer, type Scheduler } from './balancer';
import type { ProxyMetrics } from './metrics';
import type { Endpoint, FrontendSpec, Protocol } from './model';

/** One listening address of one service port. */
export interface Frontend {
  /** Binds the address; rejects with the socket error (EADDRINUSE, EADDRNOTAVAIL, EACCES...). */
  listen(): Promise<void>;
  /** New route and affinity settings, for new connections only. */
  update(spec: FrontendSpec): void;
  /** Stops accepting; established TCP connections keep going. */
  close(): Promise<void>;
  /** Stops accepting and ends every open connection (process shutdown). */
  destroy(): Promise<void>;
}

/** What every frontend of one proxy shares. */
export interface FrontendContext {
  logger: Logger;
  metrics: ProxyMetrics;
  /** How long a backend may take to accept a TCP connection before the next one is tried. */
  connectTimeoutMs: number;
  /** Idle time after which a dropped TCP connection is closed. */
  dropIdleMs: number;
  /** Idle time after which a UDP flow is forgotten (`--udp-timeout`). */
  udpIdleMs: number;
}

/** Makes the frontends of one protocol (tcp-frontend.ts, udp-frontend.ts), each with its own scheduler. */
export interface FrontendFactory {
  readonly protocol: Protocol;
  create(spec: FrontendSpec, scheduler: Scheduler): Frontend;
}

/** The endpoints new connections of `spec` may go to (none for a drop route). */
export function routedEndpoints(spec: FrontendSpec): Endpoint[] {
  return spec.route.action === 'forward' ? spec.route.endpoints : [];
}

/**
 * What the TCP and UDP frontends share: their spec, the balancer of its route, binding the
 * listening socket, and route updates (subclasses may do more on update).
 */
export abstract class BalancedFrontend implements Frontend {
  protected readonly balancer: Balancer;

  constructor(
    protected spec: FrontendSpec,
    scheduler: Scheduler,
    protected readonly ctx: FrontendContext,
  ) {
    this.balancer = new Balancer(scheduler);
    this.balancer.setEndpoints(routedEndpoints(spec), spec.affinityTimeoutMs);
  }

  listen(): Promise<void> {
    return bindListener(this.socket(), (listening) => this.bind(listening), (err) => this.ctx.logger.error('listener failed', { frontend: this.spec.key, err: err.message }));
  }

  update(spec: FrontendSpec): void {
    this.spec = spec;
    this.balancer.setEndpoints(routedEndpoints(spec), spec.affinityTimeoutMs);
  }

  abstract close(): Promise<void>;
  abstract destroy(): Promise<void>;
  /** The listening socket (its errors). */
  protected abstract socket(): EventEmitter;
  /** Starts listening on the spec's address; calls `listening` once it does. */
  protected abstract bind(listening: () => void): void;
}

/**
 * Binds a listening socket: `bind` starts it and calls back once it listens. Rejects with the
 * bind error (EADDRINUSE, EADDRNOTAVAIL, EACCES...); errors after that go to `onLaterError`.
 */
export function bindListener(socket: EventEmitter, bind: (listening: () => void) => void, onLaterError: (err: Error) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    bind(() => {
      socket.off('error', reject);
      socket.on('error', onLaterError);
      resolve();
    });
  });
}
