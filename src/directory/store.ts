// Listings in storage: the record we keep, how it is written (folded text, the full-text
// vector, the embedding, the SQL form of the hours) and how it is read back as the API's
// Listing at a given instant.
import type { Listing, Photo } from '../../generated/directory/client/types.gen.ts';
import { embedOne, foldText } from '../embeddings/index.ts';
import { CONCEPTS, LANGS, type Lang } from '../embeddings/data/thesaurus.ts';
import type { Queryable } from '../platform/db.ts';
import { naceAncestors } from './data/nace.ts';
import { openingHoursAt, specialMultiranges, weekMultirange, type StoredHours } from './hours.ts';

export type StoredPhoto = Omit<Photo, 'object' | 'url'>;

/** A listing as stored: its hours without the per-request state, its photos without URLs. */
export type ListingRecord = Omit<Listing, 'opening_hours' | 'photos'> & {
  opening_hours: StoredHours | null;
  photos: StoredPhoto[];
};

export const EMBEDDING_DIMENSIONS = 384;

/**
 * The versions of what a listing's stored row derives from code, in `directory_meta`: the
 * embedding engine that computed `embedding` (change it whenever `embedOne` gives other vectors)
 * and the words `tsv` holds beside the listing's own (change it whenever `tsvInputs` gives other
 * words: the trade words of a new language). Start-up recomputes whichever is stale
 * (reembed.ts).
 */
export const EMBEDDING_VERSION = 'thesaurus-4';
export const KEYWORD_VERSION = 'trade-words-2';

/** PostgreSQL text search configurations by ISO 639-1 language; all exist in PostgreSQL 15 and PGlite. */
const TS_CONFIG: Record<string, string> = {
  de: 'german',
  fr: 'french',
  es: 'spanish',
  it: 'italian',
  nl: 'dutch',
  en: 'english',
  pt: 'portuguese',
  sv: 'swedish',
  da: 'danish',
  fi: 'finnish',
  ro: 'romanian',
  hu: 'hungarian',
  el: 'greek',
  lt: 'lithuanian',
};
/**
 * The configurations a query is stemmed with: the thesaurus's languages that PostgreSQL stems
 * (Polish it does not), plus 'simple' for exact words.
 */
export const QUERY_CONFIGS = [
  'english',
  'german',
  'french',
  'spanish',
  'italian',
  'dutch',
  'portuguese',
  'simple',
];

export function tsConfigFor(language: string | undefined): string {
  return (language && TS_CONFIG[language]) || 'simple';
}

const CONCEPTS_BY_NACE = new Map<string, typeof CONCEPTS>();
for (const c of CONCEPTS) {
  for (const code of c.nace) CONCEPTS_BY_NACE.set(code, [...(CONCEPTS_BY_NACE.get(code) ?? []), c]);
}

/** The trade words of a listing's activities in one language (keyword search finds a Klempner by "plumber"). */
function tagsFor(record: Pick<ListingRecord, 'activities'>, lang: Lang): string {
  const words = new Set<string>();
  for (const a of record.activities) {
    for (const c of CONCEPTS_BY_NACE.get(a.code) ?? []) {
      for (const t of c.terms[lang].split('|').slice(0, 4)) words.add(t);
    }
    if (lang === 'en') words.add(a.name);
  }
  return foldText([...words].join(' '));
}

/** What `tsv` is computed from: the folded name, the listing language's configuration, the folded text, the trade words per language. */
export function tsvInputs(
  r: Pick<ListingRecord, 'name' | 'legal_name' | 'description' | 'languages' | 'activities'>,
): string[] {
  return [
    foldText(r.name),
    tsConfigFor(r.languages[0]),
    foldText(`${r.name} ${r.legal_name ?? ''} ${r.description}`),
    ...LANGS.map((l) => tagsFor(r, l)),
  ];
}

/**
 * The SQL of `tsv` from `tsvInputs`, each input named by `input(i)`: the name (weight A), the text
 * stemmed in its language (B) and as written (D), and the trade words in each language (C).
 */
export function tsvSql(input: (i: number) => string): string {
  const tags = LANGS.map((l, i) => `to_tsvector('${tsConfigFor(l)}', ${input(3 + i)})`).join(' || ');
  return (
    `setweight(to_tsvector('simple', ${input(0)}), 'A') || setweight(to_tsvector(${input(1)}::regconfig, ${input(2)}), 'B')` +
    ` || setweight(to_tsvector('simple', ${input(2)}), 'D') || setweight(${tags}, 'C')`
  );
}

