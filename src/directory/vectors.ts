// The semantic side of search: the listings' embeddings (stored in `listings.embedding` as a
// float32 scale and 384 signed bytes), held in memory once per process (about 390 MB at a
// million listings; the bytes in a shared WebAssembly memory, where the SIMD kernel of dot.ts
// reads them) with the rest of the index ranking in memory reads (memory-index/), loaded here
// and caught up by sequence number when a search's snapshot is newer, so every instance sees
// every listing the database has.
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
import { addPostings, type PostingsSink } from './keywords/postings.ts';
import { KeywordLoad } from './memory-index/keywords.ts';
import { type IndexHandles, type ListingColumns, SharedIndex } from './memory-index/shared-index.ts';
import { type Identity, prefetchSnapshot, readSnapshot, type Refusal } from './memory-index/snapshot.ts';

export type { ListingColumns } from './memory-index/shared-index.ts';

/**
 * Rows one query of the load reads: a page passes through the database's driver (and, on
 * PGlite, its worker thread and a message) before it is added, so small pages keep the memory
 * that passing takes small (20,000 rows a page held 125-240 MB more at ready on PGlite).
 */
const PAGE_ROWS = 2_000;

/** One thread's hold on an index: the shared memory, and how this thread reads and adds to it. */
interface Index {
  shared: SharedIndex;
  /** this thread's dot-product kernel over the shared embeddings */
  store: VectorStore;
  /** A thread that does not own the index asks its owner to catch up (src/cluster.ts); else undefined. */
  ask: ((upTo: number) => Promise<void>) | undefined;
  /** Group the start-up load's embeddings by activity (`groupByActivity`); tests turn it off. */
  group: boolean;
  /** The owner's database, once a search opened the index (what the other threads' asks load from). */
  source: Queryable | undefined;
  refreshing: Promise<void> | undefined;
  /** The file the owner reads the index from at start-up and writes it to (SEARCH_INDEX_SNAPSHOT). */
  snapshot: string | undefined;
  /** How the start-up load went (for the log and the tests). */
  origin: IndexOrigin | undefined;
}

/** Where the index came from at start-up, and what became of its snapshot. */
export interface IndexOrigin {
  /** read from the snapshot (then caught up), or built from the database and why not read */
  from: 'snapshot' | Refusal | 'no snapshot';
  /** listings added from the database after the snapshot (all of them when built) */
  caughtUp: number;
  /** the snapshot written after the load (bytes), or why not */
  written: number | string | undefined;
}

const indexes = new WeakMap<object, Index>();

/** The index of this process when its threads share one (src/cluster.ts): every database's. */
let processIndex: Index | undefined;
let sourceKnown: (() => void) | undefined;
const sourceReady = new Promise<void>((resolve) => (sourceKnown = resolve));

export interface OpenOptions {
  /** The dot-product kernel (VECTOR_KERNEL); the SIMD one where it assembled. */
  kernel?: 'wasm' | 'js' | undefined;
  /** Group the start-up load's embeddings by activity (default true). */
  group?: boolean;
  /** The index's snapshot file (SEARCH_INDEX_SNAPSHOT); none when undefined. */
  snapshot?: string | undefined;
}

/**
 * The database's index, made on first use with the given options (a kernel named after that is
 * ignored). In a process whose threads share an index, every database's is that one.
 */
export function openVectors(db: Queryable, options: OpenOptions = {}): void {
  const index = indexOf(db, options);
  if (!index.ask) index.snapshot ??= options.snapshot;
  // read while the service starts; the load checks it against the database
  if (index.snapshot && !index.ask && !index.origin) prefetchSnapshot(index.shared, index.snapshot);
  if (!index.ask && !index.source) {
    index.source = db;
    if (index === processIndex) sourceKnown?.();
  }
}

/**
 * Makes one index this thread's for every database: a new one this thread owns (no handles), or
 * the owner's, attached by its handles, with `ask` to have the owner catch up. `slot` is this
 * thread's scratch slot in the embeddings' memory (../dot.ts). Returns the handles to give the
 * other threads.
 */
export function shareIndex(options: {
  handles?: IndexHandles;
  kernel?: 'wasm' | 'js' | undefined;
  slot: number;
  ask?: (upTo: number) => Promise<void>;
}): IndexHandles {
  const shared = new SharedIndex(options.handles);
  processIndex = {
    shared,
    store: createVectorStore(options.kernel, shared.memory, options.slot),
    ask: options.ask,
    group: true,
    source: undefined,
    refreshing: undefined,
    snapshot: undefined,
    origin: undefined,
  };
  return shared.handles();
}

