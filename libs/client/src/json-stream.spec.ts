import { JsonStreamDecoder } from './json-stream';

const events = [
  { type: 'ADDED', object: { metadata: { name: 'a', annotations: { q: 'brace } in "string" \\ ok', u: 'ünïcödé ✓ 😀' } } } },
  { type: 'MODIFIED', object: { metadata: { name: 'b' }, spec: { list: [1, [2, { x: ']' }], 3] } } },
  { type: 'BOOKMARK', object: { metadata: { resourceVersion: '42' } } },
];

describe('JsonStreamDecoder', () => {
  // Every way of framing the same three events must decode to them.
  it.each([
    { name: 'newline separated', text: events.map((e) => JSON.stringify(e) + '\n').join('') },
    { name: 'back to back', text: events.map((e) => JSON.stringify(e)).join('') },
    { name: 'CRLF and blank lines', text: events.map((e) => JSON.stringify(e)).join('\r\n\r\n') + '\r\n' },
    { name: 'pretty printed', text: events.map((e) => JSON.stringify(e, null, 2)).join('\n') },
  ])('decodes $name, split at every byte position', ({ text }) => {
    const bytes = Buffer.from(text);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const d = new JsonStreamDecoder();
      const got = [...d.push(bytes.subarray(0, cut)), ...d.push(bytes.subarray(cut))];
      expect(got).toEqual(events);
      expect(d.hasPartial()).toBe(false);
    }
  });

  it('decodes a stream fed one byte at a time', () => {
    const bytes = Buffer.from(events.map((e) => JSON.stringify(e)).join('\n'));
    const d = new JsonStreamDecoder();
    const got: unknown[] = [];
    for (let i = 0; i < bytes.length; i++) got.push(...d.push(bytes.subarray(i, i + 1)));
    expect(got).toEqual(events);
  });

  it.each([
    { name: 'a bare value between objects', input: ['{"a":1}\n42'], want: /unexpected "4"/ },
    { name: 'malformed object', input: ['{"a":}'], want: /JSON/ },
  ])('throws on $name', ({ input, want }) => {
    const d = new JsonStreamDecoder();
    expect(() => input.forEach((c) => d.push(Buffer.from(c)))).toThrow(want);
  });

  it('reports an unfinished object', () => {
    const d = new JsonStreamDecoder();
    expect(d.push(Buffer.from('{"type":"ADD'))).toEqual([]);
    expect(d.hasPartial()).toBe(true);
  });
});
