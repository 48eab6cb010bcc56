// Reading a brief in code: its language, the trade it asks for (the embedding engine's
// multilingual thesaurus, tied to NACE activities), the place (the directory's gazetteer), how
// many providers, the deadline and what else it asks for. The agent's `read_brief` tool answers
// with this: the built-in reference engine cannot understand a brief, and an upstream model gets
// the same facts to reason from (docs/concierge.md says which part is which).
import type { ConciergeUnderstanding } from '../../generated/directory/client/types.gen.ts';
import { type GazetteerPlace, gazetteer } from '../directory/data/gazetteer.ts';
import { dayOf, whenIn } from './dates.ts';
import { describeNeed } from './need.ts';
import { conceptsOf, foldText, tokenize } from '../embeddings/index.ts';
import { CONCEPTS, type Lang, LANGS } from '../embeddings/data/thesaurus.ts';
import { namesOf, tradeOf } from './trades.ts';

export { pluralize, tradeOf } from './trades.ts';

export type Language = ConciergeUnderstanding['language'];
export type Understanding = ConciergeUnderstanding;

export interface BriefHints {
  location?: string | undefined;
  near?: string | undefined;
  radius_km?: number | undefined;
  country?: string | undefined;
  activity?: string | undefined;
  max_providers?: number | undefined;
  deadline?: string | undefined;
}

/** A place hint resolved by the directory's geocoder (src/directory/places.ts). */
export interface ResolvedPlace {
  name: string;
  lat: number;
  lon: number;
  country: string;
}

export const DEFAULT_RADIUS_KM = 25;
export const DEFAULT_MAX_PROVIDERS = 5;

/**
 * The languages a brief is read and answered in: the thesaurus's, but Portuguese, which search
 * understands and the requests for quotes are not yet written in.
 */
const BRIEF_LANGS = LANGS.filter((l): l is Exclude<Lang, 'pt'> => l !== 'pt');
type BriefLang = (typeof BRIEF_LANGS)[number];

// Words that only one language uses often: the language is the one whose words the brief has most of.
const STOPWORDS: Record<BriefLang, string[]> = {
  en: [
    'the',
    'and',
    'for',
    'with',
    'who',
    'can',
    'please',
    'find',
    'need',
    'near',
    'in',
    'by',
    'before',
    'ask',
    'compare',
    'three',
    'two',
    'of',
    'a',
    'my',
    'our',
    'we',
    'them',
  ],
  de: [
    'der',
    'die',
    'das',
    'und',
    'für',
    'mit',
    'wir',
    'suchen',
    'bitte',
    'bis',
    'ein',
    'eine',
    'einen',
    'drei',
    'zwei',
    'in',
    'vergleichen',
    'anfragen',
    'nicht',
    'auch',
    'ist',
    'sich',
    'können',
    'des',
  ],
  fr: [
    'le',
    'la',
    'les',
    'et',
    'pour',
    'avec',
    'qui',
    'nous',
    'cherchons',
    'trouvez',
    'trois',
    'deux',
    'un',
    'une',
    'des',
    'du',
    'de',
    'à',
    'avant',
    'demander',
    'comparer',
    'merci',
    'dans',
    'près',
  ],
  es: [
    'el',
    'la',
    'los',
    'las',
    'y',
    'para',
    'con',
    'que',
    'buscamos',
    'busca',
    'tres',
    'dos',
    'un',
    'una',
    'de',
    'del',
    'en',
    'antes',
    'pedir',
    'comparar',
    'por',
    'favor',
    'cerca',
  ],
  it: [
    'il',
    'lo',
    'la',
    'gli',
    'le',
    'e',
    'per',
    'con',
    'che',
    'cerchiamo',
    'trova',
    'tre',
    'due',
    'un',
    'una',
    'di',
    'del',
    'della',
    'in',
    'entro',
    'chiedere',
    'confrontare',
    'vicino',
  ],
  nl: [
    'de',
    'het',
    'een',
    'en',
    'voor',
    'met',
    'die',
    'wij',
    'zoeken',
    'zoek',
    'drie',
    'twee',
    'in',
    'van',
    'vóór',
    'voor',
    'vragen',
    'vergelijken',
    'graag',
    'bij',
    'naar',
    'offerte',
  ],
  pl: [
    'i',
    'w',
    'z',
    'na',
    'dla',
    'do',
    'szukamy',
    'znajdź',
    'trzech',
    'trzy',
    'dwóch',
    'dwa',
    'który',
    'którzy',
    'przed',
    'proszę',
    'porównaj',
    'zapytaj',
    'oraz',
    'od',
    'się',
    'koło',
  ],
};

