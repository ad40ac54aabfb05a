import { isNotFound, objectKey, splitObjectKey } from '@orch/client';
import type { ControllerContext } from '../../framework/controller';
import { QueueController } from '../../framework/queue-controller';
import { JOBS } from '../../framework/resources';
import type { Job } from '../../framework/api';
import { isJobFinished, jobFinishTime } from './job-util';

/**
 * When a finished job with `ttlSecondsAfterFinished` expires (ms since the epoch), or
 * undefined when it has no TTL or has not finished.
 */
export function ttlExpiry(job: Job): number | undefined {
  const ttl = job.spec.ttlSecondsAfterFinished;
  if (ttl === undefined || ttl === null || !isJobFinished(job)) return undefined;
  const finished = jobFinishTime(job);
  return finished === undefined ? undefined : finished + ttl * 1000;
}

/**
 * The TTL-after-finished controller (upstream pkg/controller/ttlafterfinished): deletes a
 * finished job `ttlSecondsAfterFinished` after it finished, in the foreground (its pods
 * first), after re-reading it so a TTL changed meanwhile is honoured.
 */
export class TtlAfterFinishedController extends QueueController {
  private readonly cache = this.informersOf({ jobs: JOBS });
  private readonly api = this.clientsOf({ jobs: JOBS });

  constructor(ctx: ControllerContext) {
    super('ttl-after-finished', ctx);
    const enqueue = (job: Job) => {
      if (!job.metadata.deletionTimestamp && ttlExpiry(job) !== undefined) this.queue.add(objectKey(job));
    };
    this.cache.jobs.addEventHandler({ onAdd: enqueue, onUpdate: (_old, cur) => enqueue(cur) });
  }

  async sync(key: string): Promise<void> {
    const cached = this.cache.jobs.get(key);
    if (!cached || cached.metadata.deletionTimestamp) return;
    if (!this.expired(key, cached)) return;
    // The cache may be stale: decide on the job as it is now.
    const { namespace, name } = splitObjectKey(key);
    let fresh: Job;
    try {
      fresh = await this.api.jobs.inNamespace(namespace ?? '').get(name);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (fresh.metadata.deletionTimestamp || !this.expired(key, fresh)) return;
    try {
      await this.api.jobs.inNamespace(namespace ?? '').delete(name, { propagationPolicy: 'Foreground', preconditions: { uid: fresh.metadata.uid } });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /** True when expired; otherwise requeues the key for its expiry. */
  private expired(key: string, job: Job): boolean {
    const at = ttlExpiry(job);
    if (at === undefined) return false;
    const wait = at - Date.now();
    if (wait > 0) {
      this.queue.addAfter(key, wait);
      return false;
    }
    return true;
  }
}
