import { createServer, Server } from 'node:net';
import { freePort } from './ports';
import { startProcess, tcpProbe } from './process';

const node = process.execPath;
const never = async () => false;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startProcess', () => {
  // Failures carry the command line and the captured output.
  it.each([
    {
      name: 'exits before ready',
      input: { cmd: node, args: ['-e', 'console.log("boom"); process.exit(3)'], readyProbe: never },
      want: /exited before it was ready \(code 3[\s\S]*boom/,
    },
    {
      name: 'not ready in time',
      input: { cmd: node, args: ['-e', 'console.error("waiting"); setInterval(() => {}, 1000)'], readyProbe: never, timeoutMs: 3000 },
      want: /not ready after 3000 ms[\s\S]*waiting/,
    },
    { name: 'missing binary', input: { cmd: '/nonexistent/orch-binary' }, want: /cannot start \/nonexistent\/orch-binary/ },
  ])('fails: $name', async ({ input, want }) => {
    await expect(startProcess(input)).rejects.toThrow(want);
  });

  it('waits for the probe, then stop() ends the process with SIGTERM', async () => {
    const port = await freePort();
    const proc = await startProcess({
      cmd: node,
      args: ['-e', `setTimeout(() => require('net').createServer().listen(${port}, '127.0.0.1'), 200)`],
      readyProbe: tcpProbe(port),
    });
    expect(await tcpProbe(port)()).toBe(true);
    expect(await proc.stop()).toEqual({ code: null, signal: 'SIGTERM' });
    expect(isAlive(proc.pid)).toBe(false);
  });

  it('stop() escalates to SIGKILL when SIGTERM is ignored', async () => {
    let up = false;
    const proc = await startProcess({
      cmd: node,
      args: ['-e', 'process.on("SIGTERM", () => console.log("ignored")); console.log("up"); setInterval(() => {}, 1000)'],
      onLine: (line) => (up ||= line === 'up'),
      readyProbe: async () => up,
      stopGraceMs: 200,
    });
    expect(await proc.stop()).toEqual({ code: null, signal: 'SIGKILL' });
    expect(proc.output()).toContain('ignored');
    expect(isAlive(proc.pid)).toBe(false);
  });

  it('kill9() kills at once and stop() afterwards is a no-op', async () => {
    const proc = await startProcess({ cmd: node, args: ['-e', 'setInterval(() => {}, 1000)'] });
    expect(await proc.kill9()).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await proc.stop()).toEqual({ code: null, signal: 'SIGKILL' });
    expect(isAlive(proc.pid)).toBe(false);
  });

  it('reports every line in order and keeps only the tail in output()', async () => {
    const lines: string[] = [];
    const proc = await startProcess({
      cmd: node,
      args: ['-e', 'for (let i = 0; i < 1000; i++) console.log("line " + i); console.error("last")'],
      onLine: (line, stream) => lines.push(`${stream}:${line}`),
      outputLimit: 100,
    });
    expect(await proc.exited).toEqual({ code: 0, signal: null });
    expect(lines.filter((l) => l.startsWith('stdout:'))).toEqual(Array.from({ length: 1000 }, (_, i) => `stdout:line ${i}`));
    expect(lines).toContain('stderr:last');
    expect(proc.output()).toHaveLength(100);
    expect(proc.output()).toContain('line 999\n');
  });
});

describe('tcpProbe', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((socket) => socket.on('data', (d) => socket.write(String(d) === 'PING\r\n' ? '+PONG\r\n' : '-ERR\r\n')));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it.each([
    { name: 'connect only', input: {}, want: true },
    { name: 'expected reply', input: { send: 'PING\r\n', expect: '+PONG' }, want: true },
    { name: 'other reply', input: { send: 'HELLO\r\n', expect: '+PONG' }, want: false },
  ])('$name → $want', async ({ input, want }) => {
    expect(await tcpProbe(port, input)()).toBe(want);
  });

  it('is false when nothing listens', async () => {
    expect(await tcpProbe(await freePort())()).toBe(false);
  });
});