const NUMBER_WORDS: Record<string, number> = {};
(
  [
    ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'],
    ['ein', 'zwei', 'drei', 'vier', 'fünf', 'sechs', 'sieben', 'acht', 'neun', 'zehn'],
    ['un', 'deux', 'trois', 'quatre', 'cinq', 'six', 'sept', 'huit', 'neuf', 'dix'],
    ['uno', 'dos', 'tres', 'cuatro', 'cinco', 'seis', 'siete', 'ocho', 'nueve', 'diez'],
    ['uno', 'due', 'tre', 'quattro', 'cinque', 'sei', 'sette', 'otto', 'nove', 'dieci'],
    ['een', 'twee', 'drie', 'vier', 'vijf', 'zes', 'zeven', 'acht', 'negen', 'tien'],
    ['jeden', 'dwa', 'trzy', 'cztery', 'pięć', 'sześć', 'siedem', 'osiem', 'dziewięć', 'dziesięć'],
  ] as const
).forEach((names) => names.forEach((name, i) => (NUMBER_WORDS[foldText(name)] ??= i + 1)));
// inflected forms people write before a plural noun
Object.assign(NUMBER_WORDS, { zwei: 2, drei: 3, dwoch: 2, trzech: 3, czterech: 4, pieciu: 5, drie: 3 });
// "ein"/"un"/"een"/"uno" are articles too: "einen Maler", "un plombier" ask for no number of providers
for (const article of ['ein', 'un', 'uno', 'een']) delete NUMBER_WORDS[article];

export const ENGLISH_NUMBERS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
  'twenty',
];

const LANGUAGE_WORDS: Record<BriefLang, Set<string>> = Object.fromEntries(
  BRIEF_LANGS.map((lang) => {
    const words = new Set<string>(STOPWORDS[lang].map(foldText));
    for (const concept of CONCEPTS)
      for (const w of tokenize(concept.terms[lang].replace(/\|/g, ' '))) words.add(w);
    return [lang, words];
  }),
) as Record<BriefLang, Set<string>>;

/** How much a text uses each language's common words (1 each) and trade words (0.5 each). */
export function languageScores(text: string): Record<BriefLang, number> {
  const words = tokenize(text);
  const scores = {} as Record<BriefLang, number>;
  for (const lang of BRIEF_LANGS) {
    const own = LANGUAGE_WORDS[lang];
    const stop = new Set(STOPWORDS[lang].map(foldText));
    let score = 0;
    for (const w of words) if (own.has(w)) score += stop.has(w) ? 1 : 0.5;
    scores[lang] = score;
  }
  return scores;
}

/** The language of a text: the one whose common words and trade words it uses most (English on a tie). */
export function detectLanguage(text: string): Language {
  const scores = languageScores(text);
  let best: BriefLang = 'en';
  for (const lang of BRIEF_LANGS) if (scores[lang] > scores[best]) best = lang;
  return best;
}

// Words after which a capitalised name is a place: "in Wien", "near Lyon", "bei Graz", "à Lyon".
const PLACE_PREPOSITIONS = new Set(
  [
    'in',
    'near',
    'around',
    'at',
    'bei',
    'nahe',
    'um',
    'von',
    'à',
    'a',
    'près',
    'de',
    'en',
    'cerca',
    'vicino',
    'nel',
    'bij',
    'rond',
    'w',
    'we',
    'koło',
    'pod',
    'okolice',
  ].map(foldText),
);
/** Only a place this big counts when a name stands alone, without such a word before it. */
const BARE_PLACE_POPULATION = 100_000;
const MIN_PLACE_POPULATION = 1_000;

let placeIndex: Map<string, GazetteerPlace[]> | undefined;

