import type { KubeObject, WatchEvent } from '@orch/apimachinery';
import { type ResourceClient } from '@orch/client';
import { eventually, startControllerCluster, staysUnchanged, type ControllerCluster } from './support/cluster';
import { PodSimulator } from './support/pod-simulator';

// Jobs, TTL after finished and CronJobs against the real gateway and controller-manager. The
// pod simulator finishes pods by their `outcome` label: succeed, fail, or run forever.

const NS = 'batch';
const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };

interface Condition {
  type: string;
  status: string;
  reason?: string;
}
interface Job extends KubeObject {
  spec: Record<string, unknown>;
  status?: { active?: number; ready?: number; succeeded?: number; failed?: number; completedIndexes?: string; conditions?: Condition[]; completionTime?: string; startTime?: string; uncountedTerminatedPods?: unknown };
}
interface CronJob extends KubeObject {
  spec: Record<string, unknown>;
  status?: { active?: { name?: string; uid?: string }[]; lastScheduleTime?: string; lastSuccessfulTime?: string };
}
interface Pod extends KubeObject {
  spec: { hostname?: string };
  status?: { phase?: string };
}

function job(name: string, outcome: 'succeed' | 'fail' | 'run', spec: Record<string, unknown> = {}): Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: NS },
    spec: {
      template: { metadata: { labels: { outcome, job: name } }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] } },
      ...spec,
    },
  };
}

const condition = (obj: { status?: { conditions?: Condition[] } }, type: string) => obj.status?.conditions?.find((c) => c.type === type && c.status === 'True');

