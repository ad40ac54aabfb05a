import { EventRecorder, type ClusterEvent, type EventRecorderOptions, type EventType } from './events';
import { RestClient } from './rest';
import { ApiPeer } from '@orch/testing';
import { memoryLogger, waitFor } from '@orch/testing';
import type { KubeObject } from '@orch/apimachinery';

const EVENTS = 'events.orch.io/v1/events';
const MICRO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const podA: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', namespace: 'ns', uid: 'uid-a', resourceVersion: '7' } };
const podB: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'b', namespace: 'ns', uid: 'uid-b' } };

type Call = [KubeObject, EventType, string, string, string];

describe('EventRecorder', () => {
  let peer: ApiPeer;
  let client: RestClient;
  let log: ReturnType<typeof memoryLogger>;
  let recorder: EventRecorder;

  beforeEach(async () => {
    peer = await ApiPeer.start();
    client = new RestClient({ server: peer.url }, { component: 'test', timeoutMs: 1000 });
    log = memoryLogger();
  });
  afterEach(async () => {
    await recorder?.stop(200);
    client.close();
    await peer.stop();
  });

  const make = (extra: Partial<EventRecorderOptions> = {}) =>
    (recorder = new EventRecorder({ client, reportingController: 'orch.io/scheduler', reportingInstance: 'sched-1', logger: log, ...extra }));
  const stored = () => peer.stored(EVENTS) as ClusterEvent[];

  it('creates an events.orch.io/v1 Event with every required field and no deprecated ones', async () => {
    make().event(podA, 'Normal', 'Scheduled', 'Binding', 'assigned ns/a to n1');
    await recorder.flush();
    const posts = peer.requestsTo('POST', '/apis/events.orch.io/v1/namespaces/ns/events');
    expect(posts).toHaveLength(1);
    const [ev] = stored();
    expect(ev).toMatchObject({
      apiVersion: 'events.orch.io/v1',
      kind: 'Event',
      metadata: { namespace: 'ns' },
      type: 'Normal',
      reason: 'Scheduled',
      action: 'Binding',
      note: 'assigned ns/a to n1',
      reportingController: 'orch.io/scheduler',
      reportingInstance: 'sched-1',
      regarding: { apiVersion: 'v1', kind: 'Pod', name: 'a', namespace: 'ns', uid: 'uid-a', resourceVersion: '7' },
    });
    expect(ev.metadata.name).toMatch(/^a\.[0-9a-f]+$/);
    expect(ev.eventTime).toMatch(MICRO);
    expect(ev.series).toBeUndefined();
    expect(Object.keys(JSON.parse(posts[0].body)).filter((k) => k.startsWith('deprecated'))).toEqual([]);
  });

  // Which repeats aggregate: rows of calls and the Events (count per Event) the server ends with.
  it.each([
    { name: 'same event three times', calls: [[podA, 'Normal', 'Scheduled', 'Binding', 'n1'], [podA, 'Normal', 'Scheduled', 'Binding', 'n1'], [podA, 'Normal', 'Scheduled', 'Binding', 'n1']] as Call[], want: [3] },
    { name: 'same event twice', calls: [[podA, 'Normal', 'Scheduled', 'Binding', 'n1'], [podA, 'Normal', 'Scheduled', 'Binding', 'n1']] as Call[], want: [2] },
    { name: 'different note', calls: [[podA, 'Normal', 'Scheduled', 'Binding', 'n1'], [podA, 'Normal', 'Scheduled', 'Binding', 'n2']] as Call[], want: [1, 1] },
    { name: 'different type', calls: [[podA, 'Normal', 'R', 'A', ''], [podA, 'Warning', 'R', 'A', '']] as Call[], want: [1, 1] },
    { name: 'different reason', calls: [[podA, 'Warning', 'R1', 'A', ''], [podA, 'Warning', 'R2', 'A', '']] as Call[], want: [1, 1] },
    { name: 'different action', calls: [[podA, 'Warning', 'R', 'A1', ''], [podA, 'Warning', 'R', 'A2', '']] as Call[], want: [1, 1] },
    { name: 'different object', calls: [[podA, 'Normal', 'R', 'A', ''], [podB, 'Normal', 'R', 'A', '']] as Call[], want: [1, 1] },
    {
      name: 'object changed resourceVersion only',
      calls: [[podA, 'Normal', 'R', 'A', ''], [{ ...podA, metadata: { ...podA.metadata, resourceVersion: '8' } }, 'Normal', 'R', 'A', '']] as Call[],
      want: [2],
    },
  ])('aggregates: $name', async ({ calls, want }) => {
    make();
    for (const c of calls) recorder.event(...c);
    await recorder.flush();
    const counts = stored()
      .map((e) => e.series?.count ?? 1)
      .sort();
    expect(counts).toEqual(want.sort());
    const withSeries = stored().filter((e) => e.series);
    for (const e of withSeries) expect(e.series?.lastObservedTime).toMatch(MICRO);
  });

  it('patches the second occurrence at once and later counts on the flush period', async () => {
    make({ seriesFlushMs: 40 });
    const occur = () => recorder.event(podA, 'Warning', 'FailedScheduling', 'Scheduling', '0/3 nodes are available');
    occur();
    occur();
    await waitFor(() => stored()[0]?.series?.count === 2, 'count 2 patched');
    occur();
    occur();
    expect(peer.requestsTo('PATCH', '/apis/events.orch.io/v1/namespaces/ns/events/')).toHaveLength(1);
    await waitFor(() => stored()[0]?.series?.count === 4, 'count 4 patched by the flush timer');
    const patches = peer.requestsTo('PATCH', '/apis/events.orch.io/v1/namespaces/ns/events/');
    expect(patches.map((p) => p.headers['content-type'])).toEqual(['application/merge-patch+json', 'application/merge-patch+json']);
    expect(Object.keys(JSON.parse(patches[0].body))).toEqual(['series']);
  });

  it('starts a new Event once the series window has passed', async () => {
    make({ seriesWindowMs: 30 });
    recorder.event(podA, 'Normal', 'Pulled', 'Pull', 'image');
    await recorder.flush();
    await new Promise((r) => setTimeout(r, 50));
    recorder.event(podA, 'Normal', 'Pulled', 'Pull', 'image');
    await recorder.flush();
    expect(stored().map((e) => e.series?.count ?? 1)).toEqual([1, 1]);
  });

  it('re-creates the Event with its series when the series patch finds it gone', async () => {
    make();
    recorder.event(podA, 'Normal', 'R', 'A', 'x');
    await recorder.flush();
    const name = stored()[0].metadata.name!;
    peer.remove(EVENTS, 'ns', name);
    recorder.event(podA, 'Normal', 'R', 'A', 'x');
    await recorder.flush();
    expect(stored()).toHaveLength(1);
    expect(stored()[0]).toMatchObject({ metadata: { name }, series: { count: 2 } });
  });

  it('puts events about cluster-scoped objects in the default namespace', async () => {
    make().event({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', uid: 'u' } }, 'Normal', 'Ready', 'Heartbeat', '');
    await recorder.flush();
    expect(stored()[0].metadata.namespace).toBe('default');
    expect(stored()[0].note).toBeUndefined();
  });

  it.each([
    { name: 'bad type', call: [podA, 'Info', 'R', 'A', ''], want: /type must be Normal or Warning/ },
    { name: 'no reason', call: [podA, 'Normal', '', 'A', ''], want: /reason and action are required/ },
    { name: 'no action', call: [podA, 'Normal', 'R', '', ''], want: /reason and action are required/ },
    { name: 'unnamed object', call: [{ metadata: {} }, 'Normal', 'R', 'A', ''], want: /no name/ },
  ])('drops and logs $name without throwing', async ({ call, want }) => {
    make();
    expect(() => recorder.event(...(call as Call))).not.toThrow();
    await recorder.flush();
    expect(stored()).toHaveLength(0);
    expect(log.lines.some((l) => want.test(l))).toBe(true);
  });

  it('truncates a long note to 1024 bytes', async () => {
    make().event(podA, 'Normal', 'R', 'A', 'é'.repeat(2000));
    await recorder.flush();
    expect(Buffer.byteLength(stored()[0].note ?? '')).toBeLessThanOrEqual(1024);
  });

  it('never blocks the caller; failures are logged', async () => {
    peer.intercept((r) => (r.path.includes('/events') ? { status: 500, body: { kind: 'Status', code: 500, message: 'store down' } } : undefined));
    make();
    for (let i = 0; i < 20; i++) recorder.event(podA, 'Normal', `R${i}`, 'A', '');
    // The calls returned before any write was answered: none of the 20 failures is known yet.
    expect(log.lines.filter((l) => l.includes('could not create event'))).toHaveLength(0);
    await recorder.flush();
    expect(log.lines.filter((l) => l.includes('could not create event') && l.includes('store down'))).toHaveLength(20);
  });

  it('rate-limits writes with the token bucket', async () => {
    make({ qps: 20, burst: 2 });
    const t0 = Date.now();
    for (let i = 0; i < 6; i++) recorder.event(podA, 'Normal', `R${i}`, 'A', '');
    await recorder.flush();
    expect(stored()).toHaveLength(6);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190); // 4 writes beyond the burst at 20/s
  });

  it('drops writes beyond the queue bound, and stop gives up on a hung server', async () => {
    peer.intercept(() => ({ status: 0, hang: true }));
    make({ maxQueued: 3 });
    for (let i = 0; i < 6; i++) recorder.event(podA, 'Normal', `R${i}`, 'A', '');
    const t0 = Date.now();
    await recorder.stop(100);
    expect(Date.now() - t0).toBeLessThan(5000); // gave up on the hung server rather than waiting on it
    expect(log.lines.filter((l) => l.includes('queue full'))).toHaveLength(2); // 1 in flight + 3 waiting
    expect(log.lines.some((l) => l.includes('dropped') && l.includes('on stop'))).toBe(true);
    recorder.event(podA, 'Normal', 'After', 'A', '');
    expect(peer.requests.filter((r) => r.body.includes('After'))).toHaveLength(0);
  });
});
