// The demo directory: listings generated deterministically from a seed over real places
// (GeoNames cities, see docs/data.md) and real NACE Rev. 2 activities. Listing `i` of a seed
// depends on nothing else, so any slice can be generated alone (the JSON Lines generator
// streams a million without holding them).
import type { CountryCode, OpeningPeriod, SpecialDay } from '../../generated/directory/client/types.gen.ts';
import { CONCEPTS, LANGS, type Concept, type Lang } from '../embeddings/data/thesaurus.ts';
import { CLASS_TERMS } from './data/class-terms.ts';
import { foldText } from '../embeddings/fold.ts';
import type { Db } from '../platform/db.ts';
import { fnv1a32, mulberry32 } from '../platform/prng.ts';
import { CLASSES } from './data/nace.ts';
import { CITY_STREETS, POSTAL_RANGES } from './data/addresses.ts';
import { euCities, type GazetteerPlace } from './data/gazetteer.ts';
import { LOCALES } from './data/locale.ts';
import { weekdayText, type StoredHours } from './hours.ts';
import { DEMO_CITY_POPULATION, type DemoRows, DEMO_SEED, startDemoRows } from './demo-rows.ts';
import { insertListingRows, type ListingRecord, type StoredPhoto, withIndexesRebuilt } from './store.ts';

type Rng = () => number;

export function rngFor(seed: string | number, index: number, salt = ''): Rng {
  return mulberry32(fnv1a32(`${seed}:${index}:${salt}`));
}

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;
const chance = (rng: Rng, p: number) => rng() < p;
const int = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** A ULID-shaped id from a time and the generator, so the demo's ids are stable per seed. */
export function deterministicId(prefix: string, timeMs: number, rng: Rng): string {
  let out = '';
  let t = timeMs;
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[t % 32] + out;
    t = Math.floor(t / 32);
  }
  for (let i = 0; i < 16; i++) out += CROCKFORD[Math.floor(rng() * 32)];
  return `${prefix}_${out}`;
}

// --- places, weighted by the square root of their population ---------------------------------

interface Cities {
  list: GazetteerPlace[];
  cumulative: Float64Array;
  byId: Map<number, GazetteerPlace>;
}
let cities: Cities | undefined;

/** Draws listings from `list` (the demo worker is handed it) instead of parsing the gazetteer. */
export function useDemoCities(list: GazetteerPlace[]): void {
  const cumulative = new Float64Array(list.length);
  let sum = 0;
  list.forEach((c, i) => {
    sum += Math.sqrt(c.population);
    cumulative[i] = sum;
  });
  cities = { list, cumulative, byId: new Map(list.map((c) => [c.geonamesId, c])) };
}

function cityPicker(): Cities {
  if (!cities) useDemoCities(euCities(DEMO_CITY_POPULATION));
  return cities as Cities;
}

/** A district's municipality, among the demo's places: more populous, so always one of them. */
function municipalityOf(place: GazetteerPlace): GazetteerPlace {
  return (place.municipalityId !== null && cityPicker().byId.get(place.municipalityId)) || place;
}

function pickCity(rng: Rng): GazetteerPlace {
  const { list, cumulative } = cityPicker();
  const target = rng() * (cumulative[cumulative.length - 1] ?? 0);
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((cumulative[mid] ?? 0) < target) lo = mid + 1;
    else hi = mid;
  }
  return list[lo] as GazetteerPlace;
}

// --- activities -------------------------------------------------------------------------------

const CLASS_CODES = Object.keys(CLASSES);
const CONCEPT_OF = new Map<string, Concept>();
for (const c of CONCEPTS) for (const code of c.nace) if (!CONCEPT_OF.has(code)) CONCEPT_OF.set(code, c);

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
/** The words a listing of `code` is named and described by: its class's own, else its concept's. */
const wordsOf = (code: string, c: Concept, lang: Lang) =>
  (CLASS_TERMS[code]?.[lang] ?? c.terms[lang]).split('|');

function languageOf(country: CountryCode, city: GazetteerPlace, rng: Rng): string {
  if (country === 'BE')
    return city.region === 'Vlaanderen'
      ? 'nl'
      : city.region === 'Bruxelles-Capitale' && chance(rng, 0.3)
        ? 'nl'
        : 'fr';
  if (country === 'LU') return chance(rng, 0.3) ? 'de' : 'fr';
  return LOCALES[country].lang;
}

