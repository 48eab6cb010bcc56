// The judged query set of bench/search-relevance.ts (issue 28): what people type, in the
// directory's languages, by kind. Each query names what is relevant by NACE activity (a hit is
// relevant when one of its activities starts with one of `activity`) and, where it names a
// place, the municipality meant (a hit must lie within the judge's radius of it). Written by
// hand from the trades' words in each language; never from our own results. The trade and place
// pairs were chosen where the demo directory of 20,000 listings has relevant listings (a query
// with none is skipped and reported).

export type Kind = 'place_in_q' | 'city_other_language' | 'city_big' | 'typo' | 'language_near';

export interface JudgedQuery {
  kind: Kind;
  lang: string;
  q: string;
  /** NACE codes (prefixes) of relevant listings */
  activity: string[];
  /**
   * the municipality meant, by its local name and country: judged by distance from it, or for
   * `city=` by the listing's address being in it
   */
  place?: [string, string];
  /** `city=` as the query sends it (kinds city_*) */
  city?: string;
  /** the query sends `near` (kind language_near) */
  near?: boolean;
}

const PLUMBER = ['43.22'];
const DENTIST = ['86.23'];
const ELECTRICIAN = ['43.21'];
const BAKERY = ['10.71', '47.24'];
const RESTAURANT = ['56.10'];
const HAIR = ['96.02'];
const CAR = ['45.20'];
const PHARMACY = ['47.73'];
const VET = ['75.00'];
const LAWYER = ['69.10'];
const PAINTER = ['43.34'];
const ROOFER = ['43.91'];
const CARPENTER = ['43.32'];
const FLORIST = ['47.76'];
const PHYSIO = ['86.90'];
const HOTEL = ['55.10'];
const ACCOUNTANT = ['69.20'];
const OPTICIAN = ['47.78'];
const ARCHITECT = ['71.11'];

const q = (
  kind: Kind,
  lang: string,
  text: string,
  activity: string[],
  place?: [string, string],
  extra: Partial<JudgedQuery> = {},
): JudgedQuery => ({ kind, lang, q: text, activity, ...(place ? { place } : {}), ...extra });

const DE = (c: string): [string, string] => [c, 'DE'];

