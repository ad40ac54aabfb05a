import { PassThrough, Writable } from 'node:stream';
import { StatusError } from '@orch/apimachinery';
import { relay, splitSchemeNamePort } from './node-proxy';

describe('splitSchemeNamePort', () => {
  it.each([
    { input: 'web', want: { scheme: '', name: 'web', port: '' } },
    { input: 'web:8080', want: { scheme: '', name: 'web', port: '8080' } },
    { input: 'web:http', want: { scheme: '', name: 'web', port: 'http' } },
    { input: 'https:web:8443', want: { scheme: 'https', name: 'web', port: '8443' } },
    { input: 'http:web:', want: { scheme: 'http', name: 'web', port: '' } },
    { input: 'ftp:web:21', want: 'error' },
    { input: 'a:b:c:d', want: 'error' },
  ])('$input', ({ input, want }) => {
    if (want === 'error') expect(() => splitSchemeNamePort(input)).toThrow(StatusError);
    else expect(splitSchemeNamePort(input)).toEqual(want);
  });
});

describe('relay', () => {
  /** A destination recording the chunks of each write call; `hold` keeps write callbacks until released. */
  function sink(hold = false) {
    const calls: Buffer[][] = [];
    const pending: (() => void)[] = [];
    const done = (cb: () => void) => (hold ? pending.push(cb) : cb());
    const to = new Writable({
      write(chunk: Buffer, _enc, cb) {
        calls.push([chunk]);
        done(cb);
      },
      writev(chunks, cb) {
        calls.push(chunks.map((c) => c.chunk as Buffer));
        done(cb);
      },
    });
    return { to, calls, release: () => pending.splice(0).forEach((cb) => cb()) };
  }
  const turn = () => new Promise((r) => setImmediate(r));

  it('sends what arrives within one turn in one write, in order, and ends the destination', async () => {
    const from = new PassThrough();
    const { to, calls } = sink();
    relay(from, to);
    const records = Array.from({ length: 8 }, (_, i) => Buffer.alloc(16 * 1024, i));
    for (const r of records) from.write(r);
    await turn();
    await turn();
    expect(calls.map((c) => c.length)).toEqual([8]);
    from.end(Buffer.from('last'));
    await new Promise((r) => to.once('finish', r));
    expect(Buffer.concat(calls.flat()).equals(Buffer.concat([...records, Buffer.from('last')]))).toBe(true);
  });

  it('stops reading while more than 1 MiB waits to be sent, and reads on once it drained', async () => {
    const from = new PassThrough({ highWaterMark: 64 * 1024 });
    const { to, release } = sink(true);
    relay(from, to);
    for (let i = 0; i < 20; i++) from.write(Buffer.alloc(64 * 1024));
    await turn();
    await turn();
    expect(from.isPaused()).toBe(true);
    expect(to.writableLength).toBeGreaterThan(1024 * 1024);
    release();
    await turn();
    expect(from.isPaused()).toBe(false);
  });
});
