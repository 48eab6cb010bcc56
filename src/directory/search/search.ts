// GET /v1/search: keyword (PostgreSQL full-text search over accent-folded text, stemmed in
// seven languages), semantic (the built-in embedding engine, vectors.ts) and hybrid
// (reciprocal rank fusion of both), with filters, ranked by relevance and trust signals, and
// paged by keyset on (score, id) against a snapshot (every listing up to a sequence number,
// the directory-wide mean rating and the instant of the first page, all carried in the cursor).
// At a million listings: only narrow columns are scored and the profiles of one page read;
// each query's semantic set and the last pages served are kept (a snapshot's pages never
// change), unless the options say `cache: false` (SEARCH_CACHE=off: the benchmark's cold figures).
//
// One Search is made per database (createSearch) and holds what it keeps for it. Its parts:
// cursor.ts, snapshot.ts, memory.ts (ranking in memory) with fusion.ts (hybrid), sql.ts (the
// SQL path), score.ts (the formula), readings.ts (the readings of q a search tries, never
// worse), ../geo.ts (distances).
import { LRUCache } from 'lru-cache';
import type {
  SearchCorrection,
  SearchHit,
  SearchMode,
  SearchResults,
} from '../../../generated/directory/client/types.gen.ts';
import { conceptsOf, embedOne, foldText, tokenize } from '../../embeddings/index.ts';
import { CONCEPTS } from '../../embeddings/data/thesaurus.ts';
import type { Db } from '../../platform/db.ts';
import { BadRequestError } from '../../platform/errors.ts';
import { openingHoursUntil } from '../hours.ts';
import {
  type CoverMatches,
  CoverRanker,
  keywordRanks,
  lexemeGroups,
  type Matches,
  plainLexemes,
} from '../keywords/ranker.ts';
import {
  EMBEDDING_DIMENSIONS,
  type ListingRecord,
  QUERY_CONFIGS,
  type ReadOptions,
  toListing,
} from '../store.ts';
import {
  groupByActivity,
  type IndexOrigin,
  indexOrigin,
  listingColumns,
  openVectors,
  positionsOfSeqs,
  positionsUpTo,
  positionsWithCodes,
  refreshVectors,
  type Similar,
  similarAmongInSlices,
  similarityOf,
} from '../vectors.ts';
import { writeIndexSnapshot } from '../index-snapshot.ts';
import { functionWordOf } from '../../understanding/function-words.ts';
import { cityNamed, nearestNames, preparePlaceNames } from '../data/place-names.ts';
import { haversineKm } from '../geo.ts';
import { typosAllowed } from '../keywords/distance.ts';
import { isNamePhrase, nearestWord } from '../keywords/vocabulary.ts';
import { decodeCursor, encodeCursor, fingerprintOf } from './cursor.ts';
import { interpretation, located, type Relaxation, relaxations, type Understood } from './readings.ts';
import { nearWords, placeInQuery, type PlaceInQuery } from './understand.ts';
import { type KeywordRanks, MemoryRanking } from './memory.ts';
import type { Circle } from './near.ts';
import { Snapshots } from './snapshot.ts';
import { sqlPage } from './sql.ts';
import type { CityFilter, Filters, Ranked, Row, SearchParams, Snapshot } from './shapes.ts';

export type { SearchParams } from './shapes.ts';

