// Spec -> handler in one typed line. A route is registered with the generated `XData` and
// `XResponses` types of its operation: its URL must be the operation's, its input is typed from
// the path, query and body the validator already checked, and it returns a reply whose status
// and body the spec names, so a handler that answers a wrong shape fails to compile (as hey-api's
// `RouteHandlers` does for fastify). Errors are thrown as ApiError and leave in the envelope.
import { type Request, type Response, Router } from 'express';
import type { Principal } from './principal.ts';
import { principalOf } from './principal.ts';

/** The shape of a generated `XData` type. */
export interface OperationData {
  body?: unknown;
  path?: unknown;
  query?: unknown;
  headers?: unknown;
  url: string;
}

/** A body the spec gives as binary (`format: binary`, generated as `Blob | File`) is sent as bytes. */
type WireBody<B> = B extends Blob ? Uint8Array : B;

/** One reply of the operation: a status of its `XResponses`, the body the spec gives that status. */
export type Reply<R> = {
  [S in keyof R & number]: {
    status: S;
    body: WireBody<R[S]>;
    /** Response headers; the spec's own (Location, Link, ...) are set here. */
    headers?: Record<string, string>;
    /** Content type of a binary body (e.g. `image/jpeg`); JSON otherwise. */
    type?: string;
  };
}[keyof R & number];

/**
 * Returned by a handler that wrote the response itself: a server-sent event stream or another
 * body the response validator does not see. Use it for those alone.
 */
export const SENT: unique symbol = Symbol('sent');

export interface Input<D extends OperationData> {
  body: D['body'];
  path: D['path'];
  query: D['query'];
  req: Request;
  res: Response;
  /** The caller, set by the security handler; throws on an operation the spec leaves open. */
  principal(): Principal;
  /** Work to do once the reply is sent (metering): it does not delay the answer; an error goes on as the route's would. */
  after(work: () => Promise<void>): void;
}

export type Handler<D extends OperationData, R> = (
  input: Input<D>,
) => Reply<R> | typeof SENT | Promise<Reply<R> | typeof SENT>;

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** `/v1/keys/{id}` -> `/v1/keys/:id` */
export function expressPath(url: string): string {
  return url.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

function send<R>(res: Response, reply: Reply<R>): void {
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
  res.status(reply.status);
  if (reply.body instanceof Uint8Array) {
    res.type(reply.type ?? 'application/octet-stream').send(Buffer.from(reply.body));
  } else if (reply.status === 204) {
    res.end();
  } else {
    res.json(reply.body);
  }
}

export interface TypedRouter {
  readonly router: Router;
  get<D extends OperationData, R>(url: D['url'], handler: Handler<D, R>): void;
  post<D extends OperationData, R>(url: D['url'], handler: Handler<D, R>): void;
  put<D extends OperationData, R>(url: D['url'], handler: Handler<D, R>): void;
  patch<D extends OperationData, R>(url: D['url'], handler: Handler<D, R>): void;
  delete<D extends OperationData, R>(url: D['url'], handler: Handler<D, R>): void;
}

/**
 * A router whose routes are typed by the generated types:
 *
 * ```ts
 * const api = typedRouter();
 * api.post<CreateKeyData, CreateKeyResponses>('/v1/keys', async ({ body, principal }) => ({
 *   status: 201,
 *   body: await store.createKey(principal().accountId, body),
 * }));
 * ```
 */
export function typedRouter(): TypedRouter {
  const router = Router();
  const add =
    (method: Method) =>
    <D extends OperationData, R>(url: D['url'], handler: Handler<D, R>): void => {
      router[method](expressPath(url), async (req: Request, res: Response) => {
        const later: Array<() => Promise<void>> = [];
        const input = {
          body: req.body as D['body'],
          path: req.params as D['path'],
          query: req.query as D['query'],
          req,
          res,
          principal: () => principalOf(res),
          after: (work: () => Promise<void>) => void later.push(work),
        };
        const reply = await handler(input);
        if (reply !== SENT) send(res, reply);
        for (const work of later) await work();
      });
    };
  return {
    router,
    get: add('get'),
    post: add('post'),
    put: add('put'),
    patch: add('patch'),
    delete: add('delete'),
  };
}
