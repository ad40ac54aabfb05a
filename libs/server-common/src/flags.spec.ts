import { CliIo, FlagDefs, flagUsages, formatDuration, parseDuration, parseFlags, parseFlagsOrExit, usage } from './flags';

const defs = {
  'secure-port': { type: 'int', default: 10259, description: 'The port on which to serve HTTPS.' },
  'bind-address': { type: 'string', default: '0.0.0.0', description: 'The IP address on which to listen.' },
  kubeconfig: { type: 'string', description: 'Path to a kubeconfig file.' },
  'leader-elect': { type: 'bool', default: true, description: 'Start a leader election client.' },
  profiling: { type: 'bool', description: 'Enable profiling.' },
  'lease-duration': { type: 'duration', default: 15_000, description: 'Lease duration.' },
  qps: { type: 'float', default: 50, description: 'QPS to the gateway.' },
  controllers: { type: 'stringSlice', default: ['*'], description: 'Controllers to enable.' },
  'token-file': { type: 'stringArray', description: 'Token files.' },
  v: { type: 'int', short: 'v', description: 'Log level verbosity.' },
  'old-flag': { type: 'string', deprecated: 'use --kubeconfig instead', description: 'Old.' },
  secret: { type: 'bool', hidden: true, description: 'Hidden.' },
} satisfies FlagDefs;

type Values = ReturnType<typeof parseFlags<typeof defs>>['values'];

const defaults: Values = {
  'secure-port': 10259,
  'bind-address': '0.0.0.0',
  kubeconfig: '',
  'leader-elect': true,
  profiling: false,
  'lease-duration': 15_000,
  qps: 50,
  controllers: ['*'],
  'token-file': [],
  v: 0,
  'old-flag': '',
  secret: false,
};

