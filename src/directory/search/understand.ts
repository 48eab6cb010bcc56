// Reading a place out of `q` ("plumber in Berlin", "Zahnarzt München", "dentiste à Paris",
// "w Warszawie hydraulik", "near Marienplatz"): the words that name a place of the gazetteer
// become a location (its coordinates and a radius for its size), the rest is what is searched.
//
// How a name is told from a trade or a company (docs/data.md says the same):
// - a name after a word that introduces a place ("in", "near", "bei", "à", "près de", "en",
//   "cerca de", "vicino a", "bij", "w", "koło"...) is a place, whatever it also means;
// - a name standing bare must begin or end the query, name a place of 2,000 people or more,
//   leave other words to search, and not be a word of a trade ("Essen", "Bar") unless those
//   other words name a trade themselves ("Restaurant Essen");
// - a bare name is not a place when it and the word beside it are a trade's phrase of the
//   thesaurus ("hair salon", not Salon-de-Provence);
// - it is not a place when it and the word beside it are the name of a listing elsewhere ("Paris
//   Bar", a restaurant in Berlin): the text then names that company (a "Zahnarzt München" in
//   München is found either way);
// - of several names, one introduced as a place wins, then the one nearer the end, then the larger.
import { conceptsOf, isTermPhrase } from '../../embeddings/index.ts';
import { foldText } from '../../embeddings/fold.ts';
import { municipalityOf, type GazetteerPlace } from '../data/gazetteer.ts';
import { EU_COUNTRIES } from '../data/locale.ts';
import { placesNamed } from '../data/place-names.ts';

/** Words and phrases (folded) that introduce a place, in the directory's languages. */
const INTRODUCERS = [
  'in',
  'near',
  'around',
  'close to',
  'nearby',
  'at',
  'outside',
  'im',
  'bei',
  'nahe',
  'in der nahe von',
  'um',
  'rund um',
  'nahe bei',
  'a',
  'au',
  'aux',
  'en',
  'pres de',
  'autour de',
  'vers',
  'sur',
  'cerca de',
  'junto a',
  'alrededor de',
  'por',
  'vicino a',
  'nei pressi di',
  'presso',
  'ad',
  'zona',
  'bij',
  'nabij',
  'in de buurt van',
  'rond',
  'omgeving',
  'w',
  'we',
  'kolo',
  'blisko',
  'w poblizu',
  'okolice',
  'na',
  // Portuguese: "em Lisboa", "no Porto", "na Amadora", "perto do Porto"
  'em',
  'no',
  'nos',
  'nas',
  'perto de',
  'perto do',
  'perto da',
  'proximo de',
  'proximo do',
  'proximo da',
  'junto ao',
  'ao pe de',
  'a volta de',
  'em redor de',
  'arredores de',
  'nos arredores de',
  'na zona de',
  'na regiao de',
].map(foldText);
const INTRODUCER_SET = new Set(INTRODUCERS);
const MAX_INTRODUCER_WORDS = 4;

/** The introducers that say "near" (not "in"): what may introduce a street or a square. */
const NEAR = new Set(
  [
    'near',
    'around',
    'close to',
    'nearby',
    'nahe',
    'bei',
    'in der nahe von',
    'nahe bei',
    'rund um',
    'pres de',
    'autour de',
    'cerca de',
    'junto a',
    'vicino a',
    'nei pressi di',
    'bij',
    'nabij',
    'in de buurt van',
    'kolo',
    'blisko',
    'w poblizu',
    'perto de',
    'perto do',
    'perto da',
    'proximo de',
    'proximo do',
    'proximo da',
    'junto ao',
    'ao pe de',
    'a volta de',
    'em redor de',
    'nos arredores de',
  ].map(foldText),
);

/** The EU's countries by their names in the directory's languages (folded), to their codes. */
const COUNTRY_NAMES = new Map<string, string>();
for (const lang of ['en', 'de', 'fr', 'es', 'it', 'nl', 'pl', 'pt']) {
  const names = new Intl.DisplayNames([lang], { type: 'region' });
  for (const code of EU_COUNTRIES) COUNTRY_NAMES.set(foldText(names.of(code) ?? code), code);
}
COUNTRY_NAMES.set('deutschland', 'DE');

/** A bare name (without an introducer) must name a place this big. */
const BARE_PLACE_POPULATION = 2000;

