import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureBinary, freePort, removeDir, tempDir } from '@orch/testing';
import { POD_CONTROLLERS, startGateway, type GatewayProcess } from './support/gateway';
import { eventually, httpText, startNodeAgent, webPodManifest, type NodeAgentProcess } from './support/node-agent';

/**
 * Interactive pods with stock kubectl against a gateway and a node agent running the
 * `sandbox` runtime: exec (WebSocket and the SPDY fallback, with and without a terminal),
 * attach, cp both ways, port-forward, debug with an ephemeral container; and what the sandbox
 * promises: volumes at their mountPath, read-only mounts, a private process table, the pod's
 * hostname and hosts file, memory limits (OOMKilled) and CPU limits measured from the
 * kernel's accounting through /stats/summary.
 */
jest.setTimeout(120_000);

const NODE = 'e2e-interactive';
/** A user of the static token file, with only the permissions the RBAC test grants. */
const DEV_TOKEN = 'dev-token-0123456789abcdef';
const NODE_BIN = process.execPath;

interface Pod {
  status?: {
    phase?: string;
    podIP?: string;
    containerStatuses?: { name: string; restartCount: number; state: Record<string, unknown>; lastState: { terminated?: { exitCode: number; reason?: string } } }[];
    ephemeralContainerStatuses?: { name: string; state: Record<string, unknown> }[];
  };
}

const manifests = `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {key: value-from-configmap}
---
apiVersion: v1
kind: Pod
metadata: {name: shell}
spec:
  nodeName: ${NODE}
  terminationGracePeriodSeconds: 1
  volumes:
  - {name: cfg, configMap: {name: cfg}}
  - {name: data, emptyDir: {}}
  containers:
  - name: main
    image: busybox
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    volumeMounts:
    - {name: cfg, mountPath: /etc/config}
    - {name: data, mountPath: /data}
---
${webPodManifest(NODE)}---
apiVersion: v1
kind: Pod
metadata: {name: att}
spec:
  nodeName: ${NODE}
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    stdin: true
    stdinOnce: true
    command: ["sh", "-c", "i=0; while read line; do i=$((i+1)); echo \\"got $i: $line\\"; done; echo bye"]
---
apiVersion: v1
kind: Pod
metadata: {name: hog}
spec:
  nodeName: ${NODE}
  restartPolicy: OnFailure
  containers:
  - name: hog
    image: node
    command: ["${NODE_BIN}", "-e", "const a = []; setInterval(() => { for (let i = 0; i < 16; i++) a.push(Buffer.alloc(1 << 20, 1)); }, 10)"]
    resources: {limits: {memory: 64Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: spin}
spec:
  nodeName: ${NODE}
  terminationGracePeriodSeconds: 1
  containers:
  - name: spin
    image: busybox
    command: ["sh", "-c", "while :; do :; done"]
    resources: {limits: {cpu: 200m}}
`;

/** A pod with every API-content volume kind and two hostPath mounts of `hostDir` (one read-only). */
const volumeManifests = (hostDir: string) => `
apiVersion: v1
kind: Secret
metadata: {name: sec}
stringData: {password: s3cret-1}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: live}
data: {key: live-1}
---
apiVersion: v1
kind: Pod
metadata: {name: vols, labels: {app: vols}}
spec:
  nodeName: ${NODE}
  terminationGracePeriodSeconds: 1
  volumes:
  - {name: sec, secret: {secretName: sec, defaultMode: 256}}
  - name: info
    downwardAPI:
      items:
      - {path: name, fieldRef: {fieldPath: metadata.name}}
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
      - {path: cpu-limit, resourceFieldRef: {containerName: main, resource: limits.cpu, divisor: 1m}}
  - name: all
    projected:
      sources:
      - configMap: {name: live, items: [{key: key, path: cfg/key}]}
      - secret: {name: sec, items: [{key: password, path: sec/password}]}
      - downwardAPI: {items: [{path: ns, fieldRef: {fieldPath: metadata.namespace}}]}
  - {name: host, hostPath: {path: ${hostDir}, type: Directory}}
  - {name: made, hostPath: {path: ${hostDir}/made, type: DirectoryOrCreate}}
  containers:
  - name: main
    image: busybox
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    resources: {limits: {cpu: 500m}}
    volumeMounts:
    - {name: sec, mountPath: /etc/secret}
    - {name: info, mountPath: /etc/podinfo}
    - {name: all, mountPath: /etc/all}
    - {name: host, mountPath: /mnt/host}
    - {name: host, mountPath: /mnt/host-ro, readOnly: true}
    - {name: made, mountPath: /mnt/made}
`;

