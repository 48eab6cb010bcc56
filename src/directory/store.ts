// Listings in storage: the record we keep, how it is written (folded text, the full-text
// vector, the embedding, the SQL form of the hours) and how it is read back as the API's
// Listing at a given instant.
import type { Listing, Photo } from '../../generated/directory/client/types.gen.ts';
import { embedOne, foldText } from '../embeddings/index.ts';
import { CONCEPTS, LANGS, type Lang } from '../embeddings/thesaurus.ts';
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
/** The configurations a query is stemmed with (the seven languages of search, plus 'simple' for exact words). */
export const QUERY_CONFIGS = ['english', 'german', 'french', 'spanish', 'italian', 'dutch', 'simple'];

export function tsConfigFor(language: string | undefined): string {
  return (language && TS_CONFIG[language]) || 'simple';
}

const CONCEPTS_BY_NACE = new Map<string, typeof CONCEPTS>();
for (const c of CONCEPTS) {
  for (const code of c.nace) CONCEPTS_BY_NACE.set(code, [...(CONCEPTS_BY_NACE.get(code) ?? []), c]);
}

/** The trade words of a listing's activities in one language (keyword search finds a Klempner by "plumber"). */
function tagsFor(record: ListingRecord, lang: Lang): string {
  const words = new Set<string>();
  for (const a of record.activities) {
    for (const c of CONCEPTS_BY_NACE.get(a.code) ?? []) {
      for (const t of c.terms[lang].split('|').slice(0, 4)) words.add(t);
    }
    if (lang === 'en') words.add(a.name);
  }
  return foldText([...words].join(' '));
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
const CASTS: Record<string, string> = {
  profile: '::jsonb',
  activity_path: '::text[]',
  week_open: '::int4multirange',
  special_cover: '::tstzmultirange',
  special_open: '::tstzmultirange',
  photo_ids: '::text[]',
  embedding: '::bytea',
};

/** The advisory lock every transaction that adds listings holds until it commits. */
export const LISTINGS_WRITE_LOCK = 727_275;

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
  await db.query('select pg_advisory_xact_lock($1)', [LISTINGS_WRITE_LOCK]);
  for (let start = 0; start < records.length; start += batchSize) {
    const batch = records.slice(start, start + batchSize);
    const params: unknown[] = [];
    const rows: string[] = [];
    for (const r of batch) {
      const base = params.length;
      const hours = r.opening_hours;
      const special = hours && hours.special_days.length > 0 ? specialMultiranges(hours) : null;
      const text = foldText(`${r.name} ${r.legal_name ?? ''} ${r.description}`);
      params.push(
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
        foldText(r.name),
        tsConfigFor(r.languages[0]),
        text,
        ...LANGS.map((l) => tagsFor(r, l)),
      );
      const values = COLUMNS.map((c, i) => `$${base + i + 1}${CASTS[c] ?? ''}`);
      const t = base + COLUMNS.length;
      const tags = LANGS.map((l, i) => `to_tsvector('${tsConfigFor(l)}', $${t + 4 + i})`).join(' || ');
      values.push(
        `setweight(to_tsvector('simple', $${t + 1}), 'A') || setweight(to_tsvector($${t + 2}::regconfig, $${t + 3}), 'B')` +
          ` || setweight(to_tsvector('simple', $${t + 3}), 'D') || setweight(${tags}, 'C')`,
      );
      rows.push(`(${values.join(',')})`);
    }
    await db.query(`insert into listings (${COLUMNS.join(',')}, tsv) values ${rows.join(',')}`, params);
  }
}

/** The stored records of the listings with these ids (those that exist), in no particular order. */
export async function listingRecords(q: Queryable, ids: string[]): Promise<ListingRecord[]> {
  const rows = await q.query<{ profile: ListingRecord }>('select profile from listings where id = any($1)', [
    ids,
  ]);
  return rows.map((r) => r.profile);
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
