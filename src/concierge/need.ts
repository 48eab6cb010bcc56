// The job as the requests for quotes describe it to providers: written from the understood brief
// (trade, work, quantities, place, time, wishes) in the brief's language, never the customer's
// instructions to us ("find three plumbers ... compare the quotes") nor their private details
// (addresses, phone numbers, e-mail addresses, links): a provider learns those from the customer
// once they answer. The brief as sent stays on the workflow (`brief`).
import type { ConciergeUnderstanding } from '../../generated/directory/client/types.gen.ts';
import { CONCEPTS } from '../embeddings/data/thesaurus.ts';
import { conceptsOf } from '../embeddings/index.ts';
import { fold, MONTHS } from './dates.ts';
import { dayText } from './rfq.ts';

type Language = ConciergeUnderstanding['language'];
type When = NonNullable<ConciergeUnderstanding['when']>;

interface Labels {
  trade: string;
  work: string;
  quantities: string;
  place: string;
  when: string;
  wishes: string;
  span: Record<When['kind'], (from: string, to: string) => string>;
  requirements: Record<string, string>;
}

const LABELS: Record<Language, Labels> = {
  en: {
    trade: 'Trade',
    work: 'Work',
    quantities: 'Quantities',
    place: 'Place',
    when: 'When',
    wishes: 'Please note',
    span: {
      window: (f, t) => `between ${f} and ${t}`,
      by: (_f, t) => `by ${t}`,
      on: (f) => `on ${f}`,
      from: (f) => `from ${f}`,
      asap: () => 'as soon as possible',
    },
    requirements: {
      'a fixed price': 'a fixed price is wanted',
      'what the price includes': 'the quote should say what the price includes',
      'a warranty': 'a warranty is wanted',
      'a visit on site': 'a visit on site is possible',
      urgency: 'the work is urgent',
    },
  },
  de: {
    trade: 'Gewerk',
    work: 'Arbeiten',
    quantities: 'Mengen',
    place: 'Ort',
    when: 'Zeitraum',
    wishes: 'Hinweise',
    span: {
      window: (f, t) => `zwischen dem ${f} und dem ${t}`,
      by: (_f, t) => `bis zum ${t}`,
      on: (f) => `am ${f}`,
      from: (f) => `ab dem ${f}`,
      asap: () => 'so bald wie möglich',
    },
    requirements: {
      'a fixed price': 'ein Festpreis ist gewünscht',
      'what the price includes': 'bitte angeben, was der Preis enthält',
      'a warranty': 'eine Gewährleistung ist gewünscht',
      'a visit on site': 'eine Besichtigung vor Ort ist möglich',
      urgency: 'die Arbeiten sind dringend',
    },
  },
  fr: {
    trade: 'Métier',
    work: 'Travaux',
    quantities: 'Quantités',
    place: 'Lieu',
    when: 'Période',
    wishes: 'À noter',
    span: {
      window: (f, t) => `entre le ${f} et le ${t}`,
      by: (_f, t) => `avant le ${t}`,
      on: (f) => `le ${f}`,
      from: (f) => `à partir du ${f}`,
      asap: () => 'dès que possible',
    },
    requirements: {
      'a fixed price': 'un prix forfaitaire est souhaité',
      'what the price includes': 'merci de préciser ce que le prix comprend',
      'a warranty': 'une garantie est souhaitée',
      'a visit on site': 'une visite sur place est possible',
      urgency: 'les travaux sont urgents',
    },
  },
  es: {
    trade: 'Oficio',
    work: 'Trabajo',
    quantities: 'Cantidades',
    place: 'Lugar',
    when: 'Plazo',
    wishes: 'Observaciones',
    span: {
      window: (f, t) => `entre el ${f} y el ${t}`,
      by: (_f, t) => `antes del ${t}`,
      on: (f) => `el ${f}`,
      from: (f) => `a partir del ${f}`,
      asap: () => 'lo antes posible',
    },
    requirements: {
      'a fixed price': 'se desea un precio cerrado',
      'what the price includes': 'indique qué incluye el precio',
      'a warranty': 'se desea una garantía',
      'a visit on site': 'es posible una visita previa',
      urgency: 'el trabajo es urgente',
    },
  },
  it: {
    trade: 'Settore',
    work: 'Lavori',
    quantities: 'Quantità',
    place: 'Luogo',
    when: 'Periodo',
    wishes: 'Note',
    span: {
      window: (f, t) => `tra il ${f} e il ${t}`,
      by: (_f, t) => `entro il ${t}`,
      on: (f) => `il ${f}`,
      from: (f) => `dal ${f}`,
      asap: () => 'il prima possibile',
    },
    requirements: {
      'a fixed price': 'si desidera un prezzo fisso',
      'what the price includes': 'indicare cosa comprende il prezzo',
      'a warranty': 'si desidera una garanzia',
      'a visit on site': 'è possibile un sopralluogo',
      urgency: 'il lavoro è urgente',
    },
  },
  nl: {
    trade: 'Vakgebied',
    work: 'Werkzaamheden',
    quantities: 'Hoeveelheden',
    place: 'Plaats',
    when: 'Periode',
    wishes: 'Let op',
    span: {
      window: (f, t) => `tussen ${f} en ${t}`,
      by: (_f, t) => `vóór ${t}`,
      on: (f) => `op ${f}`,
      from: (f) => `vanaf ${f}`,
      asap: () => 'zo snel mogelijk',
    },
    requirements: {
      'a fixed price': 'een vaste prijs is gewenst',
      'what the price includes': 'vermeld wat de prijs omvat',
      'a warranty': 'garantie is gewenst',
      'a visit on site': 'een bezichtiging ter plaatse is mogelijk',
      urgency: 'het werk is dringend',
    },
  },
  pl: {
    trade: 'Branża',
    work: 'Zakres prac',
    quantities: 'Ilości',
    place: 'Miejsce',
    when: 'Termin',
    wishes: 'Uwagi',
    span: {
      window: (f, t) => `między ${f} a ${t}`,
      by: (_f, t) => `do ${t}`,
      on: (f) => `w dniu ${f}`,
      from: (f) => `od ${f}`,
      asap: () => 'jak najszybciej',
    },
    requirements: {
      'a fixed price': 'prosimy o cenę ryczałtową',
      'what the price includes': 'prosimy podać, co obejmuje cena',
      'a warranty': 'prosimy o gwarancję',
      'a visit on site': 'możliwa jest wizja lokalna',
      urgency: 'prace są pilne',
    },
  },
};

