// Reading a provider's answer in code: the quoted price and currency (European and English number
// formats, the symbol or code before or after), the first day they can start, their conditions
// (VAT, disposal, warranty) and whether they decline. Only the provider's own words are read: the
// quoted request below "On ... wrote:" or "> " lines is cut first. The agent's `read_reply` tool
// answers with this reading.
import type { QuoteReading } from '../../generated/directory/client/types.gen.ts';
import { datesIn } from './understand.ts';

const CURRENCIES: [RegExp, string][] = [
  [/^(?:€|eur|euro|euros)$/i, 'EUR'],
  [/^(?:zł|zl|pln|złotych|zlotych)$/i, 'PLN'],
  [/^(?:kč|kc|czk)$/i, 'CZK'],
  [/^(?:ft|huf)$/i, 'HUF'],
  [/^(?:lei|ron)$/i, 'RON'],
  [/^(?:kr|sek|dkk)$/i, 'SEK'],
  [/^(?:лв|bgn)$/i, 'BGN'],
];
const CURRENCY = String.raw`€|EUR|Euros?|zł|zl|PLN|złotych|Kč|CZK|Ft|HUF|lei|RON|SEK|DKK|BGN`;
const NUMBER = String.raw`\d{1,3}(?:[.,  ’']\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?`;
const MONEY = new RegExp(
  String.raw`(?:(${CURRENCY})\s?(${NUMBER})(?:,-|,–)?)|(?:(${NUMBER})(?:,-|,–)?\s?(${CURRENCY})(?![\p{L}]))`,
  'giu',
);

// Words near a price that say it is the price asked for ("Festpreis", "total", "devis").
const PRICE_WORDS =
  /preis|angebot|kosten|gesamt|summe|betrag|price|quote|total|cost|fee|prix|devis|montant|coût|tarif|precio|presupuesto|importe|prezzo|preventivo|costo|totale|prijs|offerte|kosten|totaal|cena|wycena|koszt|kwota|razem/i;
const DECLINE_WORDS =
  /leider (?:nicht|keine)|keine kapazität|nicht möglich|absagen|unfortunately|cannot|can't|can not|not able|unable|no capacity|fully booked|malheureusement|pas disponible|ne pouvons pas|lamentablemente|no podemos|purtroppo|non possiamo|helaas|kunnen niet|niet mogelijk|niestety|nie możemy|nie jesteśmy w stanie/i;
const AVAILABILITY_WORDS =
  /ab |ab dem|frühestens|verfügbar|termin|from|available|start|earliest|à partir|disponible|dès|a partir|desde|dal |disponibil|vanaf|beschikbaar|od |dostępn|termin/i;
const CONDITIONS: RegExp[] = [
  /(?:inkl\.?|inklusive|zzgl\.?|zuzüglich|exkl\.?|incl\.?|including|excl\.?|excluding|plus|y compris|hors|iva incluid[oa]|iva inclus[oa]|incl\.?|excl\.?)\s?(?:\d{1,2}\s?%\s?)?(?:mwst\.?|ust\.?|vat|tva|iva|btw|vat)\b\.?/giu,
  /\b(?:iva|tva|vat|mwst|ust|btw|vat)\.?\s(?:inclus[oae]?|incluid[oa]|inbegriffen|included|inbegrepen|compris[e]?)\b/giu,
  /\b(?:ttc|ht|brutto|netto)\b/giu,
  /[^.,;:!?\n]{0,40}(?:entsorgung|removal|disposal|enlèvement|évacuation|retirada|smaltimento|afvoer|utylizacj|demontaż)[^.,;:!?\n]{0,40}/giu,
  /[^.,;:!?\n]{0,30}(?:garantie|warranty|guarantee|garantía|garanzia|gwarancj)[^.,;:!?\n]{0,30}/giu,
];

