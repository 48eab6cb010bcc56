// A provider's answer read by the upstream model (MODEL_ENGINES), through our own Responses API
// with a JSON schema, then checked by code: every figure the model gives (amounts, hours, the
// quantity of a unit price, the VAT rate, fees, dates) must be written in the answer. One that is not is refused and the reading is
// the rules' own (`read_by: rules`, the refused figures in `dropped`); a reading whose figures
// all hold is the model's (`read_by: model`), each figure quoted in the words it came from.
import type { QuoteFee, QuoteReading } from '../../generated/directory/client/types.gen.ts';
import { datesIn, dayOf, fold } from './dates.ts';
import { NUMBER, parseAmount } from './money.ts';
import { clip, unitKind } from './quote-parts.ts';

const NUMBER_OR_NULL = { type: ['number', 'null'] } as const;
const DATE_OR_NULL = { type: ['string', 'null'], description: 'YYYY-MM-DD' } as const;

/** What the model answers with (strict structured output: every member required). */
export const READING_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'declined',
    'price_type',
    'amount',
    'amount_high',
    'currency',
    'vat',
    'vat_rate',
    'hours_low',
    'hours_high',
    'quantity',
    'quantity_high',
    'quantity_unit',
    'fees',
    'available_from',
    'valid_until',
    'includes',
    'excludes',
  ],
  properties: {
    declined: { type: 'boolean', description: 'The provider declines the job.' },
    price_type: {
      type: ['string', 'null'],
      enum: ['fixed', 'hourly', 'range', 'from', 'per_unit', null],
    },
    amount: {
      ...NUMBER_OR_NULL,
      description: 'The price as written (the low end of a range, the hourly rate).',
    },
    amount_high: { ...NUMBER_OR_NULL, description: 'The high end of a range.' },
    currency: { type: ['string', 'null'], description: 'ISO 4217, e.g. EUR.' },
    vat: { type: 'string', enum: ['gross', 'net', 'exempt', 'unknown'] },
    vat_rate: { ...NUMBER_OR_NULL, description: 'The VAT rate in per cent, only if the answer states it.' },
    hours_low: { ...NUMBER_OR_NULL, description: 'Hours of work the answer states.' },
    hours_high: NUMBER_OR_NULL,
    quantity: {
      ...NUMBER_OR_NULL,
      description: 'For a price per unit: how many units the answer states (the low end of a range).',
    },
    quantity_high: { ...NUMBER_OR_NULL, description: 'The high end of a range of quantities.' },
    quantity_unit: {
      type: ['string', 'null'],
      description: 'The unit of the quantity as the answer writes it (m², metres, pieces, days).',
    },
    fees: {
      type: 'array',
      maxItems: 10,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['label', 'amount'],
        properties: { label: { type: 'string' }, amount: NUMBER_OR_NULL },
      },
    },
    available_from: DATE_OR_NULL,
    valid_until: DATE_OR_NULL,
    includes: { type: 'array', maxItems: 10, items: { type: 'string' } },
    excludes: { type: 'array', maxItems: 10, items: { type: 'string' } },
  },
} as const;

export const READING_INSTRUCTIONS =
  "You read a provider's answer to a request for a quote. Answer with the JSON the schema asks for: " +
  'only what the answer states, figures exactly as written in it (never computed), null where it says nothing.';

interface ModelAnswer {
  declined: boolean;
  price_type: QuoteReading['price_type'];
  amount: number | null;
  amount_high: number | null;
  currency: string | null;
  vat: QuoteReading['vat']['basis'];
  vat_rate: number | null;
  hours_low: number | null;
  hours_high: number | null;
  quantity: number | null;
  quantity_high: number | null;
  quantity_unit: string | null;
  fees: { label: string; amount: number | null }[];
  available_from: string | null;
  valid_until: string | null;
  includes: string[];
  excludes: string[];
}

const PRICE_TYPES = new Set(['fixed', 'hourly', 'range', 'from', 'per_unit', null]);
const BASES = new Set(['gross', 'net', 'exempt', 'unknown']);

