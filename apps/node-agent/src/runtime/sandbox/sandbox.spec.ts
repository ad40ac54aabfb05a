import { spawnSync } from 'node:child_process';
import type { Pod } from '../../api/types';
import { hostsFile, initScript, podHostname, shq, type InitPlan } from './sandbox';

const pod = (spec: Partial<Pod['spec']> = {}, name = 'web-1'): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' }, spec: { containers: [], ...spec } });

const plan: InitPlan = {
  rootfs: '/pods/u/containers/c/rootfs',
  scratch: '/pods/u/containers/c/scratch',
  hostEntries: [
    { name: 'usr', type: 'dir' },
    { name: 'bin', type: 'symlink', target: 'usr/bin' },
    { name: 'info.json', type: 'file' },
  ],
  masks: ['/var/lib/agent', "/it's quoted"],
  mounts: [
    { volume: 'cfg', source: '/pods/u/volumes/cfg', target: '/etc/config', readOnly: true, file: false },
    { volume: 'one', source: '/pods/u/volumes/cfg/key', target: '/etc/one.conf', readOnly: false, file: true },
  ],
  files: [{ source: '/pods/u/etc-hosts', target: '/etc/hosts' }],
  tmp: '/pods/u/containers/c/tmp',
  terminationLog: '/pods/u/containers/c/termination-log',
  workingDir: '/work dir',
};

describe('sandbox', () => {
  it.each([
    { s: 'plain', want: "'plain'" },
    { s: "it's", want: "'it'\\''s'" },
    { s: '$(rm -rf /)', want: "'$(rm -rf /)'" },
  ])('quotes $s for sh', ({ s, want }) => {
    expect(shq(s)).toBe(want);
    expect(spawnSync('sh', ['-c', `printf %s ${shq(s)}`], { encoding: 'utf8' }).stdout).toBe(s);
  });

  it('writes an init script sh accepts, in the order the view needs', () => {
    const script = initScript(plan);
    expect(spawnSync('sh', ['-n'], { input: script }).status).toBe(0);
    const order = [
      'mount --make-rprivate /',
      `mount --rbind '/usr' "$_orch_r"/'usr'`,
      `ln -s 'usr/bin' "$_orch_r"/'bin'`,
      `mount --bind '/info.json' "$_orch_r"/'info.json'`,
      'remount,bind,ro "$m"',
      'pivot_root',
      'mount -t proc',
      "orch-masked '/var/lib/agent'",
      "_orch_ensure d '/etc/config'",
      `mount --bind "$_orch_o"'/pods/u/volumes/cfg' '/etc/config'`,
      "mount -o remount,bind,ro '/etc/config'",
      "_orch_ensure f '/etc/one.conf'",
      "_orch_ensure f '/etc/hosts'",
      "_orch_ensure d '/work dir'",
      'umount -l "$_orch_o"',
      "cd '/work dir'",
      'exec "$@"',
    ];
    let at = -1;
    for (const step of order) {
      const i = script.indexOf(step, at + 1);
      expect([step, i > at]).toEqual([step, true]);
      at = i;
    }
    // A writable mount is not remounted read-only.
    expect(script).not.toContain("remount,bind,ro '/etc/one.conf'");
  });

  it.each([
    { name: 'pod name', pod: pod(), want: 'web-1' },
    { name: 'spec.hostname', pod: pod({ hostname: 'db' }), want: 'db' },
    { name: 'a long name cut to 63 characters', pod: pod({}, `${'a'.repeat(62)}-b`), want: 'a'.repeat(62) },
  ])('hostname from the $name', ({ pod: p, want }) => {
    expect(podHostname(p)).toBe(want);
  });

  it('hosts file names the pod at its address, with the subdomain and host aliases', () => {
    const text = hostsFile('web-1', '127.1.2.3', pod({ subdomain: 'svc', hostAliases: [{ ip: '10.0.0.1', hostnames: ['a', 'b'] }] }));
    expect(text).toContain('127.0.0.1\tlocalhost\n');
    expect(text).toContain('127.1.2.3\tweb-1.svc.ns.svc.cluster.local\tweb-1\n');
    expect(text).toContain('10.0.0.1\ta\tb\n');
  });
});