const DESCRIPTIONS: Record<Lang, (trade: string, city: string, what: string[], year: number) => string> = {
  en: (t, c, w, y) =>
    `${capital(t)} in ${c} since ${y}. ${capital(w.join(', '))} — quick appointments and fair prices.`,
  de: (t, c, w, y) =>
    `${capital(t)} in ${c} seit ${y}. ${capital(w.join(', '))} – schnelle Termine, faire Preise.`,
  fr: (t, c, w, y) =>
    `${capital(t)} à ${c} depuis ${y}. ${capital(w.join(', '))} : rendez-vous rapides et prix justes.`,
  es: (t, c, w, y) =>
    `${capital(t)} en ${c} desde ${y}. ${capital(w.join(', '))}: citas rápidas y precios justos.`,
  it: (t, c, w, y) =>
    `${capital(t)} a ${c} dal ${y}. ${capital(w.join(', '))}: appuntamenti rapidi e prezzi onesti.`,
  nl: (t, c, w, y) =>
    `${capital(t)} in ${c} sinds ${y}. ${capital(w.join(', '))}: snel een afspraak, eerlijke prijzen.`,
  pl: (t, c, w, y) =>
    `${capital(t)} w ${c} od ${y} roku. ${capital(w.join(', '))} – szybkie terminy, uczciwe ceny.`,
  pt: (t, c, w, y) =>
    `${capital(t)} ${inPortuguese(c)} desde ${y}. ${capital(w.join(', '))}: marcações rápidas e preços justos.`,
};

/** Portuguese towns said with their article ("no Porto", "na Amadora"); the others take "em". */
const PT_ARTICLE: Record<string, 'no' | 'na'> = {
  Porto: 'no',
  Funchal: 'no',
  Barreiro: 'no',
  Seixal: 'no',
  Montijo: 'no',
  Cartaxo: 'no',
  Entroncamento: 'no',
  Fundão: 'no',
  Amadora: 'na',
  Maia: 'na',
  'Figueira da Foz': 'na',
  Covilhã: 'na',
  Guarda: 'na',
  Lousã: 'na',
  Nazaré: 'na',
  Trofa: 'na',
  'Póvoa de Varzim': 'na',
  'Marinha Grande': 'na',
  Moita: 'na',
  Batalha: 'na',
  Ericeira: 'na',
};
const inPortuguese = (town: string) => `${PT_ARTICLE[town] ?? 'em'} ${town}`;

// --- hours ------------------------------------------------------------------------------------

const period = (day: number, open: string, close: string): OpeningPeriod => ({
  open: { day, time: open },
  close: { day: close <= open ? (day + 1) % 7 : day, time: close },
});
const days = (list: number[], ranges: [string, string][]) =>
  list.flatMap((d) => ranges.map(([o, c]) => period(d, o, c)));
const WEEKDAYS = [1, 2, 3, 4, 5];

function regularWeek(concept: Concept, rng: Rng): OpeningPeriod[] {
  switch (concept.group) {
    case 'building':
    case 'home':
    case 'industry':
      return [
        ...days(WEEKDAYS, [
          ['0730', '1200'],
          ['1300', chance(rng, 0.5) ? '1700' : '1630'],
        ]),
        ...(chance(rng, 0.4) ? days([6], [['0900', '1200']]) : []),
      ];
    case 'hospitality':
      if (concept.id === 'hotel') return [{ open: { day: 0, time: '0000' }, close: null }];
      if (concept.id === 'cafe_bar')
        return days([0, 2, 3, 4, 5, 6], [['1700', chance(rng, 0.5) ? '0100' : '0200']]);
      return days(
        [0, 2, 3, 4, 5, 6],
        [
          ['1130', '1430'],
          ['1800', '2230'],
        ],
      );
    case 'health':
      if (concept.id === 'pharmacy' && chance(rng, 0.15))
        return [{ open: { day: 0, time: '0000' }, close: null }];
      return [
        ...days(
          [1, 2, 4, 5],
          [
            ['0800', '1200'],
            ['1400', '1800'],
          ],
        ),
        ...days([3], [['0800', '1200']]),
      ];
    case 'food':
      return [
        ...days(
          [1, 2, 3, 4, 5, 6],
          [[concept.id === 'bakery' ? '0630' : '0800', concept.id === 'grocery' ? '2000' : '1830']],
        ),
        ...(concept.id === 'bakery' ? days([0], [['0730', '1100']]) : []),
      ];
    case 'retail':
      return days([1, 2, 3, 4, 5, 6], [['1000', chance(rng, 0.5) ? '1900' : '2000']]);
    case 'vehicle':
      if (concept.id === 'fuel') return [{ open: { day: 0, time: '0000' }, close: null }];
      return [...days(WEEKDAYS, [['0800', '1800']]), ...days([6], [['0900', '1300']])];
    default:
      return days(WEEKDAYS, [['0900', chance(rng, 0.5) ? '1730' : '1800']]);
  }
}