/** Folded names and alternate names of the places with 1,000 people or more, the largest first. */
function places(): Map<string, GazetteerPlace[]> {
  if (placeIndex) return placeIndex;
  const index = new Map<string, GazetteerPlace[]>();
  for (const place of gazetteer()) {
    if (place.population < MIN_PLACE_POPULATION) continue;
    for (const name of new Set([place.folded, ...place.alternates])) {
      const list = index.get(name) ?? [];
      list.push(place);
      index.set(name, list);
    }
  }
  // a place named so comes before one that has the name only as an alternate ("Bruck": Bruck an
  // der Mur's own short name, not Fürstenfeldbruck's alternate); then the larger
  for (const [name, list] of index) {
    list.sort((a, b) => Number(b.folded === name) - Number(a.folded === name) || b.population - a.population);
  }
  placeIndex = index;
  return index;
}

/** Stems of an inflected name (Slavic locatives, Italian articles aside): `krakowie` -> `krakow`, `warszawie` -> `warszawa`. */
function inflections(word: string): string[] {
  if (word.length < 6) return [];
  const out: string[] = [];
  for (let cut = 1; cut <= 3; cut++) {
    const stem = word.slice(0, word.length - cut);
    out.push(stem, `${stem}a`, `${stem}e`);
  }
  return out;
}

interface Token {
  text: string;
  folded: string;
  capital: boolean;
}

function tokens(text: string): Token[] {
  return [...text.matchAll(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu)].map((m) => ({
    text: m[0],
    folded: foldText(m[0]),
    capital: /^\p{Lu}/u.test(m[0]),
  }));
}

/** The place a brief names: a capitalised name of the gazetteer after "in", "near", "bei"..., else a big city named anywhere. */
export function placeIn(text: string, country?: string): { query: string; place: GazetteerPlace } | null {
  const words = tokens(text);
  const index = places();
  let best: { query: string; place: GazetteerPlace; rank: number } | null = null;
  for (let i = 0; i < words.length; i++) {
    if (!words[i]?.capital) continue;
    for (let n = 5; n >= 1; n--) {
      const span = words.slice(i, i + n);
      if (span.length < n) continue;
      const key = span.map((w) => w.folded).join(' ');
      const before = words[i - 1]?.folded;
      const introduced = before !== undefined && PLACE_PREPOSITIONS.has(before);
      // after "w", "in", "à"..., an inflected name too: "w Krakowie" (Kraków), "w Warszawie" (Warszawa)
      const keys = introduced && n === 1 ? [key, ...inflections(key)] : [key];
      const found = keys
        .flatMap((k) => index.get(k) ?? [])
        .filter((p) => country === undefined || p.country === country);
      const place = found[0];
      if (place === undefined) continue;
      if (!introduced && place.population < BARE_PLACE_POPULATION) continue;
      // a name introduced as a place wins over a bare one; then the longer name; then the bigger place
      const rank = (introduced ? 1e12 : 0) + n * 1e10 + place.population;
      if (!best || rank > best.rank) best = { query: span.map((w) => w.text).join(' '), place, rank };
      break;
    }
  }
  return best ? { query: best.query, place: best.place } : null;
}

/** How many providers the brief asks for: a number (word or digits, 1 to 20) right before a word of the trade. */
export function countIn(text: string, activity: string | undefined): number | null {
  if (activity === undefined) return null;
  const words = tokens(text);
  for (let i = 0; i < words.length - 1; i++) {
    const word = words[i]?.folded ?? '';
    const n = /^\d{1,2}$/.test(word) ? Number(word) : NUMBER_WORDS[word];
    if (n === undefined || n < 1 || n > 20) continue;
    for (const next of words.slice(i + 1, i + 4)) {
      const hits = [...conceptsOf(next.text).keys(), ...namesOf(next.folded)];
      if (hits.some((c) => CONCEPTS[c]?.nace.some((code) => code.startsWith(activity)))) return n;
    }
  }
  return null;
}

