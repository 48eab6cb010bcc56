// The comparison, in code: each provider scored from 0 to 1 on what is known (its like-for-like
// total, VAT and fees included, against the lowest one; rating weighed by its number of reviews;
// distance; availability before the deadline; how fast it answered), ranked with reasons (pros
// and cons that are true of the offer) and the evidence, and a summary in the brief's language.
// Quotes whose total is known rank first, then quotes whose total cannot be known (saying why),
// then answers without a price, refusals, and silence. The agent's `compare_providers` tool
// answers with this.
import type {
  ConciergeProvider,
  ConciergeResult,
  ProviderQuote,
  QuoteReading,
} from '../../generated/directory/client/types.gen.ts';
import { decimal } from './money.ts';
import { quoteTotal, rankingTotal } from './totals.ts';
import type { Language } from './understand.ts';

export interface Candidate {
  listing_id: string;
  name: string;
  city: string;
  distance_km: number | null;
  rating: number | null;
  review_count: number;
  claimed: boolean;
  /** The listing's median response time in hours, when it has one. */
  response_hours: number | null;
}

export interface Outcome {
  contacted: boolean;
  sent_at: number | null;
  replied_at: number | null;
  reading: QuoteReading | null;
}

export interface CompareOptions {
  contact: boolean;
  language: Language;
  deadline: string | null;
  /** When the agent stopped waiting (RFC 3339), for "did not answer by". */
  respondBy: string | null;
  /** The word the search used for the trade ("plumbers"). */
  tradeTerm: string | null;
  placeName: string | null;
  /** The country of the brief's place: its VAT rate where a reply does not state one. */
  country: string | null;
  /** How many providers the brief asked for, and how many the search shortlisted. */
  askedFor: number;
  shortlisted: number;
  radiusKm: number;
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/** The rating pulled towards 3.5 by ten imaginary reviews: 5.0 from 2 reviews is worth less than 4.8 from 200. */
export function weightedRating(rating: number | null, reviews: number): number {
  const prior = 3.5;
  const k = 10;
  return rating === null ? prior : (rating * reviews + prior * k) / (reviews + k);
}

type Tier = 0 | 1 | 2 | 3 | 4;

interface Scored {
  candidate: Candidate;
  outcome: Outcome;
  quote: ProviderQuote | null;
  tier: Tier;
  score: number;
  pros: string[];
  cons: string[];
}

function tierOf(outcome: Outcome, quote: ProviderQuote | null, currency: string | null): Tier {
  if (!outcome.contacted) return 0;
  if (outcome.replied_at === null) return 4;
  if (quote !== null) return quote.comparable && quote.currency === currency ? 0 : 1;
  if (outcome.reading?.declined) return 3;
  return 2;
}

const totalText = (q: ProviderQuote) =>
  `${q.total_high === null ? q.total : `${q.total}-${q.total_high}`} ${q.currency} incl. VAT`;

export function compare(
  candidates: Candidate[],
  outcomes: Map<string, Outcome>,
  options: CompareOptions,
): ConciergeResult {
  const none: Outcome = { contacted: false, sent_at: null, replied_at: null, reading: null };
  const quoteOf = new Map<string, ProviderQuote | null>(
    candidates.map((c) => {
      const reading = outcomes.get(c.listing_id)?.reading ?? null;
      return [c.listing_id, reading ? quoteTotal(reading, options.country) : null];
    }),
  );
  const known = [...quoteOf.values()].filter((q): q is ProviderQuote => q !== null && q.comparable);
  // totals compare within the currency most quotes are in
  const currency = mostCommon(known.map((q) => q.currency));
  const totals = known
    .filter((q) => q.currency === currency)
    .map((q) => rankingTotal(q))
    .filter((t): t is bigint => t !== null);
  const lowest = totals.length > 0 ? totals.reduce((a, b) => (b < a ? b : a)) : null;

  const scored: Scored[] = candidates.map((candidate) => {
    const outcome = outcomes.get(candidate.listing_id) ?? none;
    const reading = outcome.reading;
    const quote = quoteOf.get(candidate.listing_id) ?? null;
    const pros: string[] = [];
    const cons: string[] = [];
    const parts: [number, number][] = []; // [weight, value 0..1]

    const total = quote ? rankingTotal(quote) : null;
    if (quote && total !== null && quote.currency === currency && lowest !== null) {
      parts.push([0.4, Number(lowest) / Number(total)]);
      if (total === lowest && totals.length > 1) pros.push(`Lowest total: ${totalText(quote)}`);
      else if (total === lowest) pros.push(`Total ${totalText(quote)}`);
      else
        cons.push(
          `${decimal(total - lowest)} ${quote.currency} dearer than the lowest total (${decimal(total)} against ${decimal(lowest)} ${quote.currency} incl. VAT)`,
        );
    } else if (quote && total !== null) {
      pros.push(`Total ${totalText(quote)}`);
      cons.push(`Quoted in ${quote.currency}, not compared by price`);
    } else if (quote) {
      cons.push(`Total unknown: ${quote.not_comparable_reason ?? 'the reply does not say'}`);
    }
    if (quote && reading) {
      if (reading.includes.length > 0) pros.push(`Includes ${reading.includes.join(', ')}`);
      for (const x of reading.excludes) cons.push(`Excludes ${x}`);
      if (reading.estimate) cons.push('The price is an estimate');
    }

    const weighted = weightedRating(candidate.rating, candidate.review_count);
    parts.push([outcome.contacted ? 0.25 : 0.5, (weighted - 1) / 4]);
    if (candidate.rating !== null && candidate.rating >= 4.3 && candidate.review_count >= 10)
      pros.push(`Rated ${candidate.rating} from ${candidate.review_count} reviews`);
    else if (candidate.rating !== null && candidate.rating < 3.5)
      cons.push(`Rated only ${candidate.rating} from ${candidate.review_count} reviews`);
    else if (candidate.review_count < 10)
      cons.push(candidate.review_count === 0 ? 'No reviews yet' : `Only ${candidate.review_count} reviews`);
    else pros.push(`Rated ${candidate.rating} from ${candidate.review_count} reviews`);

    if (candidate.distance_km !== null) {
      parts.push([outcome.contacted ? 0.1 : 0.3, 1 / (1 + candidate.distance_km / 10)]);
      const where = options.placeName ? ` from ${options.placeName.split(',')[0]}` : '';
      if (candidate.distance_km <= 5) pros.push(`${candidate.distance_km} km${where}`);
      else if (candidate.distance_km > 20) cons.push(`${candidate.distance_km} km${where}`);
    }

    if (outcome.contacted) {
      const from = reading?.available_from ?? null;
      if (from !== null && options.deadline !== null) {
        const inTime = from <= options.deadline;
        parts.push([0.15, inTime ? 1 : 0]);
        (inTime ? pros : cons).push(
          `Available from ${from}, ${inTime ? 'before' : 'after'} the deadline ${options.deadline}`,
        );
      } else if (from !== null) {
        parts.push([0.15, 0.8]);
        pros.push(`Available from ${from}`);
      } else if (outcome.replied_at !== null) {
        parts.push([0.15, 0.4]);
      }
      if (outcome.replied_at !== null && outcome.sent_at !== null) {
        const hours = Math.max(0, (outcome.replied_at - outcome.sent_at) / 3600);
        parts.push([0.1, 1 / (1 + hours / 24)]);
        if (hours <= 4) pros.push(`Answered within ${hours <= 1 ? 'the hour' : `${Math.ceil(hours)} hours`}`);
      }
      if (reading?.declined && quote === null) cons.push('Declined the job');
      else if (outcome.replied_at !== null && quote === null)
        cons.push(
          reading?.no_price_reason === 'site_visit'
            ? 'Wants to see the job before pricing it'
            : 'Answered without a price',
        );
      if (outcome.replied_at === null)
        cons.push(options.respondBy ? `Did not answer by ${options.respondBy}` : 'Did not answer');
    } else {
      if (candidate.claimed) pros.push('Claimed listing: the company keeps its profile up to date');
      if (candidate.response_hours !== null) {
        parts.push([0.2, 1 / (1 + candidate.response_hours / 24)]);
        if (candidate.response_hours <= 4)
          pros.push(`Usually answers within ${Math.ceil(candidate.response_hours)} hours`);
      }
    }
    const weights = parts.reduce((sum, [w]) => sum + w, 0);
    let score = weights > 0 ? parts.reduce((sum, [w, v]) => sum + w * v, 0) / weights : 0;
    const tier = tierOf(outcome, quote, currency);
    // the tiers keep their order whatever the score: a known total > an unknown one > answered > declined > silent
    score = round(Math.max(0, Math.min(1, score * ([1, 0.85, 0.7, 0.5, 0.4][tier] ?? 1))), 2);
    return { candidate, outcome, quote, tier, score, pros, cons };
  });

  scored.sort(
    (a, b) =>
      a.tier - b.tier || b.score - a.score || a.candidate.listing_id.localeCompare(b.candidate.listing_id),
  );
  const providers: ConciergeProvider[] = scored.map((s, i) => {
    const reading = s.outcome.reading;
    return {
      rank: i + 1,
      listing_id: s.candidate.listing_id,
      name: s.candidate.name,
      contacted: s.outcome.contacted,
      answered: s.outcome.replied_at !== null,
      quote: s.quote,
      available_from: reading?.available_from ?? null,
      rating: s.candidate.rating,
      review_count: s.candidate.review_count,
      distance_km: s.candidate.distance_km,
      pros: s.pros,
      cons: s.cons,
      score: s.score,
      evidence: {
        listing_url: `/v1/places/details?id=${s.candidate.listing_id}`,
        reply_excerpt: s.outcome.replied_at !== null ? (reading?.excerpt ?? null) : null,
      },
    };
  });
  const best = scored[0];
  const recommendation = best && (options.contact ? best.tier <= 2 : true) ? best.candidate.listing_id : null;
  const noAnswer = scored
    .filter((s) => s.outcome.contacted && s.outcome.replied_at === null)
    .map((s) => ({ listing_id: s.candidate.listing_id, name: s.candidate.name }));
  const contacted = options.contact ? scored.filter((s) => s.outcome.contacted).length : null;
  const compared = contacted ?? providers.length;
  const trade = options.tradeTerm ?? 'providers';
  const place = options.placeName
    ? ` within ${options.radiusKm} km of ${options.placeName.split(',')[0]}`
    : '';
  const shortfall =
    options.shortlisted < options.askedFor
      ? `Asked for ${options.askedFor}; the search found only ${options.shortlisted} (${trade}${place})`
      : compared < options.askedFor
        ? `Asked for ${options.askedFor}; ${options.shortlisted - compared} of the ${options.shortlisted} shortlisted could not be written to`
        : null;
  return {
    summary: summarize(
      options,
      providers,
      recommendation,
      noAnswer.map((n) => n.name),
      compared < options.askedFor ? compared : null,
    ),
    language: options.language,
    asked_for: options.askedFor,
    contacted,
    shortfall,
    providers,
    recommendation,
    no_answer: noAnswer,
  };
}

function mostCommon(values: string[]): string | null {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] === 'EUR' ? -1 : 1))[0]?.[0] ?? null;
}

