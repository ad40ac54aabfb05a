import { encodeWatchEventProtobuf } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import type { GenericStore, WatchEventOut } from '../registry/generic-store';
import { toTable } from '../server/representation';
import type { ApiRequest } from './api-request';
import { requestTarget } from './api-request';
import { inRequestedGroup } from './encode';
import { listOptions } from './query';

/**
 * Watch streams (SPEC Events): chunked JSON lines, one-row Tables, or length-prefixed protobuf
 * frames. Streams end at `timeoutSeconds` (default: --min-request-timeout, randomized up to
 * 2x), when the client goes away, when a slow client falls 64 MiB behind, or at shutdown
 * (`closeAll`).
 */
export class WatchStreams {
  /** Open watch streams, ended by closeAll() on shutdown. */
  private readonly open = new Set<() => void>();

  constructor(private readonly opts: { minRequestTimeoutSeconds: number }) {}

  /** Ends every open watch stream cleanly (graceful shutdown). */
  closeAll(): void {
    for (const finish of [...this.open]) finish();
  }

  /** Serves a watch of `registry` for the request; returns the HTTP status. */
  async serve(r: ApiRequest, registry: GenericStore): Promise<number> {
    const { req, reply, info, query } = r;
    const { namespace: ns, repr } = requestTarget(r);
    const opts = listOptions(query);
    // GET .../<name>?watch=1 watches one object.
    const fieldSelector = info.name ? [opts.fieldSelector, `metadata.name=${info.name}`].filter(Boolean).join(',') : opts.fieldSelector;
    const timeoutParam = query.get('timeoutSeconds');
    let timeoutSeconds: number;
    if (timeoutParam !== null) {
      timeoutSeconds = Number(timeoutParam);
      if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 0) throw StatusError.badRequest(`invalid timeoutSeconds: ${JSON.stringify(timeoutParam)}`);
    } else {
      const min = this.opts.minRequestTimeoutSeconds;
      timeoutSeconds = Math.floor(min * (1 + Math.random()));
    }
    const res = reply.raw;
    let headersSent = false;
    let firstTable = true;
    let closed = false;
    const writeHeaders = () => {
      if (headersSent) return;
      headersSent = true;
      reply.hijack();
      res.writeHead(200, {
        // Protobuf watches are length-prefixed WatchEvent frames (upstream stream=watch).
        'content-type': repr.kind === 'protobuf' ? `${repr.contentType};stream=watch` : 'application/json',
        'transfer-encoding': 'chunked',
        'cache-control': 'no-cache, private',
      });
      res.flushHeaders();
    };
    const encodeEvent = (event: WatchEventOut): string | Buffer => {
      const ev = { type: event.type, object: inRequestedGroup(event.object, registry.def.group, info.apiGroup) as WatchEventOut['object'] };
      if (repr.kind === 'protobuf') return encodeWatchEventProtobuf(ev.type, ev.object);
      if (repr.kind === 'table' && ev.type !== 'BOOKMARK' && ev.type !== 'ERROR') {
        const table = toTable(ev.object as KubeObject, registry.def, repr, !firstTable);
        firstTable = false;
        return JSON.stringify({ type: ev.type, object: table }) + '\n';
      }
      return JSON.stringify(ev) + '\n';
    };
    const handle = await registry.watch(
      ns,
      {
        labelSelector: opts.labelSelector,
        fieldSelector,
        resourceVersion: opts.resourceVersion,
        resourceVersionMatch: opts.resourceVersionMatch,
        allowWatchBookmarks: query.get('allowWatchBookmarks') === 'true' || query.get('allowWatchBookmarks') === '1',
        sendInitialEvents: query.has('sendInitialEvents') ? query.get('sendInitialEvents') === 'true' : undefined,
      },
      {
        send: (ev) => {
          if (closed) return;
          writeHeaders();
          let chunk: string | Buffer;
          try {
            chunk = encodeEvent(ev);
          } catch (err) {
            // An object that cannot be encoded ends the stream; the client re-watches.
            req.log.error({ err }, 'watch event encoding failed');
            finish();
            return;
          }
          const ok = res.write(chunk);
          // A watcher that cannot keep up is cut off; its client re-watches from its last RV.
          if (!ok && res.writableLength > 64 * 1024 * 1024) finish();
        },
        end: () => finish(),
      },
    );
    writeHeaders();
    const timer = setTimeout(() => handle.stop(), timeoutSeconds * 1000);
    timer.unref?.();
    const open = this.open;
    function finish() {
      if (closed) return;
      closed = true;
      open.delete(finish);
      clearTimeout(timer);
      handle?.stop();
      res.end();
    }
    open.add(finish);
    res.on('close', () => {
      if (!closed) {
        closed = true;
        open.delete(finish);
        clearTimeout(timer);
        handle.stop();
      }
    });
    return 200;
  }
}
