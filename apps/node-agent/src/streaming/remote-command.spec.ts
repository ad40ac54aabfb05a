import { StreamRequestError, exitStatusJson, parseStreamOptions } from './remote-command';

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
});