describe('workload controllers: jobs and cron jobs (real gateway)', () => {
  let cluster: ControllerCluster;
  let sim: PodSimulator;
  let jobs: ResourceClient<Job>;
  let cronJobs: ResourceClient<CronJob>;
  let pods: ResourceClient<Pod>;

  beforeAll(async () => {
    cluster = await startControllerCluster(['job', 'ttl-after-finished', 'cronjob', 'garbagecollector']);
    await cluster.client.resource(NAMESPACES).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    jobs = cluster.client.resource<Job>({ group: 'batch', version: 'v1', resource: 'jobs' }, NS);
    cronJobs = cluster.client.resource<CronJob>({ group: 'batch', version: 'v1', resource: 'cronjobs' }, NS);
    pods = cluster.client.resource<Pod>({ group: '', version: 'v1', resource: 'pods' }, NS);
    sim = new PodSimulator({
      client: cluster.client,
      namespace: NS,
      finish: (p) => ({ succeed: 'Succeeded' as const, fail: 'Failed' as const })[p.metadata.labels?.['outcome'] ?? ''],
    }).start();
  });

  afterAll(async () => {
    await sim?.stop();
    await cluster?.stop();
  });

  const finished = (name: string, type: 'Complete' | 'Failed') =>
    eventually(`${name} ${type}`, async () => {
      const j = await jobs.get(name);
      return condition(j, type) ? j : undefined;
    });

  it('runs an Indexed job to completion, one pod per index, at most parallelism at a time', async () => {
    let maxActive = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const running = (await pods.list({ labelSelector: 'job=indexed' })).items.filter((p) => p.status?.phase !== 'Succeeded' && !p.metadata.deletionTimestamp);
        maxActive = Math.max(maxActive, running.length);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await jobs.create(job('indexed', 'succeed', { completions: 3, parallelism: 2, completionMode: 'Indexed' }));
    const done = await finished('indexed', 'Complete');
    sampling = false;
    await sampler;
    expect(done.status).toMatchObject({ succeeded: 3, completedIndexes: '0-2' });
    expect(condition(done, 'SuccessCriteriaMet')).toBeDefined();
    expect(done.status?.completionTime).toBeDefined();
    expect(maxActive).toBeLessThanOrEqual(2);
    const items = (await pods.list({ labelSelector: 'job=indexed' })).items;
    const indexes = items.map((p) => p.metadata.annotations?.['batch.orch.io/job-completion-index']).sort();
    expect(indexes).toEqual(['0', '1', '2']);
    for (const p of items) {
      const ix = p.metadata.annotations?.['batch.orch.io/job-completion-index'];
      expect(p.metadata.labels?.['batch.orch.io/job-completion-index']).toBe(ix);
      expect(p.spec.hostname).toBe(`indexed-${ix}`);
      expect(p.metadata.finalizers ?? []).not.toContain('batch.orch.io/job-tracking');
    }
  });

  it('keeps a running job as it is: parallelism pods, status written once they run', async () => {
    await jobs.create(job('forever', 'run', { parallelism: 2, completions: 4 }));
    await eventually('two pods running', async () => ((await jobs.get('forever')).status?.active === 2 && (await jobs.get('forever')).status?.ready === 2 ? true : undefined));
    expect(await staysUnchanged(() => jobs.get('forever'))).toBe(true);
    expect((await pods.list({ labelSelector: 'job=forever' })).items).toHaveLength(2);
    await jobs.delete('forever', { propagationPolicy: 'Background' });
  });

  it('fails a job past its backoffLimit and stops its pods', async () => {
    await jobs.create(job('doomed', 'fail', { backoffLimit: 0, parallelism: 1, completions: 1 }));
    const failed = await finished('doomed', 'Failed');
    expect(condition(failed, 'Failed')?.reason).toBe('BackoffLimitExceeded');
    expect(condition(failed, 'FailureTarget')?.reason).toBe('BackoffLimitExceeded');
    expect(failed.status?.failed).toBe(1);
    expect(failed.status?.active ?? 0).toBe(0);
  });

  it('deletes a finished job ttlSecondsAfterFinished later, pods included', async () => {
    // Watched from before the create, not polled: completionTime has whole seconds, so a job
    // finishing at x.95 s with a TTL of 1 s may be deleted 50 ms later, before a poll saw it Complete.
    const seen: WatchEvent<Job>[] = [];
    const from = (await jobs.list()).metadata.resourceVersion;
    const watch = jobs.watch({ resourceVersion: from, fieldSelector: 'metadata.name=ephemeral' }, { onEvent: (e) => seen.push(e) });
    try {
      await jobs.create(job('ephemeral', 'succeed', { ttlSecondsAfterFinished: 1 }));
      await eventually('ttl expired', () => (seen.some((e) => e.type === 'DELETED') ? true : undefined));
    } finally {
      watch.stop();
      await watch.done;
    }
    const completed = seen.map((e) => condition(e.object, 'Complete')).find(Boolean) as (Condition & { lastTransitionTime?: string }) | undefined;
    const deleting = seen.find((e) => e.object.metadata.deletionTimestamp)?.object;
    expect(completed?.lastTransitionTime).toBeDefined();
    // Deleted in the foreground (pods first), no earlier than the TTL after the finish.
    expect(deleting?.metadata.finalizers).toContain('foregroundDeletion');
    expect(Date.parse(deleting!.metadata.deletionTimestamp!)).toBeGreaterThanOrEqual(Date.parse(completed!.lastTransitionTime!) + 1000);
    await eventually('pods collected', async () => ((await pods.list({ labelSelector: 'job=ephemeral' })).items.length === 0 ? true : undefined));
  });

  it('a CronJob fires for its most recent missed run and records it', async () => {
    await cronJobs.create({
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'tick', namespace: NS },
      spec: { schedule: '* * * * *', suspend: true, jobTemplate: { spec: job('x', 'succeed').spec } },
    });
    // Pretend the last run was three minutes ago: three activations were missed since.
    const cj = await cronJobs.get('tick');
    await cronJobs.updateStatus({ ...cj, status: { lastScheduleTime: new Date(Math.floor(Date.now() / 60_000) * 60_000 - 180_000).toISOString().replace('.000Z', 'Z') } });
    const before = Date.now();
    await cronJobs.patch('tick', 'merge', { spec: { suspend: false } });
    const minute = Math.floor(before / 60_000);
    const created = await eventually('job created', async () => (await jobs.list()).items.find((j) => j.metadata.ownerReferences?.some((r) => r.kind === 'CronJob' && r.name === 'tick')));
    // Only the most recent activation runs (one job), named by its minute.
    expect([`tick-${minute}`, `tick-${minute + 1}`]).toContain(created.metadata.name);
    expect(created.metadata.annotations?.['batch.orch.io/cronjob-scheduled-timestamp']).toBe(new Date(Number(created.metadata.name?.split('-')[1]) * 60_000).toISOString().replace('.000Z', 'Z'));
    const status = await eventually('last successful time', async () => {
      const cur = await cronJobs.get('tick');
      return cur.status?.lastSuccessfulTime && !(cur.status.active ?? []).length ? cur.status : undefined;
    });
    expect(status.lastScheduleTime).toBe(new Date(Number(created.metadata.name?.split('-')[1]) * 60_000).toISOString().replace('.000Z', 'Z'));
    const owned = (await jobs.list()).items.filter((j) => j.metadata.ownerReferences?.some((r) => r.name === 'tick'));
    expect(owned.length).toBeLessThanOrEqual(2);
  });

  it('keeps only successfulJobsHistoryLimit finished jobs of a CronJob', async () => {
    const cj = await cronJobs.create({
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'history', namespace: NS },
      spec: { schedule: '0 0 1 1 *', successfulJobsHistoryLimit: 1, jobTemplate: { spec: job('x', 'succeed').spec } },
    });
    const owner = { apiVersion: 'batch/v1', kind: 'CronJob', name: 'history', uid: cj.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
    for (const [i, name] of ['history-1', 'history-2', 'history-3'].entries()) {
      const j = job(name, 'succeed');
      j.metadata.ownerReferences = [owner];
      await jobs.create(j);
      await finished(name, 'Complete');
      // Distinct start times order the history.
      const cur = await jobs.get(name);
      await jobs.updateStatus({ ...cur, status: { ...cur.status, startTime: new Date(Date.UTC(2024, 0, 1, 0, i)).toISOString().replace('.000Z', 'Z') } });
    }
    await cronJobs.patch('history', 'merge', { metadata: { annotations: { poke: 'yes' } } });
    const left = await eventually('history trimmed', async () => {
      const items = (await jobs.list()).items.filter((j) => j.metadata.ownerReferences?.some((r) => r.name === 'history'));
      return items.length === 1 ? items : undefined;
    });
    expect(left[0].metadata.name).toBe('history-3');
  });
});
