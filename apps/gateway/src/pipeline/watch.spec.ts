import { StoredText } from '../registry/stored-text';
import { textFrame } from './watch';

/** A watch event as a chunk of the chunked transfer encoding, the way the object path frames it. */
function objectFrame(type: string, object: unknown): Buffer {
  const data = Buffer.from(JSON.stringify({ type, object }) + '\n');
  return Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
}

describe('textFrame: a JSON watch event framed from the stored text', () => {
  const stored = (metadata: object, rest: object = {}) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata, ...rest });
  it.each([
    ['ADDED', stored({ name: 'a', namespace: 'ns', labels: { app: 'x' } }, { data: { k: 'v' } })],
    ['MODIFIED', stored({})],
    ['DELETED', stored({ name: 'ü', annotations: { note: 'é 😀 \u2028 "q" \\' } }, { data: { 'ключ': 'значение' } })],
    ['ADDED', stored({ name: 'big' }, { data: { v: 'x'.repeat(70_000) } })],
  ] as const)('%s: the bytes of the parsed object written out', (type, text) => {
    const obj = JSON.parse(text) as { metadata: Record<string, unknown> };
    obj.metadata.resourceVersion = '17';
    expect(textFrame(type, StoredText.of(text, 17)!).equals(objectFrame(type, obj))).toBe(true);
  });

  it('is made once per text and type', () => {
    const text = StoredText.of(stored({ name: 'a' }), 3)!;
    expect(textFrame('ADDED', text)).toBe(textFrame('ADDED', text));
    expect(textFrame('DELETED', text)).not.toBe(textFrame('ADDED', text));
  });

  it('is made once for the thousand watchers sent one event', () => {
    const text = StoredText.of(stored({ name: 'b' }), 4)!;
    const made = jest.spyOn(Buffer, 'from');
    try {
      const frames = new Set(Array.from({ length: 1000 }, () => textFrame('MODIFIED', text)));
      expect([frames.size, made.mock.calls.length]).toEqual([1, 1]);
    } finally {
      made.mockRestore();
    }
  });
});
