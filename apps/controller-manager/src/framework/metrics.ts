import type { QueueMetrics } from '@orch/client';
import { Counter, Gauge, type Registry } from 'prom-client';

const queuesByRegistry = new WeakMap<Registry, Map<string, QueueMetrics>>();

/**
 * Exports a controller's work queue as upstream's workqueue metrics, labelled `name`:
 * `workqueue_depth`, `workqueue_adds_total` and `workqueue_retries_total`. The metrics are
 * created once per registry and read every registered queue when scraped; a second queue with
 * the same name replaces the first (a controller created again).
 */
export function registerQueueMetrics(registry: Registry, name: string, queue: QueueMetrics): void {
  let queues = queuesByRegistry.get(registry);
  if (!queues) {
    queues = new Map();
    queuesByRegistry.set(registry, queues);
    const all = queues;
    new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of the workqueue.',
      labelNames: ['name'],
      registers: [registry],
      collect() {
        for (const [n, q] of all) this.set({ name: n }, q.depth);
      },
    });
    counterOf(registry, all, 'workqueue_adds_total', 'Total number of adds handled by the workqueue.', (q) => q.adds);
    counterOf(registry, all, 'workqueue_retries_total', 'Total number of retries handled by the workqueue.', (q) => q.retries);
  }
  queues.set(name, queue);
}

/** A counter that follows `read(queue)` for every queue at each scrape. */
function counterOf(registry: Registry, queues: Map<string, QueueMetrics>, name: string, help: string, read: (q: QueueMetrics) => number): void {
  const exported = new Map<string, number>();
  new Counter({
    name,
    help,
    labelNames: ['name'],
    registers: [registry],
    collect() {
      for (const [n, q] of queues) {
        const now = read(q);
        const seen = exported.get(n) ?? 0;
        // inc by 0 exports a queue that has no retries yet as 0 rather than leaving it out.
        if (now > seen || !exported.has(n)) this.inc({ name: n }, now - seen);
        exported.set(n, Math.max(now, seen));
      }
    },
  });
}
