import type { ClientRequest } from 'node:http';
import type { WebSocket } from 'ws';
import type { GatewayProxy } from './gateway-proxy';

/** Browser → dashboard: start a watch (`path` on the gateway, with `watch=1`) or stop one. */
export type MuxRequest = { op: 'watch'; id: number; path: string; accept?: string } | { op: 'cancel'; id: number };
/** Dashboard → browser: a chunk of a watch stream, its end, or the gateway's refusal (a Status). */
export type MuxMessage = { id: number; data: string } | { id: number; end: true } | { id: number; error: { code: number; reason?: string; message?: string } };

/** A page buffering more than this is not reading: its socket is closed (it reconnects and relists). */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;
const MAX_WATCHES_PER_SOCKET = 64;
/** The media types a page's watch may ask for: JSON objects, or kubectl's Table rows (with JSON as the fallback). */
const MEDIA_TYPES = new Set(['application/json', 'application/json;as=Table;v=v1;g=meta.k8s.io']);
/** An Accept header made only of MEDIA_TYPES (`a, b` lists too, as the UI's Table accept is). */
const acceptable = (accept: string) => accept.split(',').every((type) => MEDIA_TYPES.has(type.replace(/\s+/g, '')));

/**
 * All the watches of one page over one WebSocket: a browser allows only six HTTP/1.1
 * connections per origin, so one streamed request per watch would starve a second tab. Each
 * watch is a GET on the gateway with the session's token; its chunks go to the page as they come.
 * `token()` is asked at every new watch: after logout it answers undefined and the socket closes.
 */
export function serveWatches(ws: WebSocket, gateway: GatewayProxy, token: () => string | undefined): void {
  const watches = new Map<number, ClientRequest>();
  const send = (m: MuxMessage) => {
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > MAX_BUFFERED_BYTES) return void ws.close(1013, 'the page is not reading its watches');
    ws.send(JSON.stringify(m));
  };
  const stop = (id: number) => {
    watches.get(id)?.destroy();
    watches.delete(id);
  };
  ws.on('message', (raw) => {
    let req: MuxRequest;
    try {
      req = JSON.parse(String(raw)) as MuxRequest;
    } catch {
      return void ws.close(1003, 'messages are JSON');
    }
    if (req.op === 'cancel') return stop(req.id);
    const bearer = token();
    if (!bearer) return void ws.close(4401, 'not logged in');
    const accept = req.accept ?? 'application/json';
    if (req.op !== 'watch' || !Number.isInteger(req.id) || typeof req.path !== 'string' || !req.path.startsWith('/') || !/[?&]watch=(1|true)(&|$)/.test(req.path) || !acceptable(accept)) {
      return send({ id: Number(req.id) || 0, error: { code: 400, reason: 'BadRequest', message: 'a watch needs an integer id, a gateway path with watch=1 and a JSON or Table accept' } });
    }
    if (watches.size >= MAX_WATCHES_PER_SOCKET && !watches.has(req.id)) return send({ id: req.id, error: { code: 429, reason: 'TooManyRequests', message: `at most ${MAX_WATCHES_PER_SOCKET} watches per page` } });
    stop(req.id);
    const id = req.id;
    const upstream = gateway.stream(
      { path: req.path, token: bearer, accept },
      (answer) => {
        if (answer.statusCode !== 200) {
          let body = '';
          answer.on('data', (c: Buffer) => (body += c.toString()));
          answer.on('end', () => {
            let status: { code?: number; reason?: string; message?: string } = {};
            try {
              status = JSON.parse(body);
            } catch {
              status = { message: body };
            }
            watches.delete(id);
            send({ id, error: { code: answer.statusCode ?? 502, reason: status.reason, message: status.message ?? body } });
          });
          return;
        }
        answer.setEncoding('utf8');
        answer.on('data', (data: string) => send({ id, data }));
        answer.on('end', () => {
          if (watches.get(id) !== upstream) return;
          watches.delete(id);
          send({ id, end: true });
        });
      },
      (err) => {
        if (watches.get(id) !== upstream) return;
        watches.delete(id);
        send({ id, error: { code: 502, reason: 'ServiceUnavailable', message: `the gateway is not reachable: ${err.message}` } });
      },
    );
    watches.set(id, upstream);
  });
  ws.on('close', () => {
    for (const id of [...watches.keys()]) stop(id);
  });
}
