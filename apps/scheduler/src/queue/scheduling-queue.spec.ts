import { FakeClock } from '../framework/clock';
import { ActionType, Events, type ClusterEvent } from '../framework/events';
import type { PluginEvent } from '../framework/framework';
import { makePod } from '../framework/testing';
import type { QueuedPodInfo } from '../framework/types';
import { priorityLess } from '../plugins/priority-sort/priority-sort';
import { isPodUpdated, SchedulingQueue } from './scheduling-queue';

const NODE_LABEL: ClusterEvent = { resource: 'Node', action: ActionType.UpdateNodeLabel, label: 'NodeLabelChange' };
const events: PluginEvent[] = [
  { plugin: 'Fit', event: Events.AssignedPodDelete },
  { plugin: 'Affinity', event: NODE_LABEL },
  { plugin: 'Hinted', event: Events.NodeAdd, hint: (_pod, _old, node) => ((node as { ok?: boolean }).ok ? 'Queue' : 'QueueSkip') },
];

function setup(): { q: SchedulingQueue; clock: FakeClock; incoming: string[] } {
  const clock = new FakeClock();
  const incoming: string[] = [];
  const q = new SchedulingQueue({ less: priorityLess, clock, eventsFor: () => events, onIncoming: (queue, ev) => incoming.push(`${queue}:${ev}`) });
  return { q, clock, incoming };
}

/** Pops `name` (it must be next) and fails it, rejected by `plugins`, in the cycle it was popped. */
async function failAttempt(q: SchedulingQueue, plugins: string[]): Promise<QueuedPodInfo> {
  const p = (await q.pop())!;
  const cycle = q.schedulingCycle;
  for (const pl of plugins) p.unschedulablePlugins.add(pl);
  q.addUnschedulableIfNotPresent(p, cycle);
  q.done(p.podInfo.key);
  return p;
}

const where = (q: SchedulingQueue, name: string): string | undefined => q.where(`uid-default-${name}`);

