/** The value each flag type parses to. Durations are milliseconds. */
export interface FlagValueTypes {
  string: string;
  bool: boolean;
  int: number;
  float: number;
  duration: number;
  /** Repeatable; each occurrence adds one element, commas kept (`--arg a,b --arg c` → `['a,b', 'c']`). */
  stringArray: string[];
  /** Comma list; occurrences append (`--x a,b --x c` → `['a', 'b', 'c']`), `--x=` gives `[]`. */
  stringSlice: string[];
}

export type FlagType = keyof FlagValueTypes;

type DefaultOf<T extends FlagType> = FlagValueTypes[T] extends string[] ? readonly string[] : FlagValueTypes[T];

interface FlagDefOf<T extends FlagType> {
  type: T;
  description: string;
  /** Value when the flag is not given; default the type's zero value ('', false, 0, []). */
  default?: DefaultOf<T>;
  /** One-letter alias: `-v 2`, `-v=2`, `-v2`. */
  short?: string;
  /** Still accepted, but hidden from --help; `onDeprecated` receives this message when used. */
  deprecated?: string;
  hidden?: boolean;
}

/** Definition of one flag; declare all of a command's flags once as a `FlagDefs` table. */
export type FlagDef = { [T in FlagType]: FlagDefOf<T> }[FlagType];

/** Flag table keyed by the long name without dashes, e.g. `{'secure-port': {type: 'int', ...}}`. */
export type FlagDefs = Record<string, FlagDef>;

/** Typed values of a flag table, keyed by flag name. */
export type FlagValues<D extends FlagDefs> = { -readonly [K in keyof D]: FlagValueTypes[D[K]['type']] };

export interface ParsedFlags<D extends FlagDefs> {
  values: FlagValues<D>;
  /** Positional arguments (flags and positionals may be interleaved; `--` ends flags). */
  args: string[];
  /** Flags given on the command line (pflag's `Changed`). */
  changed: ReadonlySet<keyof D & string>;
  /** `--help` or `-h` was given. */
  help: boolean;
}

/** A command line that does not match the flag table. */
export class FlagError extends Error {
  override name = 'FlagError';
}

export interface ParseOptions {
  /** Called once per use of a deprecated flag with `Flag --x has been deprecated, <message>`. */
  onDeprecated?: (warning: string) => void;
}

/**
 * Parses `argv` (without node and script) against `defs`, in pflag style: `--name=value`,
 * `--name value`, bool `--flag` / `--flag=false` (a bool never takes the next argument),
 * repeated flags (last wins, lists accumulate and replace their default), `-h`/`--help`.
 * Throws FlagError for an unknown flag, a missing argument or a bad value.
 */
export function parseFlags<D extends FlagDefs>(defs: D, argv: readonly string[], opts: ParseOptions = {}): ParsedFlags<D> {
  const values: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(defs)) values[name] = initial(def);
  const changed = new Set<string>();
  const args: string[] = [];
  let help = false;
  const byShort = new Map<string, string>();
  for (const [name, def] of Object.entries(defs)) if (def.short) byShort.set(def.short, name);

  const set = (name: string, raw: string) => {
    const def = defs[name];
    if (def.deprecated) opts.onDeprecated?.(`Flag --${name} has been deprecated, ${def.deprecated}`);
    const first = !changed.has(name);
    changed.add(name);
    values[name] = convert(name, def, raw, first ? [] : (values[name] as string[]));
  };

  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      args.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      if (name === 'help' && eq < 0) {
        help = true;
        continue;
      }
      if (!Object.hasOwn(defs, name)) throw new FlagError(`unknown flag: --${name}`);
      const def = defs[name];
      if (eq >= 0) set(name, a.slice(eq + 1));
      else if (def.type === 'bool') set(name, 'true');
      else if (i + 1 < argv.length) set(name, argv[++i]);
      else throw new FlagError(`flag needs an argument: --${name}`);
    } else if (a.startsWith('-') && a.length > 1) {
      const c = a[1];
      if (c === 'h' && a.length === 2 && !byShort.has('h')) {
        help = true;
        continue;
      }
      const name = byShort.get(c);
      if (!name) throw new FlagError(`unknown shorthand flag: '${c}' in ${a}`);
      const rest = a.slice(2);
      if (rest.startsWith('=')) set(name, rest.slice(1));
      else if (rest) set(name, rest);
      else if (defs[name].type === 'bool') set(name, 'true');
      else if (i + 1 < argv.length) set(name, argv[++i]);
      else throw new FlagError(`flag needs an argument: '${c}' in ${a}`);
    } else {
      args.push(a);
    }
  }
  return { values: values as FlagValues<D>, args, changed: changed as Set<keyof D & string>, help };
}

function initial(def: FlagDef): unknown {
  switch (def.type) {
    case 'string':
      return def.default ?? '';
    case 'bool':
      return def.default ?? false;
    case 'int':
    case 'float':
    case 'duration':
      return def.default ?? 0;
    case 'stringArray':
    case 'stringSlice':
      return [...(def.default ?? [])];
  }
}

