// Places: details of one listing, forward geocoding (GeoNames places, listing addresses and
// names) and reverse geocoding (the nearest place and the nearest listings), and photos.
import { createHash } from 'node:crypto';
import type {
  GeocodeCandidate,
  GeocodeResults,
  PlaceDetails,
  ReverseGeocodeResult,
} from '../../generated/directory/client/types.gen.ts';
import { foldText, tokenize } from '../embeddings/fold.ts';
import type { Db } from '../platform/db.ts';
import { NotFoundError } from '../platform/errors.ts';
import { gazetteer, municipalityOf, type GazetteerPlace } from './data/gazetteer.ts';
import { boundingBox, haversineKm, haversineSql } from './geo.ts';
import { renderPhoto } from './photos.ts';
import { toListing, type ListingRecord, type ReadOptions } from './store.ts';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** A stable `plc_` id for a geocoded place. */
function placeId(key: string): string {
  const digest = createHash('sha256').update(key).digest();
  let out = '';
  for (let i = 0; i < 26; i++) out += CROCKFORD[(digest[i] ?? 0) % 32];
  return `plc_${out}`;
}

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
const countryName = (code: string) => regionNames.of(code) ?? code;

export async function getPlaceDetails(
  db: Db,
  id: string,
  now: Date,
  options: ReadOptions,
): Promise<PlaceDetails> {
  const [row] = await db.query<{ profile: ListingRecord }>('select profile from listings where id = $1', [
    id,
  ]);
  if (!row) throw new NotFoundError('listing_not_found', `No listing has the id ${id}.`, { param: 'id' });
  return toListing(row.profile, now, options);
}

/** Edit distance, giving up (returning max + 1) once it exceeds `max`. */
function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(
        (prev[j] ?? 0) + 1,
        (cur[j - 1] ?? 0) + 1,
        (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      cur.push(v);
      best = Math.min(best, v);
    }
    if (best > max) return max + 1;
    prev = cur;
  }
  return prev[b.length] ?? max + 1;
}

function matchPlace(place: GazetteerPlace, q: string, maxTypos: number): number {
  const names = [place.folded, ...place.alternates];
  if (names.includes(q)) return place.folded === q ? 1 : 0.95;
  if (names.some((n) => n.startsWith(q))) return q.length >= 3 ? 0.75 : 0;
  if (maxTypos > 0) {
    const d = Math.min(...names.map((n) => editDistance(n, q, maxTypos)));
    if (d <= maxTypos) return 0.7 - 0.1 * d;
  }
  return 0;
}

function cityCandidate(place: GazetteerPlace, match: number): GeocodeCandidate {
  // larger places win among equal matches: up to 15 % by population
  const weight = Math.min(1, Math.log10(Math.max(10, place.population)) / 7);
  return {
    object: 'geocode_candidate',
    id: placeId(`geonames:${place.geonamesId}`),
    name: place.name,
    kind: place.population >= 15_000 ? 'city' : 'locality',
    lat: place.lat,
    lon: place.lon,
    country: place.country,
    region: place.region,
    // a district with its municipality: "Tegel, Berlin, Germany"
    formatted: [
      place.name,
      municipalityOf(place) !== place ? municipalityOf(place).name : null,
      place.region !== municipalityOf(place).name ? place.region : null,
      countryName(place.country),
    ]
      .filter(Boolean)
      .join(', '),
    score: round(match * (0.85 + 0.15 * weight), 4),
    listing_id: null,
  };
}