/** Embeddings are stored as a float32 scale and 384 signed bytes (a quarter of float32, ample for ranking). */
export function quantize(v: Float32Array): Uint8Array {
  let max = 0;
  for (const x of v) max = Math.max(max, Math.abs(x));
  const scale = max > 0 ? max / 127 : 1;
  const out = new Uint8Array(4 + v.length);
  new DataView(out.buffer).setFloat32(0, scale, true);
  const bytes = new Int8Array(out.buffer, 4);
  for (let i = 0; i < v.length; i++) bytes[i] = Math.round((v[i] ?? 0) / scale);
  return out;
}

export function embeddingText(record: Pick<ListingRecord, 'name' | 'activities' | 'description'>): string {
  return [record.name, ...record.activities.map((a) => a.name), record.description].join('. ');
}

const COLUMNS = [
  'id',
  'profile',
  'name_folded',
  'address_folded',
  'city_folded',
  'district_folded',
  'country',
  'lat',
  'lon',
  'activity_path',
  'claimed',
  'rating',
  'review_count',
  'response_time',
  'time_zone',
  'week_open',
  'special_cover',
  'special_open',
  'photo_ids',
  'embedding',
  'created',
  'updated',
];
/** The advisory lock every transaction that adds listings holds until it commits. */
export const LISTINGS_WRITE_LOCK = 727_275;

/**
 * A listing as its insert's parameters: everything computed in JavaScript (folded text, the
 * embedding, the SQL form of the hours), so it can be made away from the database (the demo's
 * rows are made on a worker thread, demo.ts). `values` follow COLUMNS; the full-text vector is
 * made by the database from the rest.
 */
export interface ListingRow {
  values: unknown[];
  /** The name, folded: weight A of the full-text vector. */
  name: string;
  /** The text search configuration of the listing's first language (weight B, stemmed). */
  config: string;
  /** Name, legal name and description, folded: weights B (stemmed) and D (as written). */
  text: string;
  /** The trade words of the activities in each language of LANGS: weight C, one vector per set. */
  tags: string[];
}

/**
 * What many listings share, computed once: the trade words of a set of activities, the SQL form
 * of a country's holidays in a time zone (most of a demo listing's making was these).
 */
const SHARED = new Map<string, unknown>();
function shared<T>(key: string, make: () => T): T {
  if (SHARED.has(key)) return SHARED.get(key) as T;
  if (SHARED.size >= 10_000) SHARED.clear();
  const made = make();
  SHARED.set(key, made);
  return made;
}

export function listingRow(r: ListingRecord): ListingRow {
  const hours = r.opening_hours;
  const special =
    hours && hours.special_days.length > 0
      ? shared(`special\u0000${hours.time_zone}\u0000${JSON.stringify(hours.special_days)}`, () =>
          specialMultiranges(hours),
        )
      : null;
  const activities = r.activities.map((a) => `${a.code}\u0001${a.name}`).join('\u0000');
  return {
    values: [
      r.id,
      JSON.stringify(r),
      foldText(r.name),
      foldText(`${r.address.formatted} ${r.address.postal_code} ${r.address.district ?? ''}`),
      foldText(r.address.city),
      r.address.district ? foldText(r.address.district) : null,
      r.address.country,
      r.geo.lat,
      r.geo.lon,
      [...new Set(r.activities.flatMap((a) => naceAncestors(a.code)))],
      r.claimed,
      r.rating,
      r.review_count,
      r.response_time_median_minutes,
      hours?.time_zone ?? null,
      hours ? weekMultirange(hours.periods) : null,
      special?.cover ?? null,
      special?.open ?? null,
      r.photos.map((p) => p.id),
      quantize(embedOne(embeddingText(r), EMBEDDING_DIMENSIONS)),
      r.created,
      r.updated,
    ],
    name: foldText(r.name),
    config: tsConfigFor(r.languages[0]),
    text: foldText(`${r.name} ${r.legal_name ?? ''} ${r.description}`),
    tags: shared(`tags\u0000${activities}`, () => LANGS.map((l) => tagsFor(r, l))),
  };
}

/**
 * The weight-C vectors of trade words, by their words: listings share a few hundred sets of
 * activities, and stemming each set in seven languages once instead of once a listing was most
 * of a demo load's time. Bounded: a set not kept is stemmed again.
 */
const TAG_VECTORS = new Map<string, string>();
const TAG_VECTORS_MAX = 20_000;
const tagsKey = (tags: string[]) => tags.join('\u0001');

