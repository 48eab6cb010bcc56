// Amounts as providers write them (`1.234,56`, `1 234,56`, `1,234.56`, `1'250.00`, `289,-`), the
// currencies of the EU and its neighbours by symbol, code or word, and the arithmetic of totals in
// integer cents (VAT added as a rate in hundredths of a percent, rounded half up), so that
// 245.00 + 35.00 at 19 % is 333.20 and never 333.19999.

/** Currencies by what a reply writes: symbol, code, word. */
const CURRENCIES: [RegExp, string][] = [
  [/^(?:€|eur|euro|euros|eur\.)$/i, 'EUR'],
  [/^(?:zł|zl|pln|złotych|zlotych|złote|zł\.)$/i, 'PLN'],
  [/^(?:kč|kc|czk)$/i, 'CZK'],
  [/^(?:ft|huf)$/i, 'HUF'],
  [/^(?:lei|ron)$/i, 'RON'],
  [/^(?:sek)$/i, 'SEK'],
  [/^(?:dkk)$/i, 'DKK'],
  [/^(?:лв|bgn)$/i, 'BGN'],
  [/^(?:chf|fr\.)$/i, 'CHF'],
  [/^(?:£|gbp)$/i, 'GBP'],
  [/^(?:\$|usd|us\$)$/i, 'USD'],
];

/** What names a currency, for the patterns below ("kr" is the one of the country that writes it). */
// a currency word stands on its own: "environ 30" is not "ron 30"
export const CURRENCY = String.raw`€|£|US\$|\$|лв|(?<![\p{L}])(?:EUR\b|Euros?(?![\p{L}])|euros?(?![\p{L}])|zł|zl(?![\p{L}])|PLN|złotych|Kč|CZK|Ft(?![\p{L}])|HUF|lei(?![\p{L}])|RON(?![\p{L}])|SEK|DKK|kr\.?(?![\p{L}])|BGN|CHF|GBP|USD)`;

/**
 * The locales whose numbers providers write: the EU's official languages (with Austria's,
 * Belgium's and Luxembourg's variants), and Switzerland's and Liechtenstein's.
 */
const NUMBER_LOCALES = [
  'bg', 'cs', 'da', 'de', 'de-AT', 'de-LU', 'el', 'en-IE', 'es', 'et', 'fi', 'fr', 'fr-BE', 'fr-LU',
  'ga', 'hr', 'hu', 'it', 'lb', 'lt', 'lv', 'mt', 'nl', 'nl-BE', 'pl', 'pt', 'ro', 'sk', 'sl', 'sv',
  'de-CH', 'fr-CH', 'it-CH', 'de-LI',
]; // prettier-ignore

/**
 * Every sign that groups thousands in those locales, from CLDR's data as the runtime's Intl holds
 * it (`.`, `,`, the no-break space U+00A0 of German in Austria, Polish, Swedish..., the narrow
 * no-break space U+202F of French, the apostrophe of Switzerland), and what people type in their
 * place: a space, a thin space, a right single quote. "2 150,00 € TTC" written by a French mail
 * client (U+202F) was read as 150.00.
 */