describe('parseFlags', () => {
  it.each<{ name: string; argv: string[]; want: Partial<Values>; args?: string[]; help?: boolean }>([
    { name: 'no flags gives defaults', argv: [], want: {} },
    { name: '--name=value', argv: ['--secure-port=6443'], want: { 'secure-port': 6443 } },
    { name: '--name value', argv: ['--kubeconfig', '/etc/orch/admin.conf'], want: { kubeconfig: '/etc/orch/admin.conf' } },
    { name: 'value may start with a dash', argv: ['--kubeconfig', '-'], want: { kubeconfig: '-' } },
    { name: 'empty string value', argv: ['--bind-address='], want: { 'bind-address': '' } },
    { name: 'value with =', argv: ['--kubeconfig=a=b'], want: { kubeconfig: 'a=b' } },
    { name: 'bool alone is true', argv: ['--profiling'], want: { profiling: true } },
    { name: 'bool =false', argv: ['--leader-elect=false'], want: { 'leader-elect': false } },
    { name: 'bool Go spellings', argv: ['--profiling=T', '--leader-elect=0'], want: { profiling: true, 'leader-elect': false } },
    { name: 'bool does not take the next argument', argv: ['--profiling', 'false'], want: { profiling: true }, args: ['false'] },
    { name: 'last one wins', argv: ['--secure-port=1', '--secure-port=2'], want: { 'secure-port': 2 } },
    { name: 'duration', argv: ['--lease-duration=1h30m'], want: { 'lease-duration': 5_400_000 } },
    { name: 'float', argv: ['--qps', '2.5'], want: { qps: 2.5 } },
    { name: 'negative int', argv: ['--v=-1'], want: { v: -1 } },
    { name: 'comma list replaces its default', argv: ['--controllers=a, b,c'], want: { controllers: ['a', 'b', 'c'] } },
    { name: 'comma list repeated appends', argv: ['--controllers=a', '--controllers', 'b,c'], want: { controllers: ['a', 'b', 'c'] } },
    { name: 'empty comma list', argv: ['--controllers='], want: { controllers: [] } },
    { name: 'repeated string array keeps commas', argv: ['--token-file=a,b', '--token-file', 'c'], want: { 'token-file': ['a,b', 'c'] } },
    { name: 'shorthand with space', argv: ['-v', '4'], want: { v: 4 } },
    { name: 'shorthand attached', argv: ['-v4'], want: { v: 4 } },
    { name: 'shorthand with =', argv: ['-v=3'], want: { v: 3 } },
    { name: 'positionals interleaved', argv: ['run', '--v=2', 'x'], want: { v: 2 }, args: ['run', 'x'] },
    { name: '-- ends flags', argv: ['--v=2', '--', '--v=3', '-x'], want: { v: 2 }, args: ['--v=3', '-x'] },
    { name: 'single dash is positional', argv: ['-'], want: {}, args: ['-'] },
    { name: '--help', argv: ['--help'], want: {}, help: true },
    { name: '-h', argv: ['--v=1', '-h'], want: { v: 1 }, help: true },
    { name: 'deprecated flag still parses', argv: ['--old-flag=x'], want: { 'old-flag': 'x' } },
  ])('$name', ({ argv, want, args = [], help = false }) => {
    const r = parseFlags(defs, argv);
    expect(r.values).toEqual({ ...defaults, ...want });
    expect(r.args).toEqual(args);
    expect(r.help).toBe(help);
    expect([...r.changed].sort()).toEqual(Object.keys(want).sort());
  });

  it.each([
    { name: 'unknown flag', argv: ['--nope=1'], want: 'unknown flag: --nope' },
    { name: 'unknown bare flag', argv: ['--nope'], want: 'unknown flag: --nope' },
    { name: 'prototype names are unknown', argv: ['--constructor=1'], want: 'unknown flag: --constructor' },
    { name: 'unknown shorthand', argv: ['-x'], want: "unknown shorthand flag: 'x' in -x" },
    { name: 'missing argument', argv: ['--secure-port'], want: 'flag needs an argument: --secure-port' },
    { name: 'missing shorthand argument', argv: ['-v'], want: "flag needs an argument: 'v' in -v" },
    { name: 'bad int', argv: ['--secure-port=abc'], want: 'invalid argument "abc" for "--secure-port" flag: not an integer' },
    { name: 'fractional int', argv: ['--secure-port=1.5'], want: 'invalid argument "1.5" for "--secure-port" flag: not an integer' },
    { name: 'bad bool', argv: ['--profiling=yes'], want: 'invalid argument "yes" for "--profiling" flag: not a boolean' },
    { name: 'bad float', argv: ['--qps='], want: 'invalid argument "" for "--qps" flag: not a number' },
    { name: 'duration without unit', argv: ['--lease-duration=30'], want: 'invalid argument "30" for "--lease-duration" flag: time: missing unit in duration "30"' },
  ])('error: $name', ({ argv, want }) => {
    expect(() => parseFlags(defs, argv)).toThrow(want);
  });

  it('reports deprecated flags', () => {
    const warnings: string[] = [];
    parseFlags(defs, ['--old-flag=x'], { onDeprecated: (w) => warnings.push(w) });
    expect(warnings).toEqual(['Flag --old-flag has been deprecated, use --kubeconfig instead']);
  });
});

