import { TimedCompactor } from './compaction';

describe('TimedCompactor', () => {
  it('compacts to the newest revision sampled at least retentionMs ago', async () => {
    let revision = 0;
    const compacted: number[] = [];
    const errors: Error[] = [];
    const c = new TimedCompactor({
      retentionMs: 100,
      intervalMs: 10,
      currentRevision: async () => revision,
      compact: async (rev) => {
        compacted.push(rev);
      },
      onError: (err) => errors.push(err),
    });
    // [time, revision at that time, compactions expected so far]
    const steps: [number, number, number[]][] = [
      [0, 5, []],
      [50, 8, []],
      [100, 9, [5]],
      [120, 9, [5]],
      [149, 12, [5]],
      [150, 12, [5, 8]],
      [260, 20, [5, 8, 12]],
      [270, 20, [5, 8, 12]],
    ];
    for (const [now, rev, want] of steps) {
      revision = rev;
      await c.tick(now);
      expect({ now, compacted }).toEqual({ now, compacted: want });
    }
    expect(errors).toEqual([]);
  });

  it('reports failures and tries again on the next tick', async () => {
    const errors: string[] = [];
    let fail = true;
    const compacted: number[] = [];
    const c = new TimedCompactor({
      retentionMs: 0,
      intervalMs: 10,
      currentRevision: async () => 7,
      compact: async (rev) => {
        if (fail) throw new Error('etcd down');
        compacted.push(rev);
      },
      onError: (err) => errors.push(err.message),
    });
    await c.tick(1);
    expect(errors).toEqual(['etcd down']);
    fail = false;
    await c.tick(2);
    expect(compacted).toEqual([7]);

  });
});