export const QUERIES: JudgedQuery[] = [
  // a place inside q, every language
  q('place_in_q', 'en', 'plumber in Berlin', PLUMBER, DE('Berlin')),
  q('place_in_q', 'en', 'dentist in Hamburg', DENTIST, DE('Hamburg')),
  q('place_in_q', 'en', 'electrician near Munich', ELECTRICIAN, DE('München')),
  q('place_in_q', 'en', 'bakery in Vienna', BAKERY, ['Wien', 'AT']),
  q('place_in_q', 'en', 'hairdresser Paris', HAIR, ['Paris', 'FR']),
  q('place_in_q', 'en', 'car repair in Madrid', CAR, ['Madrid', 'ES']),
  q('place_in_q', 'en', 'restaurant in Rome', RESTAURANT, ['Roma', 'IT']),
  q('place_in_q', 'en', 'pharmacy Warsaw', PHARMACY, ['Warszawa', 'PL']),
  q('place_in_q', 'en', 'vet in Lisbon', VET, ['Lisboa', 'PT']),
  q('place_in_q', 'en', 'lawyer in Brussels', LAWYER, ['Bruxelles', 'BE']),
  q('place_in_q', 'en', 'painter in Prague', PAINTER, ['Praha', 'CZ']),
  q('place_in_q', 'en', 'plumber Budapest', PLUMBER, ['Budapest', 'HU']),
  q('place_in_q', 'de', 'Klempner Berlin', PLUMBER, DE('Berlin')),
  q('place_in_q', 'de', 'Zahnarzt in Hamburg', DENTIST, DE('Hamburg')),
  q('place_in_q', 'de', 'Zahnarzt München', DENTIST, DE('München')),
  q('place_in_q', 'de', 'Elektriker in Köln', ELECTRICIAN, DE('Köln')),
  q('place_in_q', 'de', 'Bäckerei Wien', BAKERY, ['Wien', 'AT']),
  q('place_in_q', 'de', 'Friseur in Frankfurt am Main', HAIR, DE('Frankfurt am Main')),
  q('place_in_q', 'de', 'Autowerkstatt Stuttgart', CAR, DE('Stuttgart')),
  q('place_in_q', 'de', 'Apotheke in Leipzig', PHARMACY, DE('Leipzig')),
  q('place_in_q', 'de', 'Tierarzt bei Dresden', VET, DE('Dresden')),
  q('place_in_q', 'de', 'Rechtsanwalt Düsseldorf', LAWYER, DE('Düsseldorf')),
  q('place_in_q', 'de', 'Maler in Graz', PAINTER, ['Graz', 'AT']),
  q('place_in_q', 'fr', 'dentiste à Paris', DENTIST, ['Paris', 'FR']),
  q('place_in_q', 'fr', 'plombier Marseille', PLUMBER, ['Marseille', 'FR']),
  q('place_in_q', 'fr', 'électricien à Lyon', ELECTRICIAN, ['Lyon', 'FR']),
  q('place_in_q', 'fr', 'boulangerie Toulouse', BAKERY, ['Toulouse', 'FR']),
  q('place_in_q', 'fr', 'coiffeur près de Bruxelles', HAIR, ['Bruxelles', 'BE']),
  q('place_in_q', 'fr', 'pharmacie à Nice', PHARMACY, ['Nice', 'FR']),
  q('place_in_q', 'fr', 'avocat à Bordeaux', LAWYER, ['Bordeaux', 'FR']),
  q('place_in_q', 'es', 'fontanero en Madrid', PLUMBER, ['Madrid', 'ES']),
  q('place_in_q', 'es', 'dentista Barcelona', DENTIST, ['Barcelona', 'ES']),
  q('place_in_q', 'es', 'electricista en Valencia', ELECTRICIAN, ['Valencia', 'ES']),
  q('place_in_q', 'es', 'panadería en Sevilla', BAKERY, ['Sevilla', 'ES']),
  q('place_in_q', 'es', 'peluquería Zaragoza', HAIR, ['Zaragoza', 'ES']),
  q('place_in_q', 'es', 'taller mecánico cerca de Málaga', CAR, ['Málaga', 'ES']),
  q('place_in_q', 'it', 'idraulico a Milano', PLUMBER, ['Milano', 'IT']),
  q('place_in_q', 'it', 'dentista Roma', DENTIST, ['Roma', 'IT']),
  q('place_in_q', 'it', 'elettricista a Napoli', ELECTRICIAN, ['Napoli', 'IT']),
  q('place_in_q', 'it', 'ristorante Torino', RESTAURANT, ['Torino', 'IT']),
  q('place_in_q', 'it', 'parrucchiere vicino a Firenze', HAIR, ['Firenze', 'IT']),
  q('place_in_q', 'it', 'farmacia a Bologna', PHARMACY, ['Bologna', 'IT']),
  q('place_in_q', 'nl', 'loodgieter in Amsterdam', PLUMBER, ['Amsterdam', 'NL']),
  q('place_in_q', 'nl', 'tandarts Rotterdam', DENTIST, ['Rotterdam', 'NL']),
  q('place_in_q', 'nl', 'elektricien in Utrecht', ELECTRICIAN, ['Utrecht', 'NL']),
  q('place_in_q', 'nl', 'bakkerij Den Haag', BAKERY, ['Den Haag', 'NL']),
  q('place_in_q', 'nl', 'kapper bij Antwerpen', HAIR, ['Antwerpen', 'BE']),
  q('place_in_q', 'nl', 'dierenarts in Gent', VET, ['Gent', 'BE']),
  q('place_in_q', 'pl', 'hydraulik Warszawa', PLUMBER, ['Warszawa', 'PL']),
  q('place_in_q', 'pl', 'dentysta w Krakowie', DENTIST, ['Kraków', 'PL']),
  q('place_in_q', 'pl', 'elektryk we Wrocławiu', ELECTRICIAN, ['Wrocław', 'PL']),
  q('place_in_q', 'pl', 'piekarnia Łódź', BAKERY, ['Łódź', 'PL']),
  q('place_in_q', 'pl', 'fryzjer w Poznaniu', HAIR, ['Poznań', 'PL']),
  q('place_in_q', 'pl', 'apteka Gdańsk', PHARMACY, ['Gdańsk', 'PL']),
  q('place_in_q', 'pt', 'canalizador em Lisboa', PLUMBER, ['Lisboa', 'PT']),
  q('place_in_q', 'pt', 'dentista no Porto', DENTIST, ['Porto', 'PT']),

  q('place_in_q', 'en', 'roofer in Hamburg', ROOFER, DE('Hamburg')),
  q('place_in_q', 'en', 'physiotherapist in Berlin', PHYSIO, DE('Berlin')),
  q('place_in_q', 'en', 'hotel in Berlin', HOTEL, DE('Berlin')),
  q('place_in_q', 'en', 'accountant in Barcelona', ACCOUNTANT, ['Barcelona', 'ES']),
  q('place_in_q', 'en', 'carpenter near Marseille', CARPENTER, ['Marseille', 'FR']),
  q('place_in_q', 'en', 'optician Brussels', OPTICIAN, ['Bruxelles', 'BE']),
  q('place_in_q', 'en', 'architect in Stockholm', ARCHITECT, ['Stockholm', 'SE']),
  q('place_in_q', 'de', 'Dachdecker in Hamburg', ROOFER, DE('Hamburg')),
  q('place_in_q', 'de', 'Physiotherapeut Berlin', PHYSIO, DE('Berlin')),
  q('place_in_q', 'de', 'Hotel in Barcelona', HOTEL, ['Barcelona', 'ES']),
  q('place_in_q', 'de', 'Steuerberater in Köln', ACCOUNTANT, DE('Köln')),
  q('place_in_q', 'de', 'Tischler in Wien', CARPENTER, ['Wien', 'AT']),
  q('place_in_q', 'de', 'Optiker Hamburg', OPTICIAN, DE('Hamburg')),
  q('place_in_q', 'fr', 'plombier à Madrid', PLUMBER, ['Madrid', 'ES']),
  q('place_in_q', 'fr', 'vétérinaire Barcelone', VET, ['Barcelona', 'ES']),
  q('place_in_q', 'fr', 'comptable à Marseille', ACCOUNTANT, ['Marseille', 'FR']),
  q('place_in_q', 'fr', 'couvreur à Paris', ROOFER, ['Paris', 'FR']),
  q('place_in_q', 'fr', 'menuisier Paris', CARPENTER, ['Paris', 'FR']),
  q('place_in_q', 'fr', 'boulangerie à Bruxelles', BAKERY, ['Bruxelles', 'BE']),
  q('place_in_q', 'es', 'veterinario en Barcelona', VET, ['Barcelona', 'ES']),
  q('place_in_q', 'es', 'farmacia en Madrid', PHARMACY, ['Madrid', 'ES']),
  q('place_in_q', 'es', 'fontanero en Marsella', PLUMBER, ['Marseille', 'FR']),
  q('place_in_q', 'es', 'peluquería en Barcelona', HAIR, ['Barcelona', 'ES']),
  q('place_in_q', 'it', 'panetteria a Napoli', BAKERY, ['Napoli', 'IT']),
  q('place_in_q', 'it', 'falegname Napoli', CARPENTER, ['Napoli', 'IT']),
  q('place_in_q', 'it', 'fisioterapista a Napoli', PHYSIO, ['Napoli', 'IT']),
  q('place_in_q', 'it', 'commercialista a Barcellona', ACCOUNTANT, ['Barcelona', 'ES']),
  q('place_in_q', 'nl', 'loodgieter in Rotterdam', PLUMBER, ['Rotterdam', 'NL']),
  q('place_in_q', 'nl', 'schilder in Rotterdam', PAINTER, ['Rotterdam', 'NL']),
  q('place_in_q', 'nl', 'timmerman Rotterdam', CARPENTER, ['Rotterdam', 'NL']),
  q('place_in_q', 'nl', 'dakdekker in Stockholm', ROOFER, ['Stockholm', 'SE']),
  q('place_in_q', 'pl', 'kwiaciarnia w Hamburgu', FLORIST, DE('Hamburg')),
  q('place_in_q', 'pl', 'stolarz w Berlinie', CARPENTER, DE('Berlin')),
  q('place_in_q', 'pl', 'fizjoterapeuta w Berlinie', PHYSIO, DE('Berlin')),
  q('place_in_q', 'pl', 'hotel w Bukareszcie', HOTEL, ['București', 'RO']),
  q('place_in_q', 'pl', 'dekarz w Hamburgu', ROOFER, DE('Hamburg')),
  q('place_in_q', 'pt', 'farmácia em Madrid', PHARMACY, ['Madrid', 'ES']),
  q('place_in_q', 'pt', 'canalizador em Marselha', PLUMBER, ['Marseille', 'FR']),
  q('place_in_q', 'pt', 'hotel em Bucareste', HOTEL, ['București', 'RO']),

  // city= in another language
  q('city_other_language', 'en', 'plumber', PLUMBER, DE('München'), { city: 'Munich' }),
  q('city_other_language', 'it', 'idraulico', PLUMBER, DE('München'), { city: 'Monaco di Baviera' }),
  q('city_other_language', 'en', 'dentist', DENTIST, ['Warszawa', 'PL'], { city: 'Warsaw' }),
  q('city_other_language', 'fr', 'dentiste', DENTIST, ['Warszawa', 'PL'], { city: 'Varsovie' }),
  q('city_other_language', 'en', 'bakery', BAKERY, ['Lisboa', 'PT'], { city: 'Lisbon' }),
  q('city_other_language', 'en', 'restaurant', RESTAURANT, ['Bruxelles', 'BE'], { city: 'Brussels' }),
  q('city_other_language', 'nl', 'restaurant', RESTAURANT, ['Bruxelles', 'BE'], { city: 'Brussel' }),
  q('city_other_language', 'de', 'Friseur', HAIR, ['Wien', 'AT'], { city: 'Vienna' }),
  q('city_other_language', 'en', 'electrician', ELECTRICIAN, DE('Köln'), { city: 'Cologne' }),
  q('city_other_language', 'de', 'Elektriker', ELECTRICIAN, ['Praha', 'CZ'], { city: 'Prag' }),
  q('city_other_language', 'en', 'hairdresser', HAIR, ['Roma', 'IT'], { city: 'Rome' }),
  q('city_other_language', 'de', 'Apotheke', PHARMACY, ['Milano', 'IT'], { city: 'Mailand' }),
  q('city_other_language', 'en', 'car repair', CAR, ['Napoli', 'IT'], { city: 'Naples' }),
  q('city_other_language', 'es', 'fontanero', PLUMBER, ['Lisboa', 'PT'], { city: 'Lisboa' }),
  q('city_other_language', 'en', 'pharmacy', PHARMACY, ['København', 'DK'], { city: 'Copenhagen' }),
  q('city_other_language', 'en', 'lawyer', LAWYER, ['Athína', 'GR'], { city: 'Athens' }),
  q('city_other_language', 'fr', 'boulangerie', BAKERY, ['București', 'RO'], { city: 'Bucarest' }),
  q('city_other_language', 'pl', 'dentysta', DENTIST, DE('München'), { city: 'Monachium' }),

  q('city_other_language', 'de', 'Rechtsanwalt', LAWYER, ['București', 'RO'], { city: 'Bukarest' }),
  q('city_other_language', 'it', 'albergo', HOTEL, ['București', 'RO'], { city: 'Bucarest' }),
  q('city_other_language', 'pl', 'kwiaciarnia', FLORIST, ['București', 'RO'], { city: 'Bukareszt' }),
  q('city_other_language', 'fr', 'dentiste', DENTIST, ['Barcelona', 'ES'], { city: 'Barcelone' }),
  q('city_other_language', 'it', 'veterinario', VET, ['Barcelona', 'ES'], { city: 'Barcellona' }),
  q('city_other_language', 'es', 'fontanero', PLUMBER, ['Marseille', 'FR'], { city: 'Marsella' }),
  q('city_other_language', 'it', 'elettricista', ELECTRICIAN, ['Marseille', 'FR'], { city: 'Marsiglia' }),
  q('city_other_language', 'en', 'bakery', BAKERY, ['Marseille', 'FR'], { city: 'Marseilles' }),
  q('city_other_language', 'fr', 'fleuriste', FLORIST, DE('Hamburg'), { city: 'Hambourg' }),
  q('city_other_language', 'it', 'fiorista', FLORIST, DE('Hamburg'), { city: 'Amburgo' }),
  q('city_other_language', 'es', 'abogado', LAWYER, DE('Köln'), { city: 'Colonia' }),
  q('city_other_language', 'fr', 'couvreur', ROOFER, ['Wien', 'AT'], { city: 'Vienne' }),
  q('city_other_language', 'es', 'carpintero', CARPENTER, ['Wien', 'AT'], { city: 'Viena' }),
  q('city_other_language', 'pl', 'dekarz', ROOFER, ['Wien', 'AT'], { city: 'Wiedeń' }),
  q('city_other_language', 'it', 'dentista', DENTIST, DE('Berlin'), { city: 'Berlino' }),
  q('city_other_language', 'es', 'peluquería', HAIR, DE('Berlin'), { city: 'Berlín' }),
  q('city_other_language', 'es', 'arquitecto', ARCHITECT, ['Stockholm', 'SE'], { city: 'Estocolmo' }),
  q('city_other_language', 'de', 'Autowerkstatt', CAR, ['København', 'DK'], { city: 'Kopenhagen' }),
  q('city_other_language', 'en', 'plumber', PLUMBER, ['Bruxelles', 'BE'], { city: 'Brussels' }),
  q('city_other_language', 'nl', 'elektricien', ELECTRICIAN, ['Bruxelles', 'BE'], { city: 'Brussel' }),
  q('city_other_language', 'en', 'hairdresser', HAIR, ['Lisboa', 'PT'], { city: 'Lisbon' }),
  q('city_other_language', 'en', 'florist', FLORIST, ['Praha', 'CZ'], { city: 'Prague' }),
  q('city_other_language', 'de', 'Bäckerei', BAKERY, ['Napoli', 'IT'], { city: 'Neapel' }),
  q('city_other_language', 'en', 'architect', ARCHITECT, ['Warszawa', 'PL'], { city: 'Warsaw' }),
  q('city_other_language', 'en', 'bakery', BAKERY, ['Milano', 'IT'], { city: 'Milan' }),

  // city= of a big city: its districts count
  q('city_big', 'en', 'plumber', PLUMBER, DE('Berlin'), { city: 'Berlin' }),
  q('city_big', 'de', 'Zahnarzt', DENTIST, DE('Berlin'), { city: 'Berlin' }),
  q('city_big', 'de', 'Elektriker', ELECTRICIAN, DE('Hamburg'), { city: 'Hamburg' }),
  q('city_big', 'fr', 'boulangerie', BAKERY, ['Paris', 'FR'], { city: 'Paris' }),
  q('city_big', 'es', 'restaurante', RESTAURANT, ['Madrid', 'ES'], { city: 'Madrid' }),
  q('city_big', 'it', 'parrucchiere', HAIR, ['Roma', 'IT'], { city: 'Roma' }),
  q('city_big', 'pl', 'apteka', PHARMACY, ['Warszawa', 'PL'], { city: 'Warszawa' }),
  q('city_big', 'de', 'Autowerkstatt', CAR, ['Wien', 'AT'], { city: 'Wien' }),
  q('city_big', 'nl', 'tandarts', DENTIST, ['Amsterdam', 'NL'], { city: 'Amsterdam' }),
  q('city_big', 'it', 'idraulico', PLUMBER, ['Milano', 'IT'], { city: 'Milano' }),
  q('city_big', 'en', 'restaurant', RESTAURANT, ['Bucureşti', 'RO'], { city: 'Bucharest' }),
  q('city_big', 'en', 'vet', VET, ['Budapest', 'HU'], { city: 'Budapest' }),

  q('city_big', 'es', 'peluquería', HAIR, ['Barcelona', 'ES'], { city: 'Barcelona' }),
  q('city_big', 'fr', 'boulangerie', BAKERY, ['Marseille', 'FR'], { city: 'Marseille' }),
  q('city_big', 'de', 'Dachdecker', ROOFER, ['Wien', 'AT'], { city: 'Wien' }),
  q('city_big', 'de', 'Blumenladen', FLORIST, DE('Hamburg'), { city: 'Hamburg' }),
  q('city_big', 'it', 'panetteria', BAKERY, ['Napoli', 'IT'], { city: 'Napoli' }),
  q('city_big', 'en', 'hotel', HOTEL, DE('Berlin'), { city: 'Berlin' }),

  // one typo (two from 9 letters), alone or with a place
  q('typo', 'en', 'plumbr', PLUMBER),
  q('typo', 'en', 'restuarant', RESTAURANT),
  q('typo', 'en', 'electrcian', ELECTRICIAN),
  q('typo', 'en', 'hairdreser', HAIR),
  q('typo', 'en', 'pharmcy', PHARMACY),
  q('typo', 'de', 'Bakcerei', BAKERY),
  q('typo', 'de', 'Klemptner', PLUMBER),
  q('typo', 'de', 'Zahnartz', DENTIST),
  q('typo', 'de', 'Tierartz', VET),
  q('typo', 'fr', 'boulangrie', BAKERY),
  q('typo', 'fr', 'plombeir', PLUMBER),
  q('typo', 'es', 'fontanreo', PLUMBER),
  q('typo', 'es', 'peluqeria', HAIR),
  q('typo', 'it', 'idraulco', PLUMBER),
  q('typo', 'it', 'ristornate', RESTAURANT),
  q('typo', 'nl', 'loodgietr', PLUMBER),
  q('typo', 'nl', 'tandrats', DENTIST),
  q('typo', 'pl', 'hydraulk', PLUMBER),
  q('typo', 'pl', 'piekarina', BAKERY),
  q('typo', 'de', 'Klemner Berlin', PLUMBER, DE('Berlin')),
  q('typo', 'fr', 'dentsite à Paris', DENTIST, ['Paris', 'FR']),
  q('typo', 'it', 'idraulcio a Roma', PLUMBER, ['Roma', 'IT']),

  // a trade in another language than the place's, with near
  q('language_near', 'en', 'dentist', DENTIST, DE('Berlin'), { near: true }),
  q('language_near', 'en', 'plumber', PLUMBER, ['Paris', 'FR'], { near: true }),
  q('language_near', 'de', 'Bäckerei', BAKERY, ['Madrid', 'ES'], { near: true }),
  q('language_near', 'fr', 'électricien', ELECTRICIAN, ['Roma', 'IT'], { near: true }),
  q('language_near', 'es', 'dentista', DENTIST, ['Warszawa', 'PL'], { near: true }),
  q('language_near', 'it', 'idraulico', PLUMBER, DE('Hamburg'), { near: true }),
  q('language_near', 'nl', 'kapper', HAIR, ['Wien', 'AT'], { near: true }),
  q('language_near', 'pl', 'fryzjer', HAIR, ['Lisboa', 'PT'], { near: true }),
  q('language_near', 'en', 'pharmacy', PHARMACY, ['Milano', 'IT'], { near: true }),
  q('language_near', 'de', 'Tierarzt', VET, ['Bruxelles', 'BE'], { near: true }),
  q('language_near', 'fr', 'restaurant', RESTAURANT, DE('München'), { near: true }),
  q('language_near', 'en', 'lawyer', LAWYER, ['Madrid', 'ES'], { near: true }),
  q('language_near', 'en', 'florist', FLORIST, DE('Hamburg'), { near: true }),
  q('language_near', 'de', 'Dachdecker', ROOFER, ['Barcelona', 'ES'], { near: true }),
  q('language_near', 'fr', 'vétérinaire', VET, ['Barcelona', 'ES'], { near: true }),
  q('language_near', 'de', 'Zahnarzt', DENTIST, ['Paris', 'FR'], { near: true }),
  q('language_near', 'en', 'carpenter', CARPENTER, ['Paris', 'FR'], { near: true }),
  q('language_near', 'es', 'fontanero', PLUMBER, ['Marseille', 'FR'], { near: true }),
  q('language_near', 'pl', 'księgowy', ACCOUNTANT, ['Paris', 'FR'], { near: true }),
  q('language_near', 'it', 'fisioterapista', PHYSIO, ['Madrid', 'ES'], { near: true }),
];
