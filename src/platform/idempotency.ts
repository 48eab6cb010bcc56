// Idempotency-Key on the POSTs whose spec declares it: the first answer (a 2xx: JSON, text or
// audio, up to 16 MB; never an event stream, which is not kept) is stored and replayed for 24 h to every retry with the same key and body, with
// `Idempotent-Replayed: true`; the same key with another body is a 409. A request still in
// flight under the key makes a concurrent retry wait for nothing: 409 `idempotency_key_in_use`.
//
// A first answer may hold a secret shown once (a new API key, a webhook endpoint's signing
// secret), so nothing that opens it is stored: the row is found by a hash of the key, and the
// answer is sealed (AES-256-GCM) with a key derived from the Idempotency-Key, which only the
// client holds. Reading the table does not give the secrets back; a retry with the key does.
import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { NextFunction, Request, Response } from 'express';
import type { Db, Queryable } from './db.ts';
import { ConflictError } from './errors.ts';
import { secretBox } from './secrets.ts';
import { nowSeconds } from './clock.ts';

/** The row's name for a key: its hash, never the key (the key opens the stored answer). */
function rowKey(key: string): string {
  return createHash('sha256').update(`idempotency-key\0${key}`).digest('hex');
}

/** The box that seals and opens an answer stored under `key` for `accountId`. */
function answerBox(accountId: string, key: string) {
  return secretBox(
    createHmac('sha256', 'eurus idempotent answer v1').update(`${accountId}\0${key}`).digest(),
  );
}

const TTL_SECONDS = 24 * 3600;
/** The largest answer kept for replay (a long speech file in wav is about 14 MB). */
const MAX_STORED_BYTES = 16 * 1024 * 1024;
/** Marks a stored answer kept as its bytes (base64); older rows hold the JSON text itself. */
const BYTES = 'bytes:';
const REPLAYED_HEADERS = ['content-type', 'location'];

interface OpenApiRequest extends Request {
  openapi?: { openApiRoute?: string };
}

type Param = { name?: string; in?: string; $ref?: string };
type Spec = {
  paths: Record<string, Record<string, { parameters?: Param[] }>>;
  components?: { parameters?: Record<string, Param> };
};

/** The paths whose POST declares the Idempotency-Key header in the (bundled) spec. */
export function idempotentRoutes(spec: Spec): Set<string> {
  const resolve = (p: Param) =>
    p.$ref ? (spec.components?.parameters?.[p.$ref.split('/').at(-1) ?? ''] ?? {}) : p;
  const routes = new Set<string>();
  for (const [path, item] of Object.entries(spec.paths)) {
    const params = (item.post?.parameters ?? []).map(resolve);
    if (params.some((p) => p.in === 'header' && p.name?.toLowerCase() === 'idempotency-key'))
      routes.add(path);
  }
  return routes;
}

function fingerprint(req: Request): string {
  const hash = createHash('sha256').update(`${req.method} ${req.path}\n${JSON.stringify(req.body ?? null)}`);
  // a multipart upload's files count too (kept on disk by the validator's uploader)
  const files = (req as Request & { files?: { fieldname?: string; path?: string }[] }).files;
  for (const file of Array.isArray(files) ? files : []) {
    hash.update(`\n${file.fieldname ?? ''}:`);
    if (file.path) hash.update(readFileSync(file.path));
  }
  return hash.digest('hex');
}

