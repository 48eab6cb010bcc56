// Ranking in memory: a page from the typed arrays beside the vector index (vectors.ts) and the
// keyword postings (keywords/), with the same matches, filters and formula as the SQL path, so
// the pages are the SQL path's to the last digit (src/directory/keywords.test.ts compares them).
import type { SearchMode } from '../../../generated/directory/client/types.gen.ts';
import type { Db } from '../../platform/db.ts';
import type { CoverMatches, CoverRanker, Matches } from '../keywords/ranker.ts';
import { TopK } from '../keywords/top-k.ts';
import { listingColumns, positionsUpTo, type Similar } from '../vectors.ts';
import type { Cursor } from './cursor.ts';
import { bestOfBoth, IdOrder, rrfKeys } from './fusion.ts';
import { type Circle, NearCells, type NearMarks } from './near.ts';
import { BAYES_C, round6, RRF_K, trustOf } from './score.ts';
import type { Filters, Ranked, Snapshot } from './shapes.ts';

/** Keyword matches with their ranks, or (keyword mode, several words) to be ranked lazily. */
export type KeywordRanks = Matches | { cover: CoverMatches; ranker: CoverRanker };

/**
 * Visits the first `count` items from the highest of `bounds` down, by buckets of bounds (a
 * counting sort, no comparison sort), while `reach(edge)` says an item whose bound is at most
 * `edge` (the bucket's upper edge) can still matter; `lowest` and `highest` bracket the bounds.
 */
function fromHighest(
  bounds: ArrayLike<number>,
  count: number,
  lowest: number,
  highest: number,
  reach: (edge: number) => boolean,
  visit: (i: number) => void,
): void {
  const BUCKETS = 1024;
  const width = (highest - lowest) / BUCKETS || 1;
  const bucketOf = (b: number) => Math.min(BUCKETS - 1, Math.floor((b - lowest) / width));
  const starts = new Int32Array(BUCKETS + 1);
  for (let i = 0; i < count; i++) starts[bucketOf(bounds[i]!) + 1]!++;
  for (let b = 0; b < BUCKETS; b++) starts[b + 1]! += starts[b]!;
  const order = new Int32Array(count);
  const fill = starts.slice(0, BUCKETS);
  for (let i = 0; i < count; i++) order[fill[bucketOf(bounds[i]!)]!++] = i;
  for (let b = BUCKETS - 1; b >= 0; b--) {
    if (starts[b] === starts[b + 1]) continue;
    // every bound in bucket b is below its upper edge (the top one holds the highest)
    if (!reach(b === BUCKETS - 1 ? highest : lowest + (b + 1) * width)) break;
    for (let o = starts[b]!; o < starts[b + 1]!; o++) visit(order[o]!);
  }
}

/** What ranking in memory keeps for one database: ids in order, trust by position, scratch. */
export class MemoryRanking {
  readonly #db: Db;
  readonly #order: IdOrder;
  /** The depth hybrid's fusion tries first, doubled until it decides the page. */
  readonly #fusionDepth: number;
  #trust: { mean: number; size: number; trust: Float64Array; bayes: Float64Array; max: number } | undefined;
  /** Scratch of hits: a listing's place among the keyword matches, by position. */
  #slots = new Int32Array(0);
  /** Scratch of hits: a listing's place among the semantic matches, by position. */
  #semSlots = new Int32Array(0);
  /** The `near` filter's grid and scratch (near.ts). */
  readonly #near = new NearCells();

  constructor(db: Db, options: { fusionDepth: number }) {
    this.#db = db;
    this.#order = new IdOrder(db);
    this.#fusionDepth = options.fusionDepth;
  }

