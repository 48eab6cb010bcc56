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
import { cents, decimal } from './money.ts';
import { day, moment, money, moneyRange, number, PHRASES, rateText } from './phrases.ts';
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
  /** What a unit of other currencies is worth in euros, and the day (CURRENCY_RATES, _DATE). */
  rates?: CurrencyRates;
}

export interface CurrencyRates {
  rates: Record<string, string>;
  date: string | null;
}

/** The lev's rate, fixed by the Council when Bulgaria took the euro (1 EUR = 1.95583 BGN). */
const FIXED_RATES: Record<string, { rate: string; date: string }> = {
  BGN: { rate: '0.51129188', date: '2026-01-01' },
};

/** `amount` (a decimal string) times `rate` (a decimal string), in cents, rounded half up. */
function convertCents(amount: string, rate: string): bigint {
  const [whole = '0', fraction = ''] = rate.split('.');
  const scale = 10n ** BigInt(fraction.length);
  const scaled = BigInt(whole) * scale + BigInt(fraction === '' ? '0' : fraction);
  return (cents(amount) * scaled + scale / 2n) / scale;
}

/** The quote's total in euros at the operator's (or the fixed) rate, or null when none is known. */
function inEuros(q: ProviderQuote, rates: CurrencyRates | undefined): ProviderQuote['converted'] {
  if (q.currency === 'EUR' || q.total === null) return null;
  const given = rates?.rates[q.currency];
  const known = given !== undefined ? { rate: given, date: rates?.date ?? null } : FIXED_RATES[q.currency];
  if (!known) return null;
  return {
    currency: 'EUR',
    total: decimal(convertCents(q.total, known.rate)),
    total_high: q.total_high === null ? null : decimal(convertCents(q.total_high, known.rate)),
    rate: known.rate,
    rate_date: known.date,
  };
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

/** The total a quote ranks on in the comparison's currency, in cents: its own, or converted. */
function comparedTotal(q: ProviderQuote, currency: string | null): bigint | null {
  if (q.currency === currency) return rankingTotal(q);
  if (q.converted && q.converted.currency === currency)
    return cents(q.converted.total_high ?? q.converted.total);
  return null;
}

function tierOf(outcome: Outcome, quote: ProviderQuote | null, currency: string | null): Tier {
  if (!outcome.contacted) return 0;
  if (outcome.replied_at === null) return 4;
  if (quote !== null) return quote.comparable && comparedTotal(quote, currency) !== null ? 0 : 1;
  if (outcome.reading?.declined) return 3;
  return 2;
}

/** A quote's total with its "incl. VAT", as the language writes it. */
const totalText = (language: Language, q: ProviderQuote) =>
  `${moneyRange(language, q.total ?? '0', q.total_high, q.currency)} ${PHRASES[language].inclVat}`;

export function compare(
  candidates: Candidate[],
  outcomes: Map<string, Outcome>,
  options: CompareOptions,
): ConciergeResult {
  const none: Outcome = { contacted: false, sent_at: null, replied_at: null, reading: null };
  const quoteOf = new Map<string, ProviderQuote | null>(
    candidates.map((c) => {
      const reading = outcomes.get(c.listing_id)?.reading ?? null;
      return [c.listing_id, reading ? quoteTotal(reading, options.country, options.language) : null];
    }),
  );
  const known = [...quoteOf.values()].filter((q): q is ProviderQuote => q !== null && q.comparable);
  // quotes in another currency than the euro, converted at a known rate, compare in euros
  for (const q of known) q.converted = inEuros(q, options.rates);
  // totals compare in euros where a quote is in (or converts to) euros, else in the currency most are in
  const currency = known.some((q) => q.currency === 'EUR' || q.converted)
    ? 'EUR'
    : mostCommon(known.map((q) => q.currency));
  const totals = known.map((q) => comparedTotal(q, currency)).filter((t): t is bigint => t !== null);
  const lowest = totals.length > 0 ? totals.reduce((a, b) => (b < a ? b : a)) : null;
  const lang = options.language;
  const p = PHRASES[lang];
  const place = options.placeName ? (options.placeName.split(',')[0] ?? null) : null;

  const scored: Scored[] = candidates.map((candidate) => {
    const outcome = outcomes.get(candidate.listing_id) ?? none;
    const reading = outcome.reading;
    const quote = quoteOf.get(candidate.listing_id) ?? null;
    const pros: string[] = [];
    const cons: string[] = [];
    const parts: [number, number][] = []; // [weight, value 0..1]

    const compared = quote ? comparedTotal(quote, currency) : null;
    const total = quote ? rankingTotal(quote) : null;
    if (quote && compared !== null && lowest !== null && currency !== null) {
      parts.push([0.4, Number(lowest) / Number(compared)]);
      const m = (value: bigint) => money(lang, decimal(value), currency);
      if (compared === lowest && totals.length > 1) pros.push(p.lowest(totalText(lang, quote)));
      else if (compared === lowest) pros.push(p.totalIs(totalText(lang, quote)));
      else cons.push(p.dearer(m(compared - lowest), m(compared), m(lowest)));
      const c = quote.converted;
      if (c && quote.currency !== currency)
        pros.push(
          p.converted(
            m(compared),
            rateText(lang, c.rate),
            quote.currency,
            c.rate_date ? day(lang, c.rate_date) : null,
          ),
        );
    } else if (quote && total !== null) {
      pros.push(p.totalIs(totalText(lang, quote)));
      cons.push(p.otherCurrency(quote.currency));
    } else if (quote) {
      cons.push(p.unknownTotal(quote.not_comparable_reason ?? p.unsaid));
    }
    if (quote && reading) {
      if (reading.includes.length > 0) pros.push(p.includes(reading.includes.join(', ')));
      for (const x of reading.excludes) cons.push(p.excludes(x));
      if (reading.estimate) cons.push(p.estimate);
    }

    const weighted = weightedRating(candidate.rating, candidate.review_count);
    parts.push([outcome.contacted ? 0.25 : 0.5, (weighted - 1) / 4]);
    const rating = candidate.rating === null ? '' : number(lang, candidate.rating);
    if (candidate.rating !== null && candidate.rating >= 4.3 && candidate.review_count >= 10)
      pros.push(p.rated(rating, candidate.review_count));
    else if (candidate.rating !== null && candidate.rating < 3.5)
      cons.push(p.ratedOnly(rating, candidate.review_count));
    else if (candidate.review_count < 10)
      cons.push(candidate.review_count === 0 ? p.noReviews : p.fewReviews(candidate.review_count));
    else pros.push(p.rated(rating, candidate.review_count));

    if (candidate.distance_km !== null) {
      parts.push([outcome.contacted ? 0.1 : 0.3, 1 / (1 + candidate.distance_km / 10)]);
      const km = number(lang, candidate.distance_km);
      if (candidate.distance_km <= 5) pros.push(p.distance(km, place));
      else if (candidate.distance_km > 20) cons.push(p.distance(km, place));
    }

    if (outcome.contacted) {
      const from = reading?.available_from ?? null;
      if (from !== null && options.deadline !== null) {
        const inTime = from <= options.deadline;
        parts.push([0.15, inTime ? 1 : 0]);
        const [f, d] = [day(lang, from), day(lang, options.deadline)];
        if (inTime) pros.push(p.availableBefore(f, d));
        else cons.push(p.availableAfter(f, d));
      } else if (from !== null) {
        parts.push([0.15, 0.8]);
        pros.push(p.available(day(lang, from)));
      } else if (outcome.replied_at !== null) {
        parts.push([0.15, 0.4]);
      }
      if (outcome.replied_at !== null && outcome.sent_at !== null) {
        const hours = Math.max(0, (outcome.replied_at - outcome.sent_at) / 3600);
        parts.push([0.1, 1 / (1 + hours / 24)]);
        if (hours <= 4) pros.push(p.answeredWithin(hours <= 1 ? null : Math.ceil(hours)));
      }
      if (reading?.declined && quote === null) cons.push(p.declined);
      else if (outcome.replied_at !== null && quote === null)
        cons.push(reading?.no_price_reason === 'site_visit' ? p.siteVisit : p.noPrice);
      if (outcome.replied_at === null)
        cons.push(
          options.respondBy ? p.noAnswerBy(moment(lang, options.respondBy, options.country)) : p.noAnswer,
        );
    } else {
      if (candidate.claimed) pros.push(p.claimed);
      if (candidate.response_hours !== null) {
        parts.push([0.2, 1 / (1 + candidate.response_hours / 24)]);
        if (candidate.response_hours <= 4)
          pros.push(p.usuallyAnswers(Math.max(1, Math.ceil(candidate.response_hours))));
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
  const within = place ? p.within(options.radiusKm, place) : '';
  const shortfall =
    options.shortlisted < options.askedFor
      ? p.foundOnly(options.askedFor, options.shortlisted, `${options.tradeTerm ?? p.providers}${within}`)
      : compared < options.askedFor
        ? p.notWritten(options.askedFor, options.shortlisted - compared, options.shortlisted)
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
    if (q?.total != null) facts.push(`${p.total} ${totalText(options.language, q)}`);
    if (best.available_from) facts.push(p.from(day(options.language, best.available_from)));
    if (best.rating !== null) facts.push(p.rating(number(options.language, best.rating), best.review_count));
    parts.push(`${p.recommend}${p.colon}${best.name}${facts.length > 0 ? ` (${facts.join(', ')})` : ''}.`);
  } else {
    parts.push(p.none);
  }
  if (fewer !== null) parts.push(p.fewer(options.askedFor, fewer));
  if (silent.length > 0) parts.push(`${p.silent}${p.colon}${silent.join(', ')}.`);
  return parts.join(' ');
}
