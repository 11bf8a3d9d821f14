/**
 * The one error class of the API: carries an HTTP code and serializes to a Kubernetes `Status` object.
 */
export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'MethodNotAllowed'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'NotAcceptable'
  | 'InternalError'
  | 'TooManyRequests'
  | 'ServiceUnavailable'
  | 'Timeout'
  | 'Expired';

export interface StatusCause {
  field?: string;
  message: string;
  reason?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: StatusCause[];
  /** How many seconds a client should wait before retrying (429, as kube's `details.retryAfterSeconds`; also sent as `Retry-After`). */
  retryAfterSeconds?: number;
}

/**
 * The wire shape of an error (`kind: Status`). A type rather than an interface, so that a Status is also a
 * KubeObject (the object of a watch ERROR event).
 */
export type Status = {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message: string;
  reason: StatusReason;
  details?: StatusDetails;
  code: number;
};

const CODES: Record<StatusReason, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  AlreadyExists: 409,
  Conflict: 409,
  Gone: 410,
  Expired: 410,
  Invalid: 422,
  MethodNotAllowed: 405,
  RequestEntityTooLarge: 413,
  UnsupportedMediaType: 415,
  NotAcceptable: 406,
  TooManyRequests: 429,
  InternalError: 500,
  ServiceUnavailable: 503,
  Timeout: 504,
};

/**
 * Which of the server's limits refused a request, for its metrics (`meshctl_apiserver_rejected_requests_total`,
 * api/server/http/metrics.ts); never sent on the wire.
 */
export type LimitName =
  | 'inflight'
  | 'watches_per_client'
  | 'event_quota'
  | 'join_rate'
  | 'list_bytes'
  | 'body_size'
  | 'parser_depth'
  | 'parser_aliases'
  | 'parser_size';

/** An API error: thrown anywhere in the server, written to the wire as a `Status`. */
export class ApiError extends Error {
  readonly reason: StatusReason;
  readonly code: number;
  readonly details?: StatusDetails;
  /** The limit that refused the request, when one did (not part of the Status). */
  readonly limit?: LimitName;

  constructor(opts: {
    reason: StatusReason;
    message: string;
    details?: StatusDetails;
    code?: number;
    limit?: LimitName;
  }) {
    super(opts.message);
    this.name = 'ApiError';
    this.reason = opts.reason;
    this.code = opts.code ?? CODES[opts.reason];
    this.details = opts.details;
    if (opts.limit !== undefined) this.limit = opts.limit;
  }

  /** The `Status` object sent to clients. */
  toStatus(): Status {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }

  /** Rebuilds an ApiError from a `Status` received over the wire (used by the client). */
  static fromStatus(s: Partial<Status>, httpCode: number): ApiError {
    return new ApiError({
      reason: (s.reason as StatusReason) ?? 'InternalError',
      message: s.message ?? `HTTP ${httpCode}`,
      details: s.details,
      code: s.code ?? httpCode,
    });
  }

  static notFound(plural: string, name: string): ApiError {
    return new ApiError({
      reason: 'NotFound',
      message: `${plural}.meshctl.dev "${name}" not found`,
      details: { name, group: 'meshctl.dev', kind: plural },
    });
  }

  static alreadyExists(plural: string, name: string): ApiError {
    return new ApiError({
      reason: 'AlreadyExists',
      message: `${plural}.meshctl.dev "${name}" already exists`,
      details: { name, group: 'meshctl.dev', kind: plural },
    });
  }

  static conflict(plural: string, name: string, why: string): ApiError {
    return new ApiError({
      reason: 'Conflict',
      message: `Operation cannot be fulfilled on ${plural}.meshctl.dev "${name}": ${why}`,
      details: { name, group: 'meshctl.dev', kind: plural },
    });
  }

  static invalid(kind: string, name: string, causes: StatusCause[]): ApiError {
    const list = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join(', ');
    return new ApiError({
      reason: 'Invalid',
      message: `${kind}.meshctl.dev "${name}" is invalid: ${list}`,
      details: { name, group: 'meshctl.dev', kind, causes },
    });
  }

  static badRequest(message: string, limit?: LimitName): ApiError {
    return new ApiError({ reason: 'BadRequest', message, ...(limit ? { limit } : {}) });
  }

  /** 429: `limit` was exceeded; `retryAfterMs` is rounded up to whole seconds for `Retry-After`. */
  static tooManyRequests(message: string, retryAfterMs: number, limit: LimitName): ApiError {
    const retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
    return new ApiError({ reason: 'TooManyRequests', message, details: { retryAfterSeconds }, limit });
  }

  static gone(message: string): ApiError {
    return new ApiError({ reason: 'Expired', message, code: 410 });
  }
}

/** True when `e` is an ApiError with the given reason. */
export function isReason(e: unknown, reason: StatusReason): boolean {
  return e instanceof ApiError && e.reason === reason;
}
