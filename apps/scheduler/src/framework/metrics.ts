import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export type AttemptResult = 'scheduled' | 'unschedulable' | 'error';

/**
 * The scheduler's Prometheus metrics (upstream names): attempts and their latency by result
 * and profile, pending pods per queue (read from the queue at scrape time), queue arrivals,
 * preemption attempts and victims.
 */
export class SchedulerMetrics {
  readonly scheduleAttempts: Counter<'result' | 'profile'>;
  readonly attemptDuration: Histogram<'result' | 'profile'>;
  readonly podSchedulingAttempts: Histogram;
  readonly queueIncomingPods: Counter<'queue' | 'event'>;
  readonly preemptionAttempts: Counter;
  readonly preemptionVictims: Histogram;
  private pendingSource: () => Record<string, number> = () => ({});

  constructor(registry: Registry) {
    const registers = [registry];
    this.scheduleAttempts = new Counter({
      name: 'scheduler_schedule_attempts_total',
      help: 'Number of attempts to schedule pods, by the result. unschedulable means a pod could not be scheduled, while error means an internal scheduler problem.',
      labelNames: ['result', 'profile'],
      registers,
    });
    this.attemptDuration = new Histogram({
      name: 'scheduler_scheduling_attempt_duration_seconds',
      help: 'Scheduling attempt latency in seconds (scheduling algorithm + binding)',
      labelNames: ['result', 'profile'],
      buckets: [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384],
      registers,
    });
    this.podSchedulingAttempts = new Histogram({
      name: 'scheduler_pod_scheduling_attempts',
      help: 'Number of attempts to successfully schedule a pod.',
      buckets: [1, 2, 4, 8, 16],
      registers,
    });
    this.queueIncomingPods = new Counter({
      name: 'scheduler_queue_incoming_pods_total',
      help: 'Number of pods added to scheduling queues by event and queue type.',
      labelNames: ['queue', 'event'],
      registers,
    });
    this.preemptionAttempts = new Counter({ name: 'scheduler_preemption_attempts_total', help: 'Total preemption attempts in the cluster till now', registers });
    this.preemptionVictims = new Histogram({
      name: 'scheduler_preemption_victims',
      help: 'Number of selected preemption victims',
      buckets: [1, 2, 4, 8, 16, 32, 64],
      registers,
    });
    const source = (): Record<string, number> => this.pendingSource();
    new Gauge({
      name: 'scheduler_pending_pods',
      help: 'Number of pending pods, by the queue type. active means number of pods in activeQ; backoff means number of pods in backoffQ; unschedulable means number of pods in unschedulablePods.',
      labelNames: ['queue'],
      registers,
      collect() {
        for (const [queue, n] of Object.entries(source())) this.set({ queue }, n);
      },
    });
  }

  /** Where scheduler_pending_pods reads the queue sizes from. */
  setPendingSource(fn: () => Record<string, number>): void {
    this.pendingSource = fn;
  }
}
