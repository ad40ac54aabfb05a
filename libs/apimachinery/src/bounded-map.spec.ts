import { BoundedMap } from './bounded-map';

type Step = ['get', string, string | undefined] | ['make', string, string] | ['set', string] | ['delete', string] | ['throw', string];

/** Runs steps on a map of `max` entries; `get`/`make` expect their answer, every step its size after. */
function run(max: number, steps: [Step, number][]): void {
  const m = new BoundedMap<string, string>(max);
  for (const [step, size] of steps) {
    if (step[0] === 'get') expect(m.get(step[1])).toBe(step[2]);
    if (step[0] === 'make') expect(m.get(step[1], (k) => `${k}!`)).toBe(step[2]);
    if (step[0] === 'set') m.set(step[1], `${step[1]}=`);
    if (step[0] === 'delete') m.delete(step[1]);
    if (step[0] === 'throw')
      expect(() =>
        m.get(step[1], () => {
          throw new Error('no');
        }),
      ).toThrow('no');
    expect([step.join(' '), m.size]).toEqual([step.join(' '), size]);
  }
}

describe('BoundedMap', () => {
  it.each<{ name: string; max: number; steps: [Step, number][] }>([
    { name: 'get of a missing key keeps nothing', max: 2, steps: [[['get', 'a', undefined], 0]] },
    { name: 'make is called for a missing key only', max: 2, steps: [[['make', 'a', 'a!'], 1], [['set', 'a'], 1], [['make', 'a', 'a='], 1], [['get', 'a', 'a='], 1]] },
    {
      name: 'a new key when full empties it whole (not LRU: the recently used go too)',
      max: 2,
      steps: [[['make', 'a', 'a!'], 1], [['make', 'b', 'b!'], 2], [['get', 'a', 'a!'], 2], [['make', 'c', 'c!'], 1], [['get', 'a', undefined], 1], [['get', 'b', undefined], 1], [['get', 'c', 'c!'], 1]],
    },
    { name: 'set when full empties it too', max: 2, steps: [[['set', 'a'], 1], [['set', 'b'], 2], [['set', 'b'], 1], [['get', 'a', undefined], 1], [['get', 'b', 'b='], 1]] },
    { name: 'a make that throws keeps nothing', max: 2, steps: [[['make', 'a', 'a!'], 1], [['throw', 'b'], 1], [['get', 'b', undefined], 1], [['get', 'a', 'a!'], 1]] },
    { name: 'delete frees a place', max: 2, steps: [[['set', 'a'], 1], [['set', 'b'], 2], [['delete', 'a'], 1], [['set', 'c'], 2], [['get', 'b', 'b='], 2]] },
  ])('$name', ({ max, steps }) => run(max, steps));

  it('clear empties it', () => {
    const m = new BoundedMap<string, number>(3);
    m.set('a', 1);
    m.clear();
    expect([m.size, m.get('a')]).toEqual([0, undefined]);
  });
});
