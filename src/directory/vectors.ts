// The semantic side of search: the listings' embeddings (stored in `listings.embedding` as a
// float32 scale and 384 signed bytes), held in memory per process in flat typed arrays (about
// 390 MB at a million listings) and caught up by sequence number when a search's snapshot is
// newer, so every instance sees every listing the database has.
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
import { addPostings, KeywordIndex } from './keywords.ts';

const DIMENSIONS = 384;
const BATCH = 20_000;

/** What search reads besides the vectors (keywords.ts too); positions are in sequence order. */
export interface ListingColumns {
  size: number;
  seqs: Float64Array;
  /** the trust signals, so an unfiltered search ranks without reading rows */
  ids: string[];
  reviews: Int32Array;
  claimed: Uint8Array;
  responses: Float32Array;
  /** what keyword search filters on (keywords.ts): exact copies of the columns */
  ratings64: Float64Array;
  lats: Float64Array;
  lons: Float64Array;
  countries: Uint16Array;
  cities: Int32Array;
  /** dictionaries of the country and city codes above */
  countryIds: Map<string, number>;
  cityIds: Map<string, number>;
  /** keyword postings by lexeme of `tsv` (keywords.ts) */
  keywords: KeywordIndex;
  /** positions by NACE code (each activity and the codes above it): semantic candidates */
  byCode: Map<string, number[]>;
}

interface Index extends ListingColumns {
  maxSeq: number;
  scales: Float32Array;
  data: Int8Array;
  ratings: Float32Array;
  refreshing: Promise<void> | undefined;
}

const indexes = new WeakMap<object, Index>();