export function idempotency(db: Db, spec: Spec) {
  const routes = idempotentRoutes(spec);
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const clientKey = req.get('idempotency-key');
    const key = clientKey === undefined ? undefined : rowKey(clientKey);
    const principal = res.locals.principal;
    const route = (req as OpenApiRequest).openapi?.openApiRoute;
    if (!key || !principal || req.method !== 'POST' || !route || !routes.has(route)) return next();
    const hash = fingerprint(req);
    const now = nowSeconds();
    try {
      const stored = await db.transaction(async (tx) => {
        await tx.query('delete from idempotency_keys where account_id = $1 and key = $2 and created < $3', [
          principal.accountId,
          key,
          now - TTL_SECONDS,
        ]);
        const inserted = await tx.query(
          `insert into idempotency_keys (account_id, key, method, path, request_hash, created)
           values ($1, $2, $3, $4, $5, $6) on conflict do nothing returning key`,
          [principal.accountId, key, req.method, req.path, hash, now],
        );
        if (inserted.length > 0) return undefined;
        const [row] = await tx.query<{
          request_hash: string;
          status: number | null;
          headers: Record<string, string> | null;
          body: string | null;
        }>(
          'select request_hash, status, headers, body from idempotency_keys where account_id = $1 and key = $2',
          [principal.accountId, key],
        );
        return row;
      });
      if (stored) {
        if (stored.request_hash !== hash) {
          throw new ConflictError(
            'idempotency_key_reused',
            'This Idempotency-Key was used with a different request; use a new key for a new request.',
            { param: 'Idempotency-Key' },
          );
        }
        if (stored.status === null) {
          throw new ConflictError(
            'idempotency_key_in_use',
            'A request with this Idempotency-Key is still in progress; retry when it has finished.',
            { param: 'Idempotency-Key' },
          );
        }
        for (const [name, value] of Object.entries(stored.headers ?? {})) res.setHeader(name, value);
        res.setHeader('Idempotent-Replayed', 'true');
        const opened = answerBox(principal.accountId, clientKey!).open(
          stored.body ?? '',
          principal.accountId,
        );
        res
          .status(stored.status)
          .send(opened.startsWith(BYTES) ? Buffer.from(opened.slice(BYTES.length), 'base64') : opened);
        return;
      }
    } catch (err) {
      return next(err);
    }

    // First request under this key: keep its JSON answer if it succeeds, else free the key.
    // The answer is kept as it goes out (JSON, text or audio bytes), up to MAX_STORED_BYTES; an
    // event stream, or a larger answer, is not kept, and its key is released when it ends.
    let saved = false;
    const chunks: Buffer[] = [];
    let size = 0;
    let keep = true;
    const take = (chunk: unknown, encoding?: unknown) => {
      if (!keep || chunk === undefined || chunk === null || typeof chunk === 'function') return;
      const bytes = Buffer.isBuffer(chunk)
        ? chunk
        : chunk instanceof Uint8Array
          ? Buffer.from(chunk)
          : Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
      size += bytes.length;
      if (
        size > MAX_STORED_BYTES ||
        String(res.getHeader('content-type') ?? '').startsWith('text/event-stream')
      ) {
        keep = false;
        chunks.length = 0;
      } else chunks.push(bytes);
    };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.write = ((...args: unknown[]) => {
      take(args[0], args[1]);
      return write(...args);
    }) as typeof res.write;
    res.end = ((...args: unknown[]) => {
      take(args[0], args[1]);
      if (keep && res.statusCode >= 200 && res.statusCode < 300) {
        saved = true;
        const headers: Record<string, string> = {};
        for (const name of REPLAYED_HEADERS) {
          const value = res.getHeader(name);
          if (value !== undefined) headers[name] = String(value);
        }
        const body = Buffer.concat(chunks);
        db.query(
          'update idempotency_keys set status = $3, headers = $4, body = $5 where account_id = $1 and key = $2',
          [
            principal.accountId,
            key,
            res.statusCode,
            JSON.stringify(headers),
            answerBox(principal.accountId, clientKey!).seal(
              `${BYTES}${body.toString('base64')}`,
              principal.accountId,
            ),
          ],
        ).catch(() => {});
      }
      return end(...args);
    }) as typeof res.end;
    res.on('close', () => {
      if (!saved) {
        db.query('delete from idempotency_keys where account_id = $1 and key = $2 and status is null', [
          principal.accountId,
          key,
        ]).catch(() => {});
      }
    });
    next();
  };
}

/** Forgets the account's stored replays (its erasure); how many went. */
export async function forgetIdempotencyKeys(q: Queryable, accountId: string): Promise<number> {
  return (await q.query('delete from idempotency_keys where account_id = $1 returning key', [accountId]))
    .length;
}
