import type { IncomingMessage } from 'node:http';
import type { OnReadOpts } from 'node:net';
import type { Duplex } from 'node:stream';
import { formatDuration } from '@orch/server-common';
import { Counter, type Registry } from 'prom-client';
import type { Pod } from '../api/types';
import { StreamError, type Runtime } from '../runtime/runtime';
import { PORT_FORWARD_SPDY_PROTOCOL, PORT_FORWARD_TUNNEL_PROTOCOL, PORT_FORWARD_WEBSOCKET_PROTOCOLS, dialTcp, parsePortsQuery, webSocketTunnel, servePortForwardSpdy, servePortForwardWebSocket } from '../streaming/port-forward';
import { SPDY_PROTOCOLS, StreamRequestError, WEBSOCKET_PROTOCOLS, parseStreamOptions, serveStreams, spdyChannels, websocketChannels, type ClientChannels, type StreamOptions } from '../streaming/remote-command';
import { STREAM_BUFFER_BYTES, SpdySession } from '../streaming/spdy';
import { UpgradeError, Upgrader, negotiate, rejectUpgrade, type Accepted } from '../streaming/upgrade';

/**
 * The agent's streaming endpoints (upstream kubelet server): `/exec/<ns>/<pod>[/<uid>]/<container>?command=...`,
 * `/attach/<ns>/<pod>[/<uid>]/<container>` and `/portForward/<ns>/<pod>[/<uid>]`, each an
 * upgrade to WebSocket or SPDY/3.1. Requests are authenticated and authorized before they
 * get here. Everything that can be checked (pod, container, command) is checked before the
 * upgrade, so the client gets an HTTP error it can show.
 */

export interface StreamingOptions {
  runtime: Runtime;
  pod(namespace: string, name: string): Pod | undefined;
  /** Streams must be opened within this long after the upgrade (SPDY). */
  streamCreationTimeoutMs: number;
  /** Connections without traffic (bytes either way) for this long are closed; 0: never. */
  idleTimeoutMs: number;
  /** Where `node_agent_streaming_sessions_total` is registered. */
  metrics?: Registry;
}

/** How long a session closed for idling has to end cleanly before its connection is destroyed. */
const IDLE_CLOSE_GRACE_MS = 2000;

/** Paths of the streaming endpoints (prefixes). */
export const STREAMING_PREFIXES = ['/exec/', '/attach/', '/portForward/'];

export function isStreamingPath(path: string): boolean {
  return STREAMING_PREFIXES.some((p) => path.startsWith(p));
}

interface Target {
  pod: Pod;
  uid: string;
  container?: string;
}

/** Resolves `<ns>/<pod>[/<uid>][/<container>]` to a known pod. */
function resolve(opts: StreamingOptions, parts: string[], withContainer: boolean): Target {
  const want = withContainer ? [3, 4] : [2, 3];
  if (!want.includes(parts.length)) throw new UpgradeError(404, '404 page not found');
  const [ns, name] = parts;
  const uid = parts.length === want[1] ? parts[2] : undefined;
  const pod = opts.pod(ns, name);
  if (!pod || (uid && pod.metadata.uid !== uid)) throw new UpgradeError(404, `pod ${ns}/${name}${uid ? ` (uid ${uid})` : ''} not found`);
  return { pod, uid: pod.metadata.uid ?? '', container: withContainer ? parts[parts.length - 1] : undefined };
}

function checkContainer(t: Target): void {
  const all = [...t.pod.spec.containers, ...(t.pod.spec.initContainers ?? []), ...(t.pod.spec.ephemeralContainers ?? [])];
  if (!all.some((c) => c.name === t.container)) throw new UpgradeError(404, `container not found (${JSON.stringify(t.container)})`);
}

/** Serves one upgrade request to a streaming endpoint (after authorization). */
export class StreamingEndpoints {
  private readonly upgrader = new Upgrader();
  /** Sessions in progress, ended on close(). */
  private readonly live = new Set<Duplex>();
  /** Upgrades completed, by endpoint, transport and negotiated protocol (which one a client really got). */
  private readonly sessions: Counter<'endpoint' | 'transport' | 'protocol'>;
  /** Sessions closed because their connection idled. */
  private readonly idleCloses: Counter<'endpoint'>;

  constructor(private readonly opts: StreamingOptions) {
    const registers = opts.metrics ? [opts.metrics] : [];
    this.sessions = new Counter({ name: 'node_agent_streaming_sessions_total', help: 'Streaming sessions (exec, attach, portForward) by transport and negotiated protocol.', labelNames: ['endpoint', 'transport', 'protocol'], registers });
    this.idleCloses = new Counter({ name: 'node_agent_streaming_idle_closes_total', help: 'Streaming sessions closed after --streaming-connection-idle-timeout without traffic.', labelNames: ['endpoint'], registers });
  }