interface Phrases {
  quoted: (quoted: number, asked: number) => string;
  compared: (n: number) => string;
  recommend: string;
  total: string;
  inclVat: string;
  from: string;
  rating: (r: number, n: number) => string;
  none: string;
  silent: string;
  fewer: (asked: number, compared: number) => string;
}

const PHRASES: Record<Language, Phrases> = {
  en: {
    quoted: (q, a) => `${q} of ${a} providers sent a quote.`,
    compared: (n) => `Compared ${n} provider${n === 1 ? '' : 's'} on the directory's data.`,
    recommend: 'Recommended',
    total: 'total',
    inclVat: 'incl. VAT',
    from: 'available from',
    rating: (r, n) => `rated ${r} from ${n} reviews`,
    none: 'No provider fits the brief well enough to recommend.',
    silent: 'No answer',
    fewer: (a, n) => `${a} were asked for; only ${n} could be compared.`,
  },
  de: {
    quoted: (q, a) => `${q} von ${a} Anbietern haben ein Angebot geschickt.`,
    compared: (n) => `${n} Anbieter anhand der Verzeichnisdaten verglichen.`,
    recommend: 'Empfehlung',
    total: 'Gesamtpreis',
    inclVat: 'inkl. MwSt.',
    from: 'verfügbar ab',
    rating: (r, n) => `Bewertung ${r} aus ${n} Bewertungen`,
    none: 'Kein Anbieter passt gut genug, um ihn zu empfehlen.',
    silent: 'Keine Antwort',
    fewer: (a, n) => `${a} Anbieter waren gewünscht; nur ${n} konnten verglichen werden.`,
  },
  fr: {
    quoted: (q, a) => `${q} prestataires sur ${a} ont envoyé un devis.`,
    compared: (n) => `${n} prestataires comparés sur les données de l'annuaire.`,
    recommend: 'Recommandation',
    total: 'total',
    inclVat: 'TTC',
    from: 'disponible à partir du',
    rating: (r, n) => `note ${r} sur ${n} avis`,
    none: 'Aucun prestataire ne correspond assez bien pour être recommandé.',
    silent: 'Sans réponse',
    fewer: (a, n) => `${a} prestataires demandés ; seuls ${n} ont pu être comparés.`,
  },
  es: {
    quoted: (q, a) => `${q} de ${a} proveedores enviaron un presupuesto.`,
    compared: (n) => `${n} proveedores comparados con los datos del directorio.`,
    recommend: 'Recomendación',
    total: 'total',
    inclVat: 'IVA incluido',
    from: 'disponible desde',
    rating: (r, n) => `valoración ${r} de ${n} opiniones`,
    none: 'Ningún proveedor encaja lo bastante para recomendarlo.',
    silent: 'Sin respuesta',
    fewer: (a, n) => `Se pidieron ${a}; solo se pudieron comparar ${n}.`,
  },
  it: {
    quoted: (q, a) => `${q} fornitori su ${a} hanno inviato un preventivo.`,
    compared: (n) => `${n} fornitori confrontati sui dati dell'elenco.`,
    recommend: 'Consiglio',
    total: 'totale',
    inclVat: 'IVA inclusa',
    from: 'disponibile dal',
    rating: (r, n) => `valutazione ${r} su ${n} recensioni`,
    none: 'Nessun fornitore è abbastanza adatto da consigliare.',
    silent: 'Nessuna risposta',
    fewer: (a, n) => `Ne erano stati chiesti ${a}; solo ${n} confrontati.`,
  },
  nl: {
    quoted: (q, a) => `${q} van de ${a} aanbieders stuurden een offerte.`,
    compared: (n) => `${n} aanbieders vergeleken op de gegevens van de gids.`,
    recommend: 'Aanbeveling',
    total: 'totaal',
    inclVat: 'incl. btw',
    from: 'beschikbaar vanaf',
    rating: (r, n) => `beoordeling ${r} uit ${n} reviews`,
    none: 'Geen aanbieder past goed genoeg om aan te bevelen.',
    silent: 'Geen antwoord',
    fewer: (a, n) => `${a} gevraagd; slechts ${n} konden worden vergeleken.`,
  },
  pl: {
    quoted: (q, a) => `${q} z ${a} wykonawców przesłało ofertę.`,
    compared: (n) => `Porównano ${n} wykonawców na podstawie danych katalogu.`,
    recommend: 'Rekomendacja',
    total: 'razem',
    inclVat: 'brutto',
    from: 'dostępny od',
    rating: (r, n) => `ocena ${r} z ${n} opinii`,
    none: 'Żaden wykonawca nie pasuje wystarczająco, by go polecić.',
    silent: 'Brak odpowiedzi',
    fewer: (a, n) => `Poproszono o ${a}; porównano tylko ${n}.`,
  },
};

