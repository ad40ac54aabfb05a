import type { Logger } from './logger';

/** A health check: resolves when healthy, throws (or rejects) with the reason when not. */
export type HealthCheckFn = () => Promise<void> | void;

/** The three health endpoints; each has its own ordered set of checks. */
export type HealthEndpoint = 'healthz' | 'livez' | 'readyz';

export const HEALTH_ENDPOINTS: readonly HealthEndpoint[] = ['healthz', 'livez', 'readyz'];

export interface HealthCheckOptions {
  /** Endpoints that run this check; default all three. */
  endpoints?: readonly HealthEndpoint[];
  /**
   * Delay this check on /livez (and /livez/<name>) by the registry's livez grace period:
   * until it has passed since the registry was created, livez reports the check ok
   * without running it (upstream `--livez-grace-period`). healthz and readyz are not delayed.
   */
  livezGrace?: boolean;
}

/** Query of a health request: a raw query string, URLSearchParams, or an already parsed record. */
export type HealthQuery = string | URLSearchParams | Record<string, string | string[] | undefined>;

export interface HealthResponse {
  status: number;
  body: string;
  contentType: string;
}

export interface HealthChecksOptions {
  /** `--livez-grace-period` in ms; applies to checks added with `livezGrace`. Default 0. */
  livezGracePeriodMs?: number;
  /** Clock in ms, for tests; default `Date.now`. */
  now?: () => number;
  /** Receives the withheld failure reasons (the public body never shows them). */
  logger?: Logger;
}

interface RegisteredCheck {
  name: string;
  run: HealthCheckFn;
  endpoints: ReadonlySet<HealthEndpoint>;
  livezGrace: boolean;
}

export const HEALTH_CONTENT_TYPE = 'text/plain; charset=utf-8';

/** Name of the readyz check that fails once `markShuttingDown()` was called; always last on readyz. */
export const SHUTDOWN_CHECK = 'shutdown';

/**
 * Registry of named health checks served on /healthz, /livez and /readyz, with upstream's
 * output (k8s.io/apiserver/pkg/server/healthz):
 * - healthy, not verbose: 200 `ok`;
 * - healthy, `?verbose`: one line per check (`[+]<name> ok`, `[+]<name> excluded: ok`), then
 *   `<endpoint> check passed`;
 * - any check failing: 500, always verbose, failing lines `[-]<name> failed: reason withheld`,
 *   last line `<endpoint> check failed`;
 * - `?exclude=<name>` (repeatable) skips a check; names that match nothing add the line
 *   `warn: some health checks cannot be excluded: no matches for "<a>","<b>"`;
 * - `/<endpoint>/<name>` runs one check: 200 `ok`, or 500 `internal server error: <reason>`;
 *   404 for an unknown name.
 * Checks of one request run concurrently; lines keep registration order. `ping` is registered
 * on all endpoints at construction; readyz ends with the `shutdown` check.
 */
export class HealthChecks {
  private readonly checks: RegisteredCheck[] = [];
  private readonly startedAt: number;
  private readonly now: () => number;
  private readonly livezGracePeriodMs: number;
  private readonly logger: Logger | undefined;
  private shuttingDown = false;

  constructor(opts: HealthChecksOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.startedAt = this.now();
    this.livezGracePeriodMs = opts.livezGracePeriodMs ?? 0;
    this.logger = opts.logger;
    this.add('ping', () => undefined);
  }

  /** Registers a check; names are unique (`poststarthook/<hook>` style names are fine). */
  add(name: string, run: HealthCheckFn, opts: HealthCheckOptions = {}): this {
    if (!name || name.includes('?') || name.startsWith('/') || name.endsWith('/')) throw new Error(`invalid health check name "${name}"`);
    if (name === SHUTDOWN_CHECK || this.checks.some((c) => c.name === name)) throw new Error(`health check "${name}" is already registered`);
    this.checks.push({ name, run, endpoints: new Set(opts.endpoints ?? HEALTH_ENDPOINTS), livezGrace: opts.livezGrace ?? false });
    return this;
  }

  /** Makes readyz fail from now on (`--shutdown-delay-duration`: load balancers drain first). */
  markShuttingDown(): void {
    this.shuttingDown = true;
  }

  /** Names of the checks of one endpoint, in output order. */
  names(endpoint: HealthEndpoint): string[] {
    return this.list(endpoint).map((c) => c.name);
  }

  /**
   * Answers a GET on `path` (`/healthz`, `/livez/etcd`, ...). Returns 404 for paths that are not
   * a health endpoint or name an unknown check.
   */
  async handle(path: string, query: HealthQuery = ''): Promise<HealthResponse> {
    const m = /^\/(healthz|livez|readyz)(?:\/(.+))?$/.exec(path);
    if (!m) return text(404, '404 page not found\n');
    const endpoint = m[1] as HealthEndpoint;
    if (m[2] !== undefined) {
      const check = this.list(endpoint).find((c) => c.name === m[2]);
      if (!check) return text(404, '404 page not found\n');
      const err = await this.run(endpoint, check);
      return err === undefined ? text(200, 'ok') : text(500, `internal server error: ${err}\n`);
    }
    const params = toParams(query);
    const excluded = new Set(params.getAll('exclude'));
    const checks = this.list(endpoint);
    const results = await Promise.all(checks.map((c) => (excluded.has(c.name) ? Promise.resolve(null) : this.run(endpoint, c))));
    const lines: string[] = [];
    const failures: string[] = [];
    checks.forEach((c, i) => {
      const r = results[i];
      if (r === null) {
        excluded.delete(c.name);
        lines.push(`[+]${c.name} excluded: ok`);
      } else if (r === undefined) {
        lines.push(`[+]${c.name} ok`);
      } else {
        lines.push(`[-]${c.name} failed: reason withheld`);
        failures.push(`[-]${c.name} failed: ${r}`);
      }
    });
    if (excluded.size > 0) {
      const quoted = [...excluded].sort().map((n) => JSON.stringify(n));
      lines.push(`warn: some health checks cannot be excluded: no matches for ${quoted.join(',')}`);
    }
    if (failures.length > 0) {
      this.logger?.info(`${endpoint} check failed`, { failures: failures.join('\n') });
      return text(500, `${lines.join('\n')}\n${endpoint} check failed\n`);
    }
    if (!params.has('verbose')) return text(200, 'ok');
    return text(200, `${lines.join('\n')}\n${endpoint} check passed\n`);
  }

  private list(endpoint: HealthEndpoint): RegisteredCheck[] {
    const list = this.checks.filter((c) => c.endpoints.has(endpoint));
    if (endpoint === 'readyz') {
      list.push({
        name: SHUTDOWN_CHECK,
        endpoints: new Set(['readyz']),
        livezGrace: false,
        run: () => {
          if (this.shuttingDown) throw new Error('process is shutting down');
        },
      });
    }
    return list;
  }

  /** Runs one check; undefined when healthy, else the failure reason. */
  private async run(endpoint: HealthEndpoint, check: RegisteredCheck): Promise<string | undefined> {
    if (endpoint === 'livez' && check.livezGrace && this.now() - this.startedAt < this.livezGracePeriodMs) return undefined;
    try {
      await check.run();
      return undefined;
    } catch (e) {
      return e instanceof Error ? e.message : String(e);
    }
  }
}

function text(status: number, body: string): HealthResponse {
  return { status, body, contentType: HEALTH_CONTENT_TYPE };
}

function toParams(query: HealthQuery): URLSearchParams {
  if (typeof query === 'string' || query instanceof URLSearchParams) return new URLSearchParams(query);
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) params.append(k, one);
  }
  return params;
}