export interface PlaceInQuery {
  /** a place of the gazetteer, or for a street one made from the listings on it (GeoNames id 0) */
  place: GazetteerPlace;
  kind: 'municipality' | 'district' | 'street';
  /** the municipality's name (the place's own, or its municipality's, or the street's town) */
  municipality: string;
  /** the words of q read as the place, with the word that introduced it */
  matched: string;
  /** q without them: what is searched */
  text: string;
  radiusKm: number;
}

interface Token {
  text: string;
  folded: string;
  start: number;
  end: number;
}

function tokens(text: string): Token[] {
  return [...text.matchAll(/[\p{L}\p{N}](?:[\p{L}\p{N}'’.-]*[\p{L}\p{N}])?/gu)].map((m) => ({
    text: m[0],
    folded: foldText(m[0]),
    start: m.index,
    end: m.index + m[0].length,
  }));
}

/**
 * Stems of an inflected name after "w", "we", "na" (Polish locative): `krakowie` -> `krakow`,
 * `warszawie` -> `warszawa`, `bukareszcie` -> `bukareszt`, `pradze` -> `praga`.
 */
function inflections(word: string): string[] {
  if (word.length < 6) return [];
  const out: string[] = [];
  if (word.endsWith('cie')) out.push(`${word.slice(0, -3)}t`);
  if (word.endsWith('dze')) out.push(`${word.slice(0, -3)}ga`);
  for (let cut = 1; cut <= 3; cut++) {
    const stem = word.slice(0, word.length - cut);
    out.push(stem, `${stem}a`, `${stem}e`);
  }
  return out;
}

/**
 * The radius a place's name stands for: the town and the places around it that people in it
 * call theirs, from its population (5 + √population / 70 km, at most 25: München 21, a town of
 * 20,000 7; a district 3 km).
 */
export function radiusFor(place: GazetteerPlace): number {
  if (place.municipalityId !== null) return 3;
  return Math.round(Math.min(25, 5 + Math.sqrt(place.population) / 70));
}

export interface UnderstandOptions {
  /**
   * Whether some listing outside `radiusKm` of `place` has a name holding these folded words in
   * this order: a company elsewhere ("Paris Bar" in Berlin), so not the place. A listing named
   * so inside the place ("Zahnarzt München" in München) is found either way.
   */
  isListingName: (words: string[], place: GazetteerPlace, radiusKm: number) => boolean;
  country?: string | undefined;
}

/** The place `q` names, if it names one (see the rules above), with what is left to search. */
export function placeInQuery(q: string, options: UnderstandOptions): PlaceInQuery | undefined {
  const words = tokens(q);
  if (words.length === 0) return undefined;
  let best: { place: GazetteerPlace; from: number; to: number; intro: number; rank: number } | undefined;
  for (let i = 0; i < words.length; i++) {
    // the introducer right before i, as the longest phrase that ends there
    let intro = 0;
    for (let k = Math.min(MAX_INTRODUCER_WORDS, i); k >= 1; k--) {
      const phrase = words
        .slice(i - k, i)
        .map((w) => w.folded)
        .join(' ');
      if (INTRODUCER_SET.has(phrase)) {
        intro = k;
        break;
      }
    }
    for (let n = Math.min(5, words.length - i); n >= 1; n--) {
      const span = words.slice(i, i + n);
      const key = span.map((w) => w.folded).join(' ');
      const keys = intro > 0 && n === 1 ? [key, ...inflections(key)] : [key];
      if (key.length < 3) continue;
      const place = keys.flatMap((k) => placesNamed(k, options.country))[0];
      if (!place) continue;
      const rest = [...words.slice(0, i - intro), ...words.slice(i + n)];
      if (!accepted(words, i, n, intro, rest, place, options)) continue;
      const rank = (intro > 0 ? 1e12 : 0) + (i + n) * 1e10 + place.population;
      if (!best || rank > best.rank) best = { place, from: i - intro, to: i + n, intro, rank };
      break;
    }
  }
  if (!best) return undefined;
  let { place, from, to } = best;
  // a district beside its municipality ("Berlin Mitte", "Schwabing München"): the district
  const nameAt = (a: number, b: number) =>
    a >= 0 && b <= words.length && a < b
      ? words
          .slice(a, b)
          .map((w) => w.folded)
          .join(' ')
      : '';
  for (let n = 1; n <= 3; n++) {
    const town = municipalityOf(place);
    const after = placesNamed(nameAt(to, to + n), place.country).find(
      (p) => p.municipalityId !== null && municipalityOf(p) === town && place === town,
    );
    const before = placesNamed(nameAt(from - n, from), place.country).find(
      (p) => p.municipalityId !== null && municipalityOf(p) === town && place === town,
    );
    const outer = placesNamed(nameAt(to, to + n), place.country).concat(
      placesNamed(nameAt(from - n, from), place.country),
    );
    if (after) ({ place, to } = { place: after, to: to + n });
    else if (before) ({ place, from } = { place: before, from: from - n });
    else if (place !== town && outer.includes(town)) {
      // "Mitte Berlin", "Berlin Mitte" read from the district's side
      if (placesNamed(nameAt(to, to + n), place.country).includes(town)) to += n;
      else from -= n;
    } else continue;
    break;
  }
  // a country or a postal code after the place ("Paris, France", "Wien 1070") is part of it
  to += trailer(words, to, place);
  const first = words[from]!;
  const last = words[to - 1]!;
  best = { ...best, place, from, to };
  const text = `${q.slice(0, first.start)} ${q.slice(last.end)}`
    .replace(/\s+/g, ' ')
    .replace(/(?<!\s)\s+([,.;:!?])/g, '$1')
    .replace(/^[\s,.;:!?-]+|(?<![\s,.;:!?-])[\s,.;:!?-]+$/g, '');
  return {
    place: best.place,
    kind: best.place.municipalityId !== null ? 'district' : 'municipality',
    municipality: municipalityOf(best.place).name,
    matched: q.slice(first.start, last.end),
    text,
    radiusKm: radiusFor(best.place),
  };
}

/** How many words from `at` are a postal code or the place's country ("Wien 1070", "Paris, France"). */
function trailer(words: Token[], at: number, place: GazetteerPlace): number {
  let n = 0;
  if (/^\d{3,5}$/.test(words[at]?.folded ?? '')) n++;
  for (let k = 2; k >= 1; k--) {
    const name = words
      .slice(at + n, at + n + k)
      .map((w) => w.folded)
      .join(' ');
    if (words.length >= at + n + k && COUNTRY_NAMES.get(name) === place.country) return n + k;
  }
  return n;
}

function accepted(
  words: Token[],
  i: number,
  n: number,
  intro: number,
  rest: Token[],
  place: GazetteerPlace,
  options: UnderstandOptions,
): boolean {
  const span = words.slice(i, i + n).map((w) => w.folded);
  // a listing's name: the name with the word before or after it
  const before = words[i - 1];
  const after = words[i + n];
  const radius = radiusFor(place);
  // a bare name that makes a trade's phrase with the word beside it ("hair salon": not
  // Salon-de-Provence); one introduced as a place ("coiffeur à Salon") stays a place
  if (intro === 0 && before && isTermPhrase(`${before.text} ${span.join(' ')}`)) return false;
  if (intro === 0 && after && isTermPhrase(`${span.join(' ')} ${after.text}`)) return false;
  if (before && intro === 0 && options.isListingName([before.folded, ...span], place, radius)) return false;
  if (after && options.isListingName([...span, after.folded], place, radius)) return false;
  if (intro > 0) return true;
  if (municipalityOf(place).population < BARE_PLACE_POPULATION) return false;
  // bare: at an end of the query (a country or a postal code may follow), other words left, and
  // not a trade's word unless they name one
  if (i !== 0 && i + n + trailer(words, i + n, place) !== words.length) return false;
  if (rest.length === 0) return n >= 1 && words.length === n;
  const restText = rest.map((w) => w.text).join(' ');
  if (conceptsOf(span.join(' ')).size > 0 && conceptsOf(restText).size === 0) return false;
  return true;
}

/**
 * The words after a "near" at the end of `q` ("near Marienplatz", "nahe Lindwurmstraße"), to be
 * looked up among the listings' streets when they name no place; with what is left to search.
 */
export function nearWords(q: string): { words: string[]; matched: string; text: string } | undefined {
  const words = tokens(q);
  for (let i = words.length - 1; i >= 1; i--) {
    for (let k = Math.min(MAX_INTRODUCER_WORDS, i); k >= 1; k--) {
      const phrase = words
        .slice(i - k, i)
        .map((w) => w.folded)
        .join(' ');
      if (!NEAR.has(phrase)) continue;
      const named = words.slice(i);
      if (named.length > 3) return undefined;
      const first = words[i - k]!;
      return {
        words: named.map((w) => w.folded),
        matched: q.slice(first.start),
        text: q
          .slice(0, first.start)
          .replace(/\s+/g, ' ')
          .replace(/^[\s,.;:!?-]+|(?<![\s,.;:!?-])[\s,.;:!?-]+$/g, ''),
      };
    }
  }
  return undefined;
}
