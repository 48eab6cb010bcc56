// The one error handler: every failure, the validator's and the body parser's included, leaves
// in the envelope of docs/errors.md with the request id. Never HTML, never a stack trace.
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from './errors.ts';
import { type Direction, Explainer } from './explain.ts';
import { MAX_JSON_DEPTH, TOO_DEEP } from './json-depth.ts';
import type { Logger } from './logger.ts';
import { requestIdOf } from './request-id.ts';

interface ValidatorIssue {
  path?: string;
  message?: string;
  errorCode?: string;
}

interface HttpLikeError {
  /** The body of a response that failed validation (set by the validator's onError hook). */
  responseBody?: unknown;
  status?: number;
  statusCode?: number;
  type?: string;
  message?: string;
  errors?: ValidatorIssue[];
  headers?: Record<string, string>;
  path?: string;
}

/** The catalogue's model ids, as the spec's `ModelId` schema lists them (none in a spec without it). */
const catalogues = new WeakMap<object, Set<string>>();
function catalogueOf(spec: Spec | undefined): Set<string> {
  if (spec === undefined) return new Set();
  let ids = catalogues.get(spec);
  if (ids === undefined) {
    const schemas = (spec.components as { schemas?: Record<string, { enum?: unknown[] }> } | undefined)
      ?.schemas;
    ids = new Set((schemas?.ModelId?.enum ?? []).filter((id): id is string => typeof id === 'string'));
    catalogues.set(spec, ids);
  }
  return ids;
}

/** The model a request named when the validator refused it for being none of the operation's models. */
function refusedModel(err: HttpLikeError, req: Request): string | undefined {
  const refused = err.errors?.some(
    (e) =>
      (e.path === '/body/model' || e.path === '/query/model') &&
      (e.errorCode === 'enum.openapi.validation' || /allowed values/.test(e.message ?? '')),
  );
  if (!refused) return undefined;
  const named = (req.body as { model?: unknown } | undefined)?.model ?? req.query.model;
  return typeof named === 'string' ? named.slice(0, 200) : undefined;
}

// "/body/messages/0/role" -> "messages[0].role"; "/query/limit" -> "limit"
export function paramFromPath(path: string | undefined): string | null {
  if (!path) return null;
  const parts = path
    .replace(/^\.?\/?/, '')
    .split(/[/.]/)
    .filter(Boolean);
  if (['body', 'query', 'path', 'headers', 'params'].includes(parts[0] ?? '')) parts.shift();
  if (parts.length === 0) return null;
  return parts.reduce(
    (acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part),
    '',
  );
}

function describe(err: HttpLikeError): string {
  const issues = err.errors ?? [];
  if (issues.length === 0) return err.message ?? 'The request is not valid.';
  return issues
    .slice(0, 5)
    .map((issue) => {
      const where = paramFromPath(issue.path);
      return where ? `${where}: ${issue.message ?? 'is not valid'}` : (issue.message ?? 'is not valid');
    })
    .join('; ');
}

type Spec = Record<string, unknown>;

function get(value: unknown, ...keys: string[]): unknown {
  let here = value;
  for (const key of keys) {
    if (here === null || typeof here !== 'object') return undefined;
    here = (here as Record<string, unknown>)[key];
  }
  return here;
}

function deref(spec: Spec, value: unknown): unknown {
  const ref = get(value, '$ref');
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return value;
  return get(spec, ...ref.slice(2).split('/'));
}

/** The one mismatch of a request body or a response against the operation's schema, as a sentence. */
function explainBody(
  spec: Spec,
  req: Request,
  direction: Direction,
  body: unknown,
  status?: number,
): string | undefined {
  const route = (req as Request & { openapi?: { openApiRoute?: string } }).openapi?.openApiRoute;
  if (route === undefined) return undefined;
  const operation = get(spec, 'paths', route, req.method.toLowerCase());
  const holder =
    direction === 'request'
      ? deref(spec, get(operation, 'requestBody'))
      : deref(spec, get(operation, 'responses', String(status)) ?? get(operation, 'responses', 'default'));
  const schema = get(holder, 'content', 'application/json', 'schema');
  if (schema === undefined) return undefined;
  const found = new Explainer(spec, direction).explain(schema, body);
  if (found === undefined) return undefined;
  return found.param === '' ? found.message : `${found.param}: ${found.message}`;
}

function paramOfSentence(sentence: string): string | null {
  const colon = sentence.indexOf(': ');
  return colon > 0 && !/\s/.test(sentence.slice(0, colon)) ? sentence.slice(0, colon) : null;
}

