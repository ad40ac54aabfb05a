import { spawn, spawnSync } from 'node:child_process';

/** What a kubectl run printed and how it ended (`code` null when it was killed). */
export interface KubectlRun {
  code: number | null;
  out: string;
  err: string;
}

/** Where a suite's kubectl runs point: its kubeconfig and a discovery cache of its own. */
export interface KubectlTarget {
  kubeconfig: string;
  cacheDir: string;
  /** Kills a run that takes longer (default 30 s). */
  timeoutMs?: number;
}

const kubectlArgs = (t: KubectlTarget, args: string[]) => ['--kubeconfig', t.kubeconfig, '--cache-dir', t.cacheDir, ...args];

/** Runs kubectl and waits for it; this process's event loop is blocked meanwhile. */
export function kubectlSync(t: KubectlTarget, args: string[]): KubectlRun {
  const r = spawnSync('kubectl', kubectlArgs(t, args), { encoding: 'utf8', timeout: t.timeoutMs ?? 30_000 });
  return { code: r.status, out: r.stdout ?? '', err: r.stderr ?? '' };
}

/**
 * Runs kubectl without blocking this process (a webhook or extension server in the test keeps
 * answering meanwhile), with `stdin` as its input; rejects only if kubectl cannot be started.
 */
export function kubectlAsync(t: KubectlTarget, args: string[], stdin = ''): Promise<KubectlRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', kubectlArgs(t, args), { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), t.timeoutMs ?? 30_000);
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
    child.stdin.end(stdin);
  });
}
