/**
 * Errors a caller is meant to see. Anything else thrown becomes a plain 500 (see error mapper):
 * the `instanceof AppError` check is the only thing that lets a message out.
 */
export interface ErrorDetail {
  readonly path: string;
  readonly message: string;
}

export class AppError extends Error {
  /** Headers the response carries besides the error body (Retry-After). */
  readonly headers: Readonly<Record<string, string>> = {};

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: readonly ErrorDetail[],
    /** A protocol's own error body (standards' shapes), instead of the service's {error, code}. */
    readonly body?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequestError extends AppError {
  constructor(message: string, code = 'bad_request', details?: readonly ErrorDetail[]) {
    super(400, code, message, details);
  }
}

export class ValidationError extends AppError {
  constructor(details: readonly ErrorDetail[], message = 'Request validation failed') {
    super(400, 'validation_failed', message, details);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message: string) {
    super(401, 'unauthorized', message);
  }
}

export class ForbiddenError extends AppError {
  constructor(message: string) {
    super(403, 'forbidden', message);
  }
}

export class NotFoundError extends AppError {
  constructor(message: string, code = 'not_found') {
    super(404, code, message);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, code = 'conflict') {
    super(409, code, message);
  }
}

/** A per-wallet rate was exceeded: retry after the given number of seconds. */
export class RateLimitedError extends AppError {
  override readonly headers: Readonly<Record<string, string>>;

  constructor(message: string, retryAfterSeconds: number) {
    super(429, 'rate_limited', message);
    this.headers = { 'retry-after': String(retryAfterSeconds) };
  }
}

/**
 * A text as an error_description: RFC 6749 §5.2 allows visible ASCII but `"` and `\`. Library
 * validation messages run over many lines ("Error validating …", then one `✖` line per issue): the
 * summary and the first issue are kept, on one line.
 */
export function errorDescription(text: string): string {
  const [summary, issue] = text.split('\n', 2) as [string, string | undefined];
  const line = issue ? `${summary}: ${issue}` : summary;
  // Any run of other characters (tabs, line breaks, non-ASCII) becomes one space.
  return line.replace(/"/g, "'").replace(/[^\x21\x23-\x5b\x5d-\x7e]+/g, ' ').trim();
}

/**
 * An error in a protocol's own shape (OAuth 2.0 / OpenID4VCI: `{error, error_description}`), with the
 * headers the protocol asks for (`WWW-Authenticate` on 401s). `code` is the protocol's error code; the
 * description, as sent and as `message`, is `errorDescription`'s.
 */
export class ProtocolError extends AppError {
  override readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, error: string, description: string, headers: Readonly<Record<string, string>> = {}) {
    const said = errorDescription(description);
    super(status, error, said, undefined, { error, error_description: said });
    this.headers = headers;
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(limit: number) {
    super(413, 'payload_too_large', `Request body exceeds ${limit} bytes`);
  }
}

export interface ErrorBody {
  error: string;
  code: string;
  details?: readonly ErrorDetail[];
}

export function errorBody(err: AppError): ErrorBody {
  return err.details ? { error: err.message, code: err.code, details: err.details } : { error: err.message, code: err.code };
}

export const INTERNAL_ERROR_BODY: ErrorBody = Object.freeze({ error: 'Internal server error', code: 'internal_error' });
