import { connect, Events, type NatsConnection, type Subscription } from 'nats';
import { decodeBatch, encodeBatch, type BusSubscription, type EventBatch, type WatchBus } from './bus';

export interface NatsBusOptions {
  /** `nats://host:port`, comma separated for a cluster. */
  url: string;
  /** Subject of the batches: one per cluster (watchChannels), so clusters sharing one NATS stay apart. */
  subject: string;
  /** Client name shown by the server (monitoring). */
  name?: string;
  /** Receives connection state changes and failures (default: console.warn). */
  log?: (message: string) => void;
  /** Ping interval: a paused server is noticed after about twice this (default 2 s). */
  pingIntervalMs?: number;
}

/**
 * The watch bus on core NATS. One publisher's messages reach each subscriber in order; NATS
 * may drop messages (disconnect, slow consumer), which receivers detect by the batches'
 * `after` and recover from the store: JetStream's replay is not needed for correctness, and
 * core NATS keeps the publish→receive path to one hop. The server does not echo a
 * connection's own messages back (noEcho): this process's subscribers get its batches
 * directly, in publish order, as LocalBus delivers them — the pump's replica does not wait
 * for a round trip through the server (and a wake-up on a busy machine) to see its own feed.
 */
export class NatsBus implements WatchBus {
  readonly name = 'nats';
  readonly distributed = true;
  private isConnected = true;
  private readonly subs = new Set<Subscription>();
  /** This process's subscribers, handed its own batches directly (the server does not echo them). */
  private readonly local = new Set<(batch: EventBatch) => void>();

  private constructor(
    private readonly nc: NatsConnection,
    private readonly subject: string,
    private readonly log: (message: string) => void,
  ) {
    void this.watchStatus();
  }

  /** Connects (failing when the server cannot be reached), then reconnects forever. */
  static async connect(opts: NatsBusOptions): Promise<NatsBus> {
    const nc = await connect({
      servers: opts.url.split(',').map((s) => s.trim()).filter(Boolean),
      name: opts.name ?? 'orch-watch',
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      pingInterval: opts.pingIntervalMs ?? 2000,
      maxPingOut: 2,
      noEcho: true,
    });
    return new NatsBus(nc, opts.subject, opts.log ?? ((m) => console.warn(m)));
  }

  /** Half the server's max_payload, leaving room for the header. */
  get maxBatchBytes(): number {
    return Math.floor((this.nc.info?.max_payload ?? 1024 * 1024) / 2);
  }

  publish(batch: EventBatch): void {
    if (this.nc.isClosed()) return;
    try {
      this.nc.publish(this.subject, encodeBatch(batch));
    } catch (err) {
      this.log(`nats watch bus: publish failed: ${(err as Error).message}`);
    }
    for (const listener of this.local) listener(batch);
  }

  subscribe(listener: (batch: EventBatch) => void): BusSubscription {
    const sub = this.nc.subscribe(this.subject, {
      callback: (err, msg) => {
        if (err) {
          this.log(`nats watch bus: subscription error: ${err.message}`);
          return;
        }
        let batch: EventBatch;
        try {
          batch = decodeBatch(msg.data);
        } catch (e) {
          this.log(`nats watch bus: dropped a malformed batch: ${(e as Error).message}`);
          return;
        }
        listener(batch);
      },
    });
    this.subs.add(sub);
    const own = (batch: EventBatch) => listener(batch);
    this.local.add(own);
    return {
      unsubscribe: () => {
        this.local.delete(own);
        this.subs.delete(sub);
        if (!this.nc.isClosed()) sub.unsubscribe();
      },
    };
  }

  connected(): boolean {
    return this.isConnected && !this.nc.isClosed();
  }

  /** A PING answered by the server: it has processed every SUB, UNSUB and PUB sent before. */
  flush(): Promise<void> {
    return this.nc.flush();
  }

  async close(): Promise<void> {
    this.local.clear();
    if (this.nc.isClosed()) return;
    await this.nc.drain().catch(() => this.nc.close());
  }

  private async watchStatus(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === Events.Disconnect) {
        this.isConnected = false;
        this.log(`nats watch bus: disconnected from ${String(s.data)}`);
      } else if (s.type === Events.Reconnect) {
        this.isConnected = true;
        this.log(`nats watch bus: reconnected to ${String(s.data)}`);
      }
    }
  }
}
