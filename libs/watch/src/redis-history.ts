import Redis from 'ioredis';
import type { StoreEvent } from '@orch/storage';
import { HistoryExpiredError, type EventHistory, type HistoryRead } from './history';

export interface RedisHistoryOptions {
  /** `redis://host:port[/db]`. */
  url: string;
  /** Stream key: one per cluster (watchChannels), so clusters sharing one Redis stay apart. */
  key: string;
  /** How long events stay replayable (--watch-history-retention). */
  retentionMs: number;
  /** A command not answered in this time fails (a paused Redis must not stall the pump). */
  commandTimeoutMs?: number;
  log?: (message: string) => void;
  now?: () => number;
}

/**
 * XADDs of a batch: ARGV is, per event, its entry ID, its number of field arguments, then those.
 * An ID at or below the stream's top (another writer, an earlier leader, appended it) is
 * skipped, as the history contract says; any other error ends the script with it.
 */
const APPEND_SCRIPT = `
local i = 1
while i <= #ARGV do
  local count = tonumber(ARGV[i + 1])
  local r = redis.pcall('XADD', KEYS[1], ARGV[i], unpack(ARGV, i + 2, i + 1 + count))
  if type(r) == 'table' and r.err and not string.find(r.err, 'equal or smaller than the target stream top item', 1, true) then return r end
  i = i + 2 + count
end
return 0`;

/** Events per append command (bounds its arguments and how long the script holds Redis). */
const APPEND_CHUNK = 256;

type RedisWithAppend = Redis & { orchHistoryAppend(key: string, ...args: string[]): Promise<number> };

/** Granularity of the trim's marks (ms). */
const MARK_MS = 100;

const TYPES: Record<string, StoreEvent['type']> = { c: 'create', u: 'update', d: 'delete' };
const CODES: Record<StoreEvent['type'], string> = { create: 'c', update: 'u', delete: 'd' };

/**
 * The shared event history on a Redis stream. Entry IDs are `<revision>-0`, so a resume is one
 * XRANGE from the requested resourceVersion; each entry also records `a`, the revision it
 * follows, so a reader proves continuity entry by entry and never replays across a hole (a
 * window in which the pump could not append). Trimmed by time with XTRIM MINID.
 *
 * Commands fail fast while Redis is down or paused (no offline queue, a command timeout), so
 * the pump keeps publishing and readers fall back to the store.
 */
export class RedisHistory implements EventHistory {
  readonly name = 'redis';
  readonly scope = 'cluster';
  private readonly key: string;
  private readonly now: () => number;
  private lastTrim = 0;
  /**
   * The last revision of each batch this client appended and when, oldest first: every stream
   * entry up to such a revision was added by then (stream IDs only grow), so the trim finds its
   * cutoff here without reading entries back.
   */
  private marks: { revision: number; time: number }[] = [];

  private constructor(
    private readonly redis: Redis,
    private readonly opts: RedisHistoryOptions,
  ) {
    this.key = opts.key;
    this.now = opts.now ?? Date.now;
  }