function easterSunday(year: number): [number, number] {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  return [month, ((h + l - 7 * m + 114) % 31) + 1];
}

const NATIONAL_DAY: Partial<Record<CountryCode, string>> = {
  DE: '10-03',
  AT: '10-26',
  FR: '07-14',
  ES: '10-12',
  IT: '06-02',
  NL: '04-27',
  PL: '11-11',
  BE: '07-21',
  PT: '06-10',
  IE: '03-17',
  LU: '06-23',
  DK: '06-05',
  SE: '06-06',
  FI: '12-06',
  CZ: '10-28',
  SK: '09-01',
  HU: '08-20',
  RO: '12-01',
  BG: '03-03',
  GR: '03-25',
  HR: '05-30',
  SI: '06-25',
  EE: '02-24',
  LV: '11-18',
  LT: '02-16',
  MT: '09-21',
  CY: '10-01',
};

function holidays(country: CountryCode, shortEves: boolean): SpecialDay[] {
  const out: SpecialDay[] = [];
  for (const year of [2026, 2027, 2028]) {
    const [em, ed] = easterSunday(year);
    const easterMonday = new Date(Date.UTC(year, em - 1, ed + 1)).toISOString().slice(0, 10);
    const closed = [
      `${year}-01-01`,
      easterMonday,
      `${year}-05-01`,
      `${year}-${NATIONAL_DAY[country] ?? '05-09'}`,
      `${year}-12-25`,
      `${year}-12-26`,
    ];
    for (const date of closed) out.push({ date, closed: true, periods: [] });
    if (shortEves) {
      out.push({ date: `${year}-12-24`, closed: false, periods: [{ open: '0900', close: '1300' }] });
      out.push({ date: `${year}-12-31`, closed: false, periods: [{ open: '0900', close: '1400' }] });
    }
  }
  const unique = new Map(out.map((s) => [s.date, s]));
  return [...unique.values()].sort((a, b) => a.date.localeCompare(b.date));
}

// --- one listing ------------------------------------------------------------------------------

function formatPostal(pattern: string, rng: Rng, cityHash: number): string {
  let i = 0;
  return pattern.replace(/[9A]/g, (ch) => {
    i++;
    if (ch === 'A') return CROCKFORD.replace(/[0-9]/g, '')[Math.floor(rng() * 22)] ?? 'A';
    // the first two digits follow the city, so one city's codes look alike
    return String(i <= 2 ? Math.floor(cityHash / 10 ** (i - 1)) % 10 : int(rng, 0, 9));
  });
}

/** `digits` written into the country's pattern (`99-999`, `999 99`, `L-9999`). */
function intoPattern(pattern: string, digits: string): string {
  let i = 0;
  return pattern.replace(/9/g, () => digits[i++] ?? '0');
}

/**
 * A postal code of the municipality: from its real range where the table has one, else in the
 * country's format with the first digits
 * fixed per municipality. Drawn from its own generator, so the listing's other draws stay put.
 */
function postalCode(country: CountryCode, town: GazetteerPlace, rng: Rng): string {
  const pattern = LOCALES[country].postal;
  const width = pattern.replace(/[^9]/g, '').length;
  const known = POSTAL_RANGES[`${country}:${town.folded}`];
  if (known && /^[^A]*$/.test(pattern)) {
    const first = known[0];
    if (typeof first === 'string') return intoPattern(pattern, pick(rng, known as string[]));
    const [lo, hi] = pick(rng, known as [number, number][]);
    return intoPattern(pattern, String(int(rng, lo, hi)).padStart(width, '0'));
  }
  return formatPostal(pattern, rng, town.geonamesId);
}