function summarize(
  options: CompareOptions,
  providers: ConciergeProvider[],
  recommendation: string | null,
  silent: string[],
  fewer: number | null,
): string {
  const p = PHRASES[options.language];
  const parts: string[] = [];
  if (options.contact) {
    const asked = providers.filter((x) => x.contacted).length;
    parts.push(p.quoted(providers.filter((x) => x.quote !== null).length, asked));
  } else {
    parts.push(p.compared(providers.length));
  }
  const best = providers.find((x) => x.listing_id === recommendation);
  if (best) {
    const facts: string[] = [];
    const q = best.quote;
    if (q?.total != null)
      facts.push(
        `${p.total} ${q.total_high === null ? q.total : `${q.total}-${q.total_high}`} ${q.currency} ${p.inclVat}`,
      );
    if (best.available_from) facts.push(`${p.from} ${best.available_from}`);
    if (best.rating !== null) facts.push(p.rating(best.rating, best.review_count));
    parts.push(`${p.recommend}: ${best.name}${facts.length > 0 ? ` (${facts.join(', ')})` : ''}.`);
  } else {
    parts.push(p.none);
  }
  if (fewer !== null) parts.push(p.fewer(options.askedFor, fewer));
  if (silent.length > 0) parts.push(`${p.silent}: ${silent.join(', ')}.`);
  return parts.join(' ');
}
