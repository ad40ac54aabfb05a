import { createLogger, LoggerOptions, redact } from './logger';

const at = new Date(2024, 0, 2, 15, 4, 5, 123);

function capture(opts: LoggerOptions = {}) {
  const lines: string[] = [];
  const log = createLogger('scheduler', { now: () => at, write: (l) => lines.push(l), ...opts });
  return { log, lines };
}

describe('createLogger', () => {
  it.each([
    { name: 'text line is klog-like', opts: {}, want: `I0102 15:04:05.123000 ${process.pid} scheduler] Scheduled pod pod="default/web" attempts=2 bound=true` },
    {
      name: 'json line',
      opts: { format: 'json' as const },
      want: JSON.stringify({ ts: at.getTime() / 1000, level: 'info', component: 'scheduler', msg: 'Scheduled pod', pod: 'default/web', attempts: 2, bound: true }),
    },
  ])('$name', ({ opts, want }) => {
    const { log, lines } = capture(opts);
    log.info('Scheduled pod', { pod: 'default/web', attempts: 2, bound: true });
    expect(lines).toEqual([want]);
  });

  it.each([
    { level: 'error' as const, want: ['E'] },
    { level: 'warn' as const, want: ['E', 'W'] },
    { level: 'info' as const, want: ['E', 'W', 'I'] },
    { level: 'debug' as const, want: ['E', 'W', 'I', 'D'] },
  ])('level $level prints $want', ({ level, want }) => {
    const { log, lines } = capture({ level });
    log.error('x');
    log.warn('x');
    log.info('x');
    log.debug('x');
    expect(lines.map((l) => l[0])).toEqual(want);
  });

  it.each([
    { env: { ORCH_LOG_LEVEL: 'DEBUG' }, want: 2 },
    { env: { ORCH_LOG_LEVEL: 'nonsense' }, want: 1 },
    { env: { ORCH_LOG_LEVEL: 'error' }, want: 0 },
  ])('reads ORCH_LOG_LEVEL=$env.ORCH_LOG_LEVEL', ({ env, want }) => {
    const saved = process.env.ORCH_LOG_LEVEL;
    process.env.ORCH_LOG_LEVEL = env.ORCH_LOG_LEVEL;
    try {
      const { log, lines } = capture();
      log.info('x');
      log.debug('x');
      expect(lines).toHaveLength(want);
    } finally {
      if (saved === undefined) delete process.env.ORCH_LOG_LEVEL;
      else process.env.ORCH_LOG_LEVEL = saved;
    }
  });

  it('reads ORCH_LOG_FORMAT=json', () => {
    const saved = process.env.ORCH_LOG_FORMAT;
    process.env.ORCH_LOG_FORMAT = 'json';
    try {
      const { log, lines } = capture();
      log.warn('x');
      expect(JSON.parse(lines[0])).toMatchObject({ level: 'warn', msg: 'x' });
    } finally {
      if (saved === undefined) delete process.env.ORCH_LOG_FORMAT;
      else process.env.ORCH_LOG_FORMAT = saved;
    }
  });

  it('with() binds fields', () => {
    const { log, lines } = capture({ format: 'json' });
    log.with({ controller: 'replicaset' }).info('synced', { key: 'ns/a' });
    expect(JSON.parse(lines[0])).toMatchObject({ controller: 'replicaset', key: 'ns/a' });
  });

  it('redacts fields and the message', () => {
    const { log, lines } = capture();
    log.error('login with Bearer abc.def failed', { token: 's3cr3t', err: new Error('bad key -----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----') });
    expect(lines[0]).toContain('login with Bearer [REDACTED] failed token="[REDACTED]" err="bad key [REDACTED]"');
    expect(lines[0]).not.toMatch(/s3cr3t|abc\.def|MIIE/);
  });
});

describe('redact', () => {
  const jwt = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';
  it.each([
    { name: 'plain values pass', input: { name: 'web', replicas: 3, ok: true, none: null }, want: { name: 'web', replicas: 3, ok: true, none: null } },
    { name: 'token keys', input: { token: 'x', bearerToken: 'x', tokenFile: '/p' }, want: { token: '[REDACTED]', bearerToken: '[REDACTED]', tokenFile: '[REDACTED]' } },
    { name: 'password and secret keys', input: { password: 'x', clientSecret: 'x' }, want: { password: '[REDACTED]', clientSecret: '[REDACTED]' } },
    { name: 'headers', input: { headers: { Authorization: 'Bearer x', accept: 'application/json' } }, want: { headers: { Authorization: '[REDACTED]', accept: 'application/json' } } },
    { name: 'key material keys', input: { keyPem: 'x', privateKey: 'x', 'client-key-data': 'x', certPem: 'public' }, want: { keyPem: '[REDACTED]', privateKey: '[REDACTED]', 'client-key-data': '[REDACTED]', certPem: 'public' } },
    { name: 'work-queue key is kept, key material in it is not', input: [{ key: 'ns/a' }, { key: '-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----' }], want: [{ key: 'ns/a' }, { key: '[REDACTED]' }] },
    {
      name: 'Secret data',
      input: { kind: 'Secret', metadata: { name: 's' }, data: { a: 'eA==' }, stringData: { b: 'x' }, type: 'Opaque' },
      want: { kind: 'Secret', metadata: { name: 's' }, data: '[REDACTED]', stringData: '[REDACTED]', type: 'Opaque' },
    },
    { name: 'ConfigMap data is kept', input: { kind: 'ConfigMap', data: { a: 'b' } }, want: { kind: 'ConfigMap', data: { a: 'b' } } },
    { name: 'nested in arrays', input: [{ token: 'x' }, 'Basic dXNlcjpwYXNz'], want: [{ token: '[REDACTED]' }, 'Basic [REDACTED]'] },
    { name: 'JWT in a string', input: `token was ${jwt} here`, want: 'token was [REDACTED] here' },
    { name: 'PEM private key in a string', input: 'a -----BEGIN EC PRIVATE KEY-----\nAAA\n-----END EC PRIVATE KEY----- b', want: 'a [REDACTED] b' },
    { name: 'PEM certificate kept', input: '-----BEGIN CERTIFICATE-----', want: '-----BEGIN CERTIFICATE-----' },
    { name: 'Buffer', input: Buffer.from('secret'), want: '<6 bytes>' },
  ])('$name', ({ input, want }) => {
    expect(redact(input)).toEqual(want);
  });

  it('does not mutate and handles cycles and shared objects', () => {
    const shared = { a: 1 };
    const input: Record<string, unknown> = { token: 't', x: shared, y: shared };
    input.self = input;
    expect(redact(input)).toEqual({ token: '[REDACTED]', x: { a: 1 }, y: { a: 1 }, self: '[Circular]' });
    expect(input.token).toBe('t');
  });
});
