import { PassThrough } from 'node:stream';
import { StreamRequestError, exitStatusJson, parseStreamOptions, serveStreams, type ExitStatus } from './remote-command';

describe('remote command protocol', () => {
  it.each([
    { name: 'API names', query: 'stdin=true&stdout=true&stderr=true', want: { stdin: true, stdout: true, stderr: true, tty: false } },
    { name: 'node API names', query: 'input=1&output=1&error=1', want: { stdin: true, stdout: true, stderr: true, tty: false } },
    { name: 'a terminal has no separate stderr', query: 'stdout=true&stderr=true&tty=true', want: { stdin: false, stdout: true, stderr: false, tty: true } },
    { name: 'false is false', query: 'stdin=false&stdout=1', want: { stdin: false, stdout: true, stderr: false, tty: false } },
  ])('stream options from $name', ({ query, want }) => {
    expect(parseStreamOptions(new URLSearchParams(query))).toEqual(want);
  });

  it('needs at least one stream', () => {
    expect(() => parseStreamOptions(new URLSearchParams('tty=true'))).toThrow(StreamRequestError);
  });

  it.each([
    { name: 'success', status: { exitCode: 0 }, want: { metadata: {}, status: 'Success' } },
    {
      name: 'non-zero exit code',
      status: { exitCode: 3 },
      want: {
        metadata: {},
        status: 'Failure',
        message: 'command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3',
        reason: 'NonZeroExitCode',
        details: { causes: [{ reason: 'ExitCode', message: '3' }] },
      },
    },
    { name: 'failure to run', status: { error: 'exec: "x": executable file not found in $PATH' }, want: { metadata: {}, status: 'Failure', message: 'exec: "x": executable file not found in $PATH', reason: 'InternalError', code: 500 } },
  ])('error stream status: $name', ({ status, want }) => {
    expect(JSON.parse(exitStatusJson(status, 'command [sh -c exit 3]'))).toEqual(want);
  });

  describe('serveStreams', () => {
    afterEach(() => jest.useRealTimers());

    /** A session whose process output never ends (its pipe held open) and whose client records the final status. */
    function session() {
      const finished: ExitStatus[] = [];
      let aborted = false;
      const client = { stdout: new PassThrough(), onResize: () => undefined, onGone: () => undefined, finish: async (s: ExitStatus) => void finished.push(s) };
      const target = { stdout: new PassThrough(), done: new Promise<ExitStatus>(() => undefined), abort: () => void (aborted = true) };
      return { client, target, finished, aborted: () => aborted };
    }

    it('sends the idle reason at once, without waiting for output that will not come (the connection is destroyed 2 s after)', async () => {
      jest.useFakeTimers();
      const s = session();
      const served = serveStreams(s.client, s.target, 'command [sleep 1d]', Promise.resolve('the connection was idle for 7s'));
      await jest.advanceTimersByTimeAsync(0);
      expect(s.aborted()).toBe(true);
      expect(s.finished).toEqual([{ error: 'the connection was idle for 7s' }]);
      await served;
    });

    it('waits up to 2 s for output after the process exits', async () => {
      jest.useFakeTimers();
      const s = session();
      const exited = { ...s.target, done: Promise.resolve<ExitStatus>({ exitCode: 0 }) };
      const served = serveStreams(s.client, exited, 'command [true]');
      await jest.advanceTimersByTimeAsync(1999);
      expect(s.finished).toEqual([]);
      await jest.advanceTimersByTimeAsync(1);
      expect(s.finished).toEqual([{ exitCode: 0 }]);
      await served;
    });
  });
});
