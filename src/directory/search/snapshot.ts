// The snapshot a first page is ranked against: the highest sequence number committed and the
// directory-wide mean rating up to it (kept until the sequence number moves). The mean is summed
// from the search index's ratings, in position (sequence) order, only the listings added since
// the last sum: `avg(rating)` in SQL read the whole table (4.3 GB at a million listings: 2.3 s
// from the page cache, a minute from disk on a restart). Ratings are never updated in place.
import type { Db } from '../../platform/db.ts';
import { listingColumns, positionsUpTo, refreshVectors } from '../vectors.ts';
import type { Snapshot } from './shapes.ts';

export class Snapshots {
  readonly #db: Db;
  #mean: { maxSeq: number; mean: number } | undefined;
  /** the ratings summed so far: positions below `upTo` */
  #sum = { upTo: 0, total: 0, count: 0 };
  #running: Promise<number> | undefined;
  #queued: Promise<number> | undefined;

  constructor(db: Db) {
    this.#db = db;
  }

  /**
   * The highest sequence number committed, read by a query that began after this call: while
   * one such query runs, callers wait for the next one, which then serves them all (under a
   * burst the database sees one query per round trip, not one per request; a search still sees
   * every listing committed before it arrived).
   */
  latestSeq(): Promise<number> {
    const run = (): Promise<number> => {
      const p = this.#db
        .query<{ s: number | null }>('select max(seq) as s from listings')
        .then(([row]) => Number(row?.s ?? 0));
      this.#running = p;
      const done = () => {
        if (this.#running === p) this.#running = undefined;
      };
      p.then(done, done);
      return p;
    };
    if (!this.#running) return run();
    this.#queued ??= this.#running
      .catch(() => undefined)
      .then(() => {
        this.#queued = undefined;
        return run();
      });
    return this.#queued;
  }

  async current(): Promise<Snapshot> {
    const seq = await this.latestSeq();
    if (this.#mean && this.#mean.maxSeq === seq) return { seq, mean: this.#mean.mean };
    await refreshVectors(this.#db, seq);
    const mean = Math.round((this.#meanUpTo(seq) ?? 4) * 1e4) / 1e4;
    this.#mean = { maxSeq: seq, mean };
    return { seq, mean };
  }

  /** The mean of the ratings of the listings up to `seq` (none rated: undefined). */
  #meanUpTo(seq: number): number | undefined {
    const upTo = positionsUpTo(this.#db, seq);
    let sum = this.#sum;
    // a snapshot older than the last one summed (a request that waited): summed afresh
    if (upTo < sum.upTo) sum = { upTo: 0, total: 0, count: 0 };
    const ratings = listingColumns(this.#db).ratings64;
    let { total, count } = sum;
    for (let at = sum.upTo; at < upTo; at++) {
      const r = ratings[at]!;
      if (r === r) {
        total += r;
        count++;
      }
    }
    if (upTo >= this.#sum.upTo) this.#sum = { upTo, total, count };
    return count === 0 ? undefined : total / count;
  }
}
