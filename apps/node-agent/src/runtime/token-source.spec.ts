import { ApiError } from '@orch/client';
import type { Pod } from '../api/types';
import { tokenSource } from './api-sources';

const pod = { metadata: { name: 'p', namespace: 'team', uid: 'u1' }, spec: { containers: [] } } as unknown as Pod;
const status = (code: number, details?: { kind: string; name: string }) =>
  new ApiError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code, message: 'x', ...(details ? { details } : {}) });

/** A client whose TokenRequest answers come from `answers` in turn; counts the calls. */
function client(answers: (Error | string)[]) {
  const c = {
    calls: 0,
    async request<T>(): Promise<T> {
      const a = answers[Math.min(c.calls++, answers.length - 1)];
      if (a instanceof Error) throw a;
      return { status: { token: a } } as T;
    },
  };
  return c;
}

const quiet = { warn: () => undefined, info: () => undefined };

describe('node-agent token source', () => {
  it.each([
    { name: '404 of the API (TokenRequest not served)', err: status(404) },
    { name: '405 of the API', err: status(405) },
  ])('$name: backs off 10 s, then 20 s, and asks again (never gives up)', async ({ err }) => {
    let t = 0;
    const c = client([err, err, 'tok']);
    const source = tokenSource(c, quiet, () => t);
    expect(await source(pod, undefined, 3600)).toBeUndefined();
    t = 9_000;
    expect(await source(pod, undefined, 3600)).toBeUndefined();
    expect(c.calls).toBe(1); // within the backoff: not asked
    t = 10_001;
    expect(await source(pod, undefined, 3600)).toBeUndefined();
    expect(c.calls).toBe(2);
    t = 25_000;
    expect(await source(pod, undefined, 3600)).toBeUndefined();
    expect(c.calls).toBe(2); // second backoff is 20 s
    t = 30_002;
    expect(await source(pod, undefined, 3600)).toBe('tok');
    expect(c.calls).toBe(3);
  });

  it('a 404 naming the service account is about this pod: no backoff for the others', async () => {
    let t = 0;
    const c = client([status(404, { kind: 'serviceaccounts', name: 'gone' }), 'tok']);
    const source = tokenSource(c, quiet, () => t);
    expect(await source(pod, undefined, 3600)).toBeUndefined();
    expect(await source(pod, undefined, 3600)).toBe('tok');
    // cached until 80 % of the lifetime, then asked again
    t = 3600 * 800 - 1;
    expect(await source(pod, undefined, 3600)).toBe('tok');
    expect(c.calls).toBe(2);
    t = 3600 * 800 + 1;
    await source(pod, undefined, 3600);
    expect(c.calls).toBe(3);
  });
});
