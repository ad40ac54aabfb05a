import type { Status } from '@orch/apimachinery';

/** Reason used when a non-2xx response carries no Status body (upstream's reasonForError by code). */
function reasonForCode(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 406:
      return 'NotAcceptable';
    case 409:
      return 'Conflict';
    case 410:
      return 'Gone';
    case 413:
      return 'RequestEntityTooLarge';
    case 415:
      return 'UnsupportedMediaType';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 500:
      return 'InternalError';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return 'Unknown';
  }
}

function isStatus(v: unknown): v is Status {
  return typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'Status';
}

/**
 * A failed API call: a non-2xx response, or an ERROR event on a watch. Always carries a
 * Status; when the server sent none, one is synthesised from the HTTP code and body text.
 */
export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  /** Seconds from `Retry-After` or `status.details.retryAfterSeconds`, when given. */
  readonly retryAfterSeconds?: number;

  constructor(readonly status: Status, retryAfterSeconds?: number) {
    super(status.message || `the server responded with ${status.code} ${status.reason ?? ''}`.trim());
    this.name = 'ApiError';
    this.code = status.code;
    this.reason = status.reason ?? reasonForCode(status.code);
    this.retryAfterSeconds = retryAfterSeconds ?? status.details?.retryAfterSeconds;
  }

  /** Builds the error for a non-2xx response from its code, body and `Retry-After` header. */
  static fromResponse(code: number, body: string, retryAfter?: string): ApiError {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    const retry = retryAfter !== undefined && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined;
    if (isStatus(parsed)) return new ApiError({ ...parsed, code: parsed.code || code }, retry);
    const message = body.trim() || `the server responded with HTTP ${code}`;
    return new ApiError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code, reason: reasonForCode(code), message }, retry);
  }

  /** Builds the error for a watch ERROR event's object. */
  static fromWatchObject(object: unknown): ApiError {
    if (isStatus(object)) return new ApiError({ ...object, code: object.code || 500 });
    return new ApiError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 500, reason: 'InternalError', message: `watch ERROR event without a Status: ${JSON.stringify(object)}` });
  }
}

function hasCode(err: unknown, code: number, reasons: string[]): boolean {
  return err instanceof ApiError && (err.code === code || reasons.includes(err.reason));
}

/** 404, or reason NotFound. */
export function isNotFound(err: unknown): boolean {
  return hasCode(err, 404, ['NotFound']);
}

/** 409 with reason Conflict (a stale resourceVersion); not AlreadyExists. */
export function isConflict(err: unknown): boolean {
  return err instanceof ApiError && err.code === 409 && err.reason !== 'AlreadyExists';
}

/** 409 with reason AlreadyExists. */
export function isAlreadyExists(err: unknown): boolean {
  return err instanceof ApiError && err.reason === 'AlreadyExists';
}

/** 410: the resourceVersion or continue token is too old (reason Gone or Expired). */
export function isGone(err: unknown): boolean {
  return hasCode(err, 410, ['Gone', 'Expired']);
}

/** 429 Too Many Requests. */
export function isTooManyRequests(err: unknown): boolean {
  return hasCode(err, 429, ['TooManyRequests']);
}

/** 503 Service Unavailable (also what a server that is closing answers requests on its open connections). */
export function isServiceUnavailable(err: unknown): boolean {
  return hasCode(err, 503, ['ServiceUnavailable']);
}

/** The client gave up waiting for a response. */
export class RequestTimeoutError extends Error {
  constructor(readonly method: string, readonly url: string, readonly timeoutMs: number) {
    super(`${method} ${url}: no response within ${timeoutMs} ms`);
    this.name = 'RequestTimeoutError';
  }
}