function asAnswer(value: unknown): ModelAnswer | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  const num = (x: unknown) => x === null || (typeof x === 'number' && Number.isFinite(x) && x >= 0);
  const day = (x: unknown) => x === null || (typeof x === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(x));
  const words = (x: unknown) => Array.isArray(x) && x.every((w) => typeof w === 'string');
  const ok =
    typeof v.declined === 'boolean' &&
    PRICE_TYPES.has(v.price_type as string | null) &&
    num(v.amount) &&
    num(v.amount_high) &&
    (v.currency === null || (typeof v.currency === 'string' && /^[A-Z]{3}$/.test(v.currency))) &&
    BASES.has(v.vat as string) &&
    num(v.vat_rate) &&
    num(v.hours_low) &&
    num(v.hours_high) &&
    num(v.quantity) &&
    num(v.quantity_high) &&
    (v.quantity_unit === null || typeof v.quantity_unit === 'string') &&
    Array.isArray(v.fees) &&
    v.fees.every(
      (f: unknown) =>
        typeof f === 'object' &&
        f !== null &&
        typeof (f as { label?: unknown }).label === 'string' &&
        num((f as { amount?: unknown }).amount),
    ) &&
    day(v.available_from) &&
    day(v.valid_until) &&
    words(v.includes) &&
    words(v.excludes);
  return ok ? (v as unknown as ModelAnswer) : null;
}

/** The numbers written in a text, each with where it stands. */
function numbersIn(text: string): { value: number; at: number; end: number }[] {
  const out: { value: number; at: number; end: number }[] = [];
  for (const m of text.matchAll(new RegExp(`(?<![\\d])(?:${NUMBER})`, 'gu'))) {
    const amount = parseAmount(m[0]);
    const plain = Number(m[0].replace(',', '.'));
    for (const value of new Set([amount === null ? NaN : Number(amount), plain])) {
      if (Number.isFinite(value)) out.push({ value, at: m.index, end: m.index + m[0].length });
    }
  }
  return out;
}

/** The words around a span, as a quote: the clause it stands in, at most 120 characters. */
function quoteAround(text: string, at: number, end: number): string {
  const start = Math.max(
    text.lastIndexOf('\n', at) + 1,
    ...['.', '!', '?', ';'].map((c) => text.lastIndexOf(`${c} `, at) + 2),
    at - 60,
    0,
  );
  const stops = ['.', '!', '?', ';', '\n'].map((c) => text.indexOf(c, end)).filter((i) => i >= 0);
  const stop = Math.min(end + 60, text.length, ...stops);
  return clip(text.slice(start, stop).trim(), 120);
}

const money = (n: number) => n.toFixed(2);

type Found = { at: number; end: number } | null;

/**
 * The model's quantity for a unit price: both ends written in the answer, its unit too, and of
 * the price's kind (an area for a price per m²); else dropped, with why.
 */
function quantityOf(
  answer: ModelAnswer,
  text: string,
  rules: QuoteReading,
  find: (field: string, value: number | null) => Found,
  dropped: QuoteReading['dropped'],
): { value: number; high: number; unit: string; hit: Found } | null {
  if (answer.quantity === null) return null;
  const hit = find('quantity.value', answer.quantity);
  find('quantity.high', answer.quantity_high);
  const high = answer.quantity_high ?? answer.quantity;
  const unit = (answer.quantity_unit ?? '').trim().replace(/\s+/g, ' ');
  const drop = (field: string, value: string, reason: string) => {
    dropped.push({ field, value, reason });
    return null;
  };
  if (high < answer.quantity || answer.quantity === 0)
    return drop('quantity.high', String(high), 'not a range of quantities');
  if (!unit || !fold(text).includes(fold(unit)))
    return drop('quantity.unit', clip(unit, 60), 'not written in the answer');
  if (rules.unit && unitKind(fold(unit)) !== unitKind(fold(rules.unit)))
    return drop('quantity.unit', clip(unit, 60), `not a unit of the price's (${rules.unit})`);
  return { value: answer.quantity, high, unit, hit };
}

/**
 * The model's answer checked against the answer's text. `rules` is the rules' reading of the same
 * text, kept when a figure of the model's is not in the text, or its answer is not the schema's.
 */
