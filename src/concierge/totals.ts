// A reading brought to a like-for-like total, VAT included: the price as stated (an hourly rate
// times the stated hours, a range's two ends), the fees the answer prices besides it, and VAT
// added where the answer leaves it out, at the rate it states or else the standard rate of the
// provider's country. Each part keeps the words it came from; what the answer does not say and
// the total assumes is said. A total that cannot be known (a "from" price, a rate without hours,
// a fee said to be extra without a price) is null, with the reason.
import type { ProviderQuote, QuoteLine, QuoteReading } from '../../generated/directory/client/types.gen.ts';
import { addVat, cents, decimal, times } from './money.ts';
import { countryName, money, moneyRange, number, PHRASES, percent } from './phrases.ts';
import type { Language } from './understand.ts';
import { standardVat } from './vat.ts';

/** The comparable total of a reading with a price, or null when the answer names none; its words in `language`. */
export function quoteTotal(
  reading: QuoteReading,
  country: string | null,
  language: Language = 'en',
): ProviderQuote | null {
  if (reading.amount === null || reading.currency === null || reading.price_type === null) return null;
  const currency = reading.currency;
  const p = PHRASES[language];
  const m = (amount: string) => money(language, amount, currency);
  const figures = (low: number, high: number) =>
    low === high ? number(language, low) : `${number(language, low)}–${number(language, high)}`;
  const basis = reading.vat.basis;
  const rate = basis === 'exempt' ? '0' : (reading.vat.rate ?? standardVat(country));
  const assumptions: string[] = [];
  const lines: QuoteLine[] = [];
  let reason: string | null = null;
  const unknown = (why: string) => (reason ??= why);

  // the price: low and high ends, before any VAT the answer leaves out
  const price = cents(reading.amount);
  let low = price;
  let high: bigint | null = null;
  let priceLabel = m(reading.amount);
  switch (reading.price_type) {
    case 'range':
      high = reading.amount_high === null ? null : cents(reading.amount_high);
      priceLabel = moneyRange(language, reading.amount, reading.amount_high, currency);
      assumptions.push(p.rangeUpper);
      break;
    case 'hourly':
      if (reading.hours === null) unknown(p.rateWithoutHours(m(reading.amount)));
      else {
        low = times(price, reading.hours.low);
        if (reading.hours.high !== reading.hours.low) high = times(price, reading.hours.high);
        priceLabel = p.perHour(m(reading.amount), figures(reading.hours.low, reading.hours.high));
        assumptions.push(p.hoursStated(reading.hours.quote));
      }
      break;
    case 'from':
      unknown(p.fromOnly(m(reading.amount)));
      break;
    case 'per_unit':
      // like hours: the unit price times the quantity the reply states, never a guessed one
      if (reading.quantity === null) unknown(p.perUnit(m(reading.amount), reading.unit));
      else {
        const { value, high: most } = reading.quantity;
        low = times(price, value);
        if (most !== value) high = times(price, most);
        priceLabel = p.perUnitTimes(
          m(reading.amount),
          reading.unit ?? reading.quantity.unit,
          figures(value, most),
        );
        assumptions.push(p.quantityStated(reading.quantity.quote));
      }
      break;
    case 'fixed':
      break;
  }
  lines.push({ kind: 'price', label: priceLabel, amount: decimal(low), quote: reading.amount_quote });
  if (reading.estimate) assumptions.push(p.estimateSaid);

  // fees: priced ones add to both ends; one said to be extra without a price leaves the total unknown
  let netLow = basis === 'net' ? low : 0n;
  let netHigh = basis === 'net' ? (high ?? low) : 0n;
  let grossLow = basis === 'net' ? 0n : low;
  let grossHigh = basis === 'net' ? 0n : (high ?? low);
  for (const fee of reading.fees) {
    if (fee.amount === null) {
      unknown(p.feeWithoutPrice(fee.label));
      continue;
    }
    if (fee.currency !== currency) {
      unknown(p.feeCurrency(fee.label, fee.currency));
      continue;
    }
    const amount = cents(fee.amount);
    const feeBasis = fee.vat ?? (basis === 'net' ? 'net' : 'gross');
    if (fee.vat === null && basis === 'net') assumptions.push(p.feeNet(fee.label));
    if (feeBasis === 'net' && basis !== 'exempt') {
      netLow += amount;
      netHigh += amount;
    } else {
      grossLow += amount;
      grossHigh += amount;
    }
    lines.push({ kind: 'fee', label: fee.label, amount: fee.amount, quote: fee.quote });
  }

  // VAT on what the answer gives before it
  let vatLow = 0n;
  let vatHigh = 0n;
  if (netLow > 0n || netHigh > 0n) {
    if (rate === null) unknown(p.noRate(country ? countryName(language, country) : null));
    else {
      vatLow = addVat(netLow, rate) - netLow;
      vatHigh = addVat(netHigh, rate) - netHigh;
      const said = reading.vat.rate !== null;
      const pct = percent(language, rate);
      assumptions.push(
        said
          ? p.vatStated(pct)
          : p.vatAssumed(pct, country ? countryName(language, country) : null, reading.vat.quote),
      );
      lines.push({
        kind: 'vat',
        label: p.vatLabel(pct),
        amount: decimal(vatLow),
        quote: said ? reading.vat.rate_quote : null,
      });
    }
  }
  if (basis === 'unknown') assumptions.push(p.vatUnknown);
  if (basis === 'exempt') assumptions.push(p.exempt(reading.vat.quote));

  const total = reason === null ? decimal(grossLow + netLow + vatLow) : null;
  const totalHigh = reason === null && high !== null ? decimal(grossHigh + netHigh + vatHigh) : null;
  return {
    amount: reading.amount,
    currency,
    price_type: reading.price_type,
    vat_basis: basis,
    vat_rate: rate,
    total,
    total_high: totalHigh,
    comparable: reason === null,
    not_comparable_reason: reason,
    breakdown: lines.slice(0, 12),
    assumptions: assumptions.slice(0, 10),
    note: reading.conditions.join('; ') || null,
    converted: null,
  };
}

/** What a quote ranks on: the upper end of its total (the most it may cost), in cents. */
export const rankingTotal = (q: ProviderQuote): bigint | null =>
  q.total === null ? null : cents(q.total_high ?? q.total);