/** A number as written (`6.480,00`, `6,480.00`, `7 020`, `7020`, `7.020`) as a decimal string, or null. */
export function parseAmount(written: string): string | null {
  const text = written.replace(/[  ’']/g, (c) => (c === "'" || c === '’' ? '' : ' ')).trim();
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

function currencyOf(written: string): string {
  for (const [pattern, code] of CURRENCIES) if (pattern.test(written.trim())) return code;
  return 'EUR';
}

/** The provider's own words: the quoted request and signatures' separators cut off. */
export function ownWords(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  for (const line of lines) {
    if (/^\s*>/.test(line)) break;
    if (
      /^\s*(?:on .{0,120} wrote:|am .{0,120} schrieb .{0,120}:|le .{0,120} a écrit ?:|el .{0,120} escribió:|il .{0,120} ha scritto:|op .{0,120} schreef .{0,120}:|w dniu .{0,120} pisze:|-{2,}\s*(?:original|ursprüngliche|message d'origine|mensaje original|messaggio originale|oorspronkelijk|wiadomość oryginalna))/i.test(
        line,
      )
    )
      break;
    out.push(line);
  }
  return out.join('\n').trim();
}

function sentences(text: string): { text: string; at: number }[] {
  const out: { text: string; at: number }[] = [];
  // a full stop inside a number ("6.480,00", "2.12.2026") or an abbreviation ("inkl.") does not end a sentence
  const re =
    /[^.!?\n]+(?:(?:\.(?=\d)|\.(?=\s?[\p{Ll}\d%])|(?<=\b(?:[Ii]nkl|[Zz]zgl|[Ii]ncl|[Ee]xcl|[Ee]xkl|ca|bzw|Nr|Str|Tel))\.|[.!?](?=\S))[^.!?\n]*)*[.!?]?/gu;
  for (const m of text.matchAll(re)) if (m[0].trim() !== '') out.push({ text: m[0].trim(), at: m.index });
  return out;
}

const clip = (text: string, max: number) =>
  text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;

/** What a provider's answer says: its price, when they can start, the conditions, whether they decline. */
export function readQuote(raw: string, today: Date): QuoteReading {
  const text = ownWords(raw).slice(0, 20_000);
  const found: { amount: string; currency: string; at: number; priced: boolean }[] = [];
  const parts = sentences(text);
  for (const m of text.matchAll(MONEY)) {
    const amount = parseAmount(m[2] ?? m[3] ?? '');
    if (amount === null || Number(amount) <= 0) continue;
    const sentence = parts.find((s) => m.index >= s.at && m.index < s.at + s.text.length);
    found.push({
      amount,
      currency: currencyOf(m[1] ?? m[4] ?? ''),
      at: m.index,
      priced: PRICE_WORDS.test(sentence?.text ?? ''),
    });
  }
  // the price: the first amount in a sentence that says it is a price, else the largest amount
  const price =
    found.find((f) => f.priced) ?? [...found].sort((a, b) => Number(b.amount) - Number(a.amount))[0];
  const sentenceAt = (at: number) => parts.find((s) => at >= s.at && at < s.at + s.text.length)?.text;
  const dates = datesIn(text, today).filter((d) => d.date >= today.toISOString().slice(0, 10));
  const available =
    dates.find((d) => AVAILABILITY_WORDS.test(sentenceAt(d.at) ?? '')) ?? dates[0] ?? undefined;
  const conditions: string[] = [];
  for (const pattern of CONDITIONS) {
    for (const m of text.matchAll(pattern)) {
      const condition = m[0].trim().replace(/\s+/g, ' ');
      if (condition !== '' && !conditions.some((c) => c.includes(condition) || condition.includes(c)))
        conditions.push(clip(condition, 100));
    }
  }
  const declined = price === undefined && DECLINE_WORDS.test(text);
  const excerpt = price ? sentenceAt(price.at) : (parts[0]?.text ?? '');
  return {
    declined,
    amount: price?.amount ?? null,
    currency: price?.currency ?? null,
    available_from: available?.date ?? null,
    conditions: conditions.slice(0, 10),
    excerpt: clip(excerpt ?? '', 300),
  };
}
