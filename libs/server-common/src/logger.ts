/** Log levels, most severe first. A logger prints the levels up to and including its own. */
export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

export type LogFormat = 'text' | 'json';

export type LogFields = Record<string, unknown>;

export interface Logger {
  error(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  debug(msg: string, fields?: LogFields): void;
  /** A logger whose lines carry `fields` too (e.g. `{controller: 'replicaset'}`). */
  with(fields: LogFields): Logger;
}

export interface LoggerOptions {
  /** Default from `ORCH_LOG_LEVEL` (error|warn|info|debug), else `info`. */
  level?: LogLevel;
  /** Default from `ORCH_LOG_FORMAT` (`json`), else `text`. */
  format?: LogFormat;
  /** Where lines go; default stderr, like klog. */
  write?: (line: string) => void;
  /** Clock, for tests. */
  now?: () => Date;
}

const LEVELS: readonly LogLevel[] = ['error', 'warn', 'info', 'debug'];
const KLOG_LETTER: Record<LogLevel, string> = { error: 'E', warn: 'W', info: 'I', debug: 'D' };

/**
 * Creates a structured logger for one component. Text lines are klog-like:
 * `I0102 15:04:05.123456 4242 scheduler] message key="value" n=3`; JSON lines are
 * `{"ts":...,"level":"info","component":...,"msg":...,<fields>}`. The message and every field
 * pass through `redact`, so tokens, keys and secret data never reach the output.
 */
export function createLogger(component: string, opts: LoggerOptions = {}): Logger {
  const level = opts.level ?? parseLevel(process.env.ORCH_LOG_LEVEL);
  const format = opts.format ?? (process.env.ORCH_LOG_FORMAT === 'json' ? 'json' : 'text');
  const write = opts.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const now = opts.now ?? (() => new Date());
  const max = LEVELS.indexOf(level);

  const make = (bound: LogFields): Logger => {
    const log = (lvl: LogLevel) => (msg: string, fields?: LogFields) => {
      if (LEVELS.indexOf(lvl) > max) return;
      const all = redact({ ...bound, ...fields }) as LogFields;
      const safeMsg = redactString(msg);
      write(format === 'json' ? jsonLine(now(), lvl, component, safeMsg, all) : textLine(now(), lvl, component, safeMsg, all));
    };
    return {
      error: log('error'),
      warn: log('warn'),
      info: log('info'),
      debug: log('debug'),
      with: (fields) => make({ ...bound, ...fields }),
    };
  };
  return make({});
}

function parseLevel(v: string | undefined): LogLevel {
  const l = v?.toLowerCase();
  return LEVELS.find((x) => x === l) ?? 'info';
}

function textLine(t: Date, lvl: LogLevel, component: string, msg: string, fields: LogFields): string {
  const p2 = (n: number) => String(n).padStart(2, '0');
  const ts = `${p2(t.getMonth() + 1)}${p2(t.getDate())} ${p2(t.getHours())}:${p2(t.getMinutes())}:${p2(t.getSeconds())}.${String(t.getMilliseconds() * 1000).padStart(6, '0')}`;
  const kv = Object.entries(fields).map(([k, v]) => ` ${k}=${typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v)}`);
  return `${KLOG_LETTER[lvl]}${ts} ${process.pid} ${component}] ${msg}${kv.join('')}`;
}

function jsonLine(t: Date, lvl: LogLevel, component: string, msg: string, fields: LogFields): string {
  return JSON.stringify({ ts: t.getTime() / 1000, level: lvl, component, msg, ...fields });
}

export const REDACTED = '[REDACTED]';

const SENSITIVE_KEY = /token|password|passwd|secret|authorization|cookie|credential|private.?key|client.?key|key.?data|keypem/i;
const PEM_PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g;
const BEARER = /\b(Bearer|Basic)\s+[^\s"',]+/gi;
const JWT = /\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;

/**
 * Returns a copy of `value` that is safe to log: values under sensitive keys (token, password,
 * secret, authorization, private/client key, ...; not plain `key`, which names work-queue keys)
 * become `[REDACTED]`, so do `data`/`stringData`
 * of a Secret object, and inside strings PEM private keys, `Bearer`/`Basic` credentials and
 * JWTs are replaced. Errors become their message, Buffers their length. Never mutates its input.
 */
export function redact(value: unknown): unknown {
  return redactValue(value, new WeakSet());
}

function redactValue(value: unknown, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return redactString(value);
  if (value instanceof Error) return redactString(value.message);
  if (Buffer.isBuffer(value)) return `<${value.length} bytes>`;
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  let out: unknown;
  if (Array.isArray(value)) {
    out = value.map((v) => redactValue(v, seen));
  } else {
    const isSecret = (value as { kind?: unknown }).kind === 'Secret';
    const obj: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      obj[k] = SENSITIVE_KEY.test(k) || (isSecret && (k === 'data' || k === 'stringData')) ? REDACTED : redactValue(v, seen);
    }
    out = obj;
  }
  seen.delete(value);
  return out;
}

function redactString(s: string): string {
  return s.replace(PEM_PRIVATE_KEY, REDACTED).replace(BEARER, `$1 ${REDACTED}`).replace(JWT, REDACTED);
}
