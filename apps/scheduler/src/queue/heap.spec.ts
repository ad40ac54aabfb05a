import { Heap } from './heap';

interface Item {
  k: string;
  v: number;
}

describe('Heap', () => {
  const drain = (h: Heap<Item>): string[] => {
    const out: string[] = [];
    for (let it = h.pop(); it; it = h.pop()) out.push(it.k);
    return out;
  };
  it.each<{ name: string; ops: Array<['add', string, number] | ['del', string]>; want: string[] }>([
    { name: 'pops in order', ops: [['add', 'c', 3], ['add', 'a', 1], ['add', 'b', 2]], want: ['a', 'b', 'c'] },
    { name: 'update moves an item up', ops: [['add', 'a', 1], ['add', 'b', 2], ['add', 'c', 3], ['add', 'c', 0]], want: ['c', 'a', 'b'] },
    { name: 'update moves an item down', ops: [['add', 'a', 1], ['add', 'b', 2], ['add', 'c', 3], ['add', 'a', 9]], want: ['b', 'c', 'a'] },
    { name: 'delete from the middle', ops: [['add', 'a', 1], ['add', 'b', 2], ['add', 'c', 3], ['add', 'd', 4], ['del', 'b']], want: ['a', 'c', 'd'] },
    { name: 'delete the top', ops: [['add', 'a', 1], ['add', 'b', 2], ['del', 'a']], want: ['b'] },
    { name: 'delete a missing key', ops: [['add', 'a', 1], ['del', 'x']], want: ['a'] },
  ])('$name', ({ ops, want }) => {
    const h = new Heap<Item>((i) => i.k, (a, b) => a.v < b.v);
    for (const op of ops) {
      if (op[0] === 'add') h.addOrUpdate({ k: op[1], v: op[2] });
      else h.delete(op[1]);
    }
    expect(drain(h)).toEqual(want);
  });

  it('stays ordered over many random operations', () => {
    const h = new Heap<Item>((i) => i.k, (a, b) => a.v < b.v);
    const model = new Map<string, number>();
    let seed = 42;
    const rnd = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let i = 0; i < 2000; i++) {
      const k = `k${rnd(200)}`;
      if (rnd(4) === 0) {
        h.delete(k);
        model.delete(k);
      } else {
        const v = rnd(1000);
        h.addOrUpdate({ k, v });
        model.set(k, v);
      }
    }
    const got: number[] = [];
    for (let it = h.pop(); it; it = h.pop()) got.push(it.v);
    expect(got).toEqual([...model.values()].sort((a, b) => a - b));
  });
});