  /** Builds ids in order and trust by position now, so the first searches do not pay for them. */
  prepare(snapshot: Snapshot): void {
    const upTo = positionsUpTo(this.#db, snapshot.seq);
    this.trustColumns(snapshot.mean, upTo);
    this.#order.current();
    this.#near.build(listingColumns(this.#db), upTo);
  }

  /**
   * Every listing's Bayesian rating and trust part of the score for a snapshot's mean rating,
   * by index position: the same formulas as the SQL, computed once per mean (the mean moves only
   * when listings are added) and extended as the index grows, so ranking a match is one lookup.
   */
  trustColumns(
    mean: number,
    upTo: number,
  ): { trust: Float64Array; bayes: Float64Array; /** the highest trust of all (a bound) */ max: number } {
    const cols = listingColumns(this.#db);
    let cached = this.#trust;
    if (!cached || cached.mean !== mean)
      cached = { mean, size: 0, trust: new Float64Array(0), bayes: new Float64Array(0), max: 0 };
    if (cached.size < upTo) {
      const size = Math.max(upTo, cols.size);
      const trust = new Float64Array(size);
      const bayes = new Float64Array(size);
      trust.set(cached.trust.subarray(0, cached.size));
      bayes.set(cached.bayes.subarray(0, cached.size));
      let max = cached.max;
      for (let at = cached.size; at < size; at++) {
        const n = cols.reviews[at]!;
        const rating = cols.ratings64[at]!;
        const b = (BAYES_C * mean + n * (Number.isNaN(rating) ? mean : rating)) / (BAYES_C + n);
        const response = cols.responses[at]!;
        bayes[at] = b;
        trust[at] = trustOf(b, n, cols.claimed[at] === 1, Number.isNaN(response) ? null : response);
        max = Math.max(max, trust[at]!);
      }
      cached = { mean, size, trust, bayes, max };
    }
    this.#trust = cached;
    return cached;
  }

  /**
   * A page ranked in memory (keywords/ and vectors.ts): the same matches, filters and formula
   * as the SQL path (sql.ts), from typed arrays; only the page's profiles are read. `ranks` are the
   * keyword matches (unused in semantic mode).
   */
  hits(
    ranks: KeywordRanks,
    mode: SearchMode,
    sem: Similar,
    snapshot: Snapshot,
    filters: Filters,
    limit: number,
    cursor: Cursor | undefined,
    /** the listings within `filters.near`, when the caller marked them already (`near`) */
    marked?: NearMarks,
  ): Ranked[] {
    const near = filters.near;
    const marks = near && !marked ? this.near(near, positionsUpTo(this.#db, snapshot.seq)) : marked;
    try {
      return this.#hits(ranks, mode, sem, snapshot, filters, limit, cursor, marks);
    } finally {
      if (marks && !marked) this.#near.release(marks);
    }
  }

  /** The listings below `upTo` within `circle`, marked until `release` (see near.ts). */
  near(circle: Circle, upTo: number): NearMarks {
    return this.#near.mark(listingColumns(this.#db), circle, upTo);
  }

  release(marks: NearMarks): void {
    this.#near.release(marks);
  }

  /** Those of `candidates` (positions below `upTo`) within `circle`, in their order. */
  within(candidates: Int32Array, circle: Circle, upTo: number): Int32Array {
    const marks = this.near(circle, upTo);
    try {
      const inside = marks.inside;
      let n = 0;
      for (let i = 0; i < candidates.length; i++) if (candidates[i]! < upTo) n += inside[candidates[i]!]!;
      const out = new Int32Array(n);
      for (let i = 0, k = 0; i < candidates.length; i++) {
        const at = candidates[i]!;
        if (at < upTo && inside[at] === 1) out[k++] = at;
      }
      return out;
    } finally {
      this.release(marks);
    }
  }

  #hits(
    ranks: KeywordRanks,
    mode: SearchMode,
    sem: Similar,
    snapshot: Snapshot,
    filters: Filters,
    limit: number,
    cursor: Cursor | undefined,
    marks: NearMarks | undefined,
  ): Ranked[] {
    const db = this.#db;
    const cols = listingColumns(db);
    const upTo = positionsUpTo(db, snapshot.seq);
    // the filters, exact copies of the SQL's
    const country = filters.country !== undefined ? (cols.countryIds.get(filters.country) ?? -1) : undefined;
    // the city filter as a lookup by dictionary id, for the city and the district columns
    let city: Uint8Array | undefined;
    let district: Uint8Array | undefined;
    if (filters.city) {
      city = new Uint8Array(cols.cityIds.size);
      district = new Uint8Array(cols.cityIds.size);
      for (const name of filters.city.cities) {
        const id = cols.cityIds.get(name);
        if (id !== undefined && id > 0) city[id] = 1;
      }
      for (const name of filters.city.districts) {
        const id = cols.cityIds.get(name);
        if (id !== undefined && id > 0) district[id] = 1;
      }
    }
    let activity: Uint8Array | undefined;
    if (filters.activity !== undefined) {
      activity = new Uint8Array(upTo);
      for (const at of cols.byCode.get(filters.activity) ?? []) if (at < upTo) activity[at] = 1;
    }
    const near = filters.near;
    if (near && !marks) throw new Error('near without its marks');
    const inside = marks ? marks.inside : new Uint8Array(0);
    /** The distance within the circle; NaN outside it; null without `near`. */
    const distanceAt = (at: number): number | null => (marks ? marks.distance(cols, at) : null);
    const keep = (at: number): boolean => {
      if (country !== undefined && cols.countries[at] !== country) return false;
      if (city && city[cols.cities[at]!] !== 1 && district![cols.districts[at]!] !== 1) return false;
      if (filters.claimed !== undefined && (cols.claimed[at] === 1) !== filters.claimed) return false;
      if (filters.minRating !== undefined && !(cols.ratings64[at]! >= filters.minRating)) return false;
      if (activity && activity[at] !== 1) return false;
      return true;
    };
    /** A listing kept and within the radius: its distance (null without `near`); else undefined. */
    const placed = (at: number): number | null | undefined => {
      if (near && inside[at] === 0) return undefined;
      if (!keep(at)) return undefined;
      return distanceAt(at);
    };

    const { trust, bayes, max: maxTrust } = this.trustColumns(snapshot.mean, upTo);
    let top = new TopK<Ranked>(limit + 1);
    /** The score before rounding, as the SQL computes it. */
    const weigh = (relevance: number, at: number, dist: number | null) => {
      const base = 0.7 * relevance + 0.3 * trust[at]!;
      return near && dist !== null ? 0.9 * base + 0.1 * Math.max(0, 1 - dist / near.radius) : base;
    };
    const offer = (
      at: number,
      relevance: number,
      kw: number | null,
      sim: number | null,
      dist: number | null,
    ) => {
      const withNear = weigh(relevance, at, dist);
      // rounding to six decimals moves a score by at most 5e-7: most matches stop here
      if (withNear < top.floor() - 1e-6) return;
      const score = round6(withNear);
      const id = cols.idAt(at);
      if (cursor && !(score < cursor.sc || (score === cursor.sc && id > cursor.id))) return;
      if (!top.accepts(score, id)) return;
      top.offer({ seq: cols.seqs[at]!, id, kw, sim, bayes: bayes[at]!, dist, score });
    };
    if (mode === 'keyword' && 'ranker' in ranks) {
      // No fusion. Every match's score is bounded first (its rank bounded from the postings'
      // counts, no positions read), then matches are ranked from the highest bound down (in
      // buckets of bounds) until no bound left can reach the page.
      const { cover, ranker } = ranks;
      const n = cover.ats.length;
      const bounds = new Float64Array(n);
      const which = new Int32Array(n); // the match's index in `cover`
      const dists = new Float64Array(n);
      let m = 0;
      let highest = Number.NEGATIVE_INFINITY;
      let lowest = Number.POSITIVE_INFINITY;
      for (let i = 0; i < n; i++) {
        const at = cover.ats[i]!;
        const dist = placed(at);
        if (dist === undefined) continue;
        const bound = weigh(cover.bounds[i]!, at, dist);
        bounds[m] = bound;
        which[m] = i;
        dists[m] = dist ?? Number.NaN;
        m++;
        if (bound > highest) highest = bound;
        if (bound < lowest) lowest = bound;
      }
      fromHighest(
        bounds,
        m,
        lowest,
        highest,
        (edge) => edge >= top.floor() - 1e-6,
        (i) => {
          if (bounds[i]! < top.floor() - 1e-6) return;
          const kw = ranker.rankMatch(cover, which[i]!);
          offer(cover.ats[which[i]!]!, kw, kw, null, near ? dists[i]! : null);
        },
      );
      return top.sorted();
    }
    if ('ranker' in ranks) throw new Error('lazy keyword ranks serve keyword mode only');
    if (mode === 'keyword') {
      // no fusion: each match is scored as it comes (bucketing by rank prunes little: a broad
      // word's matches share a few rank values)
      const { ats, ranks: values } = ranks;
      if (!near && !activity && country === undefined && !city) {
        // no filter that reads more than the trust columns (the common case): the score before
        // rounding in the loop, and only matches that can still reach the page are offered
        let floor = top.floor() - 1e-6;
        for (let i = 0; i < ats.length; i++) {
          const at = ats[i]!;
          if (0.7 * values[i]! + 0.3 * trust[at]! < floor) continue;
          if (filters.claimed !== undefined && (cols.claimed[at] === 1) !== filters.claimed) continue;
          if (filters.minRating !== undefined && !(cols.ratings64[at]! >= filters.minRating)) continue;
          offer(at, values[i]!, values[i]!, null, null);
          floor = top.floor() - 1e-6;
        }
        return top.sorted();
      }
      for (let i = 0; i < ranks.ats.length; i++) {
        const at = ranks.ats[i]!;
        const kw = ranks.ranks[i]!;
        const dist = placed(at);
        if (dist === undefined) continue;
        offer(at, kw, kw, null, dist);
      }
      return top.sorted();
    }
    if (mode === 'semantic') {
      for (let i = 0; i < sem.ats.length; i++) {
        const at = sem.ats[i]!;
        if (at >= upTo) continue;
        const dist = placed(at);
        if (dist === undefined) continue;
        const sim = sem.sims[i]!;
        offer(at, Math.max(0, Math.min(1, sim)), null, sim, dist);
      }
      return top.sorted();
    }
    // RRF: each side's rank by (value desc, id asc), as the SQL's row_number() gives them
    const kwAts: number[] = [];
    const kwValues: number[] = [];
    const kwDists: (number | null)[] = [];
    for (let i = 0; i < ranks.ats.length; i++) {
      const at = ranks.ats[i]!;
      const kw = ranks.ranks[i]!;
      const dist = placed(at);
      if (dist === undefined) continue;
      kwAts.push(at);
      kwValues.push(kw);
      kwDists.push(dist);
    }
    // a listing's place on the keyword side, by position (scratch, cleared below)
    if (this.#slots.length < upTo)
      this.#slots = new Int32Array(Math.max(upTo, Math.ceil(this.#slots.length * 1.5)));
    const slots = this.#slots;
    for (let k = 0; k < kwAts.length; k++) slots[kwAts[k]!] = k + 1;
    const semAts: number[] = [];
    const semValues: number[] = [];
    const semDists: (number | null)[] = [];
    for (let i = 0; i < sem.ats.length; i++) {
      const at = sem.ats[i]!;
      if (at >= upTo || (near && inside[at] === 0) || !keep(at)) continue;
      const k = slots[at]!;
      const dist = k > 0 ? kwDists[k - 1]! : distanceAt(at);
      semAts.push(at);
      semValues.push(sem.sims[i]!);
      semDists.push(dist);
    }
    const norm = 2.0 / (RRF_K + 1);
    // The page from each side's best few, when they decide it: a listing ranked below `depth` on
    // both sides scores at most `bound`, so once the page's lowest score is above that, no other
    // listing can enter it (most first pages: depth 128 of 10,000-50,000 on each side).
    const keys = rrfKeys(this.#order, kwAts, kwValues, semAts, semValues);
    if (keys) {
      if (this.#semSlots.length < upTo) this.#semSlots = new Int32Array(slots.length);
      const semSlots = this.#semSlots;
      for (let j = 0; j < semAts.length; j++) semSlots[semAts[j]!] = j + 1;
      let page: Ranked[] | undefined;
      for (let depth = this.#fusionDepth; depth < Math.max(kwAts.length, semAts.length); depth *= 2) {
        const best = bestOfBoth(keys, kwAts, semAts, depth, slots, semSlots);
        top = new TopK<Ranked>(limit + 1);
        for (let c = 0; c < best.count; c++) {
          const k = best.k[c]!;
          const j = best.j[c]!;
          const relevance =
            ((k >= 0 ? 1.0 / (RRF_K + best.kwRank[c]!) : 0) +
              (j >= 0 ? 1.0 / (RRF_K + best.semRank[c]!) : 0)) /
            norm;
          offer(
            k >= 0 ? kwAts[k]! : semAts[j]!,
            relevance,
            k >= 0 ? kwValues[k]! : null,
            j >= 0 ? semValues[j]! : null,
            k >= 0 ? kwDists[k]! : semDists[j]!,
          );
        }
        const base = 0.7 * (2.0 / (RRF_K + depth + 1) / norm) + 0.3 * maxTrust;
        const bound = near ? 0.9 * base + 0.1 : base;
        if (top.floor() > bound + 1e-6) {
          page = top.sorted();
          break;
        }
      }
      for (const at of semAts) semSlots[at] = 0;
      if (page) {
        for (const at of kwAts) slots[at] = 0;
        return page;
      }
    }
    top = new TopK<Ranked>(limit + 1);
    const kwRanks = this.#order.rankByValueThenId(kwAts, kwValues);
    const semRanks = this.#order.rankByValueThenId(semAts, semValues);
    const semRankAt = new Map<number, number>();
    for (let j = 0; j < semAts.length; j++) {
      const at = semAts[j]!;
      const k = slots[at]!;
      if (k > 0) {
        semRankAt.set(at, j);
        continue;
      }
      offer(at, 1.0 / (RRF_K + semRanks[j]!) / norm, null, semValues[j]!, semDists[j]!);
    }
    for (let k = 0; k < kwAts.length; k++) {
      const at = kwAts[k]!;
      slots[at] = 0;
      const j = semRankAt.get(at);
      const relevance =
        (1.0 / (RRF_K + kwRanks[k]!) + (j !== undefined ? 1.0 / (RRF_K + semRanks[j]!) : 0)) / norm;
      offer(at, relevance, kwValues[k]!, j !== undefined ? semValues[j]! : null, kwDists[k]!);
    }
    return top.sorted();
  }
}
