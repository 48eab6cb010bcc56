// The semantic side of search: the listings' embeddings (stored in `listings.embedding` as a
// float32 scale and 384 signed bytes), held in memory per process (about 390 MB at a million
// listings; the bytes in WebAssembly memory, where the SIMD kernel of dot.ts reads them) and
// caught up by sequence number when a search's snapshot is newer, so every instance sees every
// listing the database has.
//
// A query is not compared with every listing (384 M multiply-adds at a million, far too slow
// for one request): the built-in embedding engine puts a listing near a query when they share
// a concept of the thesaurus, and each concept is tied to NACE activities, so the candidates
// are the listings of those activities (the GIN index on `activity_path`), or, for a query that
// names no concept (a company name), the listings sharing one of its words. Their similarity is
// then exact. `similarities` (every listing) stays as the reference the tests hold this to.
//
// Why not pgvector: PGlite 0.5 ships no `vector` extension, and one SQL for both storage paths
// rules it out. With PostgreSQL alone, a pgvector HNSW index could replace this module.
import type { Queryable } from '../platform/db.ts';
import { createVectorStore, DIMENSIONS, quantizeQuery, type VectorStore } from './dot.ts';
import { addPostings, KeywordIndex } from './keywords/postings.ts';

const BATCH = 20_000;

/** What search reads besides the vectors (keywords/ too); positions are in sequence order. */
export interface ListingColumns {
  size: number;
  seqs: Float64Array;
  /** the trust signals, so an unfiltered search ranks without reading rows */
  ids: string[];
  reviews: Int32Array;
  claimed: Uint8Array;
  responses: Float32Array;
  /** what keyword search filters on (keywords/): exact copies of the columns */
  ratings64: Float64Array;
  lats: Float64Array;
  lons: Float64Array;
  countries: Uint16Array;
  cities: Int32Array;
  /** the district's id in `cityIds` (0 is '', no district) */
  districts: Int32Array;
  /** dictionaries of the country and city (and district) codes above */
  countryIds: Map<string, number>;
  cityIds: Map<string, number>;
  /** keyword postings by lexeme of `tsv` (keywords/postings.ts) */
  keywords: KeywordIndex;
  /** positions by NACE code (each activity and the codes above it): semantic candidates */
  byCode: Map<string, number[]>;
}

interface Index extends ListingColumns {
  maxSeq: number;
  scales: Float32Array;
  store: VectorStore;
  /**
   * Where each position's embedding sits in the store: the positions loaded at start-up are
   * regrouped by activity (`groupByActivity`), so a query's candidates (the listings of a few
   * activities) are read as a few contiguous runs; later positions sit at their own number.
   */
  slots: Int32Array | undefined;
  ratings: Float32Array;
  refreshing: Promise<void> | undefined;
}

const indexes = new WeakMap<object, Index>();

/**
 * The database's index, made on first use with the given dot-product kernel (VECTOR_KERNEL;
 * the SIMD one where it assembled); a kernel named after that is ignored.
 */
export function openVectors(db: object, kernel?: 'wasm' | 'js'): void {
  indexOf(db, kernel);
}

function indexOf(db: object, kernel?: 'wasm' | 'js'): Index {
  let index = indexes.get(db);
  if (!index) {
    index = {
      maxSeq: 0,
      size: 0,
      seqs: new Float64Array(1024),
      scales: new Float32Array(1024),
      store: createVectorStore(kernel),
      slots: undefined,
      ids: [],
      ratings: new Float32Array(1024),
      reviews: new Int32Array(1024),
      claimed: new Uint8Array(1024),
      responses: new Float32Array(1024),
      ratings64: new Float64Array(1024),
      lats: new Float64Array(1024),
      lons: new Float64Array(1024),
      countries: new Uint16Array(1024),
      cities: new Int32Array(1024),
      districts: new Int32Array(1024),
      countryIds: new Map(),
      cityIds: new Map([['', 0]]),
      keywords: new KeywordIndex(),
      byCode: new Map(),
      refreshing: undefined,
    };
    index.store.reserve(1024);
    indexes.set(db, index);
  }
  return index;
}

function grow(index: Index, needed: number): void {
  if (needed <= index.seqs.length) return;
  const capacity = Math.max(needed, Math.ceil(index.seqs.length * 1.5));
  const seqs = new Float64Array(capacity);
  seqs.set(index.seqs.subarray(0, index.size));
  const scales = new Float32Array(capacity);
  scales.set(index.scales.subarray(0, index.size));
  index.store.reserve(capacity);
  const copy = <T extends Float32Array | Float64Array | Int32Array | Uint8Array | Uint16Array>(
    from: T,
    to: T,
  ) => {
    to.set(from.subarray(0, index.size));
    return to;
  };
  Object.assign(index, {
    seqs,
    scales,
    ratings: copy(index.ratings, new Float32Array(capacity)),
    reviews: copy(index.reviews, new Int32Array(capacity)),
    claimed: copy(index.claimed, new Uint8Array(capacity)),
    responses: copy(index.responses, new Float32Array(capacity)),
    ratings64: copy(index.ratings64, new Float64Array(capacity)),
    lats: copy(index.lats, new Float64Array(capacity)),
    lons: copy(index.lons, new Float64Array(capacity)),
    countries: copy(index.countries, new Uint16Array(capacity)),
    cities: copy(index.cities, new Int32Array(capacity)),
    districts: copy(index.districts, new Int32Array(capacity)),
  });
}