export interface SearchOptions {
  /** Keep semantic sets and pages (SEARCH_CACHE); parsed queries are kept either way. Default true. */
  cache?: boolean;
  /** Rank in memory where it can; false: every page from SQL (the tests compare both). Default true. */
  memoryRanking?: boolean;
  /** The depth hybrid's fusion tries first, doubled until it decides the page. Default 128. */
  fusionDepth?: number;
  /** A search gives way to other requests once it has held the thread this long (ms). Default 4. */
  sliceMs?: number;
  /** The dot-product kernel of the vector index (VECTOR_KERNEL); the SIMD one where it assembles. */
  vectorKernel?: 'wasm' | 'js' | undefined;
  /** The index's snapshot file (SEARCH_INDEX_SNAPSHOT), read at start-up and written after the load. */
  snapshot?: string | undefined;
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

/** The semantic sets kept: the same set serves every page of a query and every repeat of it. */
const SEMANTIC_CACHE_SIZE = 64;

/** Makes the search of one database. */
export function createSearch(db: Db, options: SearchOptions = {}): Search {
  return new Search(db, options);
}

export class Search {
  readonly #db: Db;
  readonly cacheOn: boolean;
  readonly #memoryRanking: boolean;
  readonly #sliceMs: number;
  readonly #snapshots: Snapshots;
  readonly #memory: MemoryRanking;
  /** How often searches gave way (tests). */
  readonly giveWayStats = { pauses: 0 };
  /** Parsed queries: a pure function of the text, so kept even without the cache. */
  readonly #tsqueries = new LRUCache<string, string[]>({ max: 1000 });
  /** Typo corrections ('' for none), by word, typos allowed and dictionary size. */
  readonly #nearest = new LRUCache<string, string>({ max: 5000 });
  /** Pages kept, counted in hits (about 2 KB each): 50,000 is about 100 MB at most. */
  readonly #pages: LRUCache<string, Row[]> | undefined;
  readonly #semantic: LRUCache<string, Similar> | undefined;
  /**
   * Rendered pages (the same object each time, so the route sends its kept JSON), while they
   * hold: counted in hits like the page cache.
   */
  readonly #rendered: LRUCache<string, { page: SearchResults; from: number; until: number }> | undefined;

  constructor(db: Db, options: SearchOptions = {}) {
    this.#db = db;
    this.cacheOn = options.cache ?? true;
    this.#memoryRanking = options.memoryRanking ?? true;
    this.#sliceMs = options.sliceMs ?? 4;
    this.#snapshots = new Snapshots(db);
    this.#memory = new MemoryRanking(db, { fusionDepth: options.fusionDepth ?? 128 });
    openVectors(db, { kernel: options.vectorKernel, snapshot: options.snapshot });
    if (this.cacheOn) {
      this.#pages = new LRUCache({ maxSize: 50_000, sizeCalculation: (rows) => rows.length + 1 });
      this.#semantic = new LRUCache({ max: SEMANTIC_CACHE_SIZE });
      this.#rendered = new LRUCache({ maxSize: 20_000, sizeCalculation: (r) => r.page.data.length + 1 });
    }
  }

