import { peerContext, type PeerContext } from '../../framework/testing/harness';
import type { Job, Pod } from '../../framework/api';
import { JobController } from './job.controller';
import { JOB_TRACKING_FINALIZER } from './job-util';

const JOBS = 'batch/v1/jobs';
const PODS = '/v1/pods';
const INDEX = 'batch.orch.io/job-completion-index';

const job: Job = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'j', namespace: 'ns', uid: 'job-uid', generation: 1 },
  spec: { completions: 2, parallelism: 2, completionMode: 'Indexed', backoffLimit: 6, template: { metadata: { labels: { app: 'j' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c' }] } } },
};

function jobPod(index: number, phase: 'Running' | 'Succeeded'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `j-${index}-abcde`,
      namespace: 'ns',
      labels: { 'batch.orch.io/controller-uid': 'job-uid', [INDEX]: String(index) },
      annotations: { [INDEX]: String(index) },
      finalizers: [JOB_TRACKING_FINALIZER],
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: 'job-uid', controller: true, blockOwnerDeletion: true }],
    },
    spec: { containers: [{ name: 'c' }] },
    status: { phase },
  };
}

describe('JobController.sync against an API peer', () => {
  let t: PeerContext;
  let controller: JobController;
  beforeEach(async () => {
    t = await peerContext();
  });
  afterEach(() => t.stop());

  const start = async (pods: Pod[]) => {
    t.peer.put(JOBS, job);
    for (const p of pods) t.peer.put(PODS, p);
    controller = t.own(new JobController(t.ctx));
    await t.start();
  };
  const status = () => (t.peer.stored(JOBS)[0] as Job).status ?? {};

  it('creates one pod per index with the index annotation, label, hostname and tracking finalizer', async () => {
    await start([]);
    await controller.sync('ns/j');
    const pods = (t.peer.stored(PODS) as Pod[]).sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
    expect(pods.map((p) => [p.metadata.generateName, p.metadata.annotations?.[INDEX], p.metadata.labels?.[INDEX], p.spec.hostname])).toEqual([
      ['j-0-', '0', '0', 'j-0'],
      ['j-1-', '1', '1', 'j-1'],
    ]);
    for (const p of pods) {
      expect(p.metadata.finalizers).toEqual([JOB_TRACKING_FINALIZER]);
      expect(p.metadata.labels).toMatchObject({ app: 'j', 'batch.orch.io/controller-uid': 'job-uid', 'batch.orch.io/job-name': 'j', 'controller-uid': 'job-uid', 'job-name': 'j' });
      // Compatibility option (the harness default): the batch.kubernetes.io twins stock workloads read.
      const index = p.metadata.labels?.[INDEX];
      expect(p.metadata.labels).toMatchObject({ 'batch.kubernetes.io/controller-uid': 'job-uid', 'batch.kubernetes.io/job-name': 'j', 'batch.kubernetes.io/job-completion-index': index });
      expect(p.metadata.annotations).toMatchObject({ 'batch.kubernetes.io/job-completion-index': index });
      // JOB_COMPLETION_INDEX comes from the index label through the downward API.
      expect(p.spec.containers[0].env).toEqual([{ name: 'JOB_COMPLETION_INDEX', valueFrom: { fieldRef: { fieldPath: `metadata.labels['${INDEX}']` } } }]);
    }
    expect(status()).toMatchObject({ active: 2 });
    expect(status().startTime).toBeDefined();
  });

  it('counts a finished pod once, releases it, and keeps the other index running', async () => {
    await start([jobPod(0, 'Succeeded'), jobPod(1, 'Running')]);
    await controller.sync('ns/j');
    expect(status()).toMatchObject({ succeeded: 1, completedIndexes: '0', active: 1 });
    const done = (t.peer.stored(PODS) as Pod[]).find((p) => p.metadata.annotations?.[INDEX] === '0');
    expect(done?.metadata.finalizers ?? []).toEqual([]);
    expect(t.peer.stored(PODS)).toHaveLength(2);
  });

  it('completes once every index succeeded: SuccessCriteriaMet, then Complete', async () => {
    await start([jobPod(0, 'Succeeded'), jobPod(1, 'Succeeded')]);
    await controller.sync('ns/j');
    const s = status();
    expect(s).toMatchObject({ succeeded: 2, completedIndexes: '0-1', active: 0 });
    expect(s.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['SuccessCriteriaMet', 'True', 'CompletionsReached'],
      ['Complete', 'True', 'CompletionsReached'],
    ]);
    expect(s.completionTime).toBeDefined();
  });
});
