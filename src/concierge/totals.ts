// A reading brought to a like-for-like total, VAT included: the price as stated (an hourly rate
// times the stated hours, a range's two ends), the fees the answer prices besides it, and VAT
// added where the answer leaves it out, at the rate it states or else the standard rate of the
// provider's country. Each part keeps the words it came from; what the answer does not say and
// the total assumes is said. A total that cannot be known (a "from" price, a rate without hours,
// a fee said to be extra without a price) is null, with the reason.
import type { ProviderQuote, QuoteLine, QuoteReading } from '../../generated/directory/client/types.gen.ts';
import { addVat, cents, decimal, percentText, times } from './money.ts';
import { standardVat } from './vat.ts';

const countryName = (country: string) =>
  new Intl.DisplayNames(['en'], { type: 'region' }).of(country) ?? country;
const hoursText = (low: number, high: number) => (low === high ? `${low}` : `${low}-${high}`);

/** The comparable total of a reading with a price, or null when the answer names none. */
export function quoteTotal(reading: QuoteReading, country: string | null): ProviderQuote | null {
  if (reading.amount === null || reading.currency === null || reading.price_type === null) return null;
  const currency = reading.currency;
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
  let priceLabel = `${reading.amount} ${currency}`;
  switch (reading.price_type) {
    case 'range':
      high = reading.amount_high === null ? null : cents(reading.amount_high);
      priceLabel = `${reading.amount}-${reading.amount_high} ${currency}`;
      assumptions.push('A range: ranked on its upper end');
      break;
    case 'hourly':
      if (reading.hours === null)
        unknown(`A rate of ${reading.amount} ${currency} per hour, without the hours of work`);
      else {
        low = times(price, reading.hours.low);
        if (reading.hours.high !== reading.hours.low) high = times(price, reading.hours.high);
        priceLabel = `${reading.amount} ${currency} per hour × ${hoursText(reading.hours.low, reading.hours.high)} hours`;
        assumptions.push(`The hours the reply states: "${reading.hours.quote}"`);
      }
      break;
    case 'from':
      unknown(`Only a starting price: from ${reading.amount} ${currency}`);
      break;
    case 'per_unit':
      unknown(`A price of ${reading.amount} ${currency} per ${reading.unit ?? 'unit'}, without the quantity`);
      break;
    case 'fixed':
      break;
  }
  lines.push({ kind: 'price', label: priceLabel, amount: decimal(low), quote: reading.amount_quote });
  if (reading.estimate) assumptions.push('The reply calls the price an estimate');

  // fees: priced ones add to both ends; one said to be extra without a price leaves the total unknown
  let netLow = basis === 'net' ? low : 0n;
  let netHigh = basis === 'net' ? (high ?? low) : 0n;
  let grossLow = basis === 'net' ? 0n : low;
  let grossHigh = basis === 'net' ? 0n : (high ?? low);
  for (const fee of reading.fees) {
    if (fee.amount === null) {
      unknown(`${fee.label} extra, without a price`);
      continue;
    }
    if (fee.currency !== currency) {
      unknown(`${fee.label} in ${fee.currency ?? 'another currency'}`);
      continue;
    }
    const amount = cents(fee.amount);
    const feeBasis = fee.vat ?? (basis === 'net' ? 'net' : 'gross');
    if (fee.vat === null && basis === 'net')
      assumptions.push(`The ${fee.label} taken as before VAT, like the price`);
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
    if (rate === null)
      unknown(`Prices before VAT, and no VAT rate is known for ${country ?? 'the provider'}`);
    else {
      vatLow = addVat(netLow, rate) - netLow;
      vatHigh = addVat(netHigh, rate) - netHigh;
      const said = reading.vat.rate !== null;
      const where = country ? ` (the standard rate in ${countryName(country)})` : '';
      assumptions.push(
        said
          ? `VAT ${percentText(rate)} % added, at the rate the reply states`
          : `VAT ${percentText(rate)} % added${where}: the reply says "${reading.vat.quote ?? 'before VAT'}" without a rate`,
      );
      lines.push({
        kind: 'vat',
        label: `VAT ${percentText(rate)} %`,
        amount: decimal(vatLow),
        quote: said ? reading.vat.rate_quote : null,
      });
    }
  }
  if (basis === 'unknown')
    assumptions.push(
      'The reply does not say whether VAT is included: taken as included, as prices to consumers in the EU must be',
    );
  if (basis === 'exempt') assumptions.push(`No VAT: "${reading.vat.quote ?? 'exempt'}"`);

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
  };
}

/** What a quote ranks on: the upper end of its total (the most it may cost), in cents. */
export const rankingTotal = (q: ProviderQuote): bigint | null =>
  q.total === null ? null : cents(q.total_high ?? q.total);