describe('interactive pods with kubectl (sandbox runtime)', () => {
  let gw: GatewayProcess;
  let agent: NodeAgentProcess;
  let dir: string;
  /** The host directory the `vols` pod mounts as hostPath. */
  let hostDir: string;

  const kubectl = (args: string[], opts: { input?: string; env?: Record<string, string>; timeoutMs?: number } = {}) =>
    spawnSync('kubectl', ['--kubeconfig', gw.kubeconfig, ...args], { encoding: 'utf8', input: opts.input, env: { ...process.env, ...opts.env }, timeout: opts.timeoutMs ?? 30_000 });
  const pod = async (name: string): Promise<Pod> => JSON.parse(kubectl(['get', 'pod', name, '-o', 'json']).stdout) as Pod;
  /** The agent's streaming sessions so far, by `"<endpoint> <transport> <protocol>"` (node_agent_streaming_sessions_total). */
  const sessions = (): Map<string, number> => {
    const metrics = kubectl(['get', '--raw', `/api/v1/nodes/${NODE}/proxy/metrics`]).stdout;
    const out = new Map<string, number>();
    for (const line of metrics.split('\n')) {
      const m = /^node_agent_streaming_sessions_total\{(.*)\} (\d+)$/.exec(line);
      if (!m) continue;
      const label = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(m[1])?.[1] ?? '';
      out.set(`${label('endpoint')} ${label('transport')} ${label('protocol')}`, Number(m[2]));
    }
    return out;
  };
  /** Sessions opened since `before`, by kind (kinds that did not change are left out). */
  const newSessions = (before: Map<string, number>): Record<string, number> =>
    Object.fromEntries([...sessions()].map(([k, n]): [string, number] => [k, n - (before.get(k) ?? 0)]).filter(([, n]) => n > 0));
  const running = (name: string) => eventually(`pod ${name} running`, async () => ((p) => (p.status?.phase === 'Running' && p.status.containerStatuses?.every((c) => 'running' in c.state) ? p : undefined))(await pod(name)), 30_000, 200);

  beforeAll(async () => {
    dir = await tempDir('interactive-');
    await writeFile(join(dir, 'tokens.csv'), `${DEV_TOKEN},dev,dev-uid,"dev-team"\n`);
    gw = await startGateway({ args: ['--authorization-mode=Node,RBAC', `--token-auth-file=${join(dir, 'tokens.csv')}`], controllers: POD_CONTROLLERS });
    // --sync-frequency: secret, config map and downward API volumes refresh every 2 s (upstream: 1 min).
    agent = await startNodeAgent({ name: NODE, kubeconfig: gw.kubeconfig, args: ['--runtime=sandbox', `--client-ca-file=${join(gw.dataDir, 'pki', 'ca.crt')}`, '--restart-backoff-initial=1s', '--pod-workers=4', '--sync-frequency=2s'] });
    await eventually('node registered', () => (kubectl(['get', 'node', NODE]).status === 0 ? true : undefined));
    hostDir = join(dir, 'host');
    await mkdir(hostDir);
    await writeFile(join(hostDir, 'seed'), 'from-the-host\n');
    const apply = kubectl(['apply', '-f', '-'], { input: `${manifests}---${volumeManifests(hostDir)}` });
    expect(apply.stderr).toBe('');
    await Promise.all(['shell', 'web', 'spin', 'vols'].map(running));
  });
  afterAll(async () => {
    await agent?.stop();
    await gw?.stop();
    if (dir) await removeDir(dir);
  });

  describe('exec', () => {
    it.each<{ name: string; env: Record<string, string>; session: string }>([
      { name: 'WebSocket (v5.channel.k8s.io)', env: {}, session: 'exec websocket v5.channel.k8s.io' },
      { name: 'SPDY/3.1 fallback', env: { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' }, session: 'exec spdy v5.channel.k8s.io' },
    ])('runs a command with separate stdout and stderr and passes its exit code over $name', ({ env, session }) => {
      const before = sessions();
      const ok = kubectl(['exec', 'shell', '--', 'sh', '-c', 'echo out; echo err >&2'], { env });
      expect([ok.status, ok.stdout, ok.stderr]).toEqual([0, 'out\n', 'err\n']);
      const three = kubectl(['exec', 'shell', '--', 'sh', '-c', 'exit 3'], { env });
      expect(three.status).toBe(3);
      expect(three.stderr).toContain('command terminated with exit code 3');
      const stdin = kubectl(['exec', '-i', 'shell', '--', 'sh', '-c', 'cat; echo lines=$(echo done)'], { env, input: 'line one\nline two\n' });
      expect([stdin.status, stdin.stdout]).toEqual([0, 'line one\nline two\nlines=done\n']);
      expect(newSessions(before)).toEqual({ [session]: 3 }); // the protocol named, not a fallback
    });

    it('refuses what cannot run with a message', () => {
      const missing = kubectl(['exec', 'shell', '--', 'no-such-command']);
      expect(missing.status).not.toBe(0);
      expect(missing.stderr).toContain('executable file not found in $PATH');
      const container = kubectl(['exec', 'shell', '-c', 'nope', '--', 'true']);
      expect(container.status).not.toBe(0);
      expect(container.stderr).toContain('container nope is not valid for pod shell');
    });

    it('ends the command of a client that went away (kubectl killed mid-exec)', async () => {
      const client = spawn('kubectl', ['--kubeconfig', gw.kubeconfig, 'exec', 'shell', '--', 'sh', '-c', 'echo started; exec sleep 301'], { stdio: ['ignore', 'pipe', 'pipe'] });
      await waitForLine(client, /started/);
      const sleeping = () => kubectl(['exec', 'shell', '--', 'ps', '-e', '-o', 'args=']).stdout.includes('sleep 301');
      expect(sleeping()).toBe(true);
      client.kill('SIGKILL');
      await eventually('the command of the killed client ended', () => (sleeping() ? undefined : true), 20_000, 250);
    });

    it('gives an interactive shell in a terminal of the client size (exec -it under tmux)', async () => {
      await ensureBinary('tmux', 'tmux');
      const out = await inTmux(`kubectl --kubeconfig ${gw.kubeconfig} exec -it shell -- sh`, /^[#$]\s*$/m, ['stty size; tty; echo $((6*7))', 'exit 7'], 'EXIT=');
      expect(out).toContain('40 120');
      expect(out).toMatch(/\/dev\/pts\/\d+/);
      expect(out).toContain('42');
      expect(out).toContain('EXIT=7');
    });
  });

  it('RBAC: a user who may get pods but not create pods/exec is refused kubectl exec, and allowed once granted', () => {
    const asDev = (args: string[]) =>
      spawnSync('kubectl', ['--server', gw.url, '--certificate-authority', join(gw.dataDir, 'pki', 'ca.crt'), '--token', DEV_TOKEN, ...args], { encoding: 'utf8', timeout: 30_000 });
    const grant = (name: string, rules: string) =>
      kubectl(['apply', '-f', '-'], {
        input: `apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: ${name}, namespace: default}\nrules: ${rules}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: ${name}, namespace: default}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: ${name}}\nsubjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: dev}]\n`,
      });
    expect(grant('pod-reader', '[{apiGroups: [""], resources: [pods], verbs: [get, list]}]').status).toBe(0);
    expect(asDev(['get', 'pod', 'shell', '-o', 'name']).stdout).toBe('pod/shell\n');
    const refused = asDev(['exec', 'shell', '--', 'echo', 'hi']);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/forbidden: User "dev" cannot (create|get) resource "pods\/exec" in API group "" in the namespace "default"/);
    expect(grant('pod-exec', '[{apiGroups: [""], resources: [pods/exec], verbs: [get, create]}]').status).toBe(0);
    // RBAC is read-your-writes on the replica that stored the binding: the next request sees it.
    const allowed = asDev(['exec', 'shell', '--', 'echo', 'hi']);
    expect([allowed.status, allowed.stdout, allowed.stderr]).toEqual([0, 'hi\n', '']);
  });

  it('attach: stdin reaches the container, its output comes back, stdinOnce ends it', async () => {
    await running('att');
    const r = kubectl(['attach', '-i', 'att'], { input: 'one\ntwo\n' });
    expect(r.stdout).toContain('got 1: one\ngot 2: two\nbye\n');
  });

  it('cp copies a directory into the pod and back out', async () => {
    const src = join(dir, 'src');
    await mkdir(join(src, 'sub'), { recursive: true });
    await writeFile(join(src, 'a.txt'), 'alpha\n');
    await writeFile(join(src, 'sub', 'b.bin'), Buffer.from([0, 1, 2, 255, 10]));
    const up = kubectl(['cp', src, 'shell:/data/copied']);
    expect([up.status, up.stderr]).toEqual([0, '']);
    expect(kubectl(['exec', 'shell', '--', 'find', '/data/copied', '-type', 'f']).stdout.split('\n').filter(Boolean).sort()).toEqual(['/data/copied/a.txt', '/data/copied/sub/b.bin']);
    const back = join(dir, 'back');
    const down = kubectl(['cp', 'shell:/data/copied', back]);
    expect(down.status).toBe(0);
    expect(await readFile(join(back, 'a.txt'), 'utf8')).toBe('alpha\n');
    expect(await readFile(join(back, 'sub', 'b.bin'))).toEqual(Buffer.from([0, 1, 2, 255, 10]));
    expect((await readdir(back)).sort()).toEqual(['a.txt', 'sub']);
  });

  describe('port-forward', () => {
    it.each<{ name: string; env: Record<string, string>; session: string }>([
      { name: 'WebSocket tunnel (SPDY/3.1+portforward.k8s.io)', env: {}, session: 'portForward websocket SPDY/3.1+portforward.k8s.io' },
      { name: 'SPDY/3.1 fallback', env: { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' }, session: 'portForward spdy portforward.k8s.io' },
    ])('serves 100 sequential and 10 concurrent HTTP requests over $name', async ({ env, session }) => {
      const before = sessions();
      const port = await freePort();
      const pf = spawn('kubectl', ['--kubeconfig', gw.kubeconfig, 'port-forward', 'pod/web', `${port}:8080`, '--address=127.0.0.1'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      try {
        await waitForLine(pf, /Forwarding from 127\.0\.0\.1:\d+ -> 8080/);
        for (let i = 0; i < 100; i++) expect(await httpText(`http://127.0.0.1:${port}/seq${i}`)).toBe(`hello /seq${i}`);
        const all = await Promise.all(Array.from({ length: 10 }, (_, i) => httpText(`http://127.0.0.1:${port}/par${i}`)));
        expect(all).toEqual(Array.from({ length: 10 }, (_, i) => `hello /par${i}`));
        expect(newSessions(before)).toEqual({ [session]: 1 }); // one connection, of the protocol named (kubectl falls back silently)
      } finally {
        pf.kill('SIGTERM');
      }
    });
  });

  it('debug: an ephemeral container in the running pod gives a shell (kubectl debug -it --image=busybox)', async () => {
    await ensureBinary('tmux', 'tmux');
    const out = await inTmux(`kubectl --kubeconfig ${gw.kubeconfig} debug -it pod/shell --image=busybox --profile=general --container=dbg`, /If you don't see a command prompt/, ['echo debug-$((20+22)); hostname; stty size', 'exit'], 'EXIT=');
    expect(out).toContain('debug-42');
    expect(out).toContain('40 120'); // the container's terminal took the client's size
    expect(out).toContain('EXIT=0');
    const p = await pod('shell');
    expect(p.status?.ephemeralContainerStatuses?.find((c) => c.name === 'dbg')?.state).toHaveProperty('terminated');
  });

  describe('sandbox', () => {
    const exec = (cmd: string) => kubectl(['exec', 'shell', '--', 'sh', '-c', cmd]);

    it('mounts volumes at their mountPath, config maps read-only, the host read-only', () => {
      expect(exec('cat /etc/config/key').stdout).toBe('value-from-configmap');
      const write = exec('echo x > /etc/config/new');
      expect(write.status).not.toBe(0);
      expect(write.stderr).toContain('Read-only file system');
      const host = exec('touch /usr/orch-was-here');
      expect(host.stderr).toContain('Read-only file system');
      expect(exec('echo y > /data/f && cat /data/f').stdout).toBe('y\n');
    });

    describe('secret, downwardAPI, projected and hostPath volumes', () => {
      const inVols = (cmd: string) => kubectl(['exec', 'vols', '--', 'sh', '-c', cmd]);

      it.each<{ path: string; content: string }>([
        { path: '/etc/secret/password', content: 's3cret-1' },
        { path: '/etc/podinfo/name', content: 'vols' },
        { path: '/etc/podinfo/labels', content: 'app="vols"' },
        { path: '/etc/podinfo/cpu-limit', content: '500' },
        { path: '/etc/all/cfg/key', content: 'live-1' },
        { path: '/etc/all/sec/password', content: 's3cret-1' },
        { path: '/etc/all/ns', content: 'default' },
        { path: '/mnt/host/seed', content: 'from-the-host\n' },
        { path: '/mnt/host-ro/seed', content: 'from-the-host\n' },
      ])('$path holds $content', ({ path, content }) => {
        const r = inVols(`cat ${path}`);
        expect([r.status, r.stdout, r.stderr]).toEqual([0, content, '']);
      });

      it('gives a secret file its defaultMode (0400)', () => {
        expect(inVols('stat -L -c %a /etc/secret/password').stdout).toBe('400\n');
      });

      it.each(['/etc/secret', '/etc/podinfo', '/etc/all', '/mnt/host-ro'])('refuses writes under %s (read-only)', (path) => {
        const w = inVols(`echo x > ${path}/new`);
        expect(w.status).not.toBe(0);
        expect(w.stderr).toContain('Read-only file system');
      });

      it('shares a writable hostPath with the host, and creates a DirectoryOrCreate one', async () => {
        const w = inVols('echo from-the-pod > /mnt/host/written && echo made > /mnt/made/f');
        expect([w.status, w.stderr]).toEqual([0, '']);
        expect(await readFile(join(hostDir, 'written'), 'utf8')).toBe('from-the-pod\n');
        expect(await readFile(join(hostDir, 'made', 'f'), 'utf8')).toBe('made\n');
      });

      it('propagates secret, config map and label changes by swapping the ..data symlink', async () => {
        const before = inVols('readlink /etc/secret/..data').stdout.trim();
        expect(before).toMatch(/^\.\.\d/);
        expect(inVols('readlink /etc/secret/password').stdout).toBe('..data/password\n');
        const updates = [
          kubectl(['apply', '-f', '-'], { input: kubectl(['create', 'secret', 'generic', 'sec', '--from-literal=password=s3cret-2', '--dry-run=client', '-o', 'yaml']).stdout }),
          kubectl(['patch', 'configmap', 'live', '-p', '{"data":{"key":"live-2"}}']),
          kubectl(['label', 'pod', 'vols', 'tier=backend']),
        ];
        for (const u of updates) expect({ status: u.status, stderr: u.stderr }).toMatchObject({ status: 0 });
        const want = 's3cret-2|s3cret-2|live-2|app="vols"\ntier="backend"';
        const seen = await eventually('volume contents updated in the running pod', () => ((out) => (out === want ? out : undefined))(inVols('echo "$(cat /etc/secret/password)|$(cat /etc/all/sec/password)|$(cat /etc/all/cfg/key)|$(cat /etc/podinfo/labels)"').stdout.trim()), 30_000, 500);
        expect(seen).toBe(want);
        const after = inVols('readlink /etc/secret/..data').stdout.trim();
        expect(after).toMatch(/^\.\.\d/);
        expect(after).not.toBe(before);
        expect(inVols('ls -a /etc/secret').stdout.split('\n').filter((e) => e.startsWith('..') && e !== '..').length).toBe(2); // ..data and the one payload directory
      });
    });

    it('has its own process table, hostname and hosts file', async () => {
      const ps = exec('ps -e -o pid=,comm=').stdout.trim().split('\n').map((l) => l.trim().split(/\s+/));
      expect(ps[0]).toEqual(['1', 'sh']);
      expect(ps.length).toBeLessThan(6); // sh, its sleep, the exec'd sh and ps
      expect(exec('hostname').stdout).toBe('shell\n');
      const ip = (await pod('shell')).status?.podIP;
      expect(exec('cat /etc/hosts').stdout).toContain(`${ip}\tshell\n`);
    });

    it('kills a container over its memory limit as OOMKilled (exit 137) and restarts it', async () => {
      const p = await eventually('hog OOMKilled', async () => ((x) => (x.status?.containerStatuses?.[0]?.lastState.terminated ? x : undefined))(await pod('hog')), 30_000, 200);
      expect(p.status?.containerStatuses?.[0]?.lastState.terminated).toMatchObject({ exitCode: 137, reason: 'OOMKilled' });
      expect(p.status?.containerStatuses?.[0]?.restartCount).toBeGreaterThanOrEqual(1);
    });

    it('holds a busy loop limited to 200m near 20% of a core (cgroup CPU time from /stats/summary)', async () => {
      const cpuOf = async () => {
        const s = JSON.parse(kubectl(['get', '--raw', `/api/v1/nodes/${NODE}/proxy/stats/summary`]).stdout) as { pods: { podRef: { name: string }; containers: { name: string; cpu?: { time: string; usageCoreNanoSeconds: number }; memory?: { workingSetBytes: number } }[] }[] };
        const c = s.pods.find((x) => x.podRef.name === 'spin')?.containers[0];
        if (!c?.cpu) throw new Error('no cpu figures for spin');
        return { at: Date.now(), nanos: c.cpu.usageCoreNanoSeconds, memory: c.memory?.workingSetBytes ?? 0 };
      };
      const first = await cpuOf();
      await new Promise((r) => setTimeout(r, 4000));
      const second = await cpuOf();
      const share = (second.nanos - first.nanos) / ((second.at - first.at) * 1e6);
      expect(share).toBeGreaterThan(0.1);
      expect(share).toBeLessThan(0.3);
      expect(second.memory).toBeGreaterThan(0);
    });
  });
});

/** Runs `command` in a 120x40 tmux window, types each line once `ready` shows, returns the screen once `until` shows up. */
async function inTmux(command: string, ready: RegExp, lines: string[], until: string): Promise<string> {
  const session = `orch-e2e-${process.pid}-${Math.floor(Math.random() * 1e6)}`;
  const tmux = (...args: string[]) => spawnSync('tmux', args, { encoding: 'utf8' });
  const started = tmux('new-session', '-d', '-s', session, '-x', '120', '-y', '40', `${command}; echo EXIT=$?; sleep 30`);
  if (started.status !== 0) throw new Error(`tmux: ${started.stderr}`);
  try {
    const screen = () => tmux('capture-pane', '-t', session, '-p', '-S', '-100').stdout;
    await eventually(`${ready} on the screen`, () => (ready.test(screen()) ? true : undefined), 30_000, 100);
    for (const line of lines) tmux('send-keys', '-t', session, line, 'Enter');
    return await eventually(`"${until}" on the screen`, () => ((s) => (s.includes(until) ? s : undefined))(screen()), 30_000, 100);
  } finally {
    tmux('kill-session', '-t', session);
  }
}

function waitForLine(child: ChildProcess, re: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      if (re.test(out)) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

