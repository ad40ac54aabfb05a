import { csrfTokenMatches, SessionStore } from './sessions';

describe('SessionStore', () => {
  const limits = { idleTimeoutMs: 1000, maxLifetimeMs: 5000, maxSessions: 3 };
  const clock = () => {
    let t = 0;
    return { now: () => t, advance: (ms: number) => (t += ms) };
  };

  it('gives each login a random id and CSRF token and keeps the token server-side', () => {
    const store = new SessionStore(limits);
    const a = store.create('tok-a', 'alice', ['g']);
    const b = store.create('tok-a', 'alice', ['g']);
    expect(a.id).not.toBe(b.id);
    expect(a.csrfToken).not.toBe(b.csrfToken);
    expect(a.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(store.get(a.id)?.token).toBe('tok-a');
    expect(store.get(undefined)).toBeUndefined();
    expect(store.get('unknown')).toBeUndefined();
  });

  it.each([
    ['used within the idle timeout', [900, 900, 900], true],
    ['idle longer than the timeout', [1001], false],
    ['older than the maximum lifetime though in use', [900, 900, 900, 900, 900, 900], false],
  ])('a session %s is live: %s', (_what, steps, live) => {
    const c = clock();
    const store = new SessionStore(limits, c.now);
    const s = store.create('t', 'u', []);
    for (const ms of steps) {
      c.advance(ms);
      store.get(s.id);
    }
    expect(store.get(s.id) !== undefined).toBe(live);
  });

  it('ends the least recently used session to stay within maxSessions', () => {
    const store = new SessionStore(limits);
    const [a, b, c] = [store.create('a', 'a', []), store.create('b', 'b', []), store.create('c', 'c', [])];
    store.get(a.id);
    const d = store.create('d', 'd', []);
    expect(store.size).toBe(3);
    expect([a, b, c, d].map((s) => store.get(s.id) !== undefined)).toEqual([true, false, true, true]);
  });

  it.each([
    ['the same token', (t: string) => t, true],
    ['no header', () => undefined, false],
    ['a different token of the same length', (t: string) => t.replace(/./, (ch) => (ch === 'a' ? 'b' : 'a')), false],
    ['a prefix', (t: string) => t.slice(0, 10), false],
  ])('CSRF check with %s: %s', (_what, header, ok) => {
    const s = new SessionStore(limits).create('t', 'u', []);
    expect(csrfTokenMatches(s, header(s.csrfToken))).toBe(ok);
  });
});
