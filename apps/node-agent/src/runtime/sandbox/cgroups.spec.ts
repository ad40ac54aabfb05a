import { cgroupMounts, cpuShares, ownCgroups, parseKeyValues } from './cgroups';

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
});