describe('durations', () => {
  it.each([
    { input: '0', want: 0 },
    { input: '500ms', want: 500 },
    { input: '30s', want: 30_000 },
    { input: '5m', want: 300_000 },
    { input: '1h30m', want: 5_400_000 },
    { input: '1.5h', want: 5_400_000 },
    { input: '2h45m10s', want: 9_910_000 },
    { input: '-30s', want: -30_000 },
    { input: '+1s', want: 1000 },
    { input: '.5s', want: 500 },
    { input: '1500us', want: 1.5 },
    { input: '1500µs', want: 1.5 },
    { input: '2000000ns', want: 2 },
  ])('parseDuration($input) = $want', ({ input, want }) => {
    expect(parseDuration(input)).toBeCloseTo(want, 9);
  });

  it.each([
    { input: '', want: 'time: invalid duration ""' },
    { input: '30', want: 'time: missing unit in duration "30"' },
    { input: '1d', want: 'time: unknown unit "d" in duration "1d"' },
    { input: 'abc', want: 'time: invalid duration "abc"' },
    { input: '1h-5m', want: 'time: unknown unit "h-" in duration "1h-5m"' },
    { input: '-', want: 'time: invalid duration "-"' },
  ])('parseDuration($input) throws', ({ input, want }) => {
    expect(() => parseDuration(input)).toThrow(want);
  });

  it.each([
    { ms: 0, want: '0s' },
    { ms: 500, want: '500ms' },
    { ms: 1.5, want: '1.5ms' },
    { ms: 0.0015, want: '1.5µs' },
    { ms: 0.000001, want: '1ns' },
    { ms: 1500, want: '1.5s' },
    { ms: 60_000, want: '1m0s' },
    { ms: 5_400_000, want: '1h30m0s' },
    { ms: 7_200_000, want: '2h0m0s' },
    { ms: 3_601_000, want: '1h0m1s' },
    { ms: -30_000, want: '-30s' },
  ])('formatDuration($ms) = $want', ({ ms, want }) => {
    expect(formatDuration(ms)).toBe(want);
  });
});

describe('help', () => {
  it('lists flags sorted, aligned, with types and non-zero defaults, pflag style', () => {
    expect(flagUsages(defs)).toBe(
      [
        '      --bind-address string       The IP address on which to listen. (default "0.0.0.0")',
        '      --controllers strings       Controllers to enable. (default [*])',
        '      --kubeconfig string         Path to a kubeconfig file.',
        '      --leader-elect              Start a leader election client. (default true)',
        '      --lease-duration duration   Lease duration. (default 15s)',
        '      --profiling                 Enable profiling.',
        '      --qps float                 QPS to the gateway. (default 50)',
        '      --secure-port int           The port on which to serve HTTPS. (default 10259)',
        '      --token-file stringArray    Token files.',
        '  -v, --v int                     Log level verbosity.',
        '',
      ].join('\n'),
    );
  });

  it('usage has description, usage line and flags', () => {
    const text = usage({ name: 'orch-scheduler', description: 'The orch scheduler.' }, { port: { type: 'int', description: 'Port.' } });
    expect(text).toBe('The orch scheduler.\n\nUsage:\n  orch-scheduler [flags]\n\nFlags:\n      --port int   Port.\n');
  });
});

describe('parseFlagsOrExit', () => {
  class Exit extends Error {
    constructor(readonly code: number) {
      super(`exit ${code}`);
    }
  }
  const cmd = { name: 'orch-proxy', description: 'The orch network proxy.' };
  const small = { port: { type: 'int', default: 10256, description: 'Health port.' }, old: { type: 'bool', deprecated: 'it does nothing', description: 'Old.' } } satisfies FlagDefs;

  it.each([
    { name: 'valid flags return values', argv: ['--port=1', 'x'], want: { out: '', err: '', code: undefined, values: { port: 1, old: false }, args: ['x'] } },
    { name: '--help prints usage and exits 0', argv: ['--help'], want: { out: usage(cmd, small), err: '', code: 0 } },
    { name: 'bad flag exits 2 with a hint', argv: ['--nope'], want: { out: '', err: "Error: unknown flag: --nope\nRun 'orch-proxy --help' for usage.\n", code: 2 } },
    { name: 'deprecated flag warns', argv: ['--old'], want: { out: '', err: 'Flag --old has been deprecated, it does nothing\n', code: undefined, values: { port: 10256, old: true }, args: [] } },
  ])('$name', ({ argv, want }) => {
    let out = '';
    let err = '';
    const io: CliIo = {
      stdout: (t) => (out += t),
      stderr: (t) => (err += t),
      exit: (code) => {
        throw new Exit(code);
      },
    };
    let code: number | undefined;
    let got: { values: unknown; args: string[] } | undefined;
    try {
      const r = parseFlagsOrExit(cmd, small, argv, io);
      got = { values: r.values, args: r.args };
    } catch (e) {
      if (!(e instanceof Exit)) throw e;
      code = e.code;
    }
    expect({ out, err, code, ...got }).toEqual(want);
  });
});
