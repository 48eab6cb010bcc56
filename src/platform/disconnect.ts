// A request's work stops when its client leaves: a signal aborted when the response closes before
// it was finished, whether that happened, and the status a usage record gives a failed call.
import type { Response } from 'express';
import { ApiError } from './errors.ts';

export interface Disconnect {
  /** Aborted (an AbortError) when the client leaves before the answer is finished. */
  readonly signal: AbortSignal;
  /** The client left before the answer was finished. */
  readonly left: boolean;
  /** The status a call that failed with `err` is recorded with: 499 once the client left. */
  statusOf(err: unknown): number;
}

export function watchDisconnect(res: Response): Disconnect {
  const controller = new AbortController();
  let left = false;
  res.on('close', () => {
    if (!res.writableFinished) {
      left = true;
      controller.abort(new DOMException('The client disconnected.', 'AbortError'));
    }
  });
  return {
    signal: controller.signal,
    get left() {
      return left;
    },
    statusOf: (err) => (left ? 499 : err instanceof ApiError ? err.status : 500),
  };
}
