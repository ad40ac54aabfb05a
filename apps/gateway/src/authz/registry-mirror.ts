import type { KubeObject } from '@orch/apimachinery';
import type { Logger } from '@orch/server-common';
import type { GenericStore, WatchHandle } from '../registry/generic-store';

/** Where a mirror delivers its objects. */
export interface MirrorSink {
  upsert(obj: KubeObject): void;
  remove(obj: KubeObject): void;
}

const MAX_BACKOFF_MS = 30_000;

/**
 * An in-process informer over one resource of the gateway's own registry: lists, then
 * watches from the list's resourceVersion through the watch cache, and relists (with backoff)
 * when the watch ends. Objects gone across a relist are removed. Used by authorizers that
 * decide from API objects (RBAC) so that no decision reads the store.
 */
export class RegistryMirror {
  private readonly known = new Map<string, KubeObject>();
  private handle?: WatchHandle;
  private stopped = false;
  private backoffMs = 100;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly registry: GenericStore,
    private readonly sink: MirrorSink,
    private readonly logger: Logger,
  ) {}

  /** Resolves after the first list has been delivered. */
  async start(): Promise<void> {
    await this.sync();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.handle?.stop();
  }

  private key(obj: KubeObject): string {
    return `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
  }

  private async sync(): Promise<void> {
    const list = await this.registry.list('', {});
    const seen = new Set<string>();
    for (const obj of list.items) {
      const k = this.key(obj);
      seen.add(k);
      this.known.set(k, obj);
      this.sink.upsert(obj);
    }
    for (const [k, obj] of [...this.known]) {
      if (seen.has(k)) continue;
      this.known.delete(k);
      this.sink.remove(obj);
    }
    this.handle = await this.registry.watch(
      '',
      { resourceVersion: list.metadata.resourceVersion },
      {
        send: (ev) => {
          if (ev.type === 'BOOKMARK' || ev.type === 'ERROR') return;
          const obj = ev.object as KubeObject;
          if (ev.type === 'DELETED') {
            this.known.delete(this.key(obj));
            this.sink.remove(obj);
          } else {
            this.known.set(this.key(obj), obj);
            this.sink.upsert(obj);
          }
          this.backoffMs = 100;
        },
        end: () => this.relistLater(),
      },
    );
  }

  private relistLater(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.sync().catch((err) => {
        this.logger.warn('relist failed', { resource: this.registry.def.resource, error: (err as Error).message });
        this.relistLater();
      });
    }, this.backoffMs);
    this.timer.unref?.();
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
  }
}
