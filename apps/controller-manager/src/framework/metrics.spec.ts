import { ItemExponentialFailureRateLimiter, RateLimitingQueue } from '@orch/client';
import { Registry } from 'prom-client';
import { registerQueueMetrics } from './metrics';

/** The value of `metric{name="<queue>"}` in the registry's exposition text. */
async function sample(registry: Registry, metric: string, queue: string): Promise<number | undefined> {
  const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`${metric}{name="${queue}"}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('registerQueueMetrics', () => {
  it.each([
    { metric: 'workqueue_adds_total', queue: 'a', want: 3 },
    { metric: 'workqueue_depth', queue: 'a', want: 2 },
    { metric: 'workqueue_retries_total', queue: 'a', want: 1 },
    { metric: 'workqueue_adds_total', queue: 'b', want: 1 },
    { metric: 'workqueue_depth', queue: 'b', want: 1 },
    { metric: 'workqueue_retries_total', queue: 'b', want: 0 },
  ])('$metric{name="$queue"} = $want', async ({ metric, queue, want }) => {
    const registry = new Registry();
    // Retries wait a minute: the retried key stays out of the queue while the test reads it.
    const a = new RateLimitingQueue<string>(new ItemExponentialFailureRateLimiter<string>(60_000, 60_000));
    const b = new RateLimitingQueue<string>();
    registerQueueMetrics(registry, 'a', a.metrics);
    registerQueueMetrics(registry, 'b', b.metrics);
    a.add('x');
    a.add('y');
    a.add('x');
    const key = await a.get();
    a.addRateLimited(key as string);
    a.done(key as string);
    a.add('z');
    b.add('only');
    try {
      expect(await sample(registry, metric, queue)).toBe(want);
      // A second scrape reads the same counts (counters follow the queue, they do not add up).
      expect(await sample(registry, metric, queue)).toBe(want);
    } finally {
      a.shutDown();
      b.shutDown();
    }
  });
});
