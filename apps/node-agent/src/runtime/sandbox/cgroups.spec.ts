import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { removeDir, tempDir } from '@orch/testing';
import { V1Driver, V2Driver, cgroupMounts, cpuShares, ownCgroups, parseKeyValues, type CgroupLimits } from './cgroups';

describe('cgroups', () => {
  it('finds v1 hierarchies and the unified one in mountinfo', () => {
    const mounts = cgroupMounts(
      [
        '35 25 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:12 - cgroup cgroup rw,cpu,cpuacct',
        '36 25 0:31 /kubepods /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
        '37 25 0:32 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate',
        '38 25 0:33 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd',
        '22 1 8:1 / / rw - ext4 /dev/vda rw',
      ].join('\n'),
    );
    expect(mounts).toEqual([
      { version: 1, mountPoint: '/sys/fs/cgroup/cpu,cpuacct', root: '/', controllers: ['cpu', 'cpuacct'] },
      { version: 1, mountPoint: '/sys/fs/cgroup/memory', root: '/kubepods', controllers: ['memory'] },
      { version: 2, mountPoint: '/sys/fs/cgroup/unified', root: '/', controllers: [] },
      { version: 1, mountPoint: '/sys/fs/cgroup/systemd', root: '/', controllers: [] },
    ]);
  });

  it('reads own cgroups per controller and the v2 path', () => {
    const own = ownCgroups('4:memory:/a/b\n1:cpu,cpuacct:/\n0::/user.slice\n');
    expect([...own]).toEqual([
      ['memory', '/a/b'],
      ['cpu', '/'],
      ['cpuacct', '/'],
      ['', '/user.slice'],
    ]);
  });

  it.each([
    { millis: undefined, want: 2 },
    { millis: 1, want: 2 },
    { millis: 200, want: 204 },
    { millis: 1000, want: 1024 },
  ])('cpu.shares of $millis m is $want', ({ millis, want }) => {
    expect(cpuShares(millis)).toBe(want);
  });

  it('parses key value files', () => {
    expect(parseKeyValues('oom_kill_disable 0\nunder_oom 0\noom_kill 3\nbad x\n')).toEqual({ oom_kill_disable: 0, under_oom: 0, oom_kill: 3 });
  });

  // This machine has cgroup v1 controllers only (its cgroup2 mount offers none), so the v2 driver
  // runs against fixture directories laid out as the kernel's files: what it writes, what it parses.
  describe('v2 on fixture files', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await tempDir('cgroup-v2-');
    });
    afterEach(async () => {
      await removeDir(dir);
    });

    it.each<{ name: string; limits: CgroupLimits; want: Record<string, string> }>([
      { name: 'no limits', limits: {}, want: { 'cpu.max': 'max 100000', 'cpu.weight': '1', 'memory.max': 'max' } },
      {
        name: '200m limit, 100m request, 64Mi',
        limits: { cpuLimitMillis: 200, cpuRequestMillis: 100, memoryLimitBytes: 64 << 20 },
        want: { 'cpu.max': '20000 100000', 'cpu.weight': '5', 'memory.max': String(64 << 20), 'memory.swap.max': '0' },
      },
      { name: 'a limit under 10m is raised to the 1 ms quota floor', limits: { cpuLimitMillis: 5 }, want: { 'cpu.max': '1000 100000' } },
      { name: 'two cores requested', limits: { cpuRequestMillis: 2000 }, want: { 'cpu.weight': '79' } },
    ])('writes the limits: $name', async ({ limits, want }) => {
      const driver = await V2Driver.create(dir, 'orch-n1');
      const group = await driver.ensure(['podU', 'main-c'], limits);
      const leaf = join(dir, 'orch-n1', 'podU', 'main-c');
      expect(group.procsFiles).toEqual([join(leaf, 'cgroup.procs')]);
      for (const [file, value] of Object.entries(want)) expect([file, await readFile(join(leaf, file), 'utf8')]).toEqual([file, value]);
      // Controllers are handed down to every level above the leaf.
      for (const d of [dir, join(dir, 'orch-n1'), join(dir, 'orch-n1', 'podU')]) expect(await readFile(join(d, 'cgroup.subtree_control'), 'utf8')).toBe('+memory +cpu');
    });

    it('reads usage from cpu.stat, memory.current and memory.stat, OOM kills from memory.events', async () => {
      const driver = await V2Driver.create(dir, 'orch-n1');
      const group = await driver.ensure(['podU', 'main-c'], {});
      expect(await group.usage()).toBeUndefined(); // no counters yet
      const leaf = join(dir, 'orch-n1', 'podU', 'main-c');
      await writeFile(join(leaf, 'cpu.stat'), 'usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\nnr_periods 10\nnr_throttled 2\nthrottled_usec 3000\n');
      await writeFile(join(leaf, 'memory.current'), '10485760\n');
      await writeFile(join(leaf, 'memory.stat'), 'anon 4194304\nfile 6291456\nactive_file 4194304\ninactive_file 2097152\n');
      await writeFile(join(leaf, 'memory.events'), 'low 0\nhigh 0\nmax 7\noom 2\noom_kill 2\noom_group_kill 0\n');
      await writeFile(join(leaf, 'cgroup.procs'), '101\n102\n');
      expect(await group.usage()).toEqual({ cpuNanos: 1_500_000_000, memoryUsageBytes: 10_485_760, workingSetBytes: 8_388_608, rssBytes: 4_194_304 });
      expect(await group.oomKills()).toBe(2);
      expect(await group.pids()).toEqual([101, 102]);
    });
  });

  describe('v1 on fixture files', () => {
    it('writes limits per hierarchy and reads usage and OOM kills', async () => {
      const dir = await tempDir('cgroup-v1-');
      try {
        const [mem, cpu, acct] = ['memory', 'cpu', 'cpuacct'].map((c) => join(dir, c, 'orch-n1'));
        for (const d of [mem, cpu, acct]) await mkdir(d, { recursive: true });
        const group = await new V1Driver(mem, cpu, acct).ensure(['podU', 'main-c'], { cpuLimitMillis: 200, cpuRequestMillis: 200, memoryLimitBytes: 64 << 20 });
        const at = (base: string, f: string) => readFile(join(base, 'podU', 'main-c', f), 'utf8');
        expect([await at(mem, 'memory.limit_in_bytes'), await at(cpu, 'cpu.cfs_quota_us'), await at(cpu, 'cpu.cfs_period_us'), await at(cpu, 'cpu.shares')]).toEqual([String(64 << 20), '20000', '100000', '204']);
        await writeFile(join(acct, 'podU', 'main-c', 'cpuacct.usage'), '2500000000\n');
        await writeFile(join(mem, 'podU', 'main-c', 'memory.usage_in_bytes'), '10485760\n');
        await writeFile(join(mem, 'podU', 'main-c', 'memory.stat'), 'rss 1048576\ntotal_rss 4194304\ntotal_inactive_file 2097152\n');
        await writeFile(join(mem, 'podU', 'main-c', 'memory.oom_control'), 'oom_kill_disable 0\nunder_oom 0\noom_kill 1\n');
        expect(await group.usage()).toEqual({ cpuNanos: 2_500_000_000, memoryUsageBytes: 10_485_760, workingSetBytes: 8_388_608, rssBytes: 4_194_304 });
        expect(await group.oomKills()).toBe(1);
      } finally {
        await removeDir(dir);
      }
    });
  });
});