async function tagVectors(db: Queryable, rows: ListingRow[]): Promise<string[]> {
  const missing = new Map<string, string[]>();
  for (const row of rows) {
    const key = tagsKey(row.tags);
    if (!TAG_VECTORS.has(key)) missing.set(key, row.tags);
  }
  if (missing.size > 0) {
    const sets = [...missing.values()];
    const columns = LANGS.map((_, i) => `t${i}`);
    const vector = LANGS.map((l, i) => `to_tsvector('${tsConfigFor(l)}', t${i})`).join(' || ');
    const stemmed = await db.query<{ v: string }>(
      `select setweight(${vector}, 'C')::text as v
       from unnest(${LANGS.map((_, i) => `$${i + 1}::text[]`).join(', ')}) with ordinality as u(${columns.join(', ')}, n)
       order by n`,
      LANGS.map((_, i) => sets.map((tags) => tags[i] ?? '')),
    );
    if (TAG_VECTORS.size + sets.length > TAG_VECTORS_MAX) TAG_VECTORS.clear();
    sets.forEach((tags, i) => TAG_VECTORS.set(tagsKey(tags), stemmed[i]?.v ?? ''));
  }
  return rows.map((row) => TAG_VECTORS.get(tagsKey(row.tags)) ?? '');
}

/**
 * Inserts listings with multi-row statements (a few hundred rows each). Run it inside a
 * transaction (`Db.transaction`): it takes LISTINGS_WRITE_LOCK first, so writers draw sequence
 * numbers and commit one at a time, in the same order. A search snapshot ("every listing up to
 * sequence S") then never gains a row later: all rows numbered up to S were committed (or
 * rolled back) before the row numbered S was drawn.
 */
export async function insertListings(
  db: Queryable,
  records: ListingRecord[],
  batchSize = 250,
): Promise<void> {
  await insertListingRows(db, records.map(listingRow), batchSize);
}

/** Each column's type: the rows are selected from a VALUES list, which types them only so. */
const TYPES: Record<string, string> = {
  id: 'text',
  profile: 'jsonb',
  name_folded: 'text',
  address_folded: 'text',
  city_folded: 'text',
  district_folded: 'text',
  country: 'text',
  lat: 'float8',
  lon: 'float8',
  activity_path: 'text[]',
  claimed: 'boolean',
  rating: 'float8',
  review_count: 'int',
  response_time: 'int',
  time_zone: 'text',
  week_open: 'int4multirange',
  special_cover: 'tstzmultirange',
  special_open: 'tstzmultirange',
  photo_ids: 'text[]',
  embedding: 'bytea',
  created: 'bigint',
  updated: 'bigint',
};

/** The columns whose values many rows share (opening hours' ranges): sent and parsed once a statement. */
const SHARED_VALUES = new Set(['week_open', 'special_cover', 'special_open']);