/** On the owner of a shared index: catches it up to `upTo` for another thread (once a database opened it). */
export async function catchUpShared(upTo: number): Promise<void> {
  if (!processIndex || processIndex.ask) throw new Error('this thread does not own a shared index');
  await sourceReady;
  await refreshVectors(processIndex.source!, upTo);
}

export function indexOf(db: object, options: OpenOptions = {}): Index {
  if (processIndex) return processIndex;
  let index = indexes.get(db);
  if (!index) {
    const shared = new SharedIndex();
    index = {
      shared,
      store: createVectorStore(options.kernel, shared.memory, 0),
      ask: undefined,
      group: options.group ?? true,
      source: undefined,
      refreshing: undefined,
      snapshot: undefined,
      origin: undefined,
    };
    indexes.set(db, index);
  }
  return index;
}

/** The row the load reads of each listing. */
interface Row {
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
}

/** Where a load adds each listing's NACE codes. */
interface CodesSink {
  add(code: string, at: number): void;
}

/**
 * The start-up load's codes, gathered, then laid out as one exact list each (as KeywordLoad
 * does for the postings).
 */
class CodesLoad implements CodesSink {
  readonly #shared: SharedIndex;
  #ids = new Uint32Array(1024);
  #ats = new Int32Array(1024);
  #n = 0;
  constructor(shared: SharedIndex) {
    this.#shared = shared;
  }
  add(code: string, at: number): void {
    if (this.#n === this.#ids.length) {
      const ids = new Uint32Array(this.#n * 2);
      ids.set(this.#ids);
      this.#ids = ids;
      const ats = new Int32Array(this.#n * 2);
      ats.set(this.#ats);
      this.#ats = ats;
    }
    this.#ids[this.#n] = this.#shared.codes.idOf(code);
    this.#ats[this.#n++] = at;
  }
  finish(): void {
    const counts = new Uint32Array(this.#shared.codes.size);
    for (let r = 0; r < this.#n; r++) counts[this.#ids[r]!]!++;
    this.#shared.byCode.freeze(counts, (places, data) => {
      const next = Float64Array.from(places);
      for (let r = 0; r < this.#n; r++) data[next[this.#ids[r]!]!++] = this.#ats[r]!;
    });
  }
}

/** Loads the embeddings of listings added since the last call (one load at a time per process). */
export async function refreshVectors(db: Queryable, upTo = Infinity): Promise<void> {
  const index = indexOf(db);
  if (index.ask) {
    // a thread that reads the index: its owner loads
    if (index.shared.maxSeq < upTo) await index.ask(upTo);
    return;
  }
  index.source ??= db;
  while (index.shared.maxSeq < upTo) {
    if (index.refreshing) {
      await index.refreshing;
      continue;
    }
    let complete = false;
    index.refreshing = load(index, db, upTo).then((done) => {
      complete = done;
    });
    try {
      await index.refreshing;
    } finally {
      index.refreshing = undefined;
    }
    if (complete) return;
  }
}

/**
 * Adds the listings after the last one loaded, page by page, until `upTo` or the end; true when
 * the end was reached. The first load of an index (start-up) lays its lists out once, at the
 * end, groups the embeddings by activity and orders the ids, then publishes every listing at
 * once; later loads publish page by page.
 */
async function load(index: Index, db: Queryable, upTo: number): Promise<boolean> {
  const shared = index.shared;
  const store = index.store;
  if (!shared.loaded && shared.size === 0 && !index.origin) {
    index.origin = { from: 'no snapshot', caughtUp: 0, written: undefined };
    if (index.snapshot) {
      const refusal = await readSnapshot(shared, index.snapshot, async (stored) =>
        sameIdentity(stored, await identityOf(db, Number(stored.maxSeq))),
      );
      index.origin.from = refusal ?? 'snapshot';
    }
  }
  const before = shared.size;
  const first = !shared.loaded;
  const keywords: PostingsSink & { finish?(): void } = first
    ? new KeywordLoad(shared.keywords)
    : shared.keywords;
  const codes: CodesSink & { finish?(): void } = first
    ? new CodesLoad(shared)
    : { add: (code, at) => shared.byCode.append(shared.codes.idOf(code), [at]) };
  let size = shared.size;
  let maxSeq = shared.maxSeq;
  let complete = false;
  for (;;) {
    const rows = await db.query<Row>(
      `select seq, id, embedding, rating, review_count, claimed, response_time, activity_path,
         country, city_folded, district_folded, lat, lon, tsv::text as tsv
       from listings where seq > $1 order by seq limit $2`,
      [maxSeq, PAGE_ROWS],
    );
    shared.reserve(size + rows.length);
    store.reserve(size + rows.length);
    const seqs = shared.column('seqs');
    const scales = shared.column('scales');
    const reviews = shared.column('reviews');
    const claimed = shared.column('claimed');
    const responses = shared.column('responses');
    const ratings64 = shared.column('ratings64');
    const lats = shared.column('lats');
    const lons = shared.column('lons');
    const countries = shared.column('countries');
    const cities = shared.column('cities');
    const districts = shared.column('districts');
    for (const row of rows) {
      const at = size;
      const bytes = row.embedding;
      seqs[at] = Number(row.seq);
      scales[at] = new DataView(bytes.buffer, bytes.byteOffset, 4).getFloat32(0, true);
      store.set(
        at,
        new Int8Array(bytes.buffer, bytes.byteOffset + 4, Math.min(DIMENSIONS, bytes.byteLength - 4)),
      );
      shared.ids.push(row.id);
      reviews[at] = row.review_count;
      claimed[at] = row.claimed ? 1 : 0;
      responses[at] = row.response_time ?? Number.NaN;
      ratings64[at] = row.rating === null ? Number.NaN : Number(row.rating);
      lats[at] = Number(row.lat);
      lons[at] = Number(row.lon);
      countries[at] = shared.countries.idOf(row.country);
      cities[at] = shared.cities.idOf(row.city_folded);
      districts[at] = shared.cities.idOf(row.district_folded ?? '');
      addPostings(keywords, at, row.tsv);
      for (const code of row.activity_path) codes.add(code, at);
      size++;
      maxSeq = Number(row.seq);
    }
    if (!first) shared.publish(size);
    if (rows.length < PAGE_ROWS) {
      complete = true;
      break;
    }
    if (maxSeq >= upTo) break;
  }
  if (first) {
    keywords.finish?.();
    codes.finish?.();
    if (index.group) groupEmbeddings(shared, store, size);
    orderIds(shared, size);
    shared.markLoaded();
    shared.publish(size);
  }
  const origin = index.origin;
  if (origin && origin.written === undefined) {
    origin.caughtUp += size - before;
    // written once a start, after its first load: after a build, or a catch-up of over a tenth
    origin.written = index.snapshot && (first || origin.caughtUp > size / 10) ? SNAPSHOT_DUE : 'not needed';
  }
  return complete;
}

/** A snapshot the start-up load asked for: index-snapshot.ts writes it once the service is ready. */
export const SNAPSHOT_DUE = 'due after ready';

/**
 * What an index up to `maxSeq` was built from: a snapshot of it holds only for the same, the
 * versions of what rows derive from code included (a re-embedding or new `tsv` words rewrite
 * them in place: reembed.ts).
 */
export async function identityOf(db: Queryable, maxSeq: number): Promise<Identity> {
  const [row] = await db.query<{
    database: string;
    listings: number;
    first: string;
    last: string;
    versions: string;
  }>(
    `select current_database() as database,
       (select count(*) from listings where seq <= $1)::int as listings,
       coalesce((select id from listings order by seq limit 1), '') as first,
       coalesce((select id from listings where seq = $1), '') as last,
       (select coalesce(string_agg(key || '=' || value, ',' order by key), '') from directory_meta) as versions`,
    [maxSeq],
  );
  return { maxSeq, ...row! };
}

function sameIdentity(a: Identity, b: Identity): boolean {
  const keys = Object.keys(b);
  return Object.keys(a).length === keys.length && keys.every((k) => a[k] === b[k]);
}

/** How this database's index was loaded at start-up (undefined before). */
export function indexOrigin(db: object): IndexOrigin | undefined {
  return indexOf(db).origin;
}

/** The first `size` positions in id order, into the `order` column. */
function orderIds(shared: SharedIndex, size: number): void {
  const ids = Array.from({ length: size }, (_, at) => shared.ids.at(at));
  const byRank = Array.from({ length: size }, (_, at) => at).sort((a, b) =>
    ids[a]! < ids[b]! ? -1 : ids[a]! > ids[b]! ? 1 : 0,
  );
  shared.columnBuffers.order.reserve(size * 4);
  shared.column('order').set(byRank);
  shared.setOrdered(size);
}

/** The position of a sequence number in the index, or -1. */
function positionOf(index: Index, seq: number): number {
  const seqs = index.shared.column('seqs');
  let lo = 0;
  let hi = index.shared.size - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = seqs[mid] ?? 0;
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
  const slotted = index.shared.slotted;
  const slots = slotted > 0 ? index.shared.column('slots').subarray(0, slotted) : undefined;
  const dots = index.store.dots(values, slice, to - from, slots);
  const scales = index.shared.column('scales');
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
  const seqs = index.shared.column('seqs');
  for (let o = 0; o < n; o++) out.seqs[o] = seqs[out.ats[o]!]!;
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
  const all = index.shared.column('seqs');
  return new Map(Array.from(known, (at, k) => [all[at] ?? 0, Math.round(raw[k]! * 1e6) / 1e6]));
}

/** How many embeddings this process holds for `db` (for metrics and tests). */
export function vectorCount(db: object): number {
  return indexOf(db).shared.size;
}

/**
 * The positions of the listings up to `snapshot` with any of these NACE codes, from memory, in
 * ascending order (the kernel then reads the embeddings front to back).
 */
export function positionsWithCodes(db: object, codes: string[], snapshot: number): Int32Array {
  const byCode = indexOf(db).shared.reading().byCode;
  const upTo = positionsUpTo(db, snapshot);
  const lists = [...new Set(codes)].flatMap((code) => {
    const list = byCode.get(code);
    return list && list.length > 0 ? [list] : [];
  });
  if (lists.length === 1) {
    // ascending already: only the part up to the snapshot
    const list = lists[0]!;
    let n = list.length;
    while (n > 0 && list[n - 1]! >= upTo) n--;
    return list.slice(0, n);
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
 * ms). Done once, at the end of the start-up load (before its listings are published, so no
 * thread reads an embedding while it moves); listings added later keep their own slots. Here for
 * an index opened without it (tests): it groups what is loaded, once.
 */
export function groupByActivity(db: object): void {
  const index = indexOf(db);
  if (index.ask) return;
  groupEmbeddings(index.shared, index.store, index.shared.size);
}

function groupEmbeddings(shared: SharedIndex, store: VectorStore, n: number): void {
  if (shared.slotted > 0 || n === 0) return;
  const groupOf = new Int32Array(n).fill(-1);
  let groups = 0;
  for (let id = 0; id < shared.codes.size; id++) {
    if (!/^\d{2}\.\d{2}$/.test(shared.codes.at(id))) continue;
    const list = shared.byCode.view(id)?.data ?? new Int32Array(0);
    const g = groups++;
    for (const at of list) if (at < n && groupOf[at] === -1) groupOf[at] = g;
  }
  // a counting sort: each class's run in turn, positions ascending in it; no class last
  const groupAt = (at: number) => (groupOf[at] === -1 ? groups : groupOf[at]!);
  const size = new Int32Array(groups + 1);
  for (let at = 0; at < n; at++) size[groupAt(at)]!++;
  const next = new Int32Array(groups + 1);
  for (let g = 1; g <= groups; g++) next[g] = next[g - 1]! + size[g - 1]!;
  shared.columnBuffers.slots.reserve(n * 4);
  const slots = shared.column('slots');
  for (let at = 0; at < n; at++) slots[at] = next[groupAt(at)]!++;
  // moved in place, cycle by cycle (a second store would hold 390 MB more at 1M until a GC):
  // slot p holds position p's embedding until the cycle through it is walked
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
  shared.setSlotted(n);
}

export function listingColumns(db: object): ListingColumns {
  return indexOf(db).shared.reading();
}

/** The position of the last listing up to `snapshot` plus one (positions are in seq order). */
export function positionsUpTo(db: object, snapshot: number): number {
  const shared = indexOf(db).shared;
  const seqs = shared.column('seqs');
  let lo = 0;
  let hi = shared.size;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((seqs[mid] ?? 0) <= snapshot) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
