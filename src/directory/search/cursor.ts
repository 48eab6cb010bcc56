// The cursor of a search: the query's fingerprint, the snapshot it pages through (the highest
// sequence number, the mean rating, the instant of the first page) and the last hit served,
// base64url JSON. A cursor of another query, or none of ours, is a 400 `invalid_cursor`.
import { createHash } from 'node:crypto';
import { foldText } from '../../embeddings/index.ts';
import { BadRequestError } from '../../platform/errors.ts';
import type { SearchParams } from './shapes.ts';

export interface Cursor {
  v: 1;
  /** fingerprint of the query */
  h: string;
  /** snapshot: the highest listing sequence number, the mean rating, the instant (ms) */
  s: number;
  m: number;
  t: number;
  /** the last hit served */
  sc: number;
  id: string;
}

function invalidCursor(): BadRequestError {
  return new BadRequestError('invalid_cursor', 'The cursor was not issued for this query by this endpoint.', {
    param: 'cursor',
  });
}

export function decodeCursor(cursor: string, fingerprint: string): Cursor {
  let value: Partial<Cursor>;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Cursor>;
  } catch {
    throw invalidCursor();
  }
  if (
    value?.v !== 1 ||
    value.h !== fingerprint ||
    !Number.isSafeInteger(value.s) ||
    typeof value.m !== 'number' ||
    !Number.isSafeInteger(value.t) ||
    typeof value.sc !== 'number' ||
    typeof value.id !== 'string'
  ) {
    throw invalidCursor();
  }
  return value as Cursor;
}

export const encodeCursor = (c: Cursor): string => Buffer.from(JSON.stringify(c)).toString('base64url');

/** What makes two searches the same query (every parameter but the cursor and the limit). */
export function fingerprintOf(
  params: SearchParams,
  q: string | undefined,
  near: { lat: number; lon: number } | undefined,
  radius: number,
  /** `q` as typed, when the search read something out of it */
  typed?: string,
): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        q ?? null,
        typed ?? null,
        params.interpret ?? true,
        params.mode ?? 'hybrid',
        params.activity ?? null,
        params.country ?? null,
        params.city !== undefined ? foldText(params.city) : null,
        near ?? null,
        near ? radius : null,
        params.claimed ?? null,
        params.min_rating ?? null,
        params.open_now ?? null,
      ]),
    )
    .digest('base64url')
    .slice(0, 16);
}
