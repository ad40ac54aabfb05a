import { spawn } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import { connect } from 'node:net';
import type { coreV1 } from '@orch/api';
import type { Probe } from '../../api/types';

/** Where and how a probe runs: the container's address, environment and working dir. */
export interface ProbeTarget {
  podIP: string;
  env: Record<string, string>;
  cwd: string;
  ports: coreV1.ContainerPort[];
}

export interface ProbeResult {
  ok: boolean;
  message?: string;
}

export type ProbeKind = 'liveness' | 'readiness' | 'startup';

const MAX_OUTPUT = 10 * 1024;

/** Resolves a probe port: a number, or the name of one of the container's ports. */
export function resolvePort(port: number | string, ports: coreV1.ContainerPort[]): number {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  const found = ports.find((p) => p.name === port);
  if (!found) throw new Error(`port ${JSON.stringify(port)} is not a port name of the container`);
  return found.containerPort;
}

/** Runs a probe once (exec, httpGet or tcpSocket) within its timeout. Never throws. */
export async function runProbe(probe: Probe, target: ProbeTarget): Promise<ProbeResult> {
  const timeoutMs = Math.max(1, probe.timeoutSeconds ?? 1) * 1000;
  try {
    if (probe.exec) return await execProbe(probe.exec.command ?? [], target, timeoutMs);
    if (probe.httpGet) return await httpProbe(probe, target, timeoutMs);
    if (probe.tcpSocket) return await tcpProbe(probe.tcpSocket.host || target.podIP, resolvePort(probe.tcpSocket.port, target.ports), timeoutMs);
    return { ok: false, message: 'probe has no handler (exec, httpGet or tcpSocket)' };
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
}

function execProbe(command: string[], target: ProbeTarget, timeoutMs: number): Promise<ProbeResult> {
  if (command.length === 0) return Promise.resolve({ ok: false, message: 'exec probe has no command' });
  return new Promise((resolve) => {
    let output = '';
    let timedOut = false;
    const child = spawn(command[0], command.slice(1), { cwd: target.cwd, env: target.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const collect = (d: Buffer) => {
      if (output.length < MAX_OUTPUT) output += d.toString().slice(0, MAX_OUTPUT - output.length);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve({ ok: false, message: `exec ${command[0]}: ${err.message}` });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      if (timedOut) resolve({ ok: false, message: `command ${JSON.stringify(command)} timed out after ${timeoutMs / 1000}s` });
      else resolve(code === 0 ? { ok: true } : { ok: false, message: output.trim() || `command exited with code ${code}` });
    });
  });
}

function httpProbe(probe: Probe, target: ProbeTarget, timeoutMs: number): Promise<ProbeResult> {
  const g = probe.httpGet!;
  const port = resolvePort(g.port, target.ports);
  const host = g.host || target.podIP;
  const scheme = g.scheme === 'HTTPS' ? 'https' : 'http';
  const path = g.path ? (g.path.startsWith('/') ? g.path : `/${g.path}`) : '/';
  const headers: Record<string, string> = { 'User-Agent': 'orch-probe/1.32', Accept: '*/*' };
  for (const h of g.httpHeaders ?? []) headers[h.name] = h.value;
  const url = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}${path}`;
  return new Promise((resolve) => {
    const transport = scheme === 'https' ? https : http;
    const req = transport.request(url, { method: 'GET', headers, timeout: timeoutMs, rejectUnauthorized: false, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        if (body.length < MAX_OUTPUT) body += d;
      });
      res.on('end', () => {
        const code = res.statusCode ?? 0;
        resolve(code >= 200 && code < 400 ? { ok: true } : { ok: false, message: `HTTP probe failed with statuscode: ${code}` });
      });
      res.on('error', (err) => resolve({ ok: false, message: err.message }));
    });
    req.on('timeout', () => req.destroy(new Error(`Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)));
    req.on('error', (err) => resolve({ ok: false, message: err.message }));
    req.end();
  });
}

function tcpProbe(host: string, port: number, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (r: ProbeResult) => {
      socket.destroy();
      resolve(r);
    };
    socket.setTimeout(timeoutMs, () => done({ ok: false, message: `dial tcp ${host}:${port}: i/o timeout` }));
    socket.once('connect', () => done({ ok: true }));
    socket.once('error', (err) => done({ ok: false, message: `dial tcp ${host}:${port}: ${err.message}` }));
  });
}

/**
 * Runs one probe of a container periodically (upstream prober worker): waits
 * `initialDelaySeconds`, then probes every `periodSeconds`; the result flips to success after
 * `successThreshold` consecutive successes and to failure after `failureThreshold` consecutive
 * failures, and every flip is reported. Initial result: liveness success, readiness and
 * startup failure (not yet succeeded).
 */
export class ProbeWorker {
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private successes = 0;
  private failures = 0;
  result: boolean;
  lastMessage?: string;

  constructor(
    readonly kind: ProbeKind,
    private readonly probe: Probe,
    private readonly target: ProbeTarget,
    private readonly onFlip: (kind: ProbeKind, ok: boolean, message?: string) => void,
    private readonly run: (probe: Probe, target: ProbeTarget) => Promise<ProbeResult> = runProbe,
  ) {
    this.result = kind === 'liveness';
  }

  start(): void {
    this.schedule((this.probe.initialDelaySeconds ?? 0) * 1000);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    const r = await this.run(this.probe, this.target);
    if (this.stopped) return;
    if (r.ok) {
      this.successes++;
      this.failures = 0;
    } else {
      this.failures++;
      this.successes = 0;
      this.lastMessage = r.message;
    }
    const successThreshold = this.kind === 'readiness' ? (this.probe.successThreshold ?? 1) : 1;
    const failureThreshold = this.probe.failureThreshold ?? 3;
    if (!this.result && this.successes >= successThreshold) {
      this.result = true;
      this.onFlip(this.kind, true);
    } else if (this.result && this.failures >= failureThreshold) {
      this.result = false;
      this.onFlip(this.kind, false, r.message);
    } else if (!this.result && this.kind !== 'readiness' && this.failures >= failureThreshold) {
      // A startup probe that keeps failing is reported once per threshold, like a liveness failure.
      this.failures = 0;
      this.onFlip(this.kind, false, r.message);
    }
    this.schedule((this.probe.periodSeconds ?? 10) * 1000);
  }
}