export const GROUP_SIGNS: readonly string[] = [
  ...new Set([
    ...NUMBER_LOCALES.flatMap((locale) =>
      new Intl.NumberFormat(locale, { useGrouping: 'always' })
        .formatToParts(1234567)
        .filter((part) => part.type === 'group')
        .map((part) => part.value),
    ),
    ' ',
    '\u2009',
    '’',
    "'",
  ]),
];
const GROUP = GROUP_SIGNS.map((sign) => (sign === '.' ? '\\.' : sign)).join('');
/** The group signs that are spaces (a space stands for them when a number is parsed). */
const SPACE_GROUPS = new RegExp(`[${GROUP_SIGNS.filter((sign) => /\s/.test(sign)).join('')}]`, 'g');
const APOSTROPHE_GROUPS = /['’]/g;

/** A number as written, thousands grouped by any of GROUP_SIGNS, two decimals at most. */
export const NUMBER = String.raw`(?<!\d)\d{1,3}(?:[${GROUP}]\d{3})+(?:[.,]\d{1,2})?(?!\d)|(?<!\d)\d+(?:[.,]\d{1,2})?(?!\d)`;

/** `,-` or `,--` after a whole amount (German and Austrian prices: `289,-`). */
const DASHES = String.raw`(?:[.,][-–]{1,2})?`;

/** An amount with its currency before or after it. Groups: 1 currency, 2 number | 3 number, 4 currency. */
export const MONEY = new RegExp(
  String.raw`(?:(${CURRENCY})\s?(${NUMBER})${DASHES})|(?:(${NUMBER})${DASHES}\s?(${CURRENCY}))`,
  'giu',
);

/** The currency a written symbol, code or word names; `kr` by the country (SEK, DKK). */
export function currencyOf(written: string, country?: string | null): string {
  const w = written.trim();
  if (/^kr\.?$/i.test(w)) return country === 'DK' ? 'DKK' : 'SEK';
  for (const [pattern, code] of CURRENCIES) if (pattern.test(w)) return code;
  return 'EUR';
}

/** The currency a country's prices are in. */
export function countryCurrency(country: string | null | undefined): string {
  const own: Record<string, string> = {
    PL: 'PLN',
    CZ: 'CZK',
    HU: 'HUF',
    RO: 'RON',
    SE: 'SEK',
    DK: 'DKK',
    BG: 'BGN',
  };
  return (country && own[country]) ?? 'EUR';
}

/** A number as written (`6.480,00`, `6,480.00`, `7 020`, `7020`, `7.020`) as a decimal string, or null. */
export function parseAmount(written: string): string | null {
  const text = written
    .replace(/[.,][-–]{1,2}$/, '')
    .replace(APOSTROPHE_GROUPS, '')
    .replace(SPACE_GROUPS, ' ')
    .trim();
  let whole: string;
  let fraction = '';
  const lastDot = text.lastIndexOf('.');
  const lastComma = text.lastIndexOf(',');
  const decimalAt = Math.max(lastDot, lastComma);
  if (lastDot >= 0 && lastComma >= 0) {
    whole = text.slice(0, decimalAt);
    fraction = text.slice(decimalAt + 1);
  } else if (decimalAt >= 0 && text.length - decimalAt - 1 !== 3) {
    // one kind of mark, not followed by a group of three: a decimal mark
    whole = text.slice(0, decimalAt);
    fraction = text.slice(decimalAt + 1);
  } else {
    whole = text;
  }
  // thousands are grouped by three: `12.34.5` is no amount
  if (/[.,\s]/.test(whole) && !/^\d{1,3}(?:[.,\s]\d{3})+$/.test(whole)) return null;
  whole = whole.replace(/[.,\s]/g, '');
  if (!/^\d+$/.test(whole) || !/^\d{0,2}$/.test(fraction)) return null;
  const value = whole.replace(/^0+(?=\d)/, '');
  return `${value}.${fraction.padEnd(2, '0')}`;
}

/** A plain number as written (`3`, `2,5`, `1.5`) as a JS number, or null. */
export function parseCount(written: string): number | null {
  const n = Number(written.replace(',', '.'));
  return Number.isFinite(n) ? n : null;
}

/** Cents of a decimal string (`245.00` → 24500n). */
export function cents(amount: string): bigint {
  const [whole = '0', fraction = ''] = amount.split('.');
  return BigInt(whole) * 100n + BigInt((fraction + '00').slice(0, 2));
}

/** A decimal string of cents (24500n → `245.00`). */
export function decimal(value: bigint): string {
  const negative = value < 0n;
  const abs = negative ? -value : value;
  return `${negative ? '-' : ''}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
}

/** A rate in percent (`19`, `5.5`) as hundredths of a percent (1900n, 550n). */
export function basisPoints(rate: string): bigint {
  const [whole = '0', fraction = ''] = rate.split('.');
  return BigInt(whole) * 100n + BigInt((fraction + '00').slice(0, 2));
}

/** `amount` × (1 + rate), rounded half up to the cent. */
export function addVat(net: bigint, rate: string): bigint {
  const bp = basisPoints(rate);
  return (net * (10_000n + bp) + 5_000n) / 10_000n;
}

/** `amount` × `factor` (hours, possibly `2.5`), rounded half up to the cent. */
export function times(amount: bigint, factor: number): bigint {
  const hundredths = BigInt(Math.round(factor * 100));
  return (amount * hundredths + 50n) / 100n;
}
