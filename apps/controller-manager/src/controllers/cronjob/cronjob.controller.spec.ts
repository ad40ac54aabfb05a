import { peerContext, type PeerContext } from '../../framework/testing/harness';
import type { CronJob, Job } from '../../framework/api';
import { CronJobController } from './cronjob.controller';

const CRON_JOBS = 'batch/v1/cronjobs';
const JOBS = 'batch/v1/jobs';
const NOW = Date.parse('2024-01-01T00:05:30Z');
const DUE = `tick-${Date.parse('2024-01-01T00:05:00Z') / 60_000}`;

function cronJob(policy: 'Allow' | 'Forbid' | 'Replace', suspend = false): CronJob {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'tick', namespace: 'ns', uid: 'cj-uid', creationTimestamp: '2024-01-01T00:00:00Z' },
    spec: { schedule: '* * * * *', timeZone: 'UTC', concurrencyPolicy: policy, suspend, jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c' }] } } } } },
    status: { lastScheduleTime: '2024-01-01T00:04:00Z', active: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'tick-old', namespace: 'ns', uid: 'old-uid' }] },
  };
}

const running: Job = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'tick-old', namespace: 'ns', uid: 'old-uid', ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'tick', uid: 'cj-uid', controller: true }] },
  spec: { template: { spec: { containers: [{ name: 'c' }] } } },
  status: { active: 1 },
};

describe('CronJobController.sync against an API peer (clock at 00:05:30, last run 00:04)', () => {
  let t: PeerContext;
  beforeEach(async () => {
    t = await peerContext();
  });
  afterEach(() => t.stop());

  it.each([
    { name: 'Allow: starts the due run beside the running one', policy: 'Allow' as const, suspend: false, jobs: ['tick-old', DUE], active: ['tick-old', DUE], last: '2024-01-01T00:05:00Z' },
    { name: 'Forbid: skips the run while one is active', policy: 'Forbid' as const, suspend: false, jobs: ['tick-old'], active: ['tick-old'], last: '2024-01-01T00:04:00Z' },
    { name: 'Replace: deletes the running job and starts the due one', policy: 'Replace' as const, suspend: false, jobs: [DUE], active: [DUE], last: '2024-01-01T00:05:00Z' },
    { name: 'suspended: nothing starts', policy: 'Allow' as const, suspend: true, jobs: ['tick-old'], active: ['tick-old'], last: '2024-01-01T00:04:00Z' },
  ])('$name', async ({ policy, suspend, jobs, active, last }) => {
    t.peer.put(CRON_JOBS, cronJob(policy, suspend));
    t.peer.put(JOBS, running);
    const controller = t.own(new CronJobController(t.ctx, () => NOW));
    await t.start();
    await controller.sync('ns/tick');
    expect(t.peer.stored(JOBS).map((j) => j.metadata.name).sort()).toEqual(jobs.sort());
    const status = (t.peer.stored(CRON_JOBS)[0] as CronJob).status;
    expect((status?.active ?? []).map((r) => r.name).sort()).toEqual(active.sort());
    expect(status?.lastScheduleTime).toBe(last);
    const created = t.peer.stored(JOBS).find((j) => j.metadata.name === DUE);
    if (created) expect(created.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'CronJob', uid: 'cj-uid', controller: true, blockOwnerDeletion: true });
  });
});
