// GET /v1/search: keyword (PostgreSQL full-text search over accent-folded text, stemmed in
// seven languages), semantic (the built-in embedding engine, vectors.ts) and hybrid
// (reciprocal rank fusion of both), with filters, ranked by relevance and trust signals, and
// paged by keyset on (score, id) against a snapshot (every listing up to a sequence number,
// the directory-wide mean rating and the instant of the first page, all carried in the cursor).
// At a million listings: only narrow columns are scored and the profiles of one page read;
// each query's semantic set and the last pages served are kept per process (a snapshot's
// pages never change); `SEARCH_CACHE=off` disables both (the benchmark's cold figures).
import { createHash } from 'node:crypto';
import type {
  SearchHit,
  SearchListingsData,
  SearchMode,
  SearchResults,
} from '../../generated/directory/client/types.gen.ts';
import { conceptsOf, embedOne, foldText, tokenize } from '../embeddings/index.ts';
import { CONCEPTS } from '../embeddings/thesaurus.ts';
import type { Db } from '../platform/db.ts';
import { BadRequestError } from '../platform/errors.ts';
import { openingHoursUntil } from './hours.ts';
import {
  EMBEDDING_DIMENSIONS,
  QUERY_CONFIGS,
  toListing,
  type ListingRecord,
  type ReadOptions,
} from './store.ts';
import {
  type CoverMatches,
  CoverRanker,
  keywordRanks,
  lexemeGroups,
  type Matches,
  plainLexemes,
  TopK,
} from './keywords.ts';
import {
  listingColumns,
  positionsUpTo,
  refreshVectors,
  groupByActivity,
  positionsOfSeqs,
  positionsWithCodes,
  similarAmongInSlices,
  similarityOf,
  type Similar,
} from './vectors.ts';

export type SearchParams = NonNullable<SearchListingsData['query']>;

/** Reviews the Bayesian average trusts as much as the directory-wide mean (C in the spec). */
export const BAYES_C = 10;
const RRF_K = 60;

