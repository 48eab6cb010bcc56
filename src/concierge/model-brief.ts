// A brief read by the upstream model (MODEL_ENGINES), through our own Responses API with a JSON
// schema, then checked by code part by part: the number of providers must be written in the
// brief, every date written in it or derived from its words as the rules derive them ("next
// week" is its Monday to Sunday), the trade a NACE class of the directory's table that the
// brief's words support (trades.ts: the one it names, else one it has words of) or the rules'
// trade, the place a name the brief writes that the gazetteer knows. A part that fails is the
// rules' reading of that part, listed in `dropped`; hints win over both. No JSON of the schema:
// the rules' reading whole.
import type { BriefHints, ResolvedPlace, Understanding } from './understand.ts';
import { datesIn, dayOf, fold, whenIn } from './dates.ts';
import { naceClass } from '../directory/data/nace.ts';
import { describeNeed } from './need.ts';
import { clip } from './quote-parts.ts';
import { tradeSupport } from './trades.ts';
import { asksFor, languageScores, numberOf, placeNamed, REQUIREMENT_LABELS, tradeOf } from './understand.ts';

const LANGUAGES = ['en', 'de', 'fr', 'es', 'it', 'nl', 'pl'] as const;
const KINDS = ['window', 'by', 'on', 'from', 'asap'] as const;
const STRING_OR_NULL = { type: ['string', 'null'] } as const;
const DATE_OR_NULL = { type: ['string', 'null'], description: 'YYYY-MM-DD' } as const;

/** What the model answers with (strict structured output: every member required, flat). */
export const BRIEF_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'language',
    'activity',
    'place',
    'country',
    'max_providers',
    'when_kind',
    'when_from',
    'when_to',
    'when_text',
    'requirements',
  ],
  properties: {
    language: { type: 'string', enum: LANGUAGES, description: 'The language the brief is written in.' },
    activity: {
      ...STRING_OR_NULL,
      description: 'The NACE Rev. 2 class of the trade sought, e.g. 43.22 for plumbers.',
    },
    place: { ...STRING_OR_NULL, description: 'The town or city the work is in, as the brief writes it.' },
    country: { ...STRING_OR_NULL, description: 'The country of that place, ISO 3166-1 alpha-2.' },
    max_providers: {
      type: ['integer', 'null'],
      description: 'How many providers the brief asks for, only if it says.',
    },
    when_kind: { type: ['string', 'null'], enum: [...KINDS, null] },
    when_from: { ...DATE_OR_NULL, description: 'The first day of the time the brief asks for.' },
    when_to: { ...DATE_OR_NULL, description: 'The last day of the time the brief asks for.' },
    when_text: { ...STRING_OR_NULL, description: 'The words of the brief that say when.' },
    requirements: { type: 'array', maxItems: 10, items: { type: 'string', enum: REQUIREMENT_LABELS } },
  },
} as const;

export const BRIEF_INSTRUCTIONS =
  "You read a customer's brief to a concierge that finds providers and asks them for quotes. " +
  'Answer with the JSON the schema asks for: only what the brief states, null where it says nothing. ' +
  'Dates as YYYY-MM-DD, counted from today, which is given first.';

/** The model's input: today's date, then the brief. */
export const briefInput = (brief: string, today: Date) => `Today: ${dayOf(today)}\n\n${brief.slice(0, 8000)}`;

interface ModelBrief {
  language: Understanding['language'] | null;
  activity: string | null;
  place: string | null;
  country: string | null;
  max_providers: number | null;
  when_kind: (typeof KINDS)[number] | null;
  when_from: string | null;
  when_to: string | null;
  when_text: string | null;
  requirements: string[] | null;
}

/**
 * The model's answer part by part: a part not of the schema's shape is null (the rules' reading),
 * listed in `dropped`; null when the answer is no JSON object at all.
 */
function asBrief(value: unknown, dropped: Understanding['dropped']): ModelBrief | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const v = value as Record<string, unknown>;
  const part = <T>(field: keyof ModelBrief, holds: (x: unknown) => boolean): T | null => {
    const x = v[field];
    if (x === null || x === undefined) return null;
    if (holds(x)) return x as T;
    dropped.push({ field, value: clip(JSON.stringify(x), 60), reason: 'not of the schema' });
    return null;
  };
  const text = (x: unknown) => typeof x === 'string';
  const day = (x: unknown) => typeof x === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(x);
  const listed = Array.isArray(v.requirements) ? (v.requirements as unknown[]) : [];
  if (v.requirements !== undefined && !Array.isArray(v.requirements))
    dropped.push({
      field: 'requirements',
      value: clip(JSON.stringify(v.requirements), 60),
      reason: 'not of the schema',
    });
  for (const r of listed)
    if (!REQUIREMENT_LABELS.includes(r as string))
      dropped.push({
        field: 'requirements',
        value: clip(JSON.stringify(r), 60),
        reason: 'not of the schema',
      });
  return {
    language: part('language', (x) => (LANGUAGES as readonly unknown[]).includes(x)),
    activity: part('activity', text),
    place: part('place', text),
    country: part('country', (x) => typeof x === 'string' && /^[A-Z]{2}$/.test(x)),
    max_providers: part('max_providers', (x) => Number.isInteger(x)),
    when_kind: part('when_kind', (x) => (KINDS as readonly unknown[]).includes(x)),
    when_from: part('when_from', day),
    when_to: part('when_to', day),
    when_text: part('when_text', text),
    requirements: Array.isArray(v.requirements)
      ? [...new Set(listed.filter((r): r is string => REQUIREMENT_LABELS.includes(r as string)))]
      : null,
  };
}