  /** Connects (failing when Redis cannot be reached), then reconnects on its own. */
  static async connect(opts: RedisHistoryOptions): Promise<RedisHistory> {
    const redis = new Redis(opts.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: opts.commandTimeoutMs ?? 1000,
      connectTimeout: 5000,
      retryStrategy: (times) => Math.min(100 * times, 2000),
    });
    let lastError = '';
    redis.on('error', (err: Error) => {
      // ioredis emits every failed reconnect: log each distinct failure once.
      if (err.message !== lastError) (opts.log ?? console.warn)(`redis watch history: ${err.message}`);
      lastError = err.message;
    });
    redis.on('ready', () => (lastError = ''));
    try {
      await redis.connect();
    } catch (err) {
      redis.disconnect();
      throw new Error(`cannot connect to redis at ${opts.url}: ${(err as Error).message}`);
    }
    redis.defineCommand('orchHistoryAppend', { numberOfKeys: 1, lua: APPEND_SCRIPT });
    return new RedisHistory(redis, opts);
  }

  async append(after: number, events: StoreEvent[]): Promise<void> {
    if (events.length === 0) return;
    const now = this.now();
    const time = String(now);
    // A command per APPEND_CHUNK events (a script of XADDs), not one per event: per event, the
    // client's work for a command costs the pump more than the XADD costs Redis.
    const sent: Promise<number>[] = [];
    let prev = after;
    for (let from = 0; from < events.length; from += APPEND_CHUNK) {
      const args: string[] = [];
      for (const e of events.slice(from, from + APPEND_CHUNK)) {
        const fields = ['a', String(prev), 't', time, 'y', CODES[e.type], 'k', e.key];
        if (e.value !== undefined) fields.push('v', e.value);
        if (e.prevValue !== undefined) fields.push('p', e.prevValue);
        args.push(`${e.revision}-0`, String(fields.length), ...fields);
        prev = e.revision;
      }
      sent.push((this.redis as RedisWithAppend).orchHistoryAppend(this.key, ...args));
    }
    await Promise.all(sent);
    // One mark per MARK_MS (the newest batch's): the trim is that precise, the marks few.
    const revision = events[events.length - 1].revision;
    const last = this.marks[this.marks.length - 1];
    if (last && now - last.time < MARK_MS) this.marks[this.marks.length - 1] = { revision, time: now };
    else this.marks.push({ revision, time: now });
    if (this.now() - this.lastTrim > 1000) {
      this.lastTrim = this.now();
      await this.trim();
    }
  }

  async read(after: number, limit: number): Promise<HistoryRead> {
    const rows = await this.redis.xrange(this.key, `${after + 1}-0`, '+', 'COUNT', limit);
    const events: StoreEvent[] = [];
    let through = after;
    for (const [id, fields] of rows) {
      const f = toRecord(fields);
      const revision = Number(id.slice(0, id.indexOf('-')));
      if (Number(f.a) > through) {
        if (events.length === 0) throw new HistoryExpiredError(after, Number(f.a));
        return { events, through, more: false }; // a hole: the caller continues elsewhere
      }
      const event: StoreEvent = { type: TYPES[f.y], key: f.k, revision };
      if (f.v !== undefined) event.value = f.v;
      if (f.p !== undefined) event.prevValue = f.p;
      events.push(event);
      through = revision;
    }
    return { events, through, more: rows.length === limit };
  }

  /**
   * Drops entries older than the retention. The cutoff comes from what this client appended
   * (marks); only entries another writer (an earlier pump leader) appended before this one's
   * oldest mark are read back for their times, a page per call.
   */
  async trim(): Promise<void> {
    const cutoff = this.now() - this.opts.retentionMs;
    let expired = -1;
    while (expired + 1 < this.marks.length && this.marks[expired + 1].time < cutoff) expired++;
    if (expired >= 0) {
      const minId = `${this.marks[expired].revision + 1}-0`;
      this.marks = this.marks.slice(expired + 1);
      await this.redis.xtrim(this.key, 'MINID', minId);
      return;
    }
    const [oldest] = await this.redis.xrange(this.key, '-', '+', 'COUNT', 1);
    if (!oldest || Number(toRecord(oldest[1]).t) >= cutoff) return;
    await this.trimByScan(cutoff);
  }

  /** Trims by reading the oldest entries' times (a page per call). */
  private async trimByScan(cutoff: number): Promise<void> {
    const rows = await this.redis.xrange(this.key, '-', '+', 'COUNT', 512);
    let keepFrom: string | undefined;
    for (const [id, fields] of rows) {
      if (Number(toRecord(fields).t) >= cutoff) {
        keepFrom = id;
        break;
      }
    }
    if (keepFrom === undefined && rows.length > 0) {
      const last = rows[rows.length - 1][0];
      keepFrom = `${Number(last.slice(0, last.indexOf('-'))) + 1}-0`;
    }
    if (keepFrom !== undefined && keepFrom !== rows[0]?.[0]) await this.redis.xtrim(this.key, 'MINID', keepFrom);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

function toRecord(fields: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) out[fields[i]] = fields[i + 1];
  return out;
}