// Words with which a customer asks us to do something, not the provider: a clause that starts so
// is the customer's instruction; what follows its purpose word ("to", "für", "pour"...) is the job.
const ASKING = new RegExp(
  String.raw`^(?:please\s+|bitte\s+|merci\s+de\s+|por\s+favor\s+|per\s+favore\s+|graag\s+|proszę\s+)?(?:(?:i|we)\s+(?:need|want|are\s+looking\s+for|am\s+looking\s+for|look\s+for)|find|search\s+for|look\s+for|get|(?:ich|wir)\s+(?:suche|suchen|brauche|brauchen|benötige|benötigen)|suche|finde|finden\s+sie|such|je\s+cherche|nous\s+cherchons|cherche|cherchez|trouvez|trouve|trouver|j'ai\s+besoin\s+d[e']|nous\s+avons\s+besoin\s+d[e']|busco|buscamos|busca|busque|encuentra|encuentre|necesito|necesitamos|cerco|cerchiamo|cerca|cercate|trova|trovate|ho\s+bisogno\s+di|abbiamo\s+bisogno\s+di|ik\s+zoek|wij\s+zoeken|we\s+zoeken|zoek|vind|szukam|szukamy|znajdź|znajdz|potrzebuję|potrzebujemy)(?![\p{L}])`,
  'iu',
);
// Instructions about the quotes themselves: a clause of these alone says nothing of the job.
const ABOUT_QUOTES = new RegExp(
  String.raw`\b(?:compare|comparing|call\s+me|ring\s+me|write\s+to\s+me|email\s+me|rufen\s+sie|anrufen|erreichbar|appelez|joignable|llame|llamar|chiamate|chiamare|bel\s+me|zadzwoń|ask(?:\s+them)?\s+for|request|contact|get\s+(?:\w+\s+)?quotes?|quotes?|vergleiche\w*|frag\w*|anfrag\w*|angebot\w*|kontaktier\w*|compar\w*|demand\w*|devis|contact\w*|presupuesto\w*|pid\w*|pedir|pida|pide|confront\w*|chied\w*|preventiv\w*|vergelijk\w*|vraag|vragen|offerte\w*|porównaj\w*|porownaj\w*|zapytaj\w*|ofert\w*|wycen\w*)\b`,
  'iu',
);
const PURPOSE = new RegExp(
  String.raw`\s(?:to|for|who\s+can|that\s+can|für|um|zum|zur|die|der|pour|afin\s+de|qui|para|que|per|che|om|voor|die|do|dla|który|którzy|aby|żeby)\s`,
  'iu',
);
// Words that introduce a place or a time: dropped with the place or time they introduce.
const LEAD_WORDS = new Set(
  'in near around at on by before until within during the of bei nahe um von am im vom zum bis vor in der den dem des à a près de du le la les au en avant entre avant dès cerca del el los las antes hasta durante a vicino nel nella il entro tra fra dal bij rond op voor vóór tussen tijdens van het w we koło pod okolice do przed od na między'
    .split(' ')
    .map(fold),
);
const PRIVATE: RegExp[] = [
  /(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g, // e-mail addresses
  /https?:\/\/\S+/g, // links
  /(?:\+|\b00)\d[\d\s/().-]{6,}\d|\b0\d[\d\s/-]{6,}\d/g, // phone numbers
  // street addresses: "Hauptstraße 12", "12 rue de la Paix", "via Roma 3", "ul. Długa 5"
  /\b[\p{L}-]*(?:straße|strasse|str\.|gasse|weg|allee|platz|laan|straat|gracht)\s+\d+\w?\b/giu,
  /\b\d+\w?,?\s+(?:rue|avenue|av\.|boulevard|bd|chemin|impasse|place)\s+(?:[\p{L}'-]+\s?){1,4}/giu,
  /\b(?:rue|calle|c\/|avenida|via|viale|piazza|corso|ul\.|ulica|al\.)\s+(?:[\p{L}'.-]+\s){0,3}?[\p{L}'.-]+,?\s*\d+\w?\b/giu,
  /\b\d+\s+[\p{L}-]+(?:\s[\p{L}-]+)?\s+(?:street|st\.|road|rd\.|avenue|lane|drive)\b/giu,
];
const UNITS = String.raw`m²|m2|m³|m3|qm|sqm|mq|square\s+met(?:re|er)s?|quadratmeter|mètres?\s+carrés?|metros?\s+cuadrados?|metri\s+quadri|metri\s+quadrati|vierkante\s+meter|metr(?:ów|y)?\s+kwadratow\w*|lfm|laufmeter|m|cm|km|kg|t|l|liters?|litres?|liter`;
// a figure or a range ("15–20 m²", "15-20 m2", "between 15 and 20 square metres", "entre 15 et 20 m²")
const QUANTITY = new RegExp(
  String.raw`(?<![\d.,:/-])(\d+(?:[.,]\d+)?)(?:\s*(?:-|–|—|to|and|bis|und|à|a|et|y|e|tot|en|do|i)\s*(\d+(?:[.,]\d+)?))?\s*(?:(${UNITS})(?![\p{L}\d])|([\p{L}][\p{L}-]{2,}(?:\s(?:of|de|di|van|z)\s[\p{L}-]{3,})?))`,
  'giu',
);
// Nouns after a number that are no quantity of the job: time, money, the count of providers.
const NOT_QUANTITY =
  /^(?:years?|jahre?n?|ans?|anos?|anni|jaar|lat|hours?|stunden?|heures?|horas?|ore|uur|godzin\w*|days?|tage?n?|jours?|d[ií]as|giorni|dagen|dni|weeks?|wochen?|semaines?|semanas?|settimane|weken|tygodni\w*|months?|monate?n?|mois|meses|mesi|maanden|miesi\w*|minutes?|minuten?|uhr|eur|euros?|pln|czk|huf|sek|dkk|ron|bgn|chf|gbp|usd|zł|zl|quotes?|angebote?|devis|presupuestos?|preventivi|offertes?|ofert\w*)$/iu;

// A clause that goes on from the asking one ("..., die ... tauschen können", "... that open early").
const RELATIVE =
  /^\s*(?:who|that|which|to|die|der|welche|um|qui|que|pour|para|che|per|die|om|który|którzy|która|aby)\s+(?:can\s+|could\s+)?/iu;
const MODAL =
  /(?<!\s)\s+(?:können|kann|könnten|pourront|pourrait|puedan|pueda|possano|possa|kunnen|kan|mogą|może)\s*$/iu;
const TRAILING = new RegExp(
  String.raw`(?<!\s)(?:\s+(?:at|on|or|and|to|bei|an|in|oder|und|à|au|ou|et|en|o|y|a|e|op|of|w|lub|i|na))+\s*$`,
  'iu',
);

// A short clause that is a courtesy, a wish said in the wishes line, or the customer's contact.
const SHORT_ASIDE =
  /^(?:please|bitte|merci|por favor|per favore|graag|proszę|with|mit|avec|con|met|z|ze|com|including|inklusive|inkl|y compris|incluido|compreso|inclusief)(?![\p{L}])|(?:e-?mail|phone|telefon|téléphone|teléfono|telefono|telefoon|tel\.?|contact|kontakt)\s*:?$/iu;

const clean = (s: string) =>
  s
    .replace(/\s+/g, ' ')
    .replace(/(?<!\s)\s+([,.;:])/g, '$1')
    .replace(/^[\s,;:–-]+|(?<![\s,;:–-])[\s,;:–-]+$/g, '');

/** The span [start, end) widened left over the words that introduce it ("before the", "in der"). */
function withLead(text: string, start: number): number {
  let at = start;
  for (;;) {
    const m = /(?<![\p{L}'])([\p{L}']+)\s+$/u.exec(text.slice(0, at));
    if (!m || !LEAD_WORDS.has(fold(m[1] ?? ''))) return at;
    at = m.index;
  }
}

function removeSpan(text: string, phrase: string | null | undefined): string {
  if (!phrase) return text;
  const at = fold(text).indexOf(fold(phrase));
  if (at < 0) return text;
  return `${text.slice(0, withLead(text, at))} ${text.slice(at + phrase.length)}`;
}

/** Whether a word names the trade (or a trade of the brief): "plumbers", "Installateure", "plombier". */
const isTradeWord = (word: string, activity: string | undefined) =>
  activity !== undefined &&
  [...conceptsOf(word).keys()].some((c) => CONCEPTS[c]?.nace.some((code) => code.startsWith(activity)));

/** The words of the brief about the job itself, without instructions to us, place, time or private details. */
export function workOf(brief: string, u: ConciergeUnderstanding, said: string | null = null): string {
  let text = brief;
  for (const pattern of PRIVATE) text = text.replace(pattern, ' ');
  const activity = u.trade?.activity;
  const clauses = text.split(
    /(?<![\d.;!?\n])[.;!?\n]+(?=\s|$)|,\s+(?=\p{L})|(?<!\s)\s+(?:and|und|et|y|e|en|i|oraz)\s+(?=(?:please\s+|bitte\s+)?(?:compare|ask|get|contact|send|vergleiche|frag|hole|kontaktier|compar|demand|pid|chied|confront|vergelijk|vraag|porównaj|zapytaj))/iu,
  );
  const kept: string[] = [];
  for (const raw of clauses) {
    let clause = raw.trim();
    if (!clause) continue;
    const asking = ASKING.exec(clause);
    if (asking) {
      const rest = clause.slice(asking[0].length);
      const purpose = PURPOSE.exec(` ${rest} `);
      if (purpose) clause = ` ${rest} `.slice(purpose.index + purpose[0].length);
      else {
        // "we need a painter in Munich": the words after the trade word, if any
        const words = rest.split(/\s+/);
        const trade = words.findIndex((w) => isTradeWord(w, activity));
        clause = trade >= 0 ? words.slice(trade + 1).join(' ') : rest;
      }
    } else if (ABOUT_QUOTES.test(clause) && !isTradeWordIn(clause, activity)) continue;
    clause = removeSpan(removeSpan(clause, u.when?.text), said);
    clause = removeSpan(clause, u.place?.query);
    // a count before the trade word, and the trade word itself, said in the trade line already
    clause = clause
      .split(/\s+/)
      .filter((w, i, all) => !isTradeWord(w, activity) || i > 0 || all.length > 3)
      .join(' ');
    clause = clean(clause.replace(RELATIVE, '').replace(MODAL, ''));
    clause = clean(clause.replace(TRAILING, ''));
    if (clause.split(/\s+/).length < 2 || !/\p{L}{3,}/u.test(clause)) continue;
    if (ABOUT_QUOTES.test(clause) && clause.split(/\s+/).length <= 4) continue;
    if (SHORT_ASIDE.test(clause) && clause.split(/\s+/).length <= 4) continue;
    kept.push(clause);
  }
  const work = kept.join('; ');
  return work ? work.charAt(0).toUpperCase() + work.slice(1) : '';
}

const isTradeWordIn = (clause: string, activity: string | undefined) =>
  clause.split(/\s+/).some((w) => isTradeWord(w, activity)) &&
  !/^\s*(?:compare|vergleich|compar)/iu.test(clause);

/** A quantity the brief names, a figure (`low` = `high`) or a range, as it is written for providers. */
export interface BriefQuantity {
  low: number;
  high: number;
  /** The unit or the thing counted: "m²", "square metres", "Heizkörper". */
  unit: string;
  /** "80 m²", "15–20 m²". */
  text: string;
  /** The brief's own words. */
  said: string;
}

const figure = (s: string) => Number(s.replace(',', '.'));

/** Quantities the brief names: "80 m²", "3 windows", "15–20 m²"; never a date, a sum or the number of providers. */
export function briefQuantities(brief: string, activity: string | undefined): BriefQuantity[] {
  const out: BriefQuantity[] = [];
  for (const m of brief.matchAll(QUANTITY)) {
    const noun = m[4];
    if (noun !== undefined) {
      const head = noun.split(/\s/)[0] ?? '';
      if (NOT_QUANTITY.test(head) || MONTHS[fold(head).replace(/\.$/, '')] !== undefined) continue;
      if (isTradeWord(head, activity)) continue;
    }
    const unit = clean(m[3] ?? noun ?? '');
    const [low, high] = [figure(m[1] ?? ''), figure(m[2] ?? m[1] ?? '')];
    if (!(high >= low)) continue;
    const text = high === low ? clean(m[0]) : `${m[1]}–${m[2]} ${unit}`;
    if (!out.some((q) => q.text === text)) out.push({ low, high, unit, text, said: clean(m[0]) });
  }
  return out.slice(0, 10);
}

/** The quantities' texts, as the letter lists them. */
export function quantitiesIn(brief: string, activity: string | undefined): string[] {
  return briefQuantities(brief, activity).map((q) => q.text);
}

/** The trade's usual name in a language: the first word of the thesaurus for the brief's activity. */
export function tradeName(u: ConciergeUnderstanding): string | null {
  const trade = u.trade;
  if (!trade) return null;
  const singular = trade.term.replace(/ies$/, 'y').replace(/(?:(?<=(?:s|sh|ch|x|z))es|s)$/, '');
  const concept =
    CONCEPTS.find((c) => c.nace.includes(trade.activity) && c.terms.en.split('|')[0] === singular) ??
    CONCEPTS.find((c) => c.nace.some((n) => n.startsWith(trade.activity)));
  const lang = u.language === 'en' ? 'en' : u.language;
  return concept ? (concept.terms[lang].split('|')[0] ?? null) : trade.name;
}

/**
 * The job described for providers, in the brief's language, one labelled line per part. `said`:
 * the brief's own words for the time, when a `deadline` hint overrode them.
 */
export function describeNeed(brief: string, u: ConciergeUnderstanding, said: string | null = null): string {
  const l = LABELS[u.language];
  const trade = tradeName(u);
  const work = workOf(brief, u, said);
  const quantities = briefQuantities(brief, u.trade?.activity)
    .filter((q) => !fold(work).includes(fold(q.text)) && !fold(work).includes(fold(q.said)))
    .map((q) => q.text);
  const day = (d: string | null) => (d === null ? '' : dayText(d, u.language));
  const when = u.when ? l.span[u.when.kind](day(u.when.from), day(u.when.to)) : null;
  const wishes = u.requirements.map((r) => l.requirements[r]).filter((r): r is string => r !== undefined);
  const lines = [
    trade ? `${l.trade}: ${trade}` : null,
    work ? `${l.work}: ${work}` : null,
    quantities.length ? `${l.quantities}: ${quantities.join(', ')}` : null,
    u.place ? `${l.place}: ${u.place.name.split(',')[0]}` : null,
    when ? `${l.when}: ${when}` : null,
    wishes.length ? `${l.wishes}: ${wishes.join('; ')}` : null,
  ];
  return lines.filter((x): x is string => x !== null).join('\n');
}
