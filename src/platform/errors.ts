// One error class per status, as openai-node does, and the one envelope every error is sent in.
// The envelope's types are the spec's (ErrorResponse in spec/common), as generated.
import type { ErrorObject, ErrorResponse } from '../../generated/model/client/types.gen.ts';

/** The class of an error, fixed per HTTP status. */
export type ErrorType = ErrorObject['type'];

/** The body of every error answer. */
export type ErrorBody = ErrorResponse;

export function typeForStatus(status: number): ErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 502) return 'upstream_error';
  if (status === 503) return 'overloaded_error';
  if (status === 504) return 'timeout_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly param: string | null;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: string,
    message: string,
    options: { param?: string | null; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
  }

  get type(): ErrorType {
    return typeForStatus(this.status);
  }

  body(requestId: string): ErrorBody {
    return {
      error: {
        type: this.type,
        code: this.code,
        message: this.message,
        param: this.param,
        request_id: requestId,
      },
    };
  }
}

type Options = ConstructorParameters<typeof ApiError>[3];

export class BadRequestError extends ApiError {
  constructor(code: string, message: string, options?: Options) {
    super(400, code, message, options);
  }
}
export class AuthenticationError extends ApiError {
  constructor(code: string, message: string, options?: Options) {
    super(401, code, message, options);
  }
}
export class PermissionDeniedError extends ApiError {
  constructor(code: string, message: string, options?: Options) {
    super(403, code, message, options);
  }
}
export class NotFoundError extends ApiError {
  constructor(code: string, message: string, options?: Options) {
    super(404, code, message, options);
  }
}
export class ConflictError extends ApiError {
  constructor(code: string, message: string, options?: Options) {
    super(409, code, message, options);
  }
}
export class RateLimitError extends ApiError {
  constructor(code: string, message: string, options?: Options) {
    super(429, code, message, options);
  }
}
export class NotImplementedError extends ApiError {
  constructor(method: string, path: string) {
    super(501, 'not_implemented', `${method} ${path} is specified but not implemented yet.`);
  }
}