function convert(name: string, def: FlagDef, raw: string, soFar: string[]): unknown {
  const bad = (why: string) => new FlagError(`invalid argument ${JSON.stringify(raw)} for "--${name}" flag: ${why}`);
  switch (def.type) {
    case 'string':
      return raw;
    case 'bool': {
      if (/^(1|t|T|true|TRUE|True)$/.test(raw)) return true;
      if (/^(0|f|F|false|FALSE|False)$/.test(raw)) return false;
      throw bad('not a boolean');
    }
    case 'int': {
      const n = Number(raw);
      if (!/^[+-]?\d+$/.test(raw) || !Number.isSafeInteger(n)) throw bad('not an integer');
      return n;
    }
    case 'float': {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n)) throw bad('not a number');
      return n;
    }
    case 'duration':
      try {
        return parseDuration(raw);
      } catch (e) {
        throw bad((e as Error).message);
      }
    case 'stringArray':
      return [...soFar, raw];
    case 'stringSlice':
      return raw === '' ? soFar : [...soFar, ...raw.split(',').map((s) => s.trim())];
  }
}

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Parses a Go duration (`300ms`, `1.5h`, `2h45m`, `-30s`, `0`) into milliseconds.
 * Throws for a missing or unknown unit, as Go's `time.ParseDuration` does.
 */
export function parseDuration(s: string): number {
  let rest = s;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest[0] === '-' ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw new Error(`time: invalid duration ${JSON.stringify(s)}`);
  let total = 0;
  const part = /^(\d+\.?\d*|\.\d+)([^\d.]*)/;
  while (rest) {
    const m = part.exec(rest);
    if (!m) throw new Error(`time: invalid duration ${JSON.stringify(s)}`);
    if (!m[2]) throw new Error(`time: missing unit in duration ${JSON.stringify(s)}`);
    const unit = UNIT_MS[m[2]];
    if (unit === undefined) throw new Error(`time: unknown unit ${JSON.stringify(m[2])} in duration ${JSON.stringify(s)}`);
    total += Number(m[1]) * unit;
    rest = rest.slice(m[0].length);
  }
  return sign * total;
}

/** Formats milliseconds like Go's `time.Duration.String()`: `1h30m0s`, `1m0s`, `1.5s`, `500ms`, `0s`. */
export function formatDuration(ms: number): string {
  let ns = Math.round(Math.abs(ms) * 1e6);
  const sign = ms < 0 && ns > 0 ? '-' : '';
  const frac = (n: number, digits: number) => {
    const whole = Math.floor(n / 10 ** digits);
    const f = String(n % 10 ** digits).padStart(digits, '0').replace(/0+$/, '');
    return f ? `${whole}.${f}` : String(whole);
  };
  if (ns === 0) return '0s';
  if (ns < 1e3) return `${sign}${ns}ns`;
  if (ns < 1e6) return `${sign}${frac(ns, 3)}µs`;
  if (ns < 1e9) return `${sign}${frac(ns, 6)}ms`;
  const h = Math.floor(ns / 3.6e12);
  ns -= h * 3.6e12;
  const m = Math.floor(ns / 6e10);
  ns -= m * 6e10;
  return `${sign}${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${frac(ns, 9)}s`;
}

const TYPE_NAME: Record<FlagType, string> = {
  string: 'string',
  bool: '',
  int: 'int',
  float: 'float',
  duration: 'duration',
  stringArray: 'stringArray',
  stringSlice: 'strings',
};

/** The flag list of --help in pflag's layout, sorted by name; hidden and deprecated flags are left out. */
export function flagUsages(defs: FlagDefs): string {
  const rows = Object.entries(defs)
    .filter(([, d]) => !d.hidden && !d.deprecated)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, d]) => {
      const head = `${d.short ? `  -${d.short}, --` : '      --'}${name}${TYPE_NAME[d.type] ? ` ${TYPE_NAME[d.type]}` : ''}`;
      const def = defaultText(d);
      return { head, text: `${d.description}${def === undefined ? '' : ` (default ${def})`}` };
    });
  const width = Math.max(0, ...rows.map((r) => r.head.length));
  return rows.map((r) => `${r.head.padEnd(width)}   ${r.text}\n`).join('');
}

function defaultText(d: FlagDef): string | undefined {
  switch (d.type) {
    case 'string':
      return d.default ? JSON.stringify(d.default) : undefined;
    case 'bool':
      return d.default ? 'true' : undefined;
    case 'int':
    case 'float':
      return d.default ? String(d.default) : undefined;
    case 'duration':
      return d.default ? formatDuration(d.default) : undefined;
    case 'stringArray':
    case 'stringSlice':
      return d.default?.length ? `[${d.default.join(',')}]` : undefined;
  }
}

export interface CommandInfo {
  /** Command name shown in `Usage:` (e.g. `orch-scheduler`). */
  name: string;
  /** One paragraph shown first. */
  description: string;
}

/** The complete --help text: description, `Usage:` line and the flag list. */
export function usage(cmd: CommandInfo, defs: FlagDefs): string {
  return `${cmd.description}\n\nUsage:\n  ${cmd.name} [flags]\n\nFlags:\n${flagUsages(defs)}`;
}

/** Where `parseFlagsOrExit` writes and how it exits; default the process's. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  exit: (code: number) => never;
}

const processIo: CliIo = {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  exit: (code) => process.exit(code),
};

/**
 * For a CLI's main: parses `argv`; on --help prints usage to stdout and exits 0; on a
 * FlagError prints `Error: <message>` and a hint to stderr and exits 2. Deprecation
 * warnings go to stderr.
 */
export function parseFlagsOrExit<D extends FlagDefs>(cmd: CommandInfo, defs: D, argv: readonly string[] = process.argv.slice(2), io: CliIo = processIo): Omit<ParsedFlags<D>, 'help'> {
  let parsed: ParsedFlags<D>;
  try {
    parsed = parseFlags(defs, argv, { onDeprecated: (w) => io.stderr(`${w}\n`) });
  } catch (e) {
    if (!(e instanceof FlagError)) throw e;
    io.stderr(`Error: ${e.message}\nRun '${cmd.name} --help' for usage.\n`);
    return io.exit(2);
  }
  if (parsed.help) {
    io.stdout(usage(cmd, defs));
    return io.exit(0);
  }
  return parsed;
}