interface Cursor {
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

function decode(cursor: string, fingerprint: string): Cursor {
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

const encode = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString('base64url');

function parseNear(near: string): { lat: number; lon: number } {
  const [lat, lon] = near.split(',').map((part) => Math.round(Number(part) * 1e7) / 1e7);
  if (lat === undefined || lon === undefined || !Number.isFinite(lat) || !Number.isFinite(lon)) {
    throw new BadRequestError('invalid_near', 'near must be "lat,lon" in decimal degrees.', {
      param: 'near',
    });
  }
  return { lat, lon };
}

const meanCache = new WeakMap<object, { maxSeq: number; mean: number }>();

/**
 * The highest sequence number committed, read by a query that began after this call: while
 * one such query runs, callers wait for the next one, which then serves them all (under a
 * burst the database sees one query per round trip, not one per request; a search still sees
 * every listing committed before it arrived).
 */
const flights = new WeakMap<
  object,
  { running?: Promise<number> | undefined; queued?: Promise<number> | undefined }
>();
export function latestSeq(db: Db): Promise<number> {
  let flight = flights.get(db);
  if (!flight) flights.set(db, (flight = {}));
  const f = flight;
  const run = (): Promise<number> => {
    const p = db
      .query<{ s: number | null }>('select max(seq) as s from listings')
      .then(([row]) => Number(row?.s ?? 0));
    f.running = p;
    const done = () => {
      if (f.running === p) f.running = undefined;
    };
    p.then(done, done);
    return p;
  };
  if (!f.running) return run();
  f.queued ??= f.running
    .catch(() => undefined)
    .then(() => {
      f.queued = undefined;
      return run();
    });
  return f.queued;
}

async function snapshotOf(db: Db): Promise<{ seq: number; mean: number }> {
  const seq = await latestSeq(db);
  const cached = meanCache.get(db);
  if (cached && cached.maxSeq === seq) return { seq, mean: cached.mean };
  const [m] = await db.query<{ m: number | null }>(
    'select avg(rating)::float8 as m from listings where rating is not null and seq <= $1',
    [seq],
  );
  const mean = Math.round((m?.m ?? 4) * 1e4) / 1e4;
  meanCache.set(db, { maxSeq: seq, mean });
  return { seq, mean };
}

/** `SEARCH_CACHE=off` turns the caches below off (the benchmark's cold figures). */
const cacheOn = () => process.env.SEARCH_CACHE !== 'off';
/** Whether pages may be served again (the route keeps their JSON only then). */
export const searchCacheOn = cacheOn;

/** Remembers the last `size` results of an async function of a string, per database. */
function lru<T>(size: number, weight: (value: T) => number = () => 1, always = false) {
  const caches = new WeakMap<object, { map: Map<string, T>; total: number }>();
  return {
    get(db: object, key: string): T | undefined {
      const cache = caches.get(db);
      const value = cache?.map.get(key);
      if (cache && value !== undefined) {
        cache.map.delete(key);
        cache.map.set(key, value);
      }
      return value;
    },
    set(db: object, key: string, value: T): void {
      if (!always && !cacheOn()) return;
      let cache = caches.get(db);
      if (!cache) caches.set(db, (cache = { map: new Map(), total: 0 }));
      cache.map.set(key, value);
      cache.total += weight(value);
      while (cache.total > size) {
        const [oldest, old] = cache.map.entries().next().value as [string, T];
        cache.map.delete(oldest);
        cache.total -= weight(old);
      }
    },
  };
}

/**
 * French and Italian elided articles and pronouns (l’évier, d’eau, qu’il, dell’auto) dropped
 * from a keyword query: nobody searches for the article, and the parser would make a phrase
 * of it ('l' <-> 'evier'), which asks for that exact spelling in the listing.
 */
const ELISION =
  /(^|[^\p{L}\p{N}])(?:l|d|j|m|n|s|t|c|qu|jusqu|lorsqu|puisqu|dell|dall|nell|sull|all|quell|un)['’](?=\p{L})/giu;
export function withoutElisions(text: string): string {
  return text.replace(ELISION, '$1');
}

/** Parsed queries: a pure function of the text, so kept even with SEARCH_CACHE=off. */
const tsqueryCache = lru<string[]>(1000, () => 1, true);

/**
 * The query's stemmed forms in every query configuration, each once: "restaurant" is the same
 * in five of the seven, and every duplicate would cost a match test and a rank per row.
 */
async function tsqueriesOf(db: Db, folded: string): Promise<string[]> {
  const hit = tsqueryCache.get(db, folded);
  if (hit) return hit;
  const rows = await db.query<{ q: string }>(
    `select distinct websearch_to_tsquery(c::regconfig, $1)::text as q from unnest($2::text[]) c`,
    [withoutElisions(folded), QUERY_CONFIGS],
  );
  const variants = rows
    .map((r) => r.q)
    .filter((v) => v !== '')
    .sort();
  tsqueryCache.set(db, folded, variants);
  return variants;
}

const SEMANTIC_CACHE_SIZE = 64;
/** Pages kept, counted in hits (about 2 KB each): 50,000 is about 100 MB at most. */
const pageCache = lru<Row[]>(50_000, (rows) => rows.length + 1);
const semanticCache = lru<Similar>(SEMANTIC_CACHE_SIZE);
/**
 * Rendered pages (the same object each time, so the route sends its kept JSON), while they
 * hold: counted in hits like the page cache.
 */
const renderedPages = lru<{ page: SearchResults; from: number; until: number }>(
  20_000,
  (r) => r.page.data.length + 1,
);

/**
 * The listings semantically close to `q` in a snapshot (see vectors.ts): candidates from the
 * NACE activities of the query's concepts, or from its words when it names none; exact
 * similarities over them. Kept per process for the last queries: the same set serves every
 * page of a query and every repeat of it, and a snapshot never changes.
 */
export async function semanticSet(
  db: Db,
  q: string,
  vector: Float32Array,
  snapshot: number,
  /** awaited between slices of candidates (a search gives way to others there) */
  between: () => Promise<void> = async () => {},
): Promise<Similar> {
  const key = `${snapshot}\u0000${q}`;
  const hit = semanticCache.get(db, key);
  if (hit) return hit;
  const codes = [...new Set([...conceptsOf(q).keys()].flatMap((c) => CONCEPTS[c]?.nace ?? []))];
  const words = [...new Set(tokenize(q))].slice(0, 16);
  await refreshVectors(db, snapshot);
  let candidates: Int32Array = new Int32Array(0);
  if (codes.length > 0) {
    // what `activity_path && codes` selects, from the vector index's copy (no row read)
    candidates = positionsWithCodes(db, codes, snapshot);
  } else if (words.length > 0) {
    const rows = await db.query<{ seq: number }>(
      `select seq from listings where seq <= $1::bigint and tsv @@ to_tsquery('simple', $2)`,
      [snapshot, words.map((w) => `'${w}'`).join(' | ')],
    );
    candidates = positionsOfSeqs(
      db,
      rows.map((r) => Number(r.seq)),
      snapshot,
    );
  }
  const set = await similarAmongInSlices(db, vector, candidates, between);
  semanticCache.set(db, key, set);
  return set;
}

/** The page's hits with their profiles (the wide column), read for these rows only. */
async function withProfiles(db: Db, page: Omit<Row, 'profile'>[]): Promise<Row[]> {
  const profiles = new Map(
    (
      await db.query<{ seq: number; profile: ListingRecord }>(
        'select seq, profile from listings where seq = any($1::bigint[])',
        [page.map((h) => h.seq)],
      )
    ).map((r) => [Number(r.seq), r.profile]),
  );
  return page.flatMap((h) => {
    const profile = profiles.get(h.seq);
    return profile ? [{ ...h, profile }] : [];
  });
}

/**
 * `round(x::numeric, 6)::float8` as PostgreSQL computes it: the float8 goes to numeric with 15
 * significant digits, is rounded half away from zero, and comes back correctly rounded.
 */
export function round6(x: number): number {
  const scaled = x * 1e6;
  const frac = scaled - Math.floor(scaled);
  if (Math.abs(frac - 0.5) > 1e-4 && Number.isFinite(scaled)) return Math.round(scaled) / 1e6;
  const text = x.toPrecision(15);
  if (text.includes('e')) return Math.round(scaled) / 1e6;
  const negative = text.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? text.slice(1) : text).split('.');
  let digits = BigInt(whole + fraction.padEnd(6, '0').slice(0, 6));
  if ((fraction[6] ?? '0') >= '5') digits += 1n;
  return ((negative ? -1 : 1) * Number(digits)) / 1e6;
}

/** The trust part of the score, as the SQL below computes it. */
function trustOf(bayes: number, reviews: number, claimed: boolean, response: number | null): number {
  return (
    (0.5 * (bayes - 1)) / 4 +
    0.2 * Math.min(1, Math.log(1 + reviews) / Math.log(1001)) +
    0.15 * (claimed ? 1 : 0) +
    0.15 * (response === null ? 0 : 1 / (1 + response / 60))
  );
}

let memoryRankingOn = true;
/** Turns ranking in memory off: every page from SQL (the tests compare both paths). */
export function useMemoryRanking(on: boolean): void {
  memoryRankingOn = on;
}

interface MemoryFilters {
  activity: string | undefined;
  country: string | undefined;
  city: string | undefined;
  claimed: boolean | undefined;
  minRating: number | undefined;
  near: { lat: number; lon: number; radius: number } | undefined;
}

const toRad = (x: number) => x * (Math.PI / 180);

/**
 * Every listing's Bayesian rating and trust part of the score for a snapshot's mean rating,
 * by index position: the same formulas as the SQL, computed once per mean (the mean moves only
 * when listings are added) and extended as the index grows, so ranking a match is one lookup.
 */
const trustCache = new WeakMap<
  object,
  { mean: number; size: number; trust: Float64Array; bayes: Float64Array; max: number }
>();
function trustColumns(
  db: Db,
  mean: number,
  upTo: number,
): { trust: Float64Array; bayes: Float64Array; /** the highest trust of all (a bound) */ max: number } {
  const cols = listingColumns(db);
  let cached = trustCache.get(db);
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
  trustCache.set(db, cached);
  return cached;
}

/**
 * Builds what ranking in memory keeps beside the index (the embeddings grouped by activity,
 * ids in order, trust by position), so the first searches after start-up do not pay for it;
 * called before the service says ready.
 */
export async function prepareSearch(db: Db): Promise<void> {
  const snapshot = await snapshotOf(db);
  await refreshVectors(db, snapshot.seq);
  groupByActivity(db);
  trustColumns(db, snapshot.mean, positionsUpTo(db, snapshot.seq));
  idOrder(db);
}

/** Keyword matches with their ranks, or (keyword mode, several words) to be ranked lazily. */
type KeywordRanks = Matches | { cover: CoverMatches; ranker: CoverRanker };

/** Scratch of memoryHits: a listing's place among the keyword matches, by position. */
let slots = new Int32Array(0);
/** Scratch of memoryHits: a listing's place among the semantic matches, by position. */
let semSlots = new Int32Array(0);
/** The depth hybrid's fusion tries first, doubled until it decides the page (tests lower it). */
let fusionDepth = 128;
export function setFusionDepth(depth: number): void {
  fusionDepth = depth;
}
/** Scratch of rankByValueThenId: a listing's place in its input, by position. */
let places = new Int32Array(0);

/**
 * Every listing's place in id order, by position, and the reverse: kept per database and
 * extended by a merge as the index grows (the first build sorts every id, ~1 s at a million).
 */
const idOrders = new WeakMap<object, { size: number; rankOf: Int32Array; byRank: Int32Array }>();
function idOrder(db: Db): { rankOf: Int32Array; byRank: Int32Array } {
  const cols = listingColumns(db);
  const cached = idOrders.get(db);
  if (cached && cached.size === cols.size) return cached;
  const old = cached ?? { size: 0, rankOf: new Int32Array(0), byRank: new Int32Array(0) };
  const ids = cols.ids;
  const fresh = Array.from({ length: cols.size - old.size }, (_, i) => old.size + i).sort((a, b) =>
    ids[a]! < ids[b]! ? -1 : ids[a]! > ids[b]! ? 1 : 0,
  );
  const byRank = new Int32Array(cols.size);
  let i = 0;
  let j = 0;
  for (let r = 0; r < cols.size; r++) {
    const a = i < old.size ? old.byRank[i]! : -1;
    const b = j < fresh.length ? fresh[j]! : -1;
    if (b < 0 || (a >= 0 && ids[a]! < ids[b]!)) {
      byRank[r] = a;
      i++;
    } else {
      byRank[r] = b;
      j++;
    }
  }
  const rankOf = new Int32Array(cols.size);
  for (let r = 0; r < cols.size; r++) rankOf[byRank[r]!] = r;
  const order = { size: cols.size, rankOf, byRank };
  idOrders.set(db, order);
  return order;
}

/**
 * The 1-based rank of each of `ats` when ordered by `values` descending, then id ascending:
 * one native sort of numbers (the value's place among the distinct values, then the id's
 * place), no string comparison.
 */
function rankByValueThenId(db: Db, ats: number[], values: number[]): Int32Array {
  const n = ats.length;
  const out = new Int32Array(n);
  if (n === 0) return out;
  const { rankOf, byRank } = idOrder(db);
  if (places.length < rankOf.length) places = new Int32Array(rankOf.length);
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

const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

/**
 * Each side's order for RRF as one exact double per listing, smallest first: the keyword rank
 * (a float4, by its bits) or the similarity (in millionths), descending, then the id's place.
 * Undefined when the index is too large for both to fit in 53 bits.
 */
function rrfKeys(
  db: Db,
  kwAts: number[],
  kwValues: number[],
  semAts: number[],
  semValues: number[],
): { kw: Float64Array; sem: Float64Array } | undefined {
  const { rankOf } = idOrder(db);
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
 * every side it is on: `k` / `j` its index on the keyword / semantic side, or -1 (`slots` and
 * `semSlots` map positions to those indexes, plus one).
 */
function bestOfBoth(
  keys: { kw: Float64Array; sem: Float64Array },
  kwAts: number[],
  semAts: number[],
  depth: number,
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

/**
 * A page ranked in memory (keywords.ts and vectors.ts): the same matches, filters and formula
 * as the SQL below, from typed arrays; only the page's profiles are read. `ranks` are the
 * keyword matches (unused in semantic mode).
 */
function memoryHits(
  db: Db,
  ranks: KeywordRanks,
  mode: SearchMode,
  sem: Similar,
  snapshot: { seq: number; mean: number },
  filters: MemoryFilters,
  limit: number,
  cursor: Cursor | undefined,
): Omit<Row, 'profile'>[] {
  const cols = listingColumns(db);
  const upTo = positionsUpTo(db, snapshot.seq);
  // the filters, exact copies of the SQL's
  const country = filters.country !== undefined ? (cols.countryIds.get(filters.country) ?? -1) : undefined;
  const city = filters.city !== undefined ? (cols.cityIds.get(foldText(filters.city)) ?? -1) : undefined;
  let activity: Uint8Array | undefined;
  if (filters.activity !== undefined) {
    activity = new Uint8Array(upTo);
    for (const at of cols.byCode.get(filters.activity) ?? []) if (at < upTo) activity[at] = 1;
  }
  const near = filters.near;
  let box: number[] = [];
  if (near) {
    const dLat = near.radius / 111.0;
    const dLon = near.radius / (111.0 * Math.max(0.01, Math.cos((near.lat * Math.PI) / 180)));
    box = [near.lat - dLat, near.lat + dLat, near.lon - dLon, near.lon + dLon];
  }
  const distanceAt = (at: number): number | null => {
    if (!near) return null;
    const lat = cols.lats[at]!;
    const lon = cols.lons[at]!;
    if (lat < box[0]! || lat > box[1]! || lon < box[2]! || lon > box[3]!) return Number.NaN;
    return (
      2 *
      6371.0088 *
      Math.asin(
        Math.min(
          1,
          Math.sqrt(
            Math.sin(toRad(lat - near.lat) / 2) ** 2 +
              Math.cos(toRad(near.lat)) * Math.cos(toRad(lat)) * Math.sin(toRad(lon - near.lon) / 2) ** 2,
          ),
        ),
      )
    );
  };
  const keep = (at: number): boolean => {
    if (country !== undefined && cols.countries[at] !== country) return false;
    if (city !== undefined && cols.cities[at] !== city) return false;
    if (filters.claimed !== undefined && (cols.claimed[at] === 1) !== filters.claimed) return false;
    if (filters.minRating !== undefined && !(cols.ratings64[at]! >= filters.minRating)) return false;
    if (activity && activity[at] !== 1) return false;
    return true;
  };

  const { trust, bayes, max: maxTrust } = trustColumns(db, snapshot.mean, upTo);
  let top = new TopK<Omit<Row, 'profile'>>(limit + 1);
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
    const id = cols.ids[at]!;
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
      if (!keep(at)) continue;
      const dist = distanceAt(at);
      if (near && !(dist! <= near.radius)) continue;
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
    if (!near && !activity && country === undefined && city === undefined) {
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
      if (!keep(at)) continue;
      const dist = distanceAt(at);
      if (near && !(dist! <= near.radius)) continue;
      offer(at, kw, kw, null, dist);
    }
    return top.sorted();
  }
  if (mode === 'semantic') {
    for (let i = 0; i < sem.ats.length; i++) {
      const at = sem.ats[i]!;
      if (at >= upTo || !keep(at)) continue;
      const dist = distanceAt(at);
      if (near && !(dist! <= near.radius)) continue;
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
    if (!keep(at)) continue;
    const dist = distanceAt(at);
    if (near && !(dist! <= near.radius)) continue;
    kwAts.push(at);
    kwValues.push(kw);
    kwDists.push(dist);
  }
  // a listing's place on the keyword side, by position (scratch, cleared below)
  if (slots.length < upTo) slots = new Int32Array(Math.max(upTo, Math.ceil(slots.length * 1.5)));
  for (let k = 0; k < kwAts.length; k++) slots[kwAts[k]!] = k + 1;
  const semAts: number[] = [];
  const semValues: number[] = [];
  const semDists: (number | null)[] = [];
  for (let i = 0; i < sem.ats.length; i++) {
    const at = sem.ats[i]!;
    if (at >= upTo || !keep(at)) continue;
    const k = slots[at]!;
    const dist = k > 0 ? kwDists[k - 1]! : distanceAt(at);
    if (near && !(dist! <= near.radius)) continue;
    semAts.push(at);
    semValues.push(sem.sims[i]!);
    semDists.push(dist);
  }
  const norm = 2.0 / (RRF_K + 1);
  // The page from each side's best few, when they decide it: a listing ranked below `depth` on
  // both sides scores at most `bound`, so once the page's lowest score is above that, no other
  // listing can enter it (most first pages: depth 128 of 10,000-50,000 on each side).
  const keys = rrfKeys(db, kwAts, kwValues, semAts, semValues);
  if (keys) {
    if (semSlots.length < upTo) semSlots = new Int32Array(slots.length);
    for (let j = 0; j < semAts.length; j++) semSlots[semAts[j]!] = j + 1;
    let page: Omit<Row, 'profile'>[] | undefined;
    for (let depth = fusionDepth; depth < Math.max(kwAts.length, semAts.length); depth *= 2) {
      const best = bestOfBoth(keys, kwAts, semAts, depth);
      top = new TopK<Omit<Row, 'profile'>>(limit + 1);
      for (let c = 0; c < best.count; c++) {
        const k = best.k[c]!;
        const j = best.j[c]!;
        const relevance =
          ((k >= 0 ? 1.0 / (RRF_K + best.kwRank[c]!) : 0) + (j >= 0 ? 1.0 / (RRF_K + best.semRank[c]!) : 0)) /
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
  top = new TopK<Omit<Row, 'profile'>>(limit + 1);
  const kwRanks = rankByValueThenId(db, kwAts, kwValues);
  const semRanks = rankByValueThenId(db, semAts, semValues);
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

/** A search gives way to other requests once it has held the thread this long (ms). */
let sliceMs = 4;
/** How often searches gave way (tests). */
export const giveWayStats = { pauses: 0 };
export function setSliceMs(ms: number): void {
  sliceMs = ms;
}

/**
 * Lets other requests' I/O run when this search has held the thread for `sliceMs`: a search of
 * several words can rank for 50 ms at a million listings, and searches that arrived meanwhile
 * would wait all of it. Called only where no shared scratch (module-level arrays) is in use.
 */
async function giveWay(held: { since: number }): Promise<void> {
  if (performance.now() - held.since < sliceMs) return;
  giveWayStats.pauses++;
  await new Promise<void>((resolve) => setImmediate(resolve));
  held.since = performance.now();
}

/**
 * Every match's rank (hybrid needs them all), in slices that give way between them: the matches
 * are first copied out of `CoverRanker.matches`' scratch, which another search may reuse.
 */
async function rankEvery(
  ranker: CoverRanker,
  cover: CoverMatches,
  held: { since: number },
): Promise<Matches> {
  const n = cover.ats.length;
  const own = {
    ats: cover.ats.slice(),
    pairs: cover.pairs.slice(0, n * cover.operands),
    operands: cover.operands,
  };
  const ranks = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    ranks[i] = ranker.rankMatch(own, i);
    if ((i & 1023) === 1023) await giveWay(held);
  }
  await giveWay(held);
  return { ats: own.ats, ranks };
}

interface Row {
  seq: number;
  id: string;
  profile: ListingRecord;
  kw: number | null;
  sim: number | null;
  bayes: number;
  dist: number | null;
  score: number;
}

/** Runs a search; `now` is the time of the request (hours are evaluated in each listing's zone). */
export async function searchListings(
  db: Db,
  params: SearchParams,
  now: Date,
  options: ReadOptions,
): Promise<SearchResults> {
  const mode: SearchMode = params.mode ?? 'hybrid';
  const q = params.q?.trim() ? params.q : undefined;
  const hasFilter = [
    params.activity,
    params.country,
    params.city,
    params.near,
    params.claimed,
    params.min_rating,
    params.open_now,
  ].some((v) => v !== undefined);
  if (!q && !hasFilter) {
    throw new BadRequestError('missing_query', 'Give q, at least one filter, or both.', { param: 'q' });
  }
  if (params.radius_km !== undefined && params.near === undefined) {
    throw new BadRequestError('radius_without_near', 'radius_km needs near.', { param: 'radius_km' });
  }
  const limit = params.limit ?? 20;
  const near = params.near !== undefined ? parseNear(params.near) : undefined;
  const radius = params.radius_km ?? 10;
  const fingerprint = createHash('sha256')
    .update(
      JSON.stringify([
        q ?? null,
        mode,
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

  const cursor = params.cursor !== undefined ? decode(params.cursor, fingerprint) : undefined;
  const snapshot = cursor ? { seq: cursor.s, mean: cursor.m } : await snapshotOf(db);
  const at = cursor ? cursor.t : now.getTime();

  const sql: string[] = [];
  const args: unknown[] = [];
  const arg = (value: unknown, cast = '') => {
    args.push(value);
    return `$${args.length}${cast}`;
  };

  const useKeyword = q !== undefined && mode !== 'semantic';
  const useSemantic = q !== undefined && mode !== 'keyword';
  let queryVector: Float32Array | undefined;
  const vectorOf = (text: string) => (queryVector ??= embedOne(text, EMBEDDING_DIMENSIONS));
  // A page of a snapshot never changes (listings are only added, under higher sequence
  // numbers), so the last pages served are kept: repeats and bursts cost no ranking.
  const pageKey = [
    fingerprint,
    snapshot.seq,
    snapshot.mean,
    params.open_now !== undefined ? at : '',
    params.cursor ?? '',
    limit,
  ].join('|');
  let rows = pageCache.get(db, pageKey);
  let sem: Similar = { seqs: new Float64Array(0), sims: new Float64Array(0), ats: new Int32Array(0) };
  // from here to the profiles' query a search ranks without waiting: it gives way between phases
  const held = { since: performance.now() };
  if (!rows && q && useSemantic) {
    sem = await semanticSet(db, q, vectorOf(q), snapshot.seq, () => giveWay(held));
    await giveWay(held);
  }
  const filters: MemoryFilters = {
    activity: params.activity,
    country: params.country,
    city: params.city,
    claimed: params.claimed,
    minRating: params.min_rating,
    near: near ? { ...near, radius } : undefined,
  };
  if (!rows && memoryRankingOn && mode === 'semantic' && q && params.open_now === undefined) {
    rows = await withProfiles(
      db,
      memoryHits(
        db,
        { ats: new Int32Array(0), ranks: new Float64Array(0) },
        mode,
        sem,
        snapshot,
        filters,
        limit,
        cursor,
      ),
    );
    pageCache.set(db, pageKey, rows);
  }
  if (
    !rows &&
    memoryRankingOn &&
    useKeyword &&
    q &&
    (mode === 'keyword' || mode === 'hybrid') &&
    params.open_now === undefined
  ) {
    const variants = await tsqueriesOf(db, foldText(q));
    const lexemes = plainLexemes(variants);
    const groups = lexemes ? undefined : lexemeGroups(variants);
    let ranks: KeywordRanks | undefined;
    if (lexemes || groups) await refreshVectors(db, snapshot.seq);
    const upTo = positionsUpTo(db, snapshot.seq);
    if (lexemes) {
      ranks = keywordRanks(listingColumns(db).keywords, lexemes, upTo);
      await giveWay(held);
    } else if (groups) {
      // several words: the matches from the postings, their cover density from the positions
      const keywords = listingColumns(db).keywords;
      const ranker = new CoverRanker(keywords, groups);
      const cover = ranker.matches(upTo);
      // keyword mode ranks lazily (most matches cannot reach the page); hybrid needs every rank
      ranks = mode === 'keyword' ? { cover, ranker } : await rankEvery(ranker, cover, held);
    }
    if (ranks) {
      const hits = memoryHits(db, ranks, mode, sem, snapshot, filters, limit, cursor);
      rows = await withProfiles(db, hits);
      pageCache.set(db, pageKey, rows);
    }
  }
  if (!rows) {
    const snap = arg(snapshot.seq, '::bigint');
    const where: string[] = [`l.seq <= ${snap}`];
    let tsquery = 'null::tsquery';
    if (useKeyword && q) {
      const variants = await tsqueriesOf(db, foldText(q));
      tsquery = variants.length > 0 ? variants.map((v) => `${arg(v)}::tsquery`).join(' || ') : `''::tsquery`;
    }
    if (params.activity !== undefined)
      where.push(`l.activity_path @> array[${arg(params.activity)}]::text[]`);
    if (params.country !== undefined) where.push(`l.country = ${arg(params.country)}`);
    if (params.city !== undefined) where.push(`l.city_folded = ${arg(foldText(params.city))}`);
    if (params.claimed !== undefined) where.push(`l.claimed = ${arg(params.claimed)}`);
    if (params.min_rating !== undefined) where.push(`l.rating >= ${arg(params.min_rating, '::float8')}`);
    let distance = 'null::float8';
    if (near) {
      const lat = arg(near.lat, '::float8');
      const lon = arg(near.lon, '::float8');
      const dLat = radius / 111.0;
      const dLon = radius / (111.0 * Math.max(0.01, Math.cos((near.lat * Math.PI) / 180)));
      where.push(
        `l.lat between ${arg(near.lat - dLat, '::float8')} and ${arg(near.lat + dLat, '::float8')}`,
        `l.lon between ${arg(near.lon - dLon, '::float8')} and ${arg(near.lon + dLon, '::float8')}`,
      );
      distance = `(2 * 6371.0088 * asin(least(1, sqrt(power(sin(radians(l.lat - ${lat}) / 2), 2) + cos(radians(${lat})) * cos(radians(l.lat)) * power(sin(radians(l.lon - ${lon}) / 2), 2)))))`;
      where.push(`${distance} <= ${arg(radius, '::float8')}`);
    }
    if (params.open_now !== undefined) {
      const t = arg(new Date(at).toISOString(), '::timestamptz');
      const local = `(${t} at time zone l.time_zone)`;
      const minuteOfWeek = `(extract(dow from ${local})::int * 1440 + extract(hour from ${local})::int * 60 + extract(minute from ${local})::int)`;
      const open = `(coalesce(l.special_open @> ${t}, false) or (not coalesce(l.special_cover @> ${t}, false) and l.week_open @> ${minuteOfWeek}))`;
      where.push(`l.time_zone is not null`, `${open} = ${arg(params.open_now)}`);
    }

    // The rows scored: the semantic set, the keyword matches (GIN), or both (their union, so
    // neither side scans the table); filters only: the table under the filters' indexes.
    let from = 'listings l';
    if (useSemantic) {
      const seqs = arg(Array.from(sem.seqs), '::bigint[]');
      const sims = arg(Array.from(sem.sims), '::float8[]');
      from =
        mode === 'semantic'
          ? `unnest(${seqs}, ${sims}) as s(seq, sim) join listings l on l.seq = s.seq`
          : `(select seq from listings where tsv @@ (select query from q) and seq <= ${snap}
              union select unnest(${seqs})) c
             join listings l on l.seq = c.seq
             left join unnest(${seqs}, ${sims}) as s(seq, sim) on s.seq = l.seq`;
    }
    if (mode === 'keyword' && useKeyword) where.push('l.tsv @@ (select query from q)');

    const mean = arg(snapshot.mean, '::float8');
    const bayes = `((${BAYES_C} * ${mean} + l.review_count * coalesce(l.rating, ${mean})) / (${BAYES_C} + l.review_count))`;
    const trust = `(0.5 * (b.bayes - 1) / 4 + 0.2 * least(1, ln(1 + b.review_count) / ln(1001)) + 0.15 * (case when b.claimed then 1 else 0 end) + 0.15 * coalesce(1 / (1 + b.response_time / 60.0), 0))`;
    let relevance = 'null::float8';
    if (q && mode === 'keyword') relevance = 'r.kw';
    if (q && mode === 'semantic') relevance = 'greatest(0, least(1, r.sim))';
    if (q && mode === 'hybrid') {
      relevance = `((coalesce(1.0 / (${RRF_K} + r.kw_rank), 0) + coalesce(1.0 / (${RRF_K} + r.sem_rank), 0)) / (2.0 / (${RRF_K} + 1)))`;
    }
    // in keyword mode every row scored matches already
    const rank = 'ts_rank_cd(l.tsv, (select query from q), 32)';
    const kw = !useKeyword
      ? 'null::float8'
      : mode === 'keyword'
        ? rank
        : `case when l.tsv @@ (select query from q) then ${rank} end`;
    const base = q
      ? `(0.7 * ${relevance} + 0.3 * ${trust.replaceAll('b.', 'r.')})`
      : trust.replaceAll('b.', 'r.');
    const withNear = near
      ? `(0.9 * ${base} + 0.1 * greatest(0, 1 - r.dist / ${arg(radius, '::float8')}))`
      : base;

    sql.push(
      `with q as (select ${tsquery} as query),`,
      `b as (`,
      `  select l.seq, l.id, l.review_count, l.claimed, l.response_time,`,
      `    ${kw} as kw,`,
      `    ${useSemantic ? 's.sim' : 'null::float8'} as sim,`,
      `    ${bayes} as bayes,`,
      `    ${distance} as dist`,
      `  from ${from}`,
      `  where ${where.join(' and ')}`,
      `),`,
      `r as (`,
      `  select b.*,`,
      // the ranks only hybrid fuses (each a sort of every row scored)
      mode === 'hybrid'
        ? `    case when b.kw is not null then row_number() over (partition by b.kw is null order by b.kw desc, b.id) end as kw_rank,
             case when b.sim is not null then row_number() over (partition by b.sim is null order by b.sim desc, b.id) end as sem_rank`
        : `    null::bigint as kw_rank, null::bigint as sem_rank`,
      `  from b`,
      `),`,
      `scored as (select r.seq, r.id, r.kw, r.sim, r.bayes, r.dist, round((${withNear})::numeric, 6)::float8 as score from r),`,
      `page as (`,
      `  select * from scored`,
      cursor
        ? `  where score < ${arg(cursor.sc, '::float8')} or (score = ${arg(cursor.sc, '::float8')} and id > ${arg(cursor.id)})`
        : '',
      `  order by score desc, id asc`,
      `  limit ${arg(limit + 1, '::int')}`,
      `)`,
      // the profiles (the wide column) of this page only
      `select page.*, l.profile from page join listings l on l.seq = page.seq order by page.score desc, page.id asc`,
    );
    rows = await db.query<Row>(sql.join('\n'), args);
    pageCache.set(db, pageKey, rows);
  }
  // The rendered page holds until one of its listings opens or closes (or the date moves).
  const renderKey = `${pageKey}|${options.baseUrl}`;
  const t = now.getTime();
  const shown = renderedPages.get(db, renderKey);
  if (shown && shown.from <= t && t < shown.until) return shown.page;
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  const sims =
    useSemantic && q
      ? similarityOf(
          db,
          vectorOf(q),
          page.map((r) => Number(r.seq)),
        )
      : undefined;
  const data: SearchHit[] = page.map((r) => ({
    object: 'search_hit',
    score: Math.min(1, Math.max(0, r.score)),
    signals: {
      text_relevance: useKeyword ? round(r.kw ?? 0, 4) : null,
      semantic_similarity: sims
        ? round(Math.max(0, Math.min(1, sims.get(Number(r.seq)) ?? r.sim ?? 0)), 4)
        : null,
      bayesian_rating: round(Math.min(5, Math.max(1, r.bayes)), 2),
      review_count: r.profile.review_count,
      claimed: r.profile.claimed,
      response_time_median_minutes: r.profile.response_time_median_minutes,
      distance_km: r.dist === null ? null : round(r.dist, 2),
    },
    listing: toListing(r.profile, now, options),
  }));
  const last = page.at(-1);
  let until = Number.POSITIVE_INFINITY;
  for (const r of page) {
    if (r.profile.opening_hours) until = Math.min(until, openingHoursUntil(r.profile.opening_hours, now));
  }
  const result: SearchResults = {
    object: 'list',
    data,
    has_more: hasMore,
    next_cursor:
      hasMore && last
        ? encode({
            v: 1,
            h: fingerprint,
            s: snapshot.seq,
            m: snapshot.mean,
            // the time matters to open_now only (and stays with its pages); else 0, so a rendered page
            // holds for as long as its listings keep their state
            t: params.open_now !== undefined ? at : 0,
            sc: last.score,
            id: last.id,
          })
        : null,
    mode,
  };
  renderedPages.set(db, renderKey, { page: result, from: t, until });
  return result;
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
