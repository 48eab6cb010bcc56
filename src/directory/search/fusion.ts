// Hybrid search's fusion in memory: reciprocal rank fusion of the keyword and semantic sides,
// each side ranked by (value desc, id asc) as the SQL's row_number() ranks them, tried first on
// each side's best few (bestOfBoth) and on every match when those do not decide the page.
import type { Db } from '../../platform/db.ts';
import { listingColumns } from '../vectors.ts';

/**
 * Every listing's place in id order, by position, and the reverse: kept for one database, from
 * the order the index's start-up load made (once per machine), with the listings added since
 * put in their places (a binary search by id each).
 */
export class IdOrder {
  readonly #db: Db;
  #order: { size: number; rankOf: Int32Array; byRank: Int32Array } = {
    size: 0,
    rankOf: new Int32Array(0),
    byRank: new Int32Array(0),
  };
  /** Scratch of rankByValueThenId: a listing's place in its input, by position. */
  #places = new Int32Array(0);

  constructor(db: Db) {
    this.#db = db;
  }

  current(): { rankOf: Int32Array; byRank: Int32Array } {
    const cols = listingColumns(this.#db);
    let old = this.#order;
    if (old.size === cols.size) return old;
    const base = cols.baseOrder;
    if (old.size < base.size && base.size <= cols.size) {
      old = { size: base.size, rankOf: new Int32Array(0), byRank: base.byRank };
    }
    // the listings after `old`, by id, each with its place among `old`'s
    const fresh = Array.from({ length: cols.size - old.size }, (_, i) => {
      const at = old.size + i;
      return { at, id: cols.idAt(at) };
    }).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const byRank = new Int32Array(cols.size);
    let from = 0;
    let r = 0;
    for (const { at, id } of fresh) {
      let lo = from;
      let hi = old.size;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (cols.idAt(old.byRank[mid]!) < id) lo = mid + 1;
        else hi = mid;
      }
      byRank.set(old.byRank.subarray(from, lo), r);
      r += lo - from;
      from = lo;
      byRank[r++] = at;
    }
    byRank.set(old.byRank.subarray(from, old.size), r);
    const rankOf = new Int32Array(cols.size);
    for (let k = 0; k < cols.size; k++) rankOf[byRank[k]!] = k;
    const order = { size: cols.size, rankOf, byRank };
    this.#order = order;
    return order;
  }

  /**
   * The 1-based rank of each of `ats` when ordered by `values` descending, then id ascending:
   * one native sort of numbers (the value's place among the distinct values, then the id's
   * place), no string comparison.
   */
  rankByValueThenId(ats: number[], values: number[]): Int32Array {
    const n = ats.length;
    const out = new Int32Array(n);
    if (n === 0) return out;
    const { rankOf, byRank } = this.current();
    if (this.#places.length < rankOf.length) this.#places = new Int32Array(rankOf.length);
    const places = this.#places;
    const distinct = Float64Array.from(values).sort().reverse();
    let d = 0;
    for (let i = 1; i < n; i++) if (distinct[i] !== distinct[d]) distinct[++d] = distinct[i]!;
    const levels = distinct.subarray(0, d + 1);
    const scale = 2 ** Math.ceil(Math.log2(rankOf.length + 1));
    const keys = new Float64Array(n);
    for (let k = 0; k < n; k++) {
      // the value's place among the distinct values, largest first (binary search)
      let lo = 0;
      let hi = levels.length - 1;
      const v = values[k]!;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (levels[mid]! > v) lo = mid + 1;
        else hi = mid;
      }
      keys[k] = lo * scale + rankOf[ats[k]!]!;
      places[ats[k]!] = k;
    }
    keys.sort();
    for (let r = 0; r < n; r++) out[places[byRank[keys[r]! % scale]!]!] = r + 1;
    return out;
  }
}

const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

/**
 * Each side's order for RRF as one exact double per listing, smallest first: the keyword rank
 * (a float4, by its bits) or the similarity (in millionths), descending, then the id's place.
 * Undefined when the index is too large for both to fit in 53 bits.
 */