function indexOf(db: object): Index {
  let index = indexes.get(db);
  if (!index) {
    index = {
      maxSeq: 0,
      size: 0,
      seqs: new Float64Array(1024),
      scales: new Float32Array(1024),
      data: new Int8Array(1024 * DIMENSIONS),
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
      countryIds: new Map(),
      cityIds: new Map(),
      keywords: new KeywordIndex(),
      byCode: new Map(),
      refreshing: undefined,
    };
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
  const data = new Int8Array(capacity * DIMENSIONS);
  data.set(index.data.subarray(0, index.size * DIMENSIONS));
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
    data,
    ratings: copy(index.ratings, new Float32Array(capacity)),
    reviews: copy(index.reviews, new Int32Array(capacity)),
    claimed: copy(index.claimed, new Uint8Array(capacity)),
    responses: copy(index.responses, new Float32Array(capacity)),
    ratings64: copy(index.ratings64, new Float64Array(capacity)),
    lats: copy(index.lats, new Float64Array(capacity)),
    lons: copy(index.lons, new Float64Array(capacity)),
    countries: copy(index.countries, new Uint16Array(capacity)),
    cities: copy(index.cities, new Int32Array(capacity)),
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
        lat: number;
        lon: number;
        tsv: string;
      }>(
        `select seq, id, embedding, rating, review_count, claimed, response_time, activity_path,
           country, city_folded, lat, lon, tsv::text as tsv
         from listings where seq > $1 order by seq limit $2`,
        [index.maxSeq, BATCH],
      );
      grow(index, index.size + rows.length);
      for (const row of rows) {
        const bytes = row.embedding;
        const at = index.size;
        index.seqs[at] = Number(row.seq);
        index.scales[at] = new DataView(bytes.buffer, bytes.byteOffset, 4).getFloat32(0, true);
        index.data.set(
          new Int8Array(bytes.buffer, bytes.byteOffset + 4, Math.min(DIMENSIONS, bytes.byteLength - 4)),
          at * DIMENSIONS,
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

function dotAt(index: Index, query: Float32Array, at: number): number {
  const data = index.data;
  const base = at * DIMENSIONS;
  // four sums: the loop runs about three times faster than one accumulator with checks
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  if (query.length >= DIMENSIONS) {
    for (let i = 0; i < DIMENSIONS; i += 4) {
      s0 += query[i]! * data[base + i]!;
      s1 += query[i + 1]! * data[base + i + 1]!;
      s2 += query[i + 2]! * data[base + i + 2]!;
      s3 += query[i + 3]! * data[base + i + 3]!;
    }
  } else {
    for (let i = 0; i < query.length; i++) s0 += query[i]! * data[base + i]!;
  }
  return Math.round((s0 + s1 + s2 + s3) * (index.scales[at] ?? 0) * 1e6) / 1e6;
}

export interface Similar {
  seqs: number[];
  sims: number[];
}

export interface SimilarityOptions {
  /** the lowest similarity kept */
  floor?: number;
  /** the lowest similarity kept, as a share of the best one */
  relative?: number;
}

function threshold(all: Float64Array, seqs: ArrayLike<number>, options: SimilarityOptions): Similar {
  let best = 0;
  for (const s of all) if (s > best) best = s;
  const min = Math.max(options.floor ?? 0.2, (options.relative ?? 0.7) * best);
  const out: Similar = { seqs: [], sims: [] };
  for (let i = 0; i < all.length; i++) {
    if ((all[i] ?? -1) >= min) {
      out.seqs.push(seqs[i] ?? 0);
      out.sims.push(all[i] ?? 0);
    }
  }
  return out;
}

/**
 * The candidates (sequence numbers, up to `snapshot`) similar enough to `query`: at least
 * `floor`, and at least `relative` times the best similarity among them, so a query about
 * plumbing keeps plumbers and leaves out the other building trades that share part of its
 * direction.
 */
export function similarAmong(
  db: object,
  query: Float32Array,
  candidates: ArrayLike<number>,
  snapshot: number,
  options: SimilarityOptions = {},
): Similar {
  const index = indexOf(db);
  const all = new Float64Array(candidates.length).fill(-1);
  const seqs = new Float64Array(candidates.length);
  for (let i = 0; i < candidates.length; i++) {
    const seq = candidates[i] ?? 0;
    seqs[i] = seq;
    if (seq > snapshot) continue;
    const at = positionOf(index, seq);
    if (at >= 0) all[i] = dotAt(index, query, at);
  }
  return threshold(all, seqs, options);
}

/** The same over every listing up to `snapshot`: exhaustive, the reference for `similarAmong`. */
export function similarities(
  db: object,
  query: Float32Array,
  snapshot: number,
  options: SimilarityOptions = {},
): Similar {
  const index = indexOf(db);
  const all = new Float64Array(index.size).fill(-1);
  for (let i = 0; i < index.size; i++) {
    if ((index.seqs[i] ?? 0) <= snapshot) all[i] = dotAt(index, query, i);
  }
  return threshold(all, index.seqs.subarray(0, index.size), options);
}

/** The similarity of `query` to the listings with these sequence numbers (absent when unknown). */
export function similarityOf(db: object, query: Float32Array, seqs: number[]): Map<number, number> {
  const index = indexOf(db);
  const out = new Map<number, number>();
  for (const seq of seqs) {
    const at = positionOf(index, seq);
    if (at >= 0) out.set(seq, dotAt(index, query, at));
  }
  return out;
}

/** How many embeddings this process holds for `db` (for metrics and tests). */
export function vectorCount(db: object): number {
  return indexOf(db).size;
}

export interface TrustInputs {
  id: string;
  rating: number | null;
  review_count: number;
  claimed: boolean;
  response_time: number | null;
}

/** The id and trust signals of the listing with this sequence number, as loaded. */
export function trustInputs(db: object, seq: number): TrustInputs | undefined {
  const index = indexOf(db);
  const at = positionOf(index, seq);
  if (at < 0) return undefined;
  const rating = index.ratings[at] ?? Number.NaN;
  const response = index.responses[at] ?? Number.NaN;
  return {
    id: index.ids[at] ?? '',
    rating: Number.isNaN(rating) ? null : Math.round(rating * 100) / 100,
    review_count: index.reviews[at] ?? 0,
    claimed: index.claimed[at] === 1,
    response_time: Number.isNaN(response) ? null : response,
  };
}

/** The listings (sequence numbers, up to `snapshot`) with any of these NACE codes, from memory. */
export function seqsWithCodes(db: object, codes: string[], snapshot: number): number[] {
  const index = indexOf(db);
  const seen = new Uint8Array(index.size);
  const out: number[] = [];
  for (const code of codes) {
    for (const at of index.byCode.get(code) ?? []) {
      const seq = index.seqs[at] ?? 0;
      if (seen[at] || seq > snapshot) continue;
      seen[at] = 1;
      out.push(seq);
    }
  }
  return out;
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
