import { BadRequestError } from '../platform/errors.ts';
import { type CursorPosition, decodeCursor } from '../platform/pagination.ts';

/** A keyset cursor whose sort value is a number (every Sales list sorts by one), else a 400. */
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
