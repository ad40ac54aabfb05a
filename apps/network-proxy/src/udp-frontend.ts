import dgram from 'node:dgram';
import type { BackendState } from './balancer';
import { BalancedFrontend, type FrontendContext, type FrontendFactory } from './frontend';
import type { FrontendSpec } from './model';

interface Flow {
  socket: dgram.Socket;
  backend: BackendState;
  timer?: NodeJS.Timeout;
}

/**
 * Serves one UDP address for one service port. Each client address:port is a flow with its
 * own socket towards the backend the balancer chose; replies come back through the
 * listening socket. A flow ends after `udpIdleMs` without traffic either way, or when its
 * backend leaves the route (upstream clears such conntrack entries); the next datagram
 * starts a new flow. A drop route discards datagrams; no route means no socket, so clients
 * get port-unreachable.
 */
export class UdpFrontend extends BalancedFrontend {
  private readonly listener = dgram.createSocket({ type: 'udp4' }).on('message', (msg, rinfo) => this.onClientMessage(msg, rinfo));
  private readonly flows = new Map<string, Flow>();

  protected socket(): dgram.Socket {
    return this.listener;
  }

  protected bind(listening: () => void): void {
    this.listener.bind({ address: this.spec.ip, port: this.spec.port, exclusive: true }, listening);
  }

  override update(spec: FrontendSpec): void {
    super.update(spec);
    for (const [client, flow] of this.flows) if (!this.balancer.has(flow.backend.endpoint.key)) this.endFlow(client, flow);
  }

  /** Closes the socket; the flows end too (UDP has no connection to keep). */
  close(): Promise<void> {
    for (const [client, flow] of this.flows) this.endFlow(client, flow);
    return new Promise((resolve) => this.listener.close(() => resolve()));
  }

  destroy(): Promise<void> {
    return this.close();
  }

  private onClientMessage(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    if (this.spec.route.action === 'drop') {
      this.ctx.metrics.connections.inc({ protocol: 'UDP', result: 'dropped' });
      return;
    }
    const client = `${rinfo.address}:${rinfo.port}`;
    let flow = this.flows.get(client);
    if (!flow) {
      const backend = this.balancer.pick({ clientIP: rinfo.address, destIP: this.spec.ip });
      if (!backend) return;
      flow = this.startFlow(client, rinfo, backend);
    }
    this.touch(client, flow);
    flow.socket.send(msg, flow.backend.endpoint.port, flow.backend.endpoint.ip);
  }

  private startFlow(client: string, rinfo: dgram.RemoteInfo, backend: BackendState): Flow {
    const socket = dgram.createSocket({ type: 'udp4' });
    const flow: Flow = { socket, backend };
    socket.on('message', (reply, from) => {
      if (from.address !== backend.endpoint.ip || from.port !== backend.endpoint.port) return;
      this.touch(client, flow);
      this.listener.send(reply, rinfo.port, rinfo.address);
    });
    socket.on('error', (err) => {
      this.ctx.logger.debug('udp flow failed', { frontend: this.spec.key, backend: backend.endpoint.key, err: err.message });
      this.endFlow(client, flow);
    });
    this.flows.set(client, flow);
    this.ctx.metrics.connections.inc({ protocol: 'UDP', result: 'forwarded' });
    this.ctx.metrics.active.inc({ protocol: 'UDP' });
    return flow;
  }

  private touch(client: string, flow: Flow): void {
    clearTimeout(flow.timer);
    flow.timer = setTimeout(() => this.endFlow(client, flow), this.ctx.udpIdleMs);
    flow.timer.unref();
  }

  private endFlow(client: string, flow: Flow): void {
    if (this.flows.get(client) !== flow) return;
    this.flows.delete(client);
    clearTimeout(flow.timer);
    flow.socket.close();
    this.balancer.done(flow.backend);
    this.ctx.metrics.active.dec({ protocol: 'UDP' });
  }
}

/** UDP frontends sharing `ctx`. */
export function udpFrontends(ctx: FrontendContext): FrontendFactory {
  return { protocol: 'UDP', create: (spec, scheduler) => new UdpFrontend(spec, scheduler, ctx) };
}