export async function geocode(
  db: Db,
  q: string,
  options: { country?: string | undefined; limit?: number | undefined } = {},
): Promise<GeocodeResults> {
  const limit = options.limit ?? 5;
  const folded = foldText(q).replace(/\s+/g, ' ').trim();
  const candidates: GeocodeCandidate[] = [];
  if (folded) {
    const places = gazetteer().filter((p) => !options.country || p.country === options.country);
    let matched = places.map((p) => [p, matchPlace(p, folded, 0)] as const).filter(([, m]) => m > 0);
    if (matched.length < limit && folded.length >= 4) {
      const typos = folded.length >= 8 ? 2 : 1;
      matched = places.map((p) => [p, matchPlace(p, folded, typos)] as const).filter(([, m]) => m > 0);
    }
    candidates.push(...matched.map(([p, m]) => cityCandidate(p, m)));

    // Names by prefix (a C-collation b-tree, in its order: an exact name first), addresses by
    // word prefixes (GIN over address_tsv): no scan of the table at any size.
    const words = tokenize(folded).slice(0, 8);
    const args: unknown[] = [
      folded,
      `${folded.replace(/[%_\\]/g, '\\$&')}%`,
      words.length > 0 ? words.map((w) => `'${w}':*`).join(' & ') : null,
    ];
    const country = options.country ? `and country = $4` : '';
    if (options.country) args.push(options.country);
    const hits = await db.query<{ profile: ListingRecord; by_name: boolean; exact: boolean }>(
      `with hits as (
         (select id, true as by_name, name_folded = $1 as exact from listings
          where name_folded collate "C" like $2 ${country} order by name_folded collate "C", id limit 40)
         union all
         (select id, false, false from listings
          where address_tsv @@ to_tsquery('simple', $3) ${country} order by id limit 40))
       select l.profile, h.by_name, h.exact from hits h join listings l using (id)`,
      args,
    );
    const byName = new Set(hits.filter((h) => h.by_name).map((h) => h.profile.id));
    const rows = hits.filter((h) => h.by_name || !byName.has(h.profile.id));
    for (const { profile, by_name, exact } of rows) {
      candidates.push({
        object: 'geocode_candidate',
        id: placeId(`${by_name ? 'listing' : 'address'}:${profile.id}`),
        name: by_name
          ? profile.name
          : `${profile.address.street}${profile.address.house_number ? ` ${profile.address.house_number}` : ''}`,
        kind: by_name ? 'listing' : 'address',
        lat: profile.geo.lat,
        lon: profile.geo.lon,
        country: profile.address.country,
        region: profile.address.region || null,
        formatted: by_name ? `${profile.name}, ${profile.address.formatted}` : profile.address.formatted,
        score: exact ? 0.95 : by_name ? 0.8 : 0.7,
        listing_id: profile.id,
      });
    }
  }
  candidates.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
  return { object: 'list', data: candidates.slice(0, limit), has_more: false, next_cursor: null };
}

export async function reverseGeocode(
  db: Db,
  lat: number,
  lon: number,
  options: { limit?: number | undefined } & ReadOptions & { now: Date },
): Promise<ReverseGeocodeResult> {
  // To 1e-7 degrees (about 1 cm): a subnormal float such as 5e-324 underflows PostgreSQL's trigonometry.
  lat = Math.round(lat * 1e7) / 1e7;
  lon = Math.round(lon * 1e7) / 1e7;
  const limit = options.limit ?? 5;
  let nearest: GazetteerPlace | undefined;
  let best = Infinity;
  for (const p of gazetteer()) {
    if (Math.abs(p.lat - lat) > 3 && best < Infinity) continue;
    const d = haversineKm(lat, lon, p.lat, p.lon);
    if (d < best) {
      best = d;
      nearest = p;
    }
  }
  if (!nearest) throw new NotFoundError('no_place', 'The gazetteer has no place.');
  const radius = 25;
  const box = boundingBox(lat, lon, radius);
  const rows = await db.query<{ profile: ListingRecord; dist: number }>(
    `select profile, dist from (
       select profile, id, ${haversineSql('$1', '$2', 'lat', 'lon')} as dist
       from listings where lat between $3 and $4 and lon between $5 and $6) t
     where dist <= $7 order by dist, id limit $8`,
    [lat, lon, box.minLat, box.maxLat, box.minLon, box.maxLon, radius, limit],
  );
  return {
    object: 'reverse_geocode_result',
    place: {
      geonames_id: nearest.geonamesId,
      name: nearest.name,
      country: nearest.country,
      region: nearest.region,
      lat: nearest.lat,
      lon: nearest.lon,
      distance_km: round(best, 3),
      time_zone: nearest.timeZone,
    },
    listings: rows.map((r) => ({
      distance_km: Math.min(radius, round(r.dist, 3)),
      listing: toListing(r.profile, options.now, options),
    })),
  };
}

/** The JPEG of a photo of a claimed listing; 404 when the photo is unknown or its listing is unclaimed. */
export async function getPhoto(db: Db, id: string): Promise<{ jpeg: Buffer; width: number; height: number }> {
  const [row] = await db.query<{ claimed: boolean; photos: ListingRecord['photos'] }>(
    // no LIMIT: photo ids are unique, and a LIMIT tempts the planner into a scan that stops early
    `select claimed, profile->'photos' as photos from listings where photo_ids @> array[$1]::text[]`,
    [id],
  );
  const photo = row?.claimed ? row.photos.find((p) => p.id === id) : undefined;
  if (!photo) throw new NotFoundError('photo_not_found', `No photo has the id ${id}.`, { param: 'id' });
  return { jpeg: renderPhoto(id, photo.width, photo.height), width: photo.width, height: photo.height };
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
