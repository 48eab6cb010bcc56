// The middleware of both services, in one visible order (ARCHITECTURE.md, A request): request id, operational
// routes, body parser, the OpenAPI validator on the bundled spec, the service's routers,
// the 501 for specified operations not built yet, and the one error handler.
import { mkdirSync, readFileSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express, {
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
  Router,
} from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type { Registry } from 'prom-client';
import { errorHandler } from './error-handler.ts';
import { BadRequestError, NotImplementedError } from './errors.ts';
import type { Logger } from './logger.ts';
import { corsFor, securityHeaders } from './browser.ts';
import { refuseDeepJson } from './json-depth.ts';
import { keyedMetrics, metricsRegistry, observeRequests } from './metrics.ts';
import { installRequestLogger, requestId } from './request-id.ts';
import { cacheRouteMatchers } from './route-cache.ts';
import { skipIdFreeComponents } from './schema-refs.ts';

/** The two services, named once. */
export type ServiceName = 'model' | 'directory';
export interface ServiceOptions {
  name: ServiceName;
  /** The bundled spec (readSpec). */
  spec: Record<string, unknown>;
  docsPath: string;
  logger: Logger;
  /** Runs after validation and authentication, before the routers (rate limits). */
  middleware?: RequestHandler[];
  routers: Router[];
  /** Authenticates the bearer key and checks the operation's scopes (src/accounts/auth.ts). */
  securityHandler: (req: Request, scopes: string[]) => Promise<boolean>;
  /** Handlers of the spec's other security schemes, by name (the console's `SessionCookie`). */
  otherSecurityHandlers?: Record<string, (req: Request, scopes: string[]) => Promise<boolean>>;
  /** Routers outside the API contract, before the validator: web pages (the console), never under /v1/. */
  pages?: Router[];
  /** Whether the service can take traffic (storage migrated, data loaded). */
  isReady: () => boolean;
  jsonLimit?: string;
  /** Origins browser apps may call from (CORS_ORIGINS); `*` when not given. */
  corsOrigins?: '*' | string[];
  /**
   * CORS with credentials for a few requests (the console's calls with its session): true when it
   * answered the request's CORS itself (a preflight then ends with 204), false to leave it to the
   * bearer-key CORS of `corsOrigins`.
   */
  credentialedCors?: (req: Request, res: Response) => boolean;
  uploadLimitBytes?: number;
  /** Where multipart uploads are written as they arrive (deleted when the response ends); the OS's temp dir by default. */
  uploadDir?: string;
  /**
   * The service's metrics (platform/metrics.ts): `GET /metrics` on this port only with `key`
   * (METRICS_KEY) as a bearer; without a key, not on this port (the metrics listener serves them).
   */
  metrics?: { registry: Registry; key: string | undefined };
}

/** Deletes a request's uploaded files once its response is over, whatever happened. */
function removeUploads(req: Request, res: Response, next: NextFunction): void {
  res.once('close', () => {
    const files = (req as Request & { files?: { path?: string }[] }).files;
    for (const file of Array.isArray(files) ? files : [])
      if (file.path) void unlink(file.path).catch(() => {});
  });
  next();
}

interface OpenApiRequest extends Request {
  openapi?: { openApiRoute?: string };
}

/** A fresh copy of a service's bundled spec (the validator may change the copy it is given). */
export function readSpec(name: ServiceName): never {
  return JSON.parse(readFileSync(`generated/${name}/openapi.json`, 'utf8')) as never;
}

/** Where a JSON value holds U+0000 in a string or a key, as a `param` path, else undefined. */
export function nulAt(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = nulAt(item, `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const here = path ? `${path}.${key}` : key;
      if (key.includes('\u0000')) return here;
      const found = nulAt(item, here);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

// PostgreSQL text cannot hold U+0000: refuse it up front with a 400 rather than fail in storage.
const MAX_COOKIES = 50;

/** `req.cookies` from the Cookie header (the validator reads cookie security schemes there). */
export function parseCookies(req: Request, _res: Response, next: NextFunction): void {
  const cookies: Record<string, string> = {};
  const header = req.headers.cookie ?? '';
  for (const part of header.split(';').slice(0, MAX_COOKIES)) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (name && !(name in cookies)) cookies[name] = value;
  }
  (req as Request & { cookies: Record<string, string> }).cookies = cookies;
  next();
}

function rejectNul(req: Request, _res: Response, next: NextFunction): void {
  const param = nulAt(req.body) ?? nulAt(req.query);
  if (param === undefined) return next();
  next(
    new BadRequestError('invalid_string', 'Strings must not contain the NUL character (U+0000).', {
      param: param || null,
    }),
  );
}

/**
 * Middleware that every request passes, run in order as one: the router's work per layer (its
 * match, its `next`) was a larger share of a chat call than these functions themselves. Each
 * must be synchronous; an error ends the chain as `next(err)` would.
 */
function inOrder(...handlers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let i = 0;
    const step = (err?: unknown): void => {
      if (err) return next(err);
      const handler = handlers[i++];
      if (handler === undefined) return next();
      void handler(req, res, step);
    };
    step();
  };
}

export function createServiceApp(options: ServiceOptions): Express {
  const spec = options.spec;
  const specText = JSON.stringify(spec);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'extended');

  const registry = options.metrics?.registry ?? metricsRegistry(options.name);
  const observe = observeRequests(registry);

  installRequestLogger(app, options.logger);
  const bearerCors = corsFor(options.corsOrigins ?? '*');
  const credentialedCors = options.credentialedCors;
  app.use(
    inOrder(requestId, observe, securityHeaders, (req, res, next) => {
      if (!credentialedCors?.(req, res)) bearerCors(req, res, next);
      else if (req.method === 'OPTIONS') res.status(204).end();
      else next();
    }),
  );

  // Operational routes and pages, outside the API contract (and never under /v1/).
  const outside = Router();
  outside.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  outside.get('/readyz', (_req, res) => {
    const ready = options.isReady();
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'starting' });
  });
  outside.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(specText);
  });
  outside.get('/docs', (_req, res, next) => {
    res.sendFile(options.docsPath, { root: process.cwd() }, (err) => err && next(err));
  });
  const metricsKey = options.metrics?.key;
  if (metricsKey !== undefined) outside.get('/metrics', keyedMetrics(registry, metricsKey));
  for (const router of options.pages ?? []) outside.use(router);
  app.use((req, res, next) => (req.path.startsWith('/v1/') ? next() : outside(req, res, next)));

  app.use(express.json({ limit: options.jsonLimit ?? '10mb', verify: refuseDeepJson }));
  // Form posts (the RFC 8058 one-click unsubscribe of campaign mail): small and flat.
  app.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 }));
  app.use(inOrder(rejectNul, parseCookies, removeUploads));
  // JSON bodies are validated as sent: `{"name": false}` is a 400, never the string "false".
  // Multipart fields arrive as strings, so those bodies alone are coerced to the schema's types
  // (query and path parameters always are). Two validator instances, one per body kind, the
  // multipart one made when the first upload comes.
  cacheRouteMatchers(); // the validator compiled every route it scanned, on every request
  skipIdFreeComponents(); // and walked the spec's components again for each schema it compiled
  // Uploads go to disk as they arrive, counted against the limit (multer): memory stays flat.
  const uploadDir = options.uploadDir ?? join(tmpdir(), 'eurus-uploads');
  mkdirSync(uploadDir, { recursive: true });
  const validator = (coerceBody: boolean) =>
    Router().use(
      OpenApiValidator.middleware({
        apiSpec: spec as never,
        // the bundled spec is checked against the OpenAPI schema once, by spec-schema.test.ts, not
        // at each start (0.1-0.2 s of CPU per validator made: a test run makes some 300)
        validateApiSpec: false,
        validateRequests: { allowUnknownQueryParameters: false, coerceTypes: coerceBody },
        // the body goes with the error, so the handler can say which field broke the contract
        validateResponses: {
          onError: (err: Error, body: unknown) => {
            throw Object.assign(err, { responseBody: body });
          },
        },
        validateSecurity: {
          handlers: { BearerAuth: options.securityHandler, ...options.otherSecurityHandlers },
        },
        ignoreUndocumented: false,
        fileUploader: {
          dest: uploadDir,
          limits: {
            fileSize: options.uploadLimitBytes ?? 25 * 1024 * 1024,
            files: 1,
            fields: 20,
            fieldSize: 64 * 1024,
          },
        },
      }),
    );
  const strict = validator(false);
  // made on the first upload: each instance reads and preprocesses the whole spec as it is made,
  // work a start need not do twice (multipart comes to a transcription, an image edit, and a
  // mail client's one-click unsubscribe)
  let multipart: ReturnType<typeof validator> | undefined;
  app.use((req, res, next) =>
    req.is('multipart/form-data') ? (multipart ??= validator(true))(req, res, next) : strict(req, res, next),
  );

  for (const handler of options.middleware ?? []) app.use(handler);
  for (const router of options.routers) app.use(router);

  // A specified operation that no router answered is not built yet: say so, never pretend.
  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(new NotImplementedError(req.method, (req as OpenApiRequest).openapi?.openApiRoute ?? req.path));
  });
  app.use(errorHandler(options.logger, JSON.parse(specText) as Record<string, unknown>));
  return app;
}