/** Whether from/to fit the kind of time: a window has both, `by` a last day, `on` one day... */
function shapeHolds(kind: ModelBrief['when_kind'], from: string | null, to: string | null): boolean {
  switch (kind) {
    case 'window':
      return from !== null && to !== null && from <= to;
    case 'by':
      return from === null && to !== null;
    case 'on':
      return from !== null && from === to;
    case 'from':
      return from !== null && to === null;
    default:
      return to === null;
  }
}

/**
 * The model's reading of a brief checked against the brief's words. `rules` is the rules' reading
 * of the same brief with the same hints (`understand()`); each part the model gets wrong, or
 * leaves null, is the rules'.
 */
export function checkedUnderstanding(
  raw: string,
  brief: string,
  hints: BriefHints & { resolved?: ResolvedPlace | undefined },
  today: Date,
  rules: Understanding,
): Understanding {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = null;
  }
  const dropped: Understanding['dropped'] = [];
  const answer = asBrief(parsed, dropped);
  if (answer === null)
    return {
      ...rules,
      dropped: [{ field: 'understanding', value: clip(raw, 60), reason: 'not the JSON the schema asks for' }],
    };
  const drop = (field: string, value: string, reason: string) =>
    dropped.push({ field, value: clip(value, 60), reason });
  const folded = fold(brief);
  const u: Understanding = { ...rules };

  // a language the brief uses words of, about as many as of the language it uses most
  if (answer.language !== null) {
    const scores = languageScores(brief);
    const most = Math.max(...Object.values(scores));
    if (scores[answer.language] > 0 && scores[answer.language] * 2 >= most) u.language = answer.language;
    else drop('language', answer.language, "the brief's words are not of that language");
  }

  // a wish the brief's words ask for, as the rules know them in every language
  if (answer.requirements !== null) {
    for (const r of answer.requirements)
      if (!asksFor(brief, r)) drop('requirements', r, 'not asked in the brief');
    u.requirements = answer.requirements.filter((r) => asksFor(brief, r));
  }

  if (hints.activity === undefined && answer.activity !== null) {
    const code = answer.activity;
    // the rules' trade, or one the brief names or has words of: no locksmith for a leaking pipe
    const support = code === rules.trade?.activity ? null : tradeSupport(brief, code);
    if (!/^\d{2}\.\d{2}$/.test(code) || naceClass(code) === undefined)
      drop('trade.activity', code, "no such NACE class in the directory's trade table");
    else if (support !== null && !support.supported) drop('trade.activity', code, support.reason);
    else u.trade = tradeOf(brief, code);
  }

  if (!hints.resolved && answer.place !== null) {
    const country = hints.country ?? answer.country ?? undefined;
    const place = placeNamed(answer.place, country);
    if (answer.place.trim() === '' || !folded.includes(fold(answer.place.trim())))
      drop('place', answer.place, 'not written in the brief');
    else if (place === null) drop('place', answer.place, 'no such place in the gazetteer');
    else u.place = { ...place, query: answer.place.trim() };
  }

  if (hints.max_providers === undefined && answer.max_providers !== null) {
    const n = answer.max_providers;
    const written = [...brief.matchAll(/[\p{L}\p{N}]+/gu)].some((m) => numberOf(m[0]) === n);
    if (n >= 1 && n <= 20 && written) u.max_providers = n;
    else drop('max_providers', String(n), 'no such number in the brief');
  }

  if (hints.deadline === undefined && answer.when_kind !== null) {
    const { when_kind: kind, when_from: from, when_to: to, when_text: text } = answer;
    // a date is one the brief writes, or one the rules derive from its words (a window's Sunday)
    const allowed = new Set(datesIn(brief, dayOf(today)).map((d) => d.date));
    for (const d of [rules.when?.from, rules.when?.to]) if (d) allowed.add(d);
    if (kind === 'asap') allowed.add(dayOf(today));
    const before = dropped.length;
    for (const [field, day] of [
      ['when.from', from],
      ['when.to', to],
    ] as const)
      if (day !== null && !allowed.has(day))
        drop(field, day, 'no such date in the brief, nor derived from its words');
    if (dropped.length === before) {
      if (!shapeHolds(kind, from, to)) drop('when', `${kind} ${from} ${to}`, `not a time of kind ${kind}`);
      else if (text === null || text.trim() === '' || !folded.includes(fold(text.trim())))
        drop('when.text', text ?? 'null', 'not written in the brief');
      else {
        u.when = { kind, from, to, text: text.trim() };
        u.deadline = kind === 'from' ? null : to;
      }
    }
  }

  const said = whenIn(brief, dayOf(today));
  return {
    ...u,
    description: describeNeed(brief, u, said?.text ?? null),
    read_by: 'model',
    dropped: dropped.slice(0, 20),
  };
}
