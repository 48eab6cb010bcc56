// The snapshot a first page is ranked against: the highest sequence number committed and the
// directory-wide mean rating up to it (kept until the sequence number moves).
import type { Db } from '../../platform/db.ts';
import type { Snapshot } from './shapes.ts';

export class Snapshots {
  readonly #db: Db;
  #mean: { maxSeq: number; mean: number } | undefined;
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
    const [m] = await this.#db.query<{ m: number | null }>(
      'select avg(rating)::float8 as m from listings where rating is not null and seq <= $1',
      [seq],
    );
    const mean = Math.round((m?.m ?? 4) * 1e4) / 1e4;
    this.#mean = { maxSeq: seq, mean };
    return { seq, mean };
  }
}