function slug(s: string): string {
  return foldText(s)
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 40)
    .replace(/^-+|(?<!-)-+$/g, '');
}

export const DEMO_EPOCH_MS = Date.UTC(2025, 0, 1);

export function demoListing(seed: string | number, index: number): ListingRecord {
  const rng = rngFor(seed, index);
  const place = pickCity(rng);
  // the post writes the municipality (Berlin); a district (Tegel) is a field of its own
  const city = municipalityOf(place);
  const district = city === place ? null : place;
  const country = city.country as CountryCode;
  const locale = LOCALES[country];
  const lang = languageOf(country, city, rng);
  const textLang: Lang = (LANGS as readonly string[]).includes(lang) ? (lang as Lang) : 'en';
  const code = pick(rng, CLASS_CODES);
  const concept = CONCEPT_OF.get(code) as Concept;
  const activities = [{ code, name: CLASSES[code] ?? '', primary: true }];
  if (chance(rng, 0.25)) {
    const sibling = CONCEPTS.filter((c) => c.group === concept.group && c.id !== concept.id);
    const other = sibling.length ? pick(rng, sibling) : undefined;
    const otherCode = other?.nace[0];
    // A sibling of the concept is a sibling of its own classes only: a spa (96.04, worded on its
    // own, under physio's concept) is no dentist. The draw is made either way, so the rest of the
    // listing stays as it was.
    if (otherCode && otherCode !== code && !CLASS_TERMS[code])
      activities.push({ code: otherCode, name: CLASSES[otherCode] ?? '', primary: false });
  }

  const surname = pick(rng, locale.surnames);
  const tradeWords = wordsOf(code, concept, textLang);
  const trade = tradeWords[0] ?? '';
  const tradeName = textLang === lang ? capital(trade) : '';
  const style = int(rng, 0, 3);
  const name =
    !tradeName || style === 0
      ? `${surname}${chance(rng, 0.3) ? ` & ${pick(rng, locale.surnames)}` : ''}`
      : style === 1
        ? `${tradeName} ${surname}`
        : style === 2
          ? `${surname} ${tradeName}`
          : `${tradeName} ${place.name}`;
  const legalForm = pick(rng, locale.legalForms);
  const legal_name = chance(rng, 0.7) ? `${name} ${legalForm}` : null;
  const founded = int(rng, 1950, 2023);
  const what = [
    ...new Set([tradeWords[int(rng, 1, 3)], tradeWords[int(rng, 4, 8)], tradeWords[int(rng, 9, 14)]]),
  ].filter((w): w is string => Boolean(w));
  const description = chance(rng, 0.9) ? DESCRIPTIONS[textLang](trade, place.name, what, founded) : '';

  const addressRng = rngFor(seed, index, 'address');
  const drawn = pick(rng, locale.streets);
  const cityStreets = CITY_STREETS[`${country}:${city.folded}`];
  const street = cityStreets ? pick(addressRng, cityStreets) : drawn;
  const house_number = chance(rng, 0.95) ? `${int(rng, 1, 180)}${chance(rng, 0.08) ? 'a' : ''}` : null;
  const postal_code = postalCode(country, city, addressRng);
  const streetPart =
    house_number === null
      ? street
      : locale.order === 'number-first'
        ? `${house_number} ${street}`
        : `${street} ${house_number}`;
  const formatted = `${streetPart}, ${postal_code} ${city.name}, ${locale.name}`;
  // within a few kilometres of the centre, more for larger places
  const spreadKm = 0.6 + Math.sqrt(place.population) / 250;
  const r = spreadKm * Math.sqrt(rng());
  const theta = rng() * 2 * Math.PI;
  const lat = Math.round((place.lat + (r * Math.cos(theta)) / 111.32) * 1e5) / 1e5;
  const lon =
    Math.round((place.lon + (r * Math.sin(theta)) / (111.32 * Math.cos((place.lat * Math.PI) / 180))) * 1e5) /
    1e5;

  const domain = `${slug(name)}.${locale.tld}`;
  const claimed = chance(rng, 0.35);
  const hasReviews = chance(rng, 0.8);
  const review_count = hasReviews ? Math.max(1, Math.floor(-Math.log(1 - rng()) * (claimed ? 60 : 20))) : 0;
  const rating = hasReviews
    ? Math.round(Math.min(5, Math.max(1, 4.2 + (rng() + rng() + rng() - 1.5) * 1.1)) * 10) / 10
    : null;
  const response_time_median_minutes = chance(rng, claimed ? 0.8 : 0.2)
    ? Math.floor(5 + rng() ** 2 * 2880)
    : null;

  let opening_hours: StoredHours | null = null;
  if (chance(rng, 0.9)) {
    const periods = regularWeek(concept, rng);
    const aroundTheClock = periods.length === 1 && periods[0]?.close === null;
    opening_hours = {
      time_zone: place.timeZone,
      periods,
      weekday_text: weekdayText(periods),
      special_days: aroundTheClock
        ? []
        : holidays(country, concept.group === 'retail' || concept.group === 'food'),
    };
  }

  const created = Math.floor(DEMO_EPOCH_MS / 1000) + index * 37;
  const photos: StoredPhoto[] = [];
  if (claimed) {
    const count = int(rng, 1, 4);
    for (let p = 0; p < count; p++) {
      const landscape = chance(rng, 0.75);
      photos.push({
        id: deterministicId('pho', created * 1000 + p, rng),
        width: landscape ? 960 : 720,
        height: landscape ? 640 : 960,
        attribution: `© ${legal_name ?? name}`,
      });
    }
  }
  const languages = [...new Set([lang, ...(chance(rng, 0.4) ? ['en'] : [])])];
  return {
    id: deterministicId('lst', created * 1000, rng),
    object: 'listing',
    name,
    legal_name,
    activities,
    description,
    address: {
      street,
      house_number,
      postal_code,
      city: city.name,
      district: district?.name ?? null,
      region: city.region ?? '',
      country,
      formatted,
    },
    geo: { lat, lon },
    phone: chance(rng, 0.92)
      ? `+${locale.callingCode}${int(rng, 1, 9)}${String(int(rng, 0, 99_999_999)).padStart(8, '0')}`
      : null,
    email: chance(rng, 0.6)
      ? `${pick(rng, ['info', 'kontakt', 'office', 'hello', 'contact'])}@${domain}`
      : null,
    website: chance(rng, 0.7) ? `https://www.${domain}` : null,
    languages,
    opening_hours,
    claimed,
    rating,
    review_count,
    response_time_median_minutes,
    photos,
    created,
    updated: created + (claimed ? int(rng, 0, 30_000_000) : 0),
  };
}