export function rrfKeys(
  order: IdOrder,
  kwAts: number[],
  kwValues: number[],
  semAts: number[],
  semValues: number[],
): { kw: Float64Array; sem: Float64Array } | undefined {
  const { rankOf } = order.current();
  const scale = 2 ** Math.ceil(Math.log2(rankOf.length + 1));
  if (scale > 2 ** 22) return undefined;
  const kw = new Float64Array(kwAts.length);
  for (let k = 0; k < kw.length; k++) {
    f32[0] = kwValues[k]!; // a float4 already: exact
    kw[k] = (0x7f800000 - f32Bits[0]!) * scale + rankOf[kwAts[k]!]!;
  }
  const sem = new Float64Array(semAts.length);
  for (let j = 0; j < sem.length; j++) {
    // similarities are rounded to 1e-6 in [-1, 1]
    sem[j] = (1_000_000 - Math.round(semValues[j]! * 1e6)) * scale + rankOf[semAts[j]!]!;
  }
  return { kw, sem };
}

/** The `m`-th smallest of `keys` (all distinct), by a bounded max-heap; Infinity when fewer. */
function mthSmallest(keys: Float64Array, m: number): number {
  if (keys.length <= m) return Number.POSITIVE_INFINITY;
  const heap = new Float64Array(m);
  let size = 0;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (size < m) {
      let c = size++;
      while (c > 0) {
        const p = (c - 1) >> 1;
        if (heap[p]! >= key) break;
        heap[c] = heap[p]!;
        c = p;
      }
      heap[c] = key;
    } else if (key < heap[0]!) {
      let c = 0;
      for (;;) {
        const l = 2 * c + 1;
        if (l >= m) break;
        const r = l + 1;
        const big = r < m && heap[r]! > heap[l]! ? r : l;
        if (heap[big]! <= key) break;
        heap[c] = heap[big]!;
        c = big;
      }
      heap[c] = key;
    }
  }
  return heap[0]!;
}

/** The 1-based place of each of `wanted` (ascending, distinct, each one of `keys`) among `keys`. */
function placesAmong(keys: Float64Array, wanted: Float64Array): Int32Array {
  const below = new Int32Array(wanted.length + 1);
  const last = wanted[wanted.length - 1] ?? Number.NEGATIVE_INFINITY;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (key >= last) continue;
    // the first wanted key above this one: it and every later one are behind it
    let lo = 0;
    let hi = wanted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (wanted[mid]! <= key) lo = mid + 1;
      else hi = mid;
    }
    below[lo]!++;
  }
  const out = new Int32Array(wanted.length);
  let sum = 0;
  for (let w = 0; w < wanted.length; w++) {
    sum += below[w]!;
    out[w] = sum + 1;
  }
  return out;
}

/**
 * The listings within `depth` of the top on either side of RRF, each with its exact rank on
 * every side it is on: `k` / `j` its index on the keyword / semantic side, or -1.
 */
export function bestOfBoth(
  keys: { kw: Float64Array; sem: Float64Array },
  kwAts: number[],
  semAts: number[],
  depth: number,
  /** a listing's place among the keyword / semantic matches, plus one, by position */
  slots: Int32Array,
  semSlots: Int32Array,
): { count: number; k: Int32Array; j: Int32Array; kwRank: Int32Array; semRank: Int32Array } {
  const kwMax = mthSmallest(keys.kw, depth);
  const semMax = mthSmallest(keys.sem, depth);
  const ks: number[] = [];
  const js: number[] = [];
  for (let k = 0; k < kwAts.length; k++) {
    if (keys.kw[k]! <= kwMax) {
      ks.push(k);
      js.push(semSlots[kwAts[k]!]! - 1);
    }
  }
  for (let j = 0; j < semAts.length; j++) {
    if (keys.sem[j]! > semMax) continue;
    const k = slots[semAts[j]!]! - 1;
    if (k >= 0 && keys.kw[k]! <= kwMax) continue; // already in, from the keyword side
    ks.push(k);
    js.push(j);
  }
  const count = ks.length;
  const rankOn = (side: Float64Array, idx: number[]): Int32Array => {
    const wanted = Float64Array.from(idx.filter((i) => i >= 0).map((i) => side[i]!)).sort();
    const places = placesAmong(side, wanted);
    const out = new Int32Array(count);
    for (let c = 0; c < count; c++) {
      const i = idx[c]!;
      if (i < 0) continue;
      // binary search of its key among the wanted ones
      let lo = 0;
      let hi = wanted.length - 1;
      const key = side[i]!;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (wanted[mid]! < key) lo = mid + 1;
        else hi = mid;
      }
      out[c] = places[lo]!;
    }
    return out;
  };
  return {
    count,
    k: Int32Array.from(ks),
    j: Int32Array.from(js),
    kwRank: rankOn(keys.kw, ks),
    semRank: rankOn(keys.sem, js),
  };
}