/** Loads the embeddings of listings added since the last call (one load at a time per process). */
export async function refreshVectors(db: Queryable, upTo = Infinity): Promise<void> {
  const index = indexOf(db);
  while (index.maxSeq < upTo) {
    if (index.refreshing) {
      await index.refreshing;
      continue;
    }
    let complete = false;
    index.refreshing = (async () => {
      const rows = await db.query<{
        seq: number;
        id: string;
        embedding: Uint8Array;
        rating: number | null;
        review_count: number;
        claimed: boolean;
        response_time: number | null;
        activity_path: string[];
        country: string;
        city_folded: string;
        district_folded: string | null;
        lat: number;
        lon: number;
        tsv: string;
      }>(
        `select seq, id, embedding, rating, review_count, claimed, response_time, activity_path,
           country, city_folded, district_folded, lat, lon, tsv::text as tsv
         from listings where seq > $1 order by seq limit $2`,
        [index.maxSeq, BATCH],
      );
      grow(index, index.size + rows.length);
      for (const row of rows) {
        const bytes = row.embedding;
        const at = index.size;
        index.seqs[at] = Number(row.seq);
        index.scales[at] = new DataView(bytes.buffer, bytes.byteOffset, 4).getFloat32(0, true);
        index.store.set(
          at < (index.slots?.length ?? 0) ? index.slots![at]! : at,
          new Int8Array(bytes.buffer, bytes.byteOffset + 4, Math.min(DIMENSIONS, bytes.byteLength - 4)),
        );
        index.ids[at] = row.id;
        index.ratings[at] = row.rating ?? Number.NaN;
        index.reviews[at] = row.review_count;
        index.claimed[at] = row.claimed ? 1 : 0;
        index.responses[at] = row.response_time ?? Number.NaN;
        index.ratings64[at] = row.rating === null ? Number.NaN : Number(row.rating);
        index.lats[at] = Number(row.lat);
        index.lons[at] = Number(row.lon);
        index.countries[at] = dictionaryId(index.countryIds, row.country);
        index.cities[at] = dictionaryId(index.cityIds, row.city_folded);
        index.districts[at] = dictionaryId(index.cityIds, row.district_folded ?? '');
        addPostings(index.keywords, at, row.tsv);
        for (const code of row.activity_path) {
          const list = index.byCode.get(code);
          if (list) list.push(at);
          else index.byCode.set(code, [at]);
        }
        index.size++;
        index.maxSeq = Number(row.seq);
      }
      complete = rows.length < BATCH;
    })();
    try {
      await index.refreshing;
    } finally {
      index.refreshing = undefined;
    }
    if (complete) return;
  }
}

function dictionaryId(ids: Map<string, number>, value: string): number {
  let id = ids.get(value);
  if (id === undefined) ids.set(value, (id = ids.size));
  return id;
}

