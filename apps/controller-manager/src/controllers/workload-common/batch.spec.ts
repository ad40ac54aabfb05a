import { slowStartBatch } from './batch';

describe('slowStartBatch', () => {
  it.each([
    { name: 'all succeed in batches 1, 2, 4, 3', count: 10, failAt: [] as number[], wantCalls: 10, wantSuccesses: 10 },
    { name: 'stops after the batch with a failure', count: 10, failAt: [2], wantCalls: 3, wantSuccesses: 2 },
    { name: 'failure in the first call', count: 5, failAt: [0], wantCalls: 1, wantSuccesses: 0 },
    { name: 'nothing to do', count: 0, failAt: [], wantCalls: 0, wantSuccesses: 0 },
  ])('$name', async ({ count, failAt, wantCalls, wantSuccesses }) => {
    let calls = 0;
    const { successes, error } = await slowStartBatch(count, 1, async (i) => {
      calls++;
      if (failAt.includes(i)) throw new Error(`call ${i} failed`);
    });
    expect({ calls, successes, failed: !!error }).toEqual({ calls: wantCalls, successes: wantSuccesses, failed: failAt.length > 0 });
  });
});