export function toApiError(raw: unknown, req: Request, res?: Response, spec?: Spec): ApiError {
  if (raw instanceof ApiError) return raw;
  // The security handler's own error, which the validator passes on rebuilt without its code.
  const authError = res?.locals.authError;
  // Where several schemes are accepted (a key or the console's session), the validator reports the
  // first scheme's failure; the error of the scheme whose credential was sent is the one to tell.
  const rawStatus = (raw as HttpLikeError | undefined)?.status;
  if (authError && (rawStatus === 401 || rawStatus === 403)) return authError;
  const err = (raw ?? {}) as HttpLikeError;
  const status = err.status ?? err.statusCode ?? 500;
  // body-parser errors carry a `type`
  switch (err.type) {
    case 'entity.parse.failed':
      return new ApiError(400, 'invalid_json', 'The request body is not valid JSON.');
    case TOO_DEEP:
      return new ApiError(
        400,
        'json_too_deep',
        `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`,
      );
    case 'entity.too.large':
      return new ApiError(
        413,
        'payload_too_large',
        'The request body is larger than this operation accepts.',
      );
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError(415, 'unsupported_media_type', err.message ?? 'Unsupported content encoding.');
    default:
      break;
  }
  const firstPath = err.errors?.[0]?.path;
  switch (status) {
    case 400: {
      // a model the catalogue lacks is a 404 model_not_found, as OpenAI answers it (clients branch
      // on NotFoundError); the spec keeps its enum for generators
      const model = refusedModel(err, req);
      if (model !== undefined && !catalogueOf(spec).has(model)) {
        return new ApiError(
          404,
          'model_not_found',
          `The model '${model}' does not exist. Call GET /v1/models for the catalogue.`,
          { param: 'model' },
        );
      }
      if (model !== undefined) {
        return new ApiError(
          400,
          'model_not_supported',
          `Model '${model}' does not serve ${req.method} ${req.path}; see GET /v1/models for what each model serves.`,
          { param: 'model' },
        );
      }
      const param = paramFromPath(firstPath);
      // A malformed cursor is the same mistake as a forged one, whichever check caught it.
      if (param === 'cursor') {
        return new ApiError(400, 'invalid_cursor', 'The cursor was not issued by this endpoint.', { param });
      }
      // a body that breaks a union: the branch it meant and its first real mismatch, not every branch
      const told =
        spec !== undefined && firstPath?.startsWith('/body')
          ? explainBody(spec, req, 'request', req.body)
          : undefined;
      if (told !== undefined) {
        return new ApiError(400, 'validation_failed', told, { param: paramOfSentence(told) ?? param });
      }
      return new ApiError(400, 'validation_failed', describe(err), { param });
    }
    case 401:
      if (/cookie/i.test(err.message ?? '')) {
        return new ApiError(401, 'missing_session', 'No console session: log in at /console.');
      }
      return new ApiError(
        401,
        'missing_api_key',
        'No API key was sent. Send it as `Authorization: Bearer <secret>`.',
      );
    case 403:
      return new ApiError(403, 'forbidden', describe(err));
    case 404:
      return new ApiError(404, 'not_found', `No operation at ${req.method} ${req.path}.`);
    case 405: {
      const allow = err.headers?.Allow ?? err.headers?.allow;
      return new ApiError(
        405,
        'method_not_allowed',
        `${req.method} is not allowed on ${req.path}${allow ? `; allowed: ${allow}` : ''}.`,
        allow ? { headers: { Allow: allow } } : {},
      );
    }
    case 406:
      return new ApiError(406, 'not_acceptable', describe(err));
    case 413:
      return new ApiError(
        413,
        'payload_too_large',
        'The request body is larger than this operation accepts.',
      );
    case 415:
      return new ApiError(415, 'unsupported_media_type', describe(err));
    default:
      break;
  }
  // The validator's multipart parser (multer on busboy) reports a malformed body as a 500.
  const multipart =
    /^(Malformed part header|Unexpected end of form|Multipart: Boundary not found|Malformed urlencoded form)/;
  if (status === 500 && multipart.test(err.errors?.[0]?.message ?? err.message ?? '')) {
    return new ApiError(
      400,
      'invalid_multipart',
      `The multipart body is malformed: ${err.errors?.[0]?.message ?? err.message}.`,
    );
  }
  if (status === 500 && err.path !== undefined && (err.errors?.length ?? 0) > 0) {
    const told =
      spec !== undefined && 'responseBody' in err
        ? explainBody(spec, req, 'response', err.responseBody, res?.statusCode)
        : undefined;
    return new ApiError(
      500,
      'response_validation_failed',
      `The server produced a response that breaks its own contract${told === undefined ? '' : ` (${told})`}.`,
    );
  }
  return new ApiError(
    500,
    'internal_error',
    'An unexpected error occurred. It has been logged with this request id.',
  );
}

/** `logger` serves a request that has no `req.log` (requestLogger's child carrying its id). */
export function errorHandler(logger: Logger, spec?: Spec) {
  return (raw: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const error = toApiError(raw, req, res, spec);
    const requestId = requestIdOf(res);
    if (error.status >= 500 && error.status !== 501) {
      (req.log ?? logger.child({ request_id: requestId })).error(
        { err: raw, method: req.method, path: req.path },
        'request failed',
      );
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    res.setHeader('x-request-id', requestId);
    // Sent with send(), not json(): errors are built here in one shape and need no response validation.
    res
      .status(error.status)
      .type('application/json')
      .send(JSON.stringify(error.body(requestId)));
  };
}
