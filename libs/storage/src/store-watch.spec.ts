import type { StoreEvent } from './store';
import { StoreWatch } from './store-watch';

const ev = (revision: number): StoreEvent => ({ type: 'create', key: `/k${revision}`, revision, value: 'v' });

/** A watch whose consumer records what reaches it (and throws on events when told to). */
function recorded(opts: { throwOnEvents?: boolean } = {}) {
  const seen = { events: [] as number[], errors: [] as string[], stops: 0, releases: 0 };
  class Recorded extends StoreWatch {
    protected override release(): void {
      seen.releases++;
    }
  }
  const w = new Recorded(
    5,
    {
      onEvents: (events) => {
        if (opts.throwOnEvents) throw new Error('consumer broke');
        seen.events.push(...events.map((e) => e.revision));
      },
      onError: (err) => seen.errors.push(err.message),
    },
    () => seen.stops++,
  );
  return { w, seen };
}

describe('StoreWatch (the part of the etcd and SQLite watches both share)', () => {
  it.each([
    ['stop twice', (w: StoreWatch) => (w.stop(), w.stop()), { events: [], errors: [], stops: 1, releases: 1 }, 5],
    ['fail after stop', (w: StoreWatch) => (w.stop(), w.fail(new Error('late'))), { events: [], errors: [], stops: 1, releases: 1 }, 5],
    ['deliver after stop', (w: StoreWatch) => (w.stop(), w.deliver([ev(6), ev(7)])), { events: [], errors: [], stops: 1, releases: 1 }, 7],
    ['fail twice: one terminal event', (w: StoreWatch) => (w.fail(new Error('a')), w.fail(new Error('b'))), { events: [], errors: ['a'], stops: 1, releases: 1 }, 5],
    ['deliver after fail', (w: StoreWatch) => (w.fail(new Error('a')), w.deliver([ev(6)])), { events: [], errors: ['a'], stops: 1, releases: 1 }, 6],
    ['deliver, then stop', (w: StoreWatch) => (w.deliver([ev(6), ev(8)]), w.stop()), { events: [6, 8], errors: [], stops: 1, releases: 1 }, 8],
    ['deliver nothing up to a revision', (w: StoreWatch) => w.deliver([], 9), { events: [], errors: [], stops: 0, releases: 0 }, 9],
    ['deliver up to past the last event', (w: StoreWatch) => w.deliver([ev(6)], 9), { events: [6], errors: [], stops: 0, releases: 0 }, 9],
  ])('%s', (_name, act, want, delivered) => {
    const { w, seen } = recorded();
    act(w);
    expect(seen).toEqual(want);
    expect(w.delivered).toBe(delivered);
    expect(w.stopped).toBe(want.stops > 0);
  });

  it('ends the watch with the error a throwing consumer raised, once, and delivers nothing after it', () => {
    const { w, seen } = recorded({ throwOnEvents: true });
    w.deliver([ev(6)]);
    w.deliver([ev(7)]);
    expect(seen).toEqual({ events: [], errors: ['consumer broke'], stops: 1, releases: 1 });
    expect(w.stopped).toBe(true);
  });
});