// What a brief asks of the providers besides the trade, in each language: a fixed price, a visit.
const REQUIREMENTS: [RegExp, string][] = [
  [
    /fixed[- ]price|festpreis|pauschalpreis|prix (?:fixe|forfaitaire)|forfait|precio (?:cerrado|fijo)|prezzo (?:fisso|chiuso)|vaste prijs|stała cena|cena ryczałtowa/i,
    'a fixed price',
  ],
  [
    /\bincl(?:uding|\.|usive|usief)?\b|inklusive|inkl\.|y compris|incluido|compreso|inclusief|wliczając|z wliczeniem/i,
    'what the price includes',
  ],
  [/warrant|garantie|garantía|garanzia|gwarancj/i, 'a warranty'],
  [/site visit|besichtigung|vor[- ]ort|visite|visita|bezichtiging|wizyt/i, 'a visit on site'],
  [/urgent|dringend|asap|sofort|urgence|urgente|spoed|pilne/i, 'urgency'],
];

/** The requirements a reading may name (what the requests for quotes know how to ask for). */
export const REQUIREMENT_LABELS = REQUIREMENTS.map(([, label]) => label);

/** Whether a brief's words ask for a requirement (the rules' words for it, in any language). */
export const asksFor = (brief: string, label: string): boolean =>
  REQUIREMENTS.some(([pattern, l]) => l === label && pattern.test(brief));

/** A gazetteer place as the understanding shows it. */
function placeOf(query: string, place: GazetteerPlace): NonNullable<Understanding['place']> {
  const countryName = new Intl.DisplayNames(['en'], { type: 'region' }).of(place.country);
  return {
    query,
    name: [place.name, place.region, countryName].filter(Boolean).join(', '),
    lat: place.lat,
    lon: place.lon,
    country: place.country,
  };
}

/** The place a name stands for in the gazetteer (inflected forms too: "Krakowie"), the largest, or null. */
export function placeNamed(query: string, country?: string): Understanding['place'] {
  const key = tokens(query)
    .map((w) => w.folded)
    .join(' ');
  if (key === '') return null;
  const found = [key, ...(key.includes(' ') ? [] : inflections(key))]
    .flatMap((k) => places().get(k) ?? [])
    .filter((p) => country === undefined || p.country === country)[0];
  return found ? placeOf(query, found) : null;
}

/** The number a word of a brief names ("three", "drei", "3"), or undefined. */
export function numberOf(word: string): number | undefined {
  const folded = foldText(word);
  return /^\d{1,2}$/.test(folded) ? Number(folded) : NUMBER_WORDS[folded];
}

/** Reads a brief with its hints applied. `resolved` is the hinted place, geocoded by the caller. */
export function understand(
  brief: string,
  hints: BriefHints,
  resolved: ResolvedPlace | null,
  today: Date,
): Understanding {
  const language = detectLanguage(brief);
  const trade = tradeOf(brief, hints.activity);
  let place: Understanding['place'] = null;
  if (resolved) {
    place = {
      query: hints.location ?? hints.near ?? resolved.name,
      name: resolved.name,
      lat: resolved.lat,
      lon: resolved.lon,
      country: resolved.country,
    };
  } else {
    const found = placeIn(brief, hints.country);
    if (found) place = placeOf(found.query, found.place);
  }
  const counted = countIn(brief, trade?.activity);
  // the time as people mean it: "week of 14 December" is a window, its Sunday the deadline
  const said = whenIn(brief, dayOf(today));
  const when: Understanding['when'] =
    hints.deadline !== undefined ? { kind: 'by', from: null, to: hints.deadline, text: null } : said;
  const deadline = hints.deadline ?? (when && when.kind !== 'from' ? when.to : null);
  const requirements: string[] = [];
  for (const [pattern, label] of REQUIREMENTS) if (pattern.test(brief)) requirements.push(label);
  const read: Understanding = {
    language,
    trade,
    place,
    radius_km: hints.radius_km ?? DEFAULT_RADIUS_KM,
    max_providers: hints.max_providers ?? counted ?? DEFAULT_MAX_PROVIDERS,
    deadline,
    when,
    requirements,
    description: null,
    read_by: 'rules',
    dropped: [],
  };
  return { ...read, description: describeNeed(brief, read, said?.text ?? null) };
}