  /** How the index was loaded at start-up: from its snapshot file or the database. */
  indexOrigin(): IndexOrigin | undefined {
    return indexOrigin(this.#db);
  }

  /** Writes the index's snapshot if the start-up load asked for one: once ready (see vectors.ts). */
  writeSnapshot(): Promise<number | string | undefined> {
    return writeIndexSnapshot(this.#db);
  }

  /** The highest sequence number committed (see Snapshots.latestSeq). */
  latestSeq(): Promise<number> {
    return this.#snapshots.latestSeq();
  }

  /**
   * Builds what ranking in memory keeps beside the index (the embeddings grouped by activity,
   * ids in order, trust by position), so the first searches after start-up do not pay for it;
   * called before the service says ready.
   */
  async prepare(): Promise<void> {
    preparePlaceNames();
    const snapshot = await this.#snapshots.current();
    await refreshVectors(this.#db, snapshot.seq);
    groupByActivity(this.#db);
    this.#memory.prepare(snapshot);
  }

  /**
   * The query's stemmed forms in every query configuration, each once: "restaurant" is the same
   * in five of the seven, and every duplicate would cost a match test and a rank per row.
   */
  async #tsqueriesOf(folded: string): Promise<string[]> {
    const hit = this.#tsqueries.get(folded);
    if (hit) return hit;
    const rows = await this.#db.query<{ q: string }>(
      `select distinct websearch_to_tsquery(c::regconfig, $1)::text as q from unnest($2::text[]) c`,
      [withoutElisions(folded), QUERY_CONFIGS],
    );
    const variants = rows
      .map((r) => r.q)
      .filter((v) => v !== '')
      .sort();
    this.#tsqueries.set(folded, variants);
    return variants;
  }

  /**
   * The listings semantically close to `q` in a snapshot (see vectors.ts): candidates from the
   * NACE activities of the query's concepts, or from its words when it names none, within a
   * geo search's circle (so a similarity is kept relative to the best nearby); exact
   * similarities over them. Kept for the last queries: the same set serves every page of a
   * query and every repeat of it, and a snapshot never changes.
   */
  async semanticSet(
    q: string,
    vector: Float32Array,
    snapshot: number,
    /** awaited between slices of candidates (a search gives way to others there) */
    between: () => Promise<void> = async () => {},
    /** a geo search's circle: only the candidates within it, the best of them the measure */
    within?: Circle,
  ): Promise<Similar> {
    const db = this.#db;
    const key = `${snapshot}\u0000${q}\u0000${within ? `${within.lat},${within.lon},${within.radius}` : ''}`;
    const hit = this.#semantic?.get(key);
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
    if (within && candidates.length > 0)
      candidates = this.#memory.within(candidates, within, positionsUpTo(db, snapshot));
    const set = await similarAmongInSlices(db, vector, candidates, between);
    this.#semantic?.set(key, set);
    return set;
  }

  /** The page's hits with their profiles (the wide column), read for these rows only. */
  async #withProfiles(page: Ranked[]): Promise<Row[]> {
    const profiles = new Map(
      (
        await this.#db.query<{ seq: number; profile: ListingRecord }>(
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
   * Lets other requests' I/O run when this search has held the thread for `sliceMs`: a search of
   * several words can rank for 50 ms at a million listings, and searches that arrived meanwhile
   * would wait all of it. Called only where no shared scratch (MemoryRanking's) is in use.
   */
  async #giveWay(held: { since: number }): Promise<void> {
    if (performance.now() - held.since < this.#sliceMs) return;
    this.giveWayStats.pauses++;
    await new Promise<void>((resolve) => setImmediate(resolve));
    held.since = performance.now();
  }

  /**
   * Every match's rank (hybrid needs them all), in slices that give way between them: the matches
   * are first copied out of `CoverRanker.matches`' scratch, which another search may reuse.
   */
  async #rankEvery(ranker: CoverRanker, cover: CoverMatches, held: { since: number }): Promise<Matches> {
    const n = cover.ats.length;
    const own = {
      ats: cover.ats.slice(),
      pairs: cover.pairs.slice(0, n * cover.operands),
      operands: cover.operands,
    };
    const ranks = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      ranks[i] = ranker.rankMatch(own, i);
      if ((i & 1023) === 1023) await this.#giveWay(held);
    }
    await this.#giveWay(held);
    return { ats: own.ats, ranks };
  }

  /**
   * What `q` says besides its words (see understand.ts): a place read out of it, unless `near`
   * or `city` is given or `interpret` is false; and its typos corrected (see `#corrected`).
   */
  async #understand(typed: string, params: SearchParams): Promise<Understood | undefined> {
    if (params.interpret === false) return undefined;
    const cols = listingColumns(this.#db);
    const read = (text: string) =>
      params.near !== undefined || params.city !== undefined
        ? undefined
        : placeInQuery(text, {
            isListingName: (words, place, radius) =>
              isNamePhrase(
                cols.keywords,
                words,
                (at) => haversineKm(place.lat, place.lon, cols.lats[at]!, cols.lons[at]!) > radius,
              ),
            country: params.country,
          });
    let place = read(typed);
    if (!place && params.near === undefined && params.city === undefined) place = await this.#streetIn(typed);
    const uncorrected = place ? place.text : typed;
    const { text, meaning, corrections } = await this.#corrected(uncorrected);
    // a place misspelt ("Klempner Berln") is read from the corrected words
    if (!place && corrections.length > 0) {
      place = read(text);
      if (place) {
        const fixed = await this.#corrected(place.text);
        return {
          q: place.text || undefined,
          meaning: fixed.meaning || undefined,
          place,
          corrections,
          uncorrected,
        };
      }
    }
    return { q: text || undefined, meaning: meaning || undefined, place, corrections, uncorrected };
  }

  /**
   * A street or square after "near" ("near Marienplatz", "nahe Lindwurmstraße") that names no
   * place: the listings' addresses on it, when they lie together (most within 3 km of their
   * median), give its centre; searched within 2 km.
   */
  async #streetIn(typed: string): Promise<PlaceInQuery | undefined> {
    const near = nearWords(typed);
    if (!near || near.words.length === 0) return undefined;
    const rows = await this.#db.query<{
      lat: number;
      lon: number;
      street: string;
      city: string;
      region: string;
      country: string;
    }>(
      `select lat, lon, profile->'address'->>'street' as street, profile->'address'->>'city' as city,
         profile->'address'->>'region' as region, country
       from listings where address_tsv @@ to_tsquery('simple', $1) order by seq limit 200`,
      [near.words.map((w) => `'${w.replace(/'/g, "''")}'`).join(' <-> ')],
    );
    const on = rows.filter((r) => near.words.every((w) => foldText(r.street).includes(w)));
    if (on.length === 0) return undefined;
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const mid = { lat: median(on.map((r) => Number(r.lat))), lon: median(on.map((r) => Number(r.lon))) };
    const close = on.filter((r) => haversineKm(mid.lat, mid.lon, Number(r.lat), Number(r.lon)) <= 3);
    if (close.length < Math.max(1, on.length * 0.6)) return undefined; // a common street name: many towns
    const round3 = (x: number) => Math.round(x * 1000) / 1000;
    const lat = round3(close.reduce((sum, r) => sum + Number(r.lat), 0) / close.length);
    const lon = round3(close.reduce((sum, r) => sum + Number(r.lon), 0) / close.length);
    const first = close[0]!;
    return {
      place: {
        geonamesId: 0,
        name: first.street,
        folded: foldText(first.street),
        alternates: [],
        lat,
        lon,
        country: first.country,
        region: first.region || null,
        population: 0,
        timeZone: '',
        featureCode: 'STREET',
        municipalityId: null,
      },
      kind: 'street',
      municipality: first.city,
      matched: near.matched,
      text: near.text,
      radiusKm: 2,
    };
  }

  /**
   * `text` with each word that matches no listing replaced by the nearest word of the index:
   * one typo from 5 letters, two from 9 (Meilisearch's rule); a shorter word of 3 or 4 letters
   * one typo when it is the whole query. Words that match stay as typed, so
   * exact matches are never traded for fuzzy ones.
   */
  async #corrected(
    text: string,
  ): Promise<{ text: string; meaning: string; corrections: SearchCorrection[] }> {
    const keywords = listingColumns(this.#db).keywords;
    const corrections: SearchCorrection[] = [];
    let out = text;
    let meaning = text;
    const words = [...text.matchAll(/[\p{L}\p{N}]+/gu)];
    for (const m of words.slice(0, 32).reverse()) {
      const word = foldText(m[0]);
      // a word some lexicon knows is no typo (a function word of any language)
      if (
        word.length < 3 ||
        /\d/.test(word) ||
        keywords.postings.has(word) ||
        functionWordOf(word).length > 0
      )
        continue;
      const lexemes = plainLexemes(await this.#tsqueriesOf(word)) ?? [];
      if (lexemes.length === 0 || lexemes.some((l) => keywords.postings.has(l))) continue;
      // a word of 3 or 4 letters alone (`bakr`) one typo: else it finds nothing at all
      const allowed = typosAllowed(word.length) || (words.length === 1 ? 1 : 0);
      if (allowed === 0) continue;
      // kept per dictionary size: a word the index lacks is looked for again only when it grew
      const key = `${word}|${allowed}|${keywords.postings.size}`;
      let fixed = this.#nearest.get(key);
      if (fixed === undefined) this.#nearest.set(key, (fixed = nearestWord(keywords, word, allowed) ?? ''));
      if (!fixed) continue;
      corrections.unshift({ from: m[0], to: fixed });
      const replace = (s: string) => s.slice(0, m.index) + fixed + s.slice(m.index + m[0].length);
      out = replace(out);
      // the semantic side takes a correction that means something (a trade's word) for a word
      // that means nothing to it: not any word of the index an unknown word happens to be near
      if (conceptsOf(word).size === 0 && conceptsOf(fixed).size > 0) meaning = replace(meaning);
    }
    return { text: out, meaning, corrections };
  }

  /**
   * The `city` filter: a municipality by any of its names with its districts, or a district;
   * else a city some listing has; else a 400 naming the nearest places.
   */
  async #cityFilter(value: string, country: string | undefined): Promise<CityFilter> {
    const match = cityNamed(value, country);
    if (match) return { cities: match.cities, districts: match.districts, country: match.place.country };
    const folded = foldText(value).trim();
    await refreshVectors(this.#db);
    if (listingColumns(this.#db).cityIds.has(folded)) return { cities: [folded], districts: [folded] };
    const near = nearestNames(value, country).map((p) => `${p.name} (${p.country})`);
    throw new BadRequestError(
      'unknown_city',
      `No place of the directory is called "${value}".` +
        (near.length > 0 ? ` Did you mean ${near.join(', ')}?` : ''),
      { param: 'city' },
    );
  }

  /**
   * Runs a search; `now` is the time of the request (hours are evaluated in each listing's zone).
   * Never worse than no reading of `q`: when what `q` was read as finds nothing, the reading is
   * let go of step by step (`relaxations`) until a page has listings; the next pages keep to the
   * reading their cursor was made with.
   */
  async search(params: SearchParams, now: Date, options: ReadOptions): Promise<SearchResults> {
    const typed = params.q?.trim() ? params.q : undefined;
    const understood = typed !== undefined ? await this.#understand(typed, params) : undefined;
    const steps = relaxations(understood, typed);
    if (params.cursor !== undefined) {
      // the reading the cursor was made with (a cursor that none made fails on the first's)
      let made: Relaxation = { understood, relaxed: [] };
      for (const step of steps) {
        if (this.#madeWith(params, step, typed)) {
          made = step;
          break;
        }
      }
      return this.#searchAs(params, now, options, typed, made);
    }
    let result: SearchResults | undefined;
    for (const step of steps) {
      result = await this.#searchAs(params, now, options, typed, step);
      if (result.data.length > 0) break;
    }
    return result!;
  }

  /** Whether the request's cursor was made with `step`'s reading. */
  #madeWith(params: SearchParams, step: Relaxation, typed: string | undefined): boolean {
    try {
      decodeCursor(params.cursor!, this.#fingerprint(params, step.understood, typed));
      return true;
    } catch {
      return false;
    }
  }

  /** The fingerprint a reading's cursors carry. */
  #fingerprint(params: SearchParams, understood: Understood | undefined, typed: string | undefined): string {
    const { q, near, radius } = located(params, understood, typed);
    return fingerprintOf(params, q, near, radius, typed);
  }

  /** One search, with `q` read as `step` says. */
  async #searchAs(
    params: SearchParams,
    now: Date,
    options: ReadOptions,
    typed: string | undefined,
    step: Relaxation,
  ): Promise<SearchResults> {
    const db = this.#db;
    const mode: SearchMode = params.mode ?? 'hybrid';
    const understood = step.understood;
    const q = understood ? understood.q : typed;
    /** what the semantic side embeds */
    const meaning = (understood ? understood.meaning : typed) ?? q;
    const hasFilter = [
      params.activity,
      params.country,
      params.city,
      params.near,
      params.claimed,
      params.min_rating,
      params.open_now,
      understood?.place,
    ].some((v) => v !== undefined);
    if (!typed && !hasFilter) {
      throw new BadRequestError('missing_query', 'Give q, at least one filter, or both.', { param: 'q' });
    }
    if (params.radius_km !== undefined && params.near === undefined) {
      throw new BadRequestError('radius_without_near', 'radius_km needs near.', { param: 'radius_km' });
    }
    const limit = params.limit ?? 20;
    const { near, radius } = located(params, understood, typed);
    const city = params.city !== undefined ? await this.#cityFilter(params.city, params.country) : undefined;
    const fingerprint = fingerprintOf(params, q, near, radius, typed);

    const cursor = params.cursor !== undefined ? decodeCursor(params.cursor, fingerprint) : undefined;
    const snapshot: Snapshot = cursor ? { seq: cursor.s, mean: cursor.m } : await this.#snapshots.current();
    const at = cursor ? cursor.t : now.getTime();

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
    let rows = this.#pages?.get(pageKey);
    let sem: Similar = { seqs: new Float64Array(0), sims: new Float64Array(0), ats: new Int32Array(0) };
    // from here to the profiles' query a search ranks without waiting: it gives way between phases
    const held = { since: performance.now() };
    if (!rows && q && useSemantic) {
      sem = await this.semanticSet(
        meaning!,
        vectorOf(meaning!),
        snapshot.seq,
        () => this.#giveWay(held),
        near ? { ...near, radius } : undefined,
      );
      await this.#giveWay(held);
    }
    const filters: Filters = {
      activity: params.activity,
      country: params.country ?? city?.country,
      city,
      claimed: params.claimed,
      minRating: params.min_rating,
      near: near ? { ...near, radius } : undefined,
    };
    if (!rows && this.#memoryRanking && mode === 'semantic' && q && params.open_now === undefined) {
      const none = { ats: new Int32Array(0), ranks: new Float64Array(0) };
      rows = await this.#withProfiles(this.#memory.hits(none, mode, sem, snapshot, filters, limit, cursor));
      this.#pages?.set(pageKey, rows);
    }
    if (
      !rows &&
      this.#memoryRanking &&
      useKeyword &&
      q &&
      (mode === 'keyword' || mode === 'hybrid') &&
      params.open_now === undefined
    ) {
      const variants = await this.#tsqueriesOf(foldText(q));
      const lexemes = plainLexemes(variants);
      const groups = lexemes ? undefined : lexemeGroups(variants);
      let ranks: KeywordRanks | undefined;
      if (lexemes || groups) await refreshVectors(db, snapshot.seq);
      const upTo = positionsUpTo(db, snapshot.seq);
      // a geo search ranks the matches within its circle only (marked, until released)
      const marks = filters.near && (lexemes || groups) ? this.#memory.near(filters.near, upTo) : undefined;
      let page: Ranked[] | undefined;
      try {
        if (lexemes) {
          ranks = keywordRanks(listingColumns(db).keywords, lexemes, upTo, marks?.inside);
          await this.#giveWay(held);
        } else if (groups) {
          // several words: the matches from the postings, their cover density from the positions
          const keywords = listingColumns(db).keywords;
          const ranker = new CoverRanker(keywords, groups);
          const cover = ranker.matches(upTo, marks?.inside);
          // keyword mode ranks lazily (most matches cannot reach the page); hybrid needs every rank
          ranks = mode === 'keyword' ? { cover, ranker } : await this.#rankEvery(ranker, cover, held);
        }
        if (ranks) page = this.#memory.hits(ranks, mode, sem, snapshot, filters, limit, cursor, marks);
      } finally {
        if (marks) this.#memory.release(marks);
      }
      if (page) {
        rows = await this.#withProfiles(page);
        this.#pages?.set(pageKey, rows);
      }
    }
    if (!rows) {
      rows = await sqlPage(db, {
        params,
        filters,
        mode,
        q,
        variants: useKeyword && q ? await this.#tsqueriesOf(foldText(q)) : undefined,
        sem: useSemantic ? sem : undefined,
        near,
        radius,
        snapshot,
        at,
        cursor,
        limit,
      });
      this.#pages?.set(pageKey, rows);
    }
    // The rendered page holds until one of its listings opens or closes (or the date moves).
    const renderKey = `${pageKey}|${options.baseUrl}`;
    const t = now.getTime();
    const shown = this.#rendered?.get(renderKey);
    if (shown && shown.from <= t && t < shown.until) return shown.page;
    const hasMore = rows.length > limit;
    const page = rows.slice(0, limit);
    const sims =
      useSemantic && q
        ? similarityOf(
            this.#db,
            vectorOf(meaning!),
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
          ? encodeCursor({
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
      interpreted: understood ? interpretation(understood, step.relaxed) : null,
    };
    this.#rendered?.set(renderKey, { page: result, from: t, until });
    return result;
  }
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
