// Log-in throttling by failure (issue 29, finding 5). Failures count per pair of account address
// and client address: past FREE_FAILURES, each failure blocks the pair for a delay that doubles
// (1 s, 2 s, 4 s ... up to 15 minutes), and a success clears it. A guesser elsewhere slows only
// itself: the owner logging in from their own address is never locked out by it. What one
// address tries across accounts is bounded apart, by the per-address bucket in routes.ts.
import { createHash } from 'node:crypto';
import type { Db } from '../platform/db.ts';

export const FREE_FAILURES = 5;
const MAX_DELAY_MS = 15 * 60_000;
/** A pair that has not failed for this long starts again from nothing. */
const FORGET_AFTER_MS = 24 * 3600_000;

const pairOf = (email: string, address: string) =>
  createHash('sha256').update(`${email}\0${address}`, 'utf8').digest('hex');

/** The block after the `failures`-th failure, in ms: 0 up to FREE_FAILURES, then doubling. */
export function delayAfter(failures: number): number {
  if (failures <= FREE_FAILURES) return 0;
  return Math.min(MAX_DELAY_MS, 1000 * 2 ** Math.min(failures - FREE_FAILURES - 1, 30));
}

export class LoginThrottle {
  readonly #db: Db;
  readonly #now: () => number;

  constructor(db: Db, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
  }

  /** Ms the pair must still wait before its next attempt; 0 when it may try now. */
  async waitMs(email: string, address: string): Promise<number> {
    const [row] = await this.#db.query<{ blocked_until: string | number }>(
      'select blocked_until from console_login_failures where pair_hash = $1',
      [pairOf(email, address)],
    );
    return row ? Math.max(0, Number(row.blocked_until) - this.#now()) : 0;
  }

  /** Counts a failure; the ms the pair is now blocked for. */
  async failed(email: string, address: string): Promise<number> {
    const now = this.#now();
    const [row] = await this.#db.query<{ failures: number }>(
      `insert into console_login_failures (pair_hash, failures, last_failure_at, blocked_until)
       values ($1, 1, $2, 0)
       on conflict (pair_hash) do update set
         failures = case when console_login_failures.last_failure_at < $3 then 1
                         else console_login_failures.failures + 1 end,
         last_failure_at = $2
       returning failures`,
      [pairOf(email, address), now, now - FORGET_AFTER_MS],
    );
    const delay = delayAfter(row?.failures ?? 1);
    if (delay > 0) {
      await this.#db.query('update console_login_failures set blocked_until = $2 where pair_hash = $1', [
        pairOf(email, address),
        now + delay,
      ]);
    }
    return delay;
  }

  async succeeded(email: string, address: string): Promise<void> {
    await this.#db.query('delete from console_login_failures where pair_hash = $1', [pairOf(email, address)]);
  }

  /** Drops pairs that have not failed for a day (the retention job). */
  async forgetOld(): Promise<number> {
    const rows = await this.#db.query(
      'delete from console_login_failures where last_failure_at < $1 returning pair_hash',
      [this.#now() - FORGET_AFTER_MS],
    );
    return rows.length;
  }
}
