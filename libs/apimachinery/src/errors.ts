/** A cause inside Status.details (a field that was invalid, a manager that conflicts, ...). */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** The `v1` Status object every error response carries. */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, unknown>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'Timeout'
  | 'ServerTimeout'
  | 'TooManyRequests'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'Expired'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'InsufficientStorage';

/** Qualified resource for messages: `pods`, `deployments.apps`. */
export interface QualifiedResource {
  group: string;
  resource: string;
}

export function qualifiedName(qr: QualifiedResource): string {
  return qr.group ? `${qr.resource}.${qr.group}` : qr.resource;
}

/** An error that the gateway turns into a Status response. Throw it anywhere in the request path. */
export class StatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
    /** Extra response headers (e.g. Retry-After). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'StatusError';
  }

  toStatus(): Status {
    const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason: this.reason, code: this.code };
    if (this.details) s.details = this.details;
    return s;
  }

  static badRequest(message: string, causes?: StatusCause[]): StatusError {
    return new StatusError(400, 'BadRequest', message, causes ? { causes } : undefined);
  }

  static unauthorized(message = 'Unauthorized'): StatusError {
    return new StatusError(401, 'Unauthorized', message);
  }

  static forbidden(qr: QualifiedResource | undefined, name: string, message: string): StatusError {
    const what = qr ? `${qualifiedName(qr)}${name ? ` "${name}"` : ''} is forbidden: ` : 'forbidden: ';
    return new StatusError(403, 'Forbidden', `${what}${message}`, qr ? { name: name || undefined, group: qr.group, kind: qr.resource } : undefined);
  }

  static notFound(qr: QualifiedResource, name: string): StatusError {
    return new StatusError(404, 'NotFound', `${qualifiedName(qr)} "${name}" not found`, { name, group: qr.group, kind: qr.resource });
  }

  static alreadyExists(qr: QualifiedResource, name: string): StatusError {
    return new StatusError(409, 'AlreadyExists', `${qualifiedName(qr)} "${name}" already exists`, { name, group: qr.group, kind: qr.resource });
  }

  static conflict(qr: QualifiedResource, name: string, why: string, causes?: StatusCause[]): StatusError {
    return new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedName(qr)} "${name}": ${why}`, {
      name,
      group: qr.group,
      kind: qr.resource,
      causes,
    });
  }

  /** 422 with one cause per invalid field; message lists them like upstream. */
  static invalid(kind: string, group: string, name: string, causes: FieldError[]): StatusError {
    const list = causes.map((c) => c.toString());
    const summary = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
    return new StatusError(422, 'Invalid', `${kind}${group ? `.${group}` : ''} "${name}" is invalid: ${summary}`, {
      name,
      group,
      kind,
      causes: causes.map((c) => ({ reason: c.type, message: c.detailMessage(), field: c.field })),
    });
  }

  static gone(message: string): StatusError {
    return new StatusError(410, 'Expired', message);
  }

  static methodNotSupported(qr: QualifiedResource, verb: string): StatusError {
    return new StatusError(405, 'MethodNotAllowed', `${verb} is not supported on resources of kind "${qualifiedName(qr)}"`, {
      group: qr.group,
      kind: qr.resource,
    });
  }

  static notAcceptable(accepted: string[]): StatusError {
    return new StatusError(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`);
  }

  static unsupportedMediaType(contentType: string, supported: string[]): StatusError {
    return new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${supported.join(', ')}`, {
      causes: [{ reason: 'UnexpectedServerResponse', message: contentType }],
    });
  }

  static tooLarge(limitBytes: number): StatusError {
    return new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limitBytes}`);
  }

  /** 413 with a specific message (e.g. too many JSON patch operations). */
  static entityTooLarge(message: string): StatusError {
    return new StatusError(413, 'RequestEntityTooLarge', message);
  }

  /**
   * upstream NewGenericServerResponse(422): the generic "rejected" Invalid error, used when a
   * JSON patch cannot be applied. The concrete problem goes into details.causes.
   */
  static requestRejected(cause?: string): StatusError {
    return new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', cause ? { causes: [{ message: cause }] } : {});
  }

  static tooManyRequests(message: string, retryAfterSeconds?: number): StatusError {
    return new StatusError(429, 'TooManyRequests', message, retryAfterSeconds ? { retryAfterSeconds } : undefined, retryAfterSeconds ? { 'Retry-After': String(retryAfterSeconds) } : {});
  }

  static timeout(message: string, retryAfterSeconds: number): StatusError {
    return new StatusError(504, 'Timeout', message, { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  }

  static internal(message: string): StatusError {
    return new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
  }

  /** 507: the store has no space for the write (full disk, etcd quota); nothing was written. */
  static insufficientStorage(message: string): StatusError {
    return new StatusError(507, 'InsufficientStorage', `insufficient storage: ${message}`);
  }

  static serviceUnavailable(message: string): StatusError {
    return new StatusError(503, 'ServiceUnavailable', message);
  }
}

export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid';

/** One invalid field, as upstream's field.Error: `metadata.name: Invalid value: "X": reason`. */
export class FieldError {
  constructor(
    readonly type: FieldErrorType,
    readonly field: string,
    readonly value: unknown,
    readonly detail: string,
  ) {}

  static required(field: string, detail = ''): FieldError {
    return new FieldError('FieldValueRequired', field, undefined, detail);
  }
  static invalid(field: string, value: unknown, detail: string): FieldError {
    return new FieldError('FieldValueInvalid', field, value, detail);
  }
  static notSupported(field: string, value: unknown, allowed: string[]): FieldError {
    return new FieldError('FieldValueNotSupported', field, value, `supported values: ${allowed.map((a) => `"${a}"`).join(', ')}`);
  }
  static forbidden(field: string, detail: string): FieldError {
    return new FieldError('FieldValueForbidden', field, undefined, detail);
  }
  static duplicate(field: string, value: unknown): FieldError {
    return new FieldError('FieldValueDuplicate', field, value, '');
  }
  static tooLong(field: string, value: unknown, max: number): FieldError {
    return new FieldError('FieldValueTooLong', field, value, `may not be more than ${max} bytes`);
  }
  /** upstream field.TooMany: a list or map with more items than allowed. */
  static tooMany(field: string, actual: number, max: number): FieldError {
    return new FieldError('FieldValueTooMany', field, actual, `must have at most ${max} items`);
  }
  static typeInvalid(field: string, value: unknown, detail: string): FieldError {
    return new FieldError('FieldValueTypeInvalid', field, value, detail);
  }

  private typeText(): string {
    switch (this.type) {
      case 'FieldValueRequired':
        return 'Required value';
      case 'FieldValueInvalid':
        return 'Invalid value';
      case 'FieldValueNotSupported':
        return 'Unsupported value';
      case 'FieldValueDuplicate':
        return 'Duplicate value';
      case 'FieldValueForbidden':
        return 'Forbidden';
      case 'FieldValueTooLong':
        return 'Too long';
      case 'FieldValueTooMany':
        return 'Too many';
      case 'FieldValueTypeInvalid':
        return 'Invalid value';
    }
  }

  detailMessage(): string {
    const hasValue = this.value !== undefined && this.type !== 'FieldValueRequired' && this.type !== 'FieldValueForbidden';
    const v = hasValue ? `${JSON.stringify(this.value)}` : '';
    return [this.typeText() + (v ? `: ${v}` : ''), this.detail].filter(Boolean).join(': ');
  }

  toString(): string {
    return `${this.field}: ${this.detailMessage()}`;
  }
}
