import type { Logger } from '@orch/server-common';
import type { ProxyMetrics } from './metrics';
import type { FrontendSpec } from './model';

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
