import { CycleState, type StateData } from './cycle-state';

/** Mutable per-cycle data: clone copies it. */
class Counter implements StateData {
  constructor(public n: number) {}
  clone(): Counter {
    return new Counter(this.n);
  }
}

describe('CycleState', () => {
  it.each([
    ['an array', [1, 2, 3]],
    ['a map', new Map([['zone', new Map([['a', 3]])]])],
    ['an object', { constraints: [], ignoredNodes: new Set(['n1']) }],
  ])('readImmutable returns %s as written, and a clone shares it', (_what, value) => {
    const state = new CycleState();
    state.writeImmutable('k', value);
    expect(state.readImmutable('k')).toBe(value);
    expect(state.clone().readImmutable('k')).toBe(value);
  });

  it('readImmutable of a key never written is undefined, in the state and its clones', () => {
    const state = new CycleState();
    expect(state.readImmutable('missing')).toBeUndefined();
    expect(state.clone().readImmutable('missing')).toBeUndefined();
  });

  it('clone copies mutable data: a change to the clone leaves the original alone', () => {
    const state = new CycleState();
    state.write('c', new Counter(1));
    const copy = state.clone();
    copy.read<Counter>('c')!.n = 5;
    expect(state.read<Counter>('c')!.n).toBe(1);
  });

  it('delete removes an immutable value as it removes any other', () => {
    const state = new CycleState();
    state.writeImmutable('k', [1]);
    state.delete('k');
    expect(state.readImmutable('k')).toBeUndefined();
  });
});
