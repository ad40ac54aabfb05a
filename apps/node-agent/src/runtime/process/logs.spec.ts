import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { removeDir, tempDir } from '@orch/testing';
import { ContainerLogWriter, formatNanos, instanceLogFiles, nanoTimestamp, parseLogLine, pruneInstanceLogs, streamLog, type LogQuery } from './logs';

let dir: string;
beforeEach(async () => {
  dir = await tempDir('logs-');
});
afterEach(() => removeDir(dir));

async function collect(files: string[], writer: ContainerLogWriter | undefined, q: LogQuery, signal = new AbortController().signal): Promise<string> {
  let out = '';
  await streamLog(files, writer, q, async (t) => void (out += t), signal);
  return out;
}

describe('log lines', () => {
  it('formats CRI lines and parses them back', () => {
    expect(formatNanos(1_700_000_000_123_456_789n)).toBe('2023-11-14T22:13:20.123456789Z');
    const a = nanoTimestamp();
    const b = nanoTimestamp();
    expect(a < b).toBe(true);
    expect(parseLogLine('2023-11-14T22:13:20.123456789Z stderr P half a line')).toEqual({ time: '2023-11-14T22:13:20.123456789Z', stream: 'stderr', partial: true, content: 'half a line' });
    expect(parseLogLine('garbage')).toBeUndefined();
  });

  it('writes complete lines at once, holds partial ones, splits long ones', async () => {
    const w = new ContainerLogWriter(join(dir, '0.log'), { maxBytes: 1 << 20, maxFiles: 2 });
    w.write('stdout', 'one\ntw');
    w.write('stderr', 'err\n');
    w.write('stdout', 'o\n\r\nlast');
    w.write('stdout', 'x'.repeat(20_000));
    w.close();
    const lines = (await readFile(join(dir, '0.log'), 'utf8')).trimEnd().split('\n').map((l) => parseLogLine(l)!);
    expect(lines.map((l) => [l.stream, l.partial ? 'P' : 'F', l.content.length > 20 ? `${l.content.length} chars` : l.content])).toEqual([
      ['stdout', 'F', 'one'],
      ['stderr', 'F', 'err'],
      ['stdout', 'F', 'two'],
      ['stdout', 'F', '\r'],
      ['stdout', 'P', '16384 chars'],
      ['stdout', 'P', '3620 chars'],
    ]);
  });
});

describe('streamLog', () => {
  async function written(): Promise<{ files: string[]; times: string[] }> {
    const w = new ContainerLogWriter(join(dir, '3.log'), { maxBytes: 1 << 20, maxFiles: 2 });
    for (let i = 1; i <= 5; i++) w.write('stdout', `line ${i}\n`);
    w.close();
    const times = (await readFile(join(dir, '3.log'), 'utf8')).trimEnd().split('\n').map((l) => parseLogLine(l)!.time);
    return { files: await instanceLogFiles(dir, 3), times };
  }

  it.each<{ name: string; q: (times: string[]) => LogQuery; want: (times: string[]) => string }>([
    { name: 'everything', q: () => ({}), want: () => 'line 1\nline 2\nline 3\nline 4\nline 5\n' },
    { name: 'tailLines', q: () => ({ tailLines: 2 }), want: () => 'line 4\nline 5\n' },
    { name: 'tailLines 0', q: () => ({ tailLines: 0 }), want: () => '' },
    { name: 'since', q: (t) => ({ since: t[3] }), want: () => 'line 4\nline 5\n' },
    { name: 'since with tail', q: (t) => ({ since: t[1], tailLines: 10 }), want: () => 'line 2\nline 3\nline 4\nline 5\n' },
    { name: 'timestamps', q: () => ({ tailLines: 1, timestamps: true }), want: (t) => `${t[4]} line 5\n` },
    { name: 'limitBytes', q: () => ({ limitBytes: 10 }), want: () => 'line 1\nlin' },
  ])('$name', async ({ q, want }) => {
    const { files, times } = await written();
    expect(await collect(files, undefined, q(times))).toBe(want(times));
  });

  it('follows a live writer until it closes, without losing or repeating lines', async () => {
    const w = new ContainerLogWriter(join(dir, '0.log'), { maxBytes: 1 << 20, maxFiles: 2 });
    w.write('stdout', 'before\n');
    const files = await instanceLogFiles(dir, 0);
    const done = collect(files, w, { follow: true });
    w.write('stdout', 'during\n');
    setTimeout(() => {
      w.write('stdout', 'after\n');
      w.close();
    }, 20);
    expect(await done).toBe('before\nduring\nafter\n');
  });

  it('stops following when aborted', async () => {
    const w = new ContainerLogWriter(join(dir, '0.log'), { maxBytes: 1 << 20, maxFiles: 2 });
    w.write('stdout', 'x\n');
    const ac = new AbortController();
    const done = collect(await instanceLogFiles(dir, 0), w, { follow: true }, ac.signal);
    setTimeout(() => ac.abort(), 20);
    expect(await done).toBe('x\n');
    w.close();
  });
});

describe('rotation and retention', () => {
  it('rotates past maxBytes, keeps maxFiles files, reads them in order', async () => {
    const w = new ContainerLogWriter(join(dir, '0.log'), { maxBytes: 200, maxFiles: 3 });
    for (let i = 0; i < 40; i++) w.write('stdout', `message number ${String(i).padStart(2, '0')}\n`);
    w.close();
    const files = await instanceLogFiles(dir, 0);
    expect(files.length).toBe(3);
    expect(files.at(-1)).toBe(join(dir, '0.log'));
    const out = (await collect(files, undefined, {})).trimEnd().split('\n');
    expect(out.at(-1)).toBe('message number 39');
    const numbers = out.map((l) => Number(l.slice(-2)));
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
  });

  it('prunes instances older than the previous one', async () => {
    for (const n of [0, 1, 2, 3]) new ContainerLogWriter(join(dir, `${n}.log`), { maxBytes: 100, maxFiles: 1 }).close();
    await pruneInstanceLogs(dir, 2);
    expect((await readdir(dir)).sort()).toEqual(['2.log', '3.log']);
  });
});
