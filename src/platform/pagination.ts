// Keyset pagination for every list: newest first by (created, id); the cursor names the last
// item served, so rows inserted during a walk land before it and never shift a later page.
import type { Request, Response } from 'express';
import type { HasMore, ListObjectType, NextCursor } from '../../generated/model/client/types.gen.ts';
import type { Queryable } from './db.ts';
import { BadRequestError } from './errors.ts';

/** A page of a list, in the spec's list envelope (ListObjectType, HasMore, NextCursor). */
export interface Page<T> {
  object: ListObjectType;
  data: T[];
  has_more: HasMore;
  next_cursor: NextCursor;
}

export interface CursorPosition {
  /** The sort value of the last item served (a number or a string). */
  k: number | string;
  /** Its id, the tie-breaker. */
  id: string;
}

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): CursorPosition | undefined {
  if (cursor === undefined) return undefined;
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<CursorPosition>;
    if ((typeof value.k === 'number' || typeof value.k === 'string') && typeof value.id === 'string') {
      return { k: value.k, id: value.id };
    }
  } catch {
    // fall through
  }
  throw new BadRequestError('invalid_cursor', 'The cursor was not issued by this endpoint.', {
    param: 'cursor',
  });
}

/**
 * The SQL condition for the rows after `cursor` in a list newest first by (created, id), its two
 * values pushed onto `params`; '' without a cursor.
 */
export function afterCursor(cursor: string | undefined, params: unknown[]): string {
  const at = decodeCursor(cursor);
  if (!at) return '';
  params.push(Number(at.k), at.id);
  return ` and (created, id) < ($${params.length - 1}, $${params.length})`;
}

/** A keyset cursor whose sort value is a number (a list sorted by one), else a 400. */
export function numericCursor(cursor: string | undefined): (CursorPosition & { k: number }) | undefined {
  const after = decodeCursor(cursor);
  if (after === undefined) return undefined;
  if (typeof after.k !== 'number' || !Number.isSafeInteger(after.k)) {
    throw new BadRequestError('invalid_cursor', 'The cursor was not issued by this endpoint.', {
      param: 'cursor',
    });
  }
  return { k: after.k, id: after.id };
}

/**
 * A page of a list newest first by (created, id): `select` is the query up to its conditions
 * (`select … from t where …`, their values in `params`); the cursor's condition, the order and the
 * limit are added here, and `toItem` makes each row an item.
 */
export async function pageNewestFirst<Row extends { created: number | string; id: string }, T>(
  db: Queryable,
  select: string,
  params: unknown[],
  page: { limit: number; cursor: string | undefined },
  toItem: (row: Row) => T,
): Promise<Page<T>> {
  const where = afterCursor(page.cursor, params);
  params.push(page.limit + 1);
  const rows = await db.query<Row>(
    `${select}${where} order by created desc, id desc limit $${params.length}`,
    params,
  );
  return pageOf(rows, page.limit, toItem, (row) => ({ k: Number(row.created), id: row.id }));
}

/** Builds a page from `limit + 1` rows fetched after the cursor. */
export function pageOf<Row, T>(
  rows: Row[],
  limit: number,
  toItem: (row: Row) => T,
  positionOf: (row: Row) => CursorPosition,
): Page<T> {
  const hasMore = rows.length > limit;
  const served = hasMore ? rows.slice(0, limit) : rows;
  const last = served.at(-1);
  return {
    object: 'list',
    data: served.map(toItem),
    has_more: hasMore,
    next_cursor: hasMore && last !== undefined ? encodeCursor(positionOf(last)) : null,
  };
}

/** `Link: <...>; rel="next"` when there is a next page, keeping the request's other query parameters. */
export function nextLinkOf(req: Request, page: Page<unknown>): Record<string, string> {
  if (!page.next_cursor) return {};
  const url = new URL(req.originalUrl, 'http://placeholder');
  url.searchParams.set('cursor', page.next_cursor);
  return { Link: `<${url.pathname}${url.search}>; rel="next"` };
}

/** The page a list operation asks for: `limit` (20 unless given, as the specs say) and `cursor`. */
export function pageAsked(query: { limit?: number; cursor?: string } | undefined): {
  limit: number;
  cursor: string | undefined;
} {
  return { limit: query?.limit ?? 20, cursor: query?.cursor };
}

/** A list reply of a typed route: the page and its `Link` header. */
export function pageReply<P extends Page<unknown>>(
  req: Request,
  page: P,
): { status: 200; body: P; headers: Record<string, string> } {
  return { status: 200, body: page, headers: nextLinkOf(req, page) };
}

/** Sets `Link: <...>; rel="next"` when there is a next page (routes not yet typed). */
export function setNextLink(req: Request, res: Response, page: Page<unknown>): void {
  for (const [name, value] of Object.entries(nextLinkOf(req, page))) res.setHeader(name, value);
}