  async handle(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => undefined);
    const url = new URL(req.url ?? '/', 'https://agent');
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const endpoint = parts.shift();
    try {
      if (endpoint === 'exec' || endpoint === 'attach') await this.remoteCommand(endpoint, req, socket, head, url.searchParams, parts);
      else if (endpoint === 'portForward') await this.portForward(req, socket, head, url.searchParams, parts);
      else throw new UpgradeError(404, '404 page not found');
    } catch (err) {
      const code = err instanceof UpgradeError || err instanceof StreamError ? err.code : err instanceof StreamRequestError ? 400 : 500;
      rejectUpgrade(socket, code, (err as Error).message);
    }
  }

  /** Ends every session in progress. */
  close(): void {
    for (const s of this.live) s.destroy();
    this.live.clear();
  }

  /**
   * Counts and tracks an accepted session, and watches its connection for idling: resolves with
   * the reason to tell the client once no byte went either way for --streaming-connection-idle-timeout
   * (client heartbeats count, as every frame does for upstream's SPDY framer). The session then
   * ends itself cleanly (exec and attach: the process is stopped and the reason is the session's
   * error; port-forward: GOAWAY or a close frame); the connection is destroyed shortly after
   * if it is still open. Never resolves for a connection that closed first.
   */
  private track(socket: Duplex, endpoint: string, accepted: Accepted): Promise<string> {
    this.sessions.inc({ endpoint, transport: accepted.transport, protocol: accepted.protocol });
    this.live.add(socket);
    socket.once('close', () => this.live.delete(socket));
    const idleMs = this.opts.idleTimeoutMs;
    const timed = socket as Duplex & { setTimeout?: (ms: number, cb?: () => void) => void };
    return new Promise((resolve) => {
      if (idleMs <= 0 || !timed.setTimeout) return;
      timed.setTimeout(idleMs, () => {
        timed.setTimeout?.(0); // once
        this.idleCloses.inc({ endpoint });
        setTimeout(() => socket.destroy(), IDLE_CLOSE_GRACE_MS).unref();
        resolve(`the connection was idle for ${formatDuration(idleMs)}: closed by the node agent (--streaming-connection-idle-timeout)`);
      });
    });
  }

  private async remoteCommand(kind: 'exec' | 'attach', req: IncomingMessage, socket: Duplex, head: Buffer, q: URLSearchParams, parts: string[]): Promise<void> {
    const t = resolve(this.opts, parts, true);
    checkContainer(t);
    let streamOpts: StreamOptions;
    try {
      streamOpts = parseStreamOptions(q);
    } catch (err) {
      throw new UpgradeError(400, (err as Error).message);
    }
    const command = q.getAll('command');
    if (kind === 'exec' && command.length === 0) throw new UpgradeError(400, 'you must specify at least one command for the container');
    const state = this.opts.runtime.podState(t.uid)?.containers.find((c) => c.name === t.container);
    if (!state?.running) throw new UpgradeError(400, `container ${t.container} is not running${state?.waiting?.reason ? ` (${state.waiting.reason})` : ''}`);
    const choice = negotiate(req, { websocket: WEBSOCKET_PROTOCOLS, spdy: SPDY_PROTOCOLS });
    const accepted = await this.upgrader.accept(req, socket, head, choice);
    const idle = this.track(socket, kind, accepted);
    let client: ClientChannels;
    try {
      client = await this.channels(accepted, streamOpts);
    } catch {
      socket.destroy();
      return;
    }
    const describe = kind === 'exec' ? `command [${command.join(' ')}]` : `attach to container ${t.container}`;
    let target;
    try {
      target = kind === 'exec' ? await this.opts.runtime.exec(t.uid, t.container!, command, streamOpts) : await this.opts.runtime.attach(t.uid, t.container!, streamOpts);
    } catch (err) {
      await client.finish({ error: (err as Error).message }, describe);
      return;
    }
    await serveStreams(client, target, describe, idle);
  }

  private channels(accepted: Accepted, streamOpts: StreamOptions): Promise<ClientChannels> {
    if (accepted.transport === 'websocket') return Promise.resolve(websocketChannels(accepted.ws, accepted.protocol, streamOpts));
    return spdyChannels(accepted.session, accepted.protocol, streamOpts, this.opts.streamCreationTimeoutMs);
  }

  private async portForward(req: IncomingMessage, socket: Duplex, head: Buffer, q: URLSearchParams, parts: string[]): Promise<void> {
    const t = resolve(this.opts, parts, false);
    const ip = this.opts.runtime.podState(t.uid)?.podIP || t.pod.status?.podIP;
    if (!ip) throw new UpgradeError(400, `pod ${t.pod.metadata.namespace}/${t.pod.metadata.name} has no address yet`);
    const describe = `pod ${t.pod.metadata.namespace}/${t.pod.metadata.name}`;
    const dial = (port: number, onread?: OnReadOpts) => dialTcp(ip, port, describe, onread);
    const choice = negotiate(req, { websocket: [PORT_FORWARD_TUNNEL_PROTOCOL, ...PORT_FORWARD_WEBSOCKET_PROTOCOLS], spdy: [PORT_FORWARD_SPDY_PROTOCOL] });
    let ports: number[] = [];
    if (choice.transport === 'websocket' && choice.protocol !== PORT_FORWARD_TUNNEL_PROTOCOL) {
      try {
        ports = parsePortsQuery(q);
      } catch (err) {
        throw new UpgradeError(400, (err as Error).message);
      }
      if (!ports.length) throw new UpgradeError(400, 'query parameter "port" is required');
    }
    const accepted = await this.upgrader.accept(req, socket, head, choice);
    const idle = this.track(socket, 'portForward', accepted);
    if (accepted.transport === 'websocket' && accepted.protocol !== PORT_FORWARD_TUNNEL_PROTOCOL) {
      void idle.then(() => accepted.ws.close(1000));
      await servePortForwardWebSocket(accepted.ws, ports, dial);
      return;
    }
    let session: SpdySession;
    if (accepted.transport === 'spdy') session = accepted.session;
    else {
      const stream = webSocketTunnel(accepted.ws, socket, STREAM_BUFFER_BYTES);
      stream.on('error', () => undefined);
      session = new SpdySession(stream);
    }
    void idle.then(() => session.close());
    servePortForwardSpdy(session, dial, this.opts.streamCreationTimeoutMs);
  }
}