/** insertListings for rows already made (listingRow). */
export async function insertListingRows(db: Queryable, rows: ListingRow[], batchSize = 250): Promise<void> {
  await db.query('select pg_advisory_xact_lock($1)', [LISTINGS_WRITE_LOCK]);
  // rows of an empty directory are all this build's: it holds this build's versions
  await db.query(
    `insert into directory_meta (key, value)
     select k, v from unnest($1::text[], $2::text[]) as t(k, v) where not exists (select 1 from listings)
     on conflict (key) do update set value = excluded.value`,
    [
      ['embedding_version', 'keyword_version'],
      [EMBEDDING_VERSION, KEYWORD_VERSION],
    ],
  );
  for (let start = 0; start < rows.length; start += batchSize) {
    const batch = rows.slice(start, start + batchSize);
    const tags = await tagVectors(db, batch);
    const params: unknown[] = [];
    // each distinct shared value once, as a numbered row the listings' rows join
    const shared = new Map<string, Map<string, number>>();
    const numberOf = (type: string, value: string | null): number | null => {
      if (value === null) return null;
      const ofType = shared.get(type) ?? new Map<string, number>();
      shared.set(type, ofType);
      let n = ofType.get(value);
      if (n === undefined) ofType.set(value, (n = ofType.size));
      return n;
    };
    const values = batch.map((row, i) => {
      const base = params.length;
      row.values.forEach((value, j) => {
        const column = COLUMNS[j] ?? '';
        params.push(
          SHARED_VALUES.has(column) ? numberOf(TYPES[column] ?? '', value as string | null) : value,
        );
      });
      params.push(row.name, row.config, row.text, numberOf('tsvector', tags[i] ?? ''), i);
      const casts = COLUMNS.map((c) => (SHARED_VALUES.has(c) ? 'int' : TYPES[c]));
      return `(${[...casts, 'text', 'text', 'text', 'int', 'int'].map((type, j) => `$${base + j + 1}::${type}`).join(',')})`;
    });
    const lists = [...shared].map(([type, ofType]) => {
      const rowsOf = [...ofType.keys()].map((value, n) => {
        params.push(value);
        return `(${n},$${params.length}::${type})`;
      });
      return [type, `(values ${rowsOf.join(',')}) as "${type}"(n, v)`] as const;
    });
    const joins = new Map(lists);
    const from = [`(values ${values.join(',')}) as r(${COLUMNS.join(',')}, name, config, text, tags, at)`];
    const pick = (column: string, type: string) => {
      if (!joins.has(type)) return 'null';
      from.push(
        `left join ${joins.get(type)?.replace(`"${type}"(n, v)`, `"${column}"(n, v)`)} on "${column}".n = r.${column}`,
      );
      return `"${column}".v`;
    };
    const selected = COLUMNS.map((c) => (SHARED_VALUES.has(c) ? pick(c, TYPES[c] ?? '') : `r.${c}`));
    const tagged = pick('tags', 'tsvector');
    await db.query(
      `insert into listings (${COLUMNS.join(',')}, tsv)
       select ${selected.join(',')},
         setweight(to_tsvector('simple', r.name), 'A') || setweight(to_tsvector(r.config::regconfig, r.text), 'B')
           || setweight(to_tsvector('simple', r.text), 'D') || ${tagged}
       from ${from.join(' ')}
       order by r.at`,
      params,
    );
  }
}

/** The stored records of the listings with these ids (those that exist), in no particular order. */
export async function listingRecords(q: Queryable, ids: string[]): Promise<ListingRecord[]> {
  const rows = await q.query<{ profile: ListingRecord }>('select profile from listings where id = any($1)', [
    ids,
  ]);
  return rows.map((r) => r.profile);
}

/**
 * Runs `fill` with the listings' secondary indexes dropped and builds them again after (in the
 * caller's transaction): filling an empty table, building each index once is several times
 * faster than growing it row by row (a GIN index without a pending list most of all).
 */
export async function withIndexesRebuilt<T>(tx: Queryable, fill: () => Promise<T>): Promise<T> {
  const indexes = await tx.query<{ name: string; def: string }>(
    `select c.relname as name, pg_get_indexdef(i.indexrelid) as def
     from pg_index i join pg_class c on c.oid = i.indexrelid
     where i.indrelid = 'listings'::regclass
       and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)`,
  );
  for (const index of indexes) await tx.query(`drop index ${index.name}`);
  const filled = await fill();
  for (const index of indexes) await tx.query(index.def);
  return filled;
}

export interface ReadOptions {
  /** The origin photo URLs start with, e.g. `https://directory.api.eurus.eu`. */
  baseUrl: string;
}

/** The API's Listing from a stored record at `now`: hours state computed, photos only when claimed. */
export function toListing(record: ListingRecord, now: Date, options: ReadOptions): Listing {
  return {
    ...record,
    // listings stored before addresses had a district
    address: { ...record.address, district: record.address.district ?? null },
    opening_hours: record.opening_hours ? openingHoursAt(record.opening_hours, now) : null,
    photos: record.claimed
      ? record.photos.map((p) => ({
          id: p.id,
          object: 'photo' as const,
          url: `${options.baseUrl}/v1/places/photos/${p.id}`,
          width: p.width,
          height: p.height,
          attribution: p.attribution,
        }))
      : [],
  };
}

/** A stored record from an API Listing (as imported): drops what is computed per request. */
export function fromListing(listing: Listing): ListingRecord {
  const hours = listing.opening_hours;
  return {
    ...listing,
    opening_hours: hours
      ? {
          time_zone: hours.time_zone,
          periods: hours.periods,
          weekday_text: hours.weekday_text,
          special_days: hours.special_days,
        }
      : null,
    photos: listing.photos.map((p) => ({
      id: p.id,
      width: p.width,
      height: p.height,
      attribution: p.attribution,
    })),
  };
}

/** How many listings the directory holds. */
export async function countListings(db: Queryable): Promise<number> {
  const [row] = await db.query<{ n: number }>('select count(*)::int as n from listings');
  return row?.n ?? 0;
}