export function checkedReading(raw: string, text: string, received: Date, rules: QuoteReading): QuoteReading {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = null;
  }
  const answer = asAnswer(parsed);
  if (answer === null)
    return {
      ...rules,
      dropped: [{ field: 'reading', value: clip(raw, 60), reason: 'not the JSON the schema asks for' }],
    };
  const numbers = numbersIn(text);
  const dates = datesIn(text, dayOf(received));
  const dropped: QuoteReading['dropped'] = [];
  const find = (field: string, value: number | null) => {
    if (value === null) return null;
    const hit = numbers.find((n) => Math.abs(n.value - value) < 0.005);
    if (!hit) dropped.push({ field, value: String(value), reason: 'not written in the answer' });
    return hit ?? null;
  };
  const findDay = (field: string, value: string | null) => {
    if (value === null) return null;
    const hit = dates.find((d) => d.date === value);
    if (!hit) dropped.push({ field, value, reason: 'no such date in the answer' });
    return hit ?? null;
  };
  const amount = find('amount', answer.amount);
  const high = find('amount_high', answer.amount_high);
  const rate = find('vat.rate', answer.vat_rate);
  const hoursLow = find('hours.low', answer.hours_low);
  find('hours.high', answer.hours_high);
  const quantity = quantityOf(answer, text, rules, find, dropped);
  const fees = answer.fees.map((f, i) => ({ fee: f, hit: find(`fees[${i}].amount`, f.amount) }));
  const available = findDay('available_from', answer.available_from);
  const valid = findDay('valid_until', answer.valid_until);
  if (dropped.length > 0) return { ...rules, dropped: dropped.slice(0, 20) };

  const currency = answer.currency ?? rules.currency;
  const quoteOf = (hit: { at: number; end: number } | null) =>
    hit ? quoteAround(text, hit.at, hit.end) : null;
  return {
    ...rules,
    declined: answer.declined,
    price_type: answer.amount === null ? null : answer.price_type,
    amount: answer.amount === null ? null : money(answer.amount),
    amount_high: answer.amount_high === null ? null : money(answer.amount_high),
    currency: answer.amount === null ? null : currency,
    amount_quote: quoteOf(amount ?? high),
    hours:
      answer.hours_low === null
        ? null
        : {
            low: answer.hours_low,
            high: answer.hours_high ?? answer.hours_low,
            quote: quoteOf(hoursLow) ?? '',
          },
    // a unit price's quantity: the model's, checked; one it leaves out, the rules' (from the words)
    quantity:
      answer.price_type !== 'per_unit'
        ? null
        : quantity
          ? {
              value: quantity.value,
              high: quantity.high,
              unit: quantity.unit,
              quote: quoteOf(quantity.hit) ?? quantity.unit,
            }
          : rules.quantity,
    vat: {
      basis: answer.vat,
      rate: answer.vat_rate === null ? rules.vat.rate : answer.vat_rate.toFixed(2),
      quote: answer.vat === rules.vat.basis ? rules.vat.quote : quoteOf(rate ?? amount),
      rate_quote: rate ? quoteOf(rate) : answer.vat_rate === null ? rules.vat.rate_quote : null,
    },
    fees: fees.map(({ fee, hit }): QuoteFee => {
      const same = rules.fees.find(
        (r) => r.amount !== null && fee.amount !== null && Number(r.amount) === fee.amount,
      );
      return {
        kind: same?.kind ?? 'other',
        label: clip(fee.label, 60),
        amount: fee.amount === null ? null : money(fee.amount),
        currency: fee.amount === null ? null : currency,
        vat: same?.vat ?? null,
        quote: quoteOf(hit) ?? clip(fee.label, 60),
      };
    }),
    includes: answer.includes.map((x) => clip(x, 60)).slice(0, 10),
    excludes: answer.excludes.map((x) => clip(x, 60)).slice(0, 10),
    available_from: answer.available_from,
    availability_quote: available ? quoteAround(text, available.at, available.end) : null,
    valid_until: answer.valid_until,
    validity_quote: valid ? quoteAround(text, valid.at, valid.end) : null,
    no_price_reason:
      answer.amount === null && !answer.declined ? (rules.no_price_reason ?? 'not_stated') : null,
    read_by: 'model',
    dropped: [],
  };
}
