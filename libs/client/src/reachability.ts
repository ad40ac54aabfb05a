import * as net from 'node:net';

/** Socket-level failure codes: nothing (or nothing sane) answered at the server's address. */
const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ETIMEDOUT', 'EAI_AGAIN']);

/**
 * The request failed below HTTP: the connection was refused, reset or cut (a server that is
 * stopping or restarting), not an API answer.
 */
export function isConnectionError(err: unknown): boolean {
  // Duck-typed: errors raised by node:net may come from another realm than this module's Error.
  if (typeof err !== 'object' || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
  return message === 'socket hang up' || message === 'watch connection closed before the stream ended';
}

export interface ServerReachabilityOptions {
  /** Time between two connection attempts while the server is unreachable (default 250 ms). */
  probeIntervalMs?: number;
  /** How long one attempt may take (default 2 s). */
  connectTimeoutMs?: number;
}

/**
 * Tells a client when its server comes back after it stopped answering. One TCP connection
 * attempt per interval, shared by every caller of the client (its informers, leader election),
 * so a process with many informers probes a down server once, not once per informer.
 */
export class ServerReachability {
  private probing?: Promise<void>;
  private readonly waiters = new Set<() => void>();
  private readonly intervalMs: number;
  private readonly connectTimeoutMs: number;

  constructor(
    private readonly host: string,
    private readonly port: number,
    opts: ServerReachabilityOptions = {},
  ) {
    this.intervalMs = opts.probeIntervalMs ?? 250;
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 2000;
  }

  /**
   * Resolves true when the server was unreachable at the first attempt (`onUnreachable` is
   * then called) and accepts connections again; false when it was reachable right away (the
   * failure was not about reaching it: the caller should back off as usual) or when `signal`
   * aborts first.
   */
  async returned(signal: AbortSignal, onUnreachable?: () => void): Promise<boolean> {
    if (signal.aborted) return false;
    if (!this.probing && (await this.connects())) return false;
    onUnreachable?.();
    if (signal.aborted) return false;
    return new Promise<boolean>((resolve) => {
      const onAbort = () => {
        this.waiters.delete(waiter);
        resolve(false);
      };
      const waiter = () => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      };
      this.waiters.add(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
      this.probing ??= this.probeUntilReachable().finally(() => (this.probing = undefined));
    });
  }

  private async probeUntilReachable(): Promise<void> {
    while (this.waiters.size > 0) {
      await new Promise((r) => setTimeout(r, this.intervalMs).unref());
      if (this.waiters.size === 0) return;
      if (await this.connects()) {
        const waiters = [...this.waiters];
        this.waiters.clear();
        for (const w of waiters) w();
        return;
      }
    }
  }

  /** One connection attempt; closed at once when it succeeds. */
  private connects(): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = net.connect({ host: this.host, port: this.port });
      const done = (ok: boolean) => {
        socket.destroy();
        resolve(ok);
      };
      socket.setTimeout(this.connectTimeoutMs, () => done(false));
      socket.once('connect', () => done(true));
      socket.once('error', () => done(false));
    });
  }
}