/** The position of a sequence number in the index, or -1. */
function positionOf(index: Index, seq: number): number {
  let lo = 0;
  let hi = index.size - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = index.seqs[mid] ?? 0;
    if (v === seq) return mid;
    if (v < seq) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

export interface Similar {
  seqs: Float64Array;
  sims: Float64Array;
  /** positions in the index, beside `seqs` */
  ats: Int32Array;
}

export interface SimilarityOptions {
  /** the lowest similarity kept */
  floor?: number;
  /** the lowest similarity kept, as a share of the best one */
  relative?: number;
}

/** Scratch of `similar`: the unrounded similarities, the positions and similarities kept. */
let rawSims = new Float64Array(0);
let keptAts = new Int32Array(0);
let keptSims = new Float64Array(0);

/**
 * The listings at these positions similar enough to `query`: the kernel's exact integer dot
 * product, scaled back by the query's and each listing's scale, rounded to 1e-6; kept when at
 * least `floor` and `relative` times the best. Rounding is monotonic, so the best is the
 * rounded highest, and only values within 1e-6 of the cut are rounded to be compared.
 */
function similar(
  index: Index,
  query: Float32Array,
  positions: ArrayLike<number>,
  count: number,
  options: SimilarityOptions,
): Similar {
  const { values, scale } = quantizeQuery(query);
  if (rawSims.length < count) rawSims = new Float64Array(Math.ceil(count * 1.5));
  const highest = rawSimilarities(index, values, scale, positions, 0, count, rawSims);
  return kept(index, rawSims, positions, count, highest, options);
}

/**
 * The unrounded similarities of the candidates `from..to` into `raw` (same indexes), from the
 * kernel's integer dot products; returns the highest.
 */
function rawSimilarities(
  index: Index,
  values: Int16Array,
  scale: number,
  positions: ArrayLike<number>,
  from: number,
  to: number,
  raw: Float64Array,
): number {
  const slice =
    from === 0 && to === positions.length ? positions : (positions as Int32Array).subarray(from, to);
  const dots = index.store.dots(values, slice, to - from, index.slots);
  const scales = index.scales;
  let highest = Number.NEGATIVE_INFINITY;
  for (let k = 0; k < to - from; k++) {
    const x = dots[k]! * scale * (scales[slice[k]!] ?? 0);
    raw[from + k] = x;
    if (x > highest) highest = x;
  }
  return highest;
}

/** The candidates whose rounded similarity makes the cut (see `similar`), in their order. */
function kept(
  index: Index,
  raw: Float64Array,
  positions: ArrayLike<number>,
  count: number,
  highest: number,
  options: SimilarityOptions,
): Similar {
  const best = Math.max(0, Math.round(highest * 1e6) / 1e6);
  const min = Math.max(options.floor ?? 0.2, (options.relative ?? 0.7) * best);
  const near = min - 1e-6;
  // most candidates of a query's activities are kept: one pass into scratch, then copies
  if (keptAts.length < count) {
    keptAts = new Int32Array(Math.ceil(count * 1.5));
    keptSims = new Float64Array(keptAts.length);
  }
  let n = 0;
  for (let k = 0; k < count; k++) {
    if (raw[k]! < near) continue;
    const sim = Math.round(raw[k]! * 1e6) / 1e6;
    if (sim < min) continue;
    keptAts[n] = positions[k]!;
    keptSims[n++] = sim;
  }
  const out: Similar = { seqs: new Float64Array(n), sims: keptSims.slice(0, n), ats: keptAts.slice(0, n) };
  for (let o = 0; o < n; o++) out.seqs[o] = index.seqs[out.ats[o]!]!;
  return out;
}

/**
 * The candidates (positions in the index, from `positionsWithCodes` or `positionOfSeq`) similar
 * enough to `query`: at least `floor`, and at least `relative` times the best similarity among
 * them, so a query about plumbing keeps plumbers and leaves out the other building trades that
 * share part of its direction.
 */
export function similarAmong(
  db: object,
  query: Float32Array,
  candidates: Int32Array,
  options: SimilarityOptions = {},
): Similar {
  return similar(indexOf(db), query, candidates, candidates.length, options);
}

/** Candidates a slice of `similarAmongInSlices` scores before it awaits `between`. */
const SLICE = 32_768;

/**
 * `similarAmong` in slices of candidates, awaiting `between` after each (a search gives way to
 * others there: 150,000 candidates take 10 to 20 ms). The kernel's scratch is used within a
 * slice only; the similarities so far are the call's own.
 */
export async function similarAmongInSlices(
  db: object,
  query: Float32Array,
  candidates: Int32Array,
  between: () => Promise<void>,
  options: SimilarityOptions = {},
  slice = SLICE,
): Promise<Similar> {
  const index = indexOf(db);
  const count = candidates.length;
  if (count <= slice) return similar(index, query, candidates, count, options);
  const { values, scale } = quantizeQuery(query);
  const raw = new Float64Array(count);
  let highest = Number.NEGATIVE_INFINITY;
  for (let from = 0; from < count; from += slice) {
    const to = Math.min(count, from + slice);
    highest = Math.max(highest, rawSimilarities(index, values, scale, candidates, from, to, raw));
    await between();
  }
  return kept(index, raw, candidates, count, highest, options);
}

/** The same over every listing up to `snapshot`: exhaustive, the reference for `similarAmong`. */
export function similarities(
  db: object,
  query: Float32Array,
  snapshot: number,
  options: SimilarityOptions = {},
): Similar {
  const index = indexOf(db);
  const upTo = positionsUpTo(db, snapshot);
  const all = new Int32Array(upTo);
  for (let i = 0; i < upTo; i++) all[i] = i;
  return similar(index, query, all, upTo, options);
}

/** The similarity of `query` to the listings with these sequence numbers (absent when unknown). */
export function similarityOf(db: object, query: Float32Array, seqs: number[]): Map<number, number> {
  const index = indexOf(db);
  const known = Int32Array.from(seqs.map((seq) => positionOf(index, seq)).filter((at) => at >= 0));
  const { values, scale } = quantizeQuery(query);
  const raw = new Float64Array(known.length);
  rawSimilarities(index, values, scale, known, 0, known.length, raw);
  return new Map(Array.from(known, (at, k) => [index.seqs[at] ?? 0, Math.round(raw[k]! * 1e6) / 1e6]));
}

/** How many embeddings this process holds for `db` (for metrics and tests). */
export function vectorCount(db: object): number {
  return indexOf(db).size;
}

/**
 * The positions of the listings up to `snapshot` with any of these NACE codes, from memory, in
 * ascending order (the kernel then reads the embeddings front to back).
 */
export function positionsWithCodes(db: object, codes: string[], snapshot: number): Int32Array {
  const index = indexOf(db);
  const upTo = positionsUpTo(db, snapshot);
  const lists = [...new Set(codes)].flatMap((code) => {
    const list = index.byCode.get(code);
    return list && list.length > 0 ? [list] : [];
  });
  if (lists.length === 1) {
    // ascending already: only the part up to the snapshot
    const list = lists[0]!;
    let n = list.length;
    while (n > 0 && list[n - 1]! >= upTo) n--;
    return Int32Array.from(list.slice(0, n));
  }
  // several lists (a listing may be under two codes): marked in a bitmap, then read in order;
  // merging them pairwise copied the growing result once per code
  if (marks.length < upTo) marks = new Uint8Array(Math.max(upTo, Math.ceil(marks.length * 1.5)));
  let total = 0;
  let lowest = upTo;
  let highest = -1;
  for (const list of lists) {
    for (let i = 0; i < list.length; i++) {
      const at = list[i]!;
      if (at >= upTo) break;
      if (marks[at] === 0) {
        marks[at] = 1;
        total++;
        if (at < lowest) lowest = at;
        if (at > highest) highest = at;
      }
    }
  }
  const out = new Int32Array(total);
  let k = 0;
  for (let at = lowest; at <= highest; at++) {
    if (marks[at] === 1) {
      out[k++] = at;
      marks[at] = 0;
    }
  }
  return out;
}

/** Scratch of positionsWithCodes: one mark per index position, all 0 between calls. */
let marks = new Uint8Array(0);

/** The positions of these sequence numbers up to `snapshot` (the unknown ones left out). */
export function positionsOfSeqs(db: object, seqs: number[], snapshot: number): Int32Array {
  const index = indexOf(db);
  return Int32Array.from(
    seqs
      .filter((seq) => seq <= snapshot)
      .map((seq) => positionOf(index, seq))
      .filter((at) => at >= 0),
  );
}

/**
 * Lays the embeddings loaded so far out by activity (each listing under its first NACE class,
 * the four-digit code): the candidates of a query are then read front to back
 * in a few runs instead of scattered over the whole store (150,000 of 1M: 9 ms against 25-31
 * ms). Called once, after the start-up load; listings added later keep their own slots.
 */
export function groupByActivity(db: object): void {
  const index = indexOf(db);
  const n = index.size;
  if (index.slots || n === 0) return;
  const groupOf = new Int32Array(n).fill(-1);
  let groups = 0;
  for (const [code, list] of index.byCode) {
    if (!/^\d{2}\.\d{2}$/.test(code)) continue;
    const g = groups++;
    for (const at of list) if (at < n && groupOf[at] === -1) groupOf[at] = g;
  }
  // a counting sort: each class's run in turn, positions ascending in it; no class last
  const groupAt = (at: number) => (groupOf[at] === -1 ? groups : groupOf[at]!);
  const size = new Int32Array(groups + 1);
  for (let at = 0; at < n; at++) size[groupAt(at)]!++;
  const next = new Int32Array(groups + 1);
  for (let g = 1; g <= groups; g++) next[g] = next[g - 1]! + size[g - 1]!;
  const slots = new Int32Array(n);
  for (let at = 0; at < n; at++) slots[at] = next[groupAt(at)]!++;
  // moved in place, cycle by cycle (a second store would hold 390 MB more at 1M until a GC):
  // slot p holds position p's embedding until the cycle through it is walked
  const store = index.store;
  const placed = new Uint8Array(n);
  for (let at = 0; at < n; at++) {
    if (placed[at]) continue;
    let carry = store.read(at).slice();
    let position = at;
    while (!placed[position]) {
      placed[position] = 1;
      const dest = slots[position]!;
      const displaced = store.read(dest).slice();
      store.set(dest, carry);
      carry = displaced;
      position = dest;
    }
  }
  index.slots = slots;
}

export function listingColumns(db: object): ListingColumns {
  return indexOf(db);
}

/** The position of the last listing up to `snapshot` plus one (positions are in seq order). */
export function positionsUpTo(db: object, snapshot: number): number {
  const index = indexOf(db);
  let lo = 0;
  let hi = index.size;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((index.seqs[mid] ?? 0) <= snapshot) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