describe('SchedulingQueue', () => {
  it('pops by priority, then by arrival', async () => {
    const { q, clock } = setup();
    q.add(makePod('low', { priority: 1 }));
    clock.step(1);
    q.add(makePod('high', { priority: 10 }));
    clock.step(1);
    q.add(makePod('low2', { priority: 1 }));
    const order = [];
    for (let i = 0; i < 3; i++) order.push((await q.pop())!.podInfo.name);
    expect(order).toEqual(['high', 'low', 'low2']);
  });

  it('pop waits for a pod and close wakes it with undefined', async () => {
    const { q } = setup();
    const first = q.pop();
    q.add(makePod('p'));
    expect((await first)?.podInfo.name).toBe('p');
    const second = q.pop();
    q.close();
    expect(await second).toBeUndefined();
  });

  it.each([
    { attempts: 1, want: 1000 },
    { attempts: 2, want: 2000 },
    { attempts: 3, want: 4000 },
    { attempts: 4, want: 8000 },
    { attempts: 5, want: 10000 },
    { attempts: 9, want: 10000 },
  ])('backoff after $attempts attempts is $want ms', ({ attempts, want }) => {
    const { q } = setup();
    expect(q.backoffDuration({ attempts } as QueuedPodInfo)).toBe(want);
  });

  type Step = (q: SchedulingQueue, clock: FakeClock) => Promise<void> | void;
  it.each<{ name: string; steps: Step[]; want: Record<string, string | undefined> }>([
    {
      name: 'a rejected pod waits in unschedulablePods',
      steps: [(q) => q.add(makePod('p')), (q) => failAttempt(q, ['Fit'])],
      want: { p: 'unschedulable' },
    },
    {
      name: 'an error (no rejecting plugin) goes to backoffQ',
      steps: [(q) => q.add(makePod('p')), (q) => failAttempt(q, [])],
      want: { p: 'backoff' },
    },
    {
      name: 'backoffQ drains to activeQ after the backoff',
      steps: [(q) => q.add(makePod('p')), (q) => failAttempt(q, []), (q, c) => c.step(999), (q) => q.flushBackoffQCompleted()],
      want: { p: 'backoff' },
    },
    {
      name: 'backoffQ drains to activeQ once the backoff expired',
      steps: [(q) => q.add(makePod('p')), (q) => failAttempt(q, []), (q, c) => c.step(1000), (q) => q.flushBackoffQCompleted()],
      want: { p: 'active' },
    },
    {
      name: 'a registered event moves the pod, still backing off → backoffQ',
      steps: [(q) => q.add(makePod('p')), (q) => failAttempt(q, ['Fit']), (q) => q.assignedPodDeleted(makePod('gone', { nodeName: 'n' }))],
      want: { p: 'backoff' },
    },
    {
      name: 'a registered event after the backoff → activeQ',
      steps: [(q) => q.add(makePod('p')), (q) => failAttempt(q, ['Fit']), (q, c) => c.step(5000), (q) => q.assignedPodDeleted(makePod('gone', { nodeName: 'n' }))],
      want: { p: 'active' },
    },
    {
      name: 'an event no rejecting plugin registered leaves the pod',
      steps: [(q) => q.add(makePod('p')), (q) => failAttempt(q, ['Fit']), (q) => q.moveAllToActiveOrBackoffQueue(NODE_LABEL)],
      want: { p: 'unschedulable' },
    },
    {
      name: 'only pods rejected by interested plugins move',
      steps: [
        (q) => q.add(makePod('fit')),
        (q) => failAttempt(q, ['Fit']),
        (q) => q.add(makePod('aff')),
        (q) => failAttempt(q, ['Affinity']),
        (q, c) => c.step(5000),
        (q) => q.moveAllToActiveOrBackoffQueue(NODE_LABEL),
      ],
      want: { fit: 'unschedulable', aff: 'active' },
    },
    {
      name: 'a queueing hint can skip the event',
      steps: [(q) => q.add(makePod('p')), (q) => failAttempt(q, ['Hinted']), (q) => q.moveAllToActiveOrBackoffQueue(Events.NodeAdd, undefined, { ok: false })],
      want: { p: 'unschedulable' },
    },
    {
      name: 'a queueing hint can accept the event',
      steps: [(q) => q.add(makePod('p')), (q) => failAttempt(q, ['Hinted']), (q) => q.moveAllToActiveOrBackoffQueue(Events.NodeAdd, undefined, { ok: true })],
      want: { p: 'backoff' },
    },
    {
      name: 'a move request during the attempt sends the pod to backoffQ',
      steps: [
        (q) => q.add(makePod('p')),
        async (q) => {
          const p = (await q.pop())!;
          const cycle = q.schedulingCycle;
          q.moveAllToActiveOrBackoffQueue(NODE_LABEL);
          p.unschedulablePlugins.add('Fit');
          q.addUnschedulableIfNotPresent(p, cycle);
          q.done(p.podInfo.key);
        },
      ],
      want: { p: 'backoff' },
    },
    {
      name: 'unschedulable pods are retried after 5 minutes',
      steps: [(q) => q.add(makePod('p')), (q) => failAttempt(q, ['Fit']), (q, c) => c.step(5 * 60 * 1000), (q) => q.flushUnschedulablePodsLeftover()],
      want: { p: 'active' },
    },
    {
      name: 'a spec update moves an unschedulable pod',
      steps: [
        (q) => q.add(makePod('p')),
        (q) => failAttempt(q, ['Fit']),
        (q, c) => c.step(5000),
        (q) => q.update(makePod('p'), makePod('p', { requests: { cpu: '1m' } })),
      ],
      want: { p: 'active' },
    },
    {
      name: 'a status-only update leaves it unschedulable',
      steps: [(q) => q.add(makePod('p')), (q) => failAttempt(q, ['Fit']), (q) => q.update(makePod('p'), { ...makePod('p'), status: { phase: 'Pending' } })],
      want: { p: 'unschedulable' },
    },
    {
      name: 'an update of an unknown pod adds it',
      steps: [(q) => q.update(makePod('p'), makePod('p'))],
      want: { p: 'active' },
    },
    {
      name: 'delete removes the pod',
      steps: [(q) => q.add(makePod('p')), (q) => failAttempt(q, ['Fit']), (q) => q.delete(makePod('p'))],
      want: { p: undefined },
    },
    {
      name: 'a pod deleted while in flight is not requeued',
      steps: [
        (q) => q.add(makePod('p')),
        async (q) => {
          const p = (await q.pop())!;
          q.delete(p.podInfo.pod);
          q.addUnschedulableIfNotPresent(p, q.schedulingCycle);
          q.done(p.podInfo.key);
        },
      ],
      want: { p: undefined },
    },
    {
      name: 'a pod updated while in flight retries with backoff',
      steps: [
        (q) => q.add(makePod('p')),
        async (q) => {
          const p = (await q.pop())!;
          q.update(p.podInfo.pod, makePod('p', { labels: { x: 'y' } }));
          expect(q.where(p.podInfo.key)).toBe('inFlight');
          p.unschedulablePlugins.add('Fit');
          q.addUnschedulableIfNotPresent(p, q.schedulingCycle);
          expect(p.podInfo.labels).toEqual({ x: 'y' });
          q.done(p.podInfo.key);
        },
      ],
      want: { p: 'backoff' },
    },
  ])('$name', async ({ steps, want }) => {
    const { q, clock } = setup();
    for (const s of steps) await s(q, clock);
    for (const [name, loc] of Object.entries(want)) expect(where(q, name)).toBe(loc);
  });

  it('run() flushes backoffQ on its own timer and close() stops it', async () => {
    const { q, clock } = setup();
    q.run();
    q.add(makePod('p'));
    await failAttempt(q, []);
    clock.step(1000);
    expect(where(q, 'p')).toBe('active');
    q.close();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('counts pending pods and incoming events', async () => {
    const { q, incoming } = setup();
    q.add(makePod('a'));
    q.add(makePod('b'));
    await failAttempt(q, ['Fit']);
    expect(q.pendingPods()).toEqual({ active: 1, backoff: 0, unschedulable: 1 });
    expect(incoming).toEqual(['active:PodAdd', 'active:PodAdd', 'unschedulable:ScheduleAttemptFailure']);
  });

  it('tracks nominated pods', () => {
    const { q } = setup();
    q.add(makePod('p', { nominatedNodeName: 'n1' }));
    expect(q.nominator.nominatedPodsForNode('n1').map((p) => p.name)).toEqual(['p']);
    q.delete(makePod('p'));
    expect(q.nominator.isEmpty()).toBe(true);
  });

  it.each([
    { name: 'status only', a: makePod('p'), b: { ...makePod('p'), status: { phase: 'Running' } }, want: false },
    { name: 'resourceVersion only', a: makePod('p'), b: { ...makePod('p'), metadata: { ...makePod('p').metadata, resourceVersion: '9' } }, want: false },
    { name: 'labels', a: makePod('p'), b: makePod('p', { labels: { a: 'b' } }), want: true },
    { name: 'spec', a: makePod('p'), b: makePod('p', { priority: 3 }), want: true },
  ])('isPodUpdated: $name', ({ a, b, want }) => {
    expect(isPodUpdated(a, b)).toBe(want);
  });
});