export interface LoadOptions {
  count?: number;
  seed?: string | number;
  /** Rows started ahead (a first start makes them while the database opens), else made here. */
  rows?: DemoRows;
  onProgress?: (inserted: number, total: number) => void;
}

/**
 * Fills an empty directory with `count` demo listings; does nothing when listings exist. The
 * rows are made on a worker thread while this thread inserts them, into a table whose indexes
 * are built once at the end (store.ts).
 */
export async function loadDemoDirectory(db: Db, options: LoadOptions = {}): Promise<{ inserted: number }> {
  const count = options.rows?.count ?? options.count ?? 20_000;
  const seed = options.rows?.seed ?? options.seed ?? DEMO_SEED;
  let rows = options.rows;
  try {
    // One transaction under a lock: of several instances starting on one empty database, one
    // loads and the others wait, then find the directory filled (and a failed load leaves none).
    const loaded = await db.transaction(async (tx) => {
      await tx.query('select pg_advisory_xact_lock(727276)');
      const [existing] = await tx.query<{ n: number }>(
        'select count(*)::int as n from (select 1 from listings limit 1) t',
      );
      if ((existing?.n ?? 0) > 0 || count === 0) return { inserted: 0 };
      const made = (rows ??= startDemoRows(count, seed));
      return withIndexesRebuilt(tx, async () => {
        let inserted = 0;
        for await (const batch of made) {
          await insertListingRows(tx, batch);
          inserted += batch.length;
          options.onProgress?.(inserted, count);
        }
        return { inserted };
      });
    });
    // Statistics for the planner: PGlite has no autovacuum, so without this it plans the freshly
    // filled table blind (a photo lookup chose a 20,000-row scan over its GIN index).
    if (loaded.inserted > 0) await db.query('analyze listings');
    return loaded;
  } finally {
    rows?.cancel();
  }
}
