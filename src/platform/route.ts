// Spec -> handler in one typed line. A route is registered by its operationId, which gives the
// method, the path and the generated `XData` and `XResponses` types: its input is typed from
// the path, query and body the validator already checked, and it returns a reply whose status
// and body the spec names, so a handler that answers a wrong shape fails to compile (as hey-api's
// `RouteHandlers` does for fastify). Errors are thrown as ApiError and leave in the envelope.
import { type Request, type Response, Router } from 'express';
import type { Principal } from './principal.ts';
import { principalOf } from './principal.ts';
import {
  OPERATIONS as DIRECTORY_OPERATIONS,
  type Operations as DirectoryOperations,
} from '../../generated/directory/operations.ts';
import {
  OPERATIONS as MODEL_OPERATIONS,
  type Operations as ModelOperations,
} from '../../generated/model/operations.ts';

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

/** `/v1/keys/{id}` -> `/v1/keys/:id` */
export function expressPath(url: string): string {
  return url.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

function send(
  res: Response,
  reply: { status: number; body: unknown; headers?: Record<string, string>; type?: string },
): void {
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

// Both services' operations; one registered on both (the keys, the usage...) is typed by the
// Model API's spec, which says the same as the Directory API's.
type Operations = ModelOperations & Omit<DirectoryOperations, keyof ModelOperations>;
const OPERATIONS: Record<string, { method: 'get' | 'post' | 'put' | 'patch' | 'delete'; path: string }> = {
  ...DIRECTORY_OPERATIONS,
  ...MODEL_OPERATIONS,
};

export type OperationId = keyof Operations & string;
export type ModelOperationId = keyof ModelOperations & string;
export type DirectoryOperationId = keyof DirectoryOperations & string;
export type { DirectoryOperations, ModelOperations };
type DataOf<O, K extends keyof O> = O[K] extends { data: infer D extends OperationData } ? D : never;
type ResponsesOf<O, K extends keyof O> = O[K] extends { responses: infer R } ? R : never;
export type OperationHandler<K extends keyof O, O = Operations> = Handler<DataOf<O, K>, ResponsesOf<O, K>>;

/**
 * A router whose routes are registered by operationId: the method, the path and the types come
 * from the spec (generated/<service>/operations.ts). Each `on` adds its operation to the
 * router's type, so a service's assembly (`serves`) fails to compile while an operation of its
 * spec has no handler. Declare it with its type, as assertion methods require:
 *
 * ```ts
 * const api: OperationRouter = operationRouter();
 * api.on('createKey', async ({ body, principal }) => ({
 *   status: 201,
 *   body: await store.createKey(principal().accountId, body),
 * }));
 * return api;
 * ```
 */
export interface OperationRouter<Registered extends string = never, O = Operations> {
  readonly router: Router;
  /** The operations registered so far: a type only. */
  readonly registered?: { [K in Registered]: true };
  on<K extends keyof O & string>(
    id: K,
    handler: NoInfer<OperationHandler<K, O>>,
  ): asserts this is OperationRouter<Registered | K, O>;
}

/**
 * An operation of both services whose types differ between their specs (GET /v1/usage) is
 * registered on `operationRouter<DirectoryOperations>()` for the Directory API's.
 */
export function operationRouter<O = Operations>(): OperationRouter<never, O> {
  const router = Router();
  return {
    router,
    on(id, handler) {
      const operation = OPERATIONS[id];
      if (!operation) throw new Error(`no operation ${id} in either spec`);
      router[operation.method](expressPath(operation.path), async (req: Request, res: Response) => {
        const later: Array<() => Promise<void>> = [];
        const input = {
          body: req.body as never,
          path: req.params as never,
          query: req.query as never,
          req,
          res,
          principal: () => principalOf(res),
          after: (work: () => Promise<void>) => void later.push(work),
        };
        const reply = await (handler as Handler<OperationData, Record<number, unknown>>)(input);
        if (reply !== SENT) send(res, reply);
        for (const work of later) await work();
      });
    },
  };
}

type Served<R> = R extends { registered?: infer M } ? keyof NonNullable<M> : never;

/** The routers' express side when they serve exactly `Id`; otherwise what is missing or extra. */
type Coverage<Id, S> = [Exclude<Id, S>] extends [never]
  ? [Exclude<S, Id>] extends [never]
    ? Router[]
    : { extra: Exclude<S, Id> }
  : { missing: Exclude<Id, S> };

/**
 * A service's routers, which together must serve each operation of its spec (`Id`) and no other:
 * a missing handler (or one of the other service) makes the result a `{ missing: ... }` that is
 * no `Router[]`, so the assembly fails to compile, naming the operations.
 */
export function serves<Id extends OperationId>() {
  return <Rs extends Array<{ readonly router: Router; readonly registered?: object }>>(
    ...routers: Rs
  ): Coverage<Id, Served<Rs[number]>> => routers.map((r) => r.router) as Coverage<Id, Served<Rs[number]>>;
}
