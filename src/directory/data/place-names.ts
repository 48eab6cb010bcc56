// Places of the EU by any of their names: the local name, GeoNames' name (English for large
// cities: Munich, Warsaw, Lisbon) and its alternate names in Latin script (Monaco di Baviera,
// Bruxelles, Brussel), accent- and case-folded. What the `city` filter and the reading of places
// in `q` look names up in. Plain maps of strings to ids, built once from the gazetteer.
import { foldText } from '../../embeddings/fold.ts';
import { editDistance } from '../keywords/distance.ts';
import { cachedOnDisk } from '../../platform/disk-cache.ts';
import { gazetteer, gazetteerInputs, municipalityOf, placeById, type GazetteerPlace } from './gazetteer.ts';
import { EU_COUNTRIES } from './locale.ts';

const EU = new Set<string>(EU_COUNTRIES);

interface Names {
  /** folded name -> GeoNames ids, the best first (see `order`) */
  byName: Map<string, number[]>;
  /** municipality id -> ids of its districts */
  districts: Map<number, number[]>;
}
let names: Names | undefined;
let suggestible: { name: string; place: GazetteerPlace }[] | undefined;

/**
 * The order of the places sharing a name: by population, a place whose own name it is counting
 * twenty times its size ("Cologne" is Köln, not the Italian village of that name; "Bruck" is
 * Bruck an der Mur, not Fürstenfeldbruck), a district a tenth of it.
 */
function order(name: string) {
  const weight = (p: GazetteerPlace) =>
    p.population * (nameKey(p.folded) === name ? 20 : 1) * (p.municipalityId !== null ? 0.1 : 1);
  return (a: GazetteerPlace, b: GazetteerPlace) => weight(b) - weight(a) || a.geonamesId - b.geonamesId;
}

/** Builds the maps now (the service does before it says ready: about 3 s with the gazetteer). */
export function preparePlaceNames(): void {
  build();
}

function build(): Names {
  if (names) return names;
  // some 0.5 s of CPU at each directory start, made once per install (platform/disk-cache.ts)
  const inputs = gazetteerInputs();
  names = cachedOnDisk(
    'place-names',
    { ...inputs, code: [...inputs.code, new URL(import.meta.url)] },
    makeNames,
  );
  return names;
}

function makeNames(): Names {
  const lists = new Map<string, GazetteerPlace[]>();
  const districts = new Map<number, number[]>();
  for (const place of gazetteer()) {
    if (!EU.has(place.country)) continue;
    for (const name of new Set([place.folded, ...place.alternates].map(nameKey))) {
      const list = lists.get(name);
      if (list) list.push(place);
      else lists.set(name, [place]);
    }
    if (place.municipalityId !== null) {
      const list = districts.get(place.municipalityId) ?? [];
      list.push(place.geonamesId);
      districts.set(place.municipalityId, list);
    }
  }
  const byName = new Map<string, number[]>();
  for (const [name, list] of lists) byName.set(name, list.sort(order(name)).map((p) => p.geonamesId));
  return { byName, districts };
}

/** Folded, spaces collapsed: the form names are looked up in. */
export function nameKey(text: string): string {
  return foldText(text)
    .replace(/[^\p{L}\p{N}'.-]+/gu, ' ')
    .trim();
}

/** The EU places that bear this name (folded), the best first; restricted to `country` when given. */
export function placesNamed(key: string, country?: string): GazetteerPlace[] {
  const ids = build().byName.get(key) ?? [];
  const out: GazetteerPlace[] = [];
  for (const id of ids) {
    const p = placeById(id)!;
    if (country === undefined || p.country === country) out.push(p);
  }
  return out;
}

/** The districts of a municipality. */
export function districtsOf(place: GazetteerPlace): GazetteerPlace[] {
  return (build().districts.get(place.geonamesId) ?? []).map((id) => placeById(id)!);
}

/** Every folded name of a place. */
export function namesOf(place: GazetteerPlace): string[] {
  return [place.folded, ...place.alternates];
}

/** What a `city` value names: a municipality, or a district of one. */
export interface CityMatch {
  place: GazetteerPlace;
  /** the folded names a listing's `address.city` may carry for it */
  cities: string[];
  /** the folded names a listing's `address.district` may carry for it (a district asked for) */
  districts: string[];
}

/**
 * The place a `city` value names, by any of its names, or undefined. A municipality takes in
 * its districts: listings stored before addresses had a district wrote the district as the city,
 * so those names count as the city too.
 */
export function cityNamed(value: string, country?: string): CityMatch | undefined {
  const place = placesNamed(nameKey(value), country)[0];
  if (!place) return undefined;
  if (place.municipalityId !== null) {
    return { place, cities: [place.folded], districts: namesOf(place) };
  }
  const cities = new Set(namesOf(place));
  for (const d of districtsOf(place)) cities.add(d.folded);
  return { place, cities: [...cities], districts: [] };
}

/** The municipality of the district or municipality named `city` in `country`, near a point. */
export function splitDistrict(
  city: string,
  country: string,
  near: { lat: number; lon: number },
): { city: string; district: string } | undefined {
  for (const place of placesNamed(nameKey(city), country)) {
    if (place.municipalityId === null || nameKey(place.folded) !== nameKey(city)) continue;
    const town = municipalityOf(place);
    if (Math.abs(town.lat - near.lat) > 0.5 || Math.abs(town.lon - near.lon) > 0.8) continue;
    return { city: town.name, district: place.name };
  }
  return undefined;
}

/**
 * Up to `limit` places whose names are nearest to `value` (edit distance, then population):
 * what an unknown city suggests.
 */
export function nearestNames(value: string, country?: string, limit = 3): GazetteerPlace[] {
  const key = nameKey(value);
  const max = key.length >= 9 ? 3 : 2;
  const found: { place: GazetteerPlace; d: number }[] = [];
  // the local and the GeoNames (English) name of places of 2,000 people or more: a short list
  suggestible ??= gazetteer().flatMap((p) =>
    EU.has(p.country) && p.population >= 2000
      ? [p.folded, ...p.alternates.slice(0, 1)].map((name) => ({ name, place: p }))
      : [],
  );
  for (const { name, place } of suggestible) {
    if (Math.abs(name.length - key.length) > max) continue;
    if (country !== undefined && place.country !== country) continue;
    const d = editDistance(name, key, max);
    if (d <= max) found.push({ place, d });
  }
  found.sort((a, b) => a.d - b.d || b.place.population - a.place.population);
  const seen = new Set<number>();
  return found
    .filter(({ place }) => !seen.has(place.geonamesId) && seen.add(place.geonamesId))
    .slice(0, limit)
    .map((f) => f.place);
}
