import net from 'node:net';
import type { BackendState } from './balancer';
import { BalancedFrontend, type FrontendContext, type FrontendFactory } from './frontend';

/** Backends tried for one connection before it is reset (upstream userspace proxy). */
const MAX_CONNECT_ATTEMPTS = 3;

/**
 * Listens on one TCP address for one service port and pipes every accepted connection to a
 * backend chosen by the balancer. Both directions are piped with backpressure, and a FIN in
 * one direction is passed on without closing the other (half-close). A backend that refuses
 * or times out is skipped for the next one; when none is left the client is reset.
 * Route updates apply to new connections only; `close()` stops accepting and leaves open
 * connections running.
 */
export class TcpFrontend extends BalancedFrontend {
  private readonly server = net.createServer({ allowHalfOpen: true }, (client) => this.accept(client));
  /** Open sockets of both sides, for destroy(). */
  private readonly sockets = new Set<net.Socket>();

  protected socket(): net.Server {
    return this.server;
  }

  protected bind(listening: () => void): void {
    this.server.listen({ host: this.spec.ip, port: this.spec.port, exclusive: true }, listening);
  }

  close(): Promise<void> {
    // The listening socket closes at once; the callback would wait for every open connection.
    if (this.server.listening) this.server.close();
    return Promise.resolve();
  }

  async destroy(): Promise<void> {
    await this.close();
    for (const s of this.sockets) s.destroy();
  }

  private accept(client: net.Socket): void {
    this.track(client);
    client.setNoDelay(true);
    client.on('error', () => client.destroy());
    if (this.spec.route.action === 'drop') {
      // Local policy without local endpoints: swallow the traffic, never answer.
      this.ctx.metrics.connections.inc({ protocol: 'TCP', result: 'dropped' });
      client.resume();
      client.setTimeout(this.ctx.dropIdleMs, () => client.destroy());
      return;
    }
    const clientIP = client.remoteAddress ?? '';
    const destIP = client.localAddress ?? this.spec.ip;
    const tried = new Set<string>();
    const attempt = () => {
      const backend = tried.size < MAX_CONNECT_ATTEMPTS ? this.balancer.pick({ clientIP, destIP }, tried) : undefined;
      if (!backend) {
        this.ctx.metrics.connections.inc({ protocol: 'TCP', result: 'backend_unreachable' });
        client.resetAndDestroy();
        return;
      }
      tried.add(backend.endpoint.key);
      this.connect(client, backend, attempt);
    };
    attempt();
  }

  /** Connects to backend; on success pipes both ways, on failure calls `retry`. */
  private connect(client: net.Socket, backend: BackendState, retry: () => void): void {
    const { ip, port } = backend.endpoint;
    const upstream = net.connect({ host: ip, port, allowHalfOpen: true });
    this.track(upstream);
    upstream.setTimeout(this.ctx.connectTimeoutMs);
    let connected = false;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      this.balancer.done(backend);
      if (connected) this.ctx.metrics.active.dec({ protocol: 'TCP' });
    };
    const failBeforeConnect = (why: string) => {
      if (connected) return;
      upstream.destroy();
      finish();
      this.ctx.logger.debug('backend connect failed', { frontend: this.spec.key, backend: backend.endpoint.key, why });
      if (client.destroyed) return;
      retry();
    };
    upstream.once('timeout', () => failBeforeConnect('timeout'));
    upstream.once('error', (err) => failBeforeConnect(err.message));
    upstream.once('connect', () => {
      connected = true;
      upstream.setTimeout(0);
      upstream.setNoDelay(true);
      upstream.removeAllListeners('error');
      this.ctx.metrics.connections.inc({ protocol: 'TCP', result: 'forwarded' });
      this.ctx.metrics.active.inc({ protocol: 'TCP' });
      if (client.destroyed) {
        upstream.destroy();
        finish();
        return;
      }
      // A reset on one side resets the other; orderly ends travel through the pipes.
      upstream.on('error', () => client.resetAndDestroy());
      client.removeAllListeners('error');
      client.on('error', () => upstream.resetAndDestroy());
      // A side that closes before both directions ended (no orderly FIN each way) takes the other down.
      upstream.on('close', () => {
        finish();
        if (!(upstream.readableEnded && client.readableEnded)) client.destroy();
      });
      client.on('close', () => {
        if (!(upstream.readableEnded && client.readableEnded)) upstream.destroy();
      });
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }
}

/** TCP frontends sharing `ctx`. */
export function tcpFrontends(ctx: FrontendContext): FrontendFactory {
  return { protocol: 'TCP', create: (spec, scheduler) => new TcpFrontend(spec, scheduler, ctx) };
}
