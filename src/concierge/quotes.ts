// Reading a provider's answer in code, into one shape whatever its language: the price and how it
// is given (fixed, per hour with the hours, a range, a "from" price, per unit), its currency,
// whether VAT is in it or on top (and at what rate), fees besides it (call-out, travel,
// disposal, materials, surcharges: priced, or said to be extra without a price), what it includes
// and leaves out, when the provider can start, how long the offer holds, and whether they decline
// or want to see the job first. Every number comes with the words of the answer it was read from.
// Only the provider's own words are read: the quoted request below "On ... wrote:" or "> " lines
// is cut first. The agent's `read_reply` tool answers with this reading; quote-parts.ts finds the
// amounts, hours and lists it is made of.
import type { QuoteFee, QuoteReading } from '../../generated/directory/client/types.gen.ts';
import { datesIn, addDays, addMonths, type Day, dayOf, fold } from './dates.ts';
import {
  AVAILABLE,
  DECLINE,
  EXEMPT,
  feeKindOf,
  GROSS,
  isVat,
  NET,
  PRICE,
  SITE_VISIT,
  VALIDITY,
  VALIDITY_AFTER,
  VAT_RATE,
} from './reply-words.ts';
import {
  type Amount,
  amountsIn,
  classify,
  clip,
  hoursIn,
  lastMatch,
  listsIn,
  quantitiesIn,
  type ListItem,
  sentences,
  test,
} from './quote-parts.ts';

export { parseAmount } from './money.ts';

/** The provider's own words: the quoted request and signatures' separators cut off. */
export function ownWords(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  for (const line of lines) {
    if (/^\s*>/.test(line)) break;
    if (
      /^\s*(?:on .{0,120} wrote:|am .{0,120} schrieb .{0,120}:|le .{0,120} a écrit ?:|el .{0,120} escribió:|il .{0,120} ha scritto:|op .{0,120} schreef .{0,120}:|w dniu .{0,120} pisze:|em .{0,120} escreveu:|-{2,}\s*(?:original|ursprüngliche|message d'origine|mensaje original|messaggio originale|oorspronkelijk|wiadomość oryginalna|mensagem original)|_{5,}|from: .{0,200}$|von: .{0,200}$|de : .{0,200}$)/i.test(
        line,
      )
    )
      break;
    out.push(line);
  }
  return out.join('\n').trim();
}

const unitName = (unit: string | null) => (unit ? unit.replace(/\s+/g, ' ') : null);

/** Reads a provider's answer. `received` is when it arrived (a date without a year is the next one); `country` the provider's. */
export function readQuote(raw: string, received: Date, country: string | null = null): QuoteReading {
  const text = ownWords(raw).slice(0, 20_000);
  const folded = fold(text);
  const today: Day = dayOf(received);
  const parts = sentences(text);
  const sentenceAt = (at: number) => parts.find((s) => at >= s.at && at < s.end);
  const amounts = amountsIn(text, folded, country);
  classify(amounts, folded, parts);
  const hours = hoursIn(folded, amounts);
  const lists = listsIn(text, folded);
  // a quote starts on a word, not inside one
  const wordStart = (at: number) => {
    let i = at;
    while (
      i > 0 &&
      i < text.length &&
      /[\p{L}\p{N}]/u.test(text[i - 1]!) &&
      /[\p{L}\p{N}]/u.test(text[i]!) &&
      i - at < 30
    )
      i++;
    return i - at >= 30 ? at : i;
  };
  const quoteOf = (from: number, to: number) => clip(text.slice(wordStart(from), to).trim(), 200);
  const clauseEnd = (at: number) => {
    const s = sentenceAt(at);
    const limit = s?.end ?? text.length;
    const next = amounts.find((a) => a.at >= at);
    const stop =
      /[;!?\n]|,\s|(?<!(?<![\p{L}])(?:inkl|incl|zzgl|excl|exkl|ca|mwst|ust|gesetzl|approx|max|min|std|\d{1,2}))\.(?:\s|$)/iu.exec(
        text.slice(at, limit),
      );
    return Math.min(limit, next ? next.at : limit, stop ? at + stop.index : limit);
  };
  // where the clause a date stands in starts: its sentence, or the comma or semicolon before it
  const clauseStart = (at: number) => {
    const from = Math.max(sentenceAt(at)?.at ?? 0, at - 40);
    const before = text.slice(from, at);
    const cut = Math.max(before.lastIndexOf(', '), before.lastIndexOf('; '));
    return cut >= 0 ? from + cut + 2 : from;
  };
  // a sentence's folded words, from the folded text (one character for one): a sentence of many
  // amounts was folded again for each of them, the square of its length
  const foldedOf = (s: { at: number; end: number } | undefined) => (s ? folded.slice(s.at, s.end) : '');
  const pricedSentences = new Map<number, boolean>();
  const offered = (a: Amount) => {
    const s = sentenceAt(a.at);
    let priced = pricedSentences.get(s?.at ?? -1);
    if (priced === undefined) pricedSentences.set(s?.at ?? -1, (priced = test(PRICE, foldedOf(s))));
    return priced;
  };

  // the price: a total, else a range or price called a price, else labour, an hourly rate, a unit price
  const usable = amounts.filter((a) => a.role !== 'ignored' && a.role !== 'vat_amount');
  const totals = usable.filter((a) => a.role === 'total');
  const prices = usable.filter((a) => a.role === 'price');
  const hourly = usable.find((a) => a.role === 'hourly');
  const labour = usable.find((a) => a.role === 'labour');
  const grossLabelled = prices.find((a) => a.basis === 'gross');
  let main: Amount | undefined =
    totals.find((a) => a.basis === 'gross') ??
    totals.at(-1) ??
    (prices.some((a) => a.basis === 'gross') && prices.some((a) => a.basis === 'net')
      ? grossLabelled
      : undefined) ??
    prices.find(offered) ??
    prices[0] ??
    labour ??
    hourly ??
    usable.find((a) => a.role === 'unit');
  // an hourly rate with the hours is an hourly price, whatever estimate the answer adds
  if (hourly && hours.length > 0 && main && main !== hourly && !main.high && main.role !== 'total') {
    const estimate = Number(hourly.value) * (hours[0]?.low ?? 0);
    if (
      Math.abs(Number(main.value) - estimate) / Math.max(estimate, 1) < 0.35 ||
      sentenceAt(main.at) === sentenceAt(hourly.at)
    )
      main = hourly;
  }
  if (hourly && main && main !== hourly && !prices.length && !totals.length && !labour) main = hourly;

  const decline = test(DECLINE, folded);
  const declined = decline && main === undefined;
  const mainSentence = main ? sentenceAt(main.at) : undefined;

  // VAT: said at the price, else anywhere in the answer
  const exempt = lastMatch(EXEMPT, folded);
  const grossAny = [...folded.matchAll(new RegExp(GROSS.source, 'gu'))];
  const netAny = [...folded.matchAll(new RegExp(NET.source, 'gu'))];
  const vatIn = (items: ListItem[]) => items.find((x) => isVat(fold(x.item)));
  let basis: QuoteReading['vat']['basis'] = 'unknown';
  let vatQuote: string | null = null;
  const near = (ms: RegExpMatchArray[]) =>
    ms.find(
      (m) => main && mainSentence && (m.index ?? 0) >= mainSentence.at && (m.index ?? 0) < mainSentence.end,
    ) ?? ms[0];
  if (exempt) {
    basis = 'exempt';
    vatQuote = quoteOf(exempt.index ?? 0, (exempt.index ?? 0) + exempt[0].length);
  } else if (main?.basis) {
    basis = main.basis;
    const m = near(main.basis === 'gross' ? grossAny : netAny);
    vatQuote = m
      ? quoteOf(main.at, Math.max(main.end, (m.index ?? 0) + m[0].length))
      : quoteOf(main.at, clauseEnd(main.end));
  } else {
    const g = near(grossAny);
    const n = near(netAny);
    const inc = vatIn(lists.includes);
    const exc = vatIn(lists.charged) ?? vatIn(lists.excludes);
    const candidates: [QuoteReading['vat']['basis'], number, string][] = [];
    if (g?.index !== undefined)
      candidates.push(['gross', g.index, text.slice(g.index, g.index + g[0].length)]);
    if (n?.index !== undefined) candidates.push(['net', n.index, text.slice(n.index, n.index + n[0].length)]);
    if (inc) candidates.push(['gross', inc.at, text.slice(inc.at, inc.end)]);
    if (exc) candidates.push(['net', exc.at, text.slice(exc.at, exc.at + 40).split(/[.;\n]/)[0] ?? exc.item]);
    // the one nearest the price, else the first
    const ref = main?.at ?? 0;
    candidates.sort((x, y) => Math.abs(x[1] - ref) - Math.abs(y[1] - ref));
    const pick = candidates[0];
    if (pick) {
      basis = pick[0];
      vatQuote = clip(pick[2].trim(), 200);
    }
    // a total stated after a VAT amount is the gross total
    if (
      basis === 'unknown' &&
      main?.role === 'total' &&
      amounts.some((a) => a.role === 'vat_amount' && a.at < main.at)
    ) {
      basis = 'gross';
      vatQuote = quoteOf(main.labelAt, clauseEnd(main.end));
    }
  }
  const rateMatch = [...folded.matchAll(new RegExp(VAT_RATE.source, 'gu'))][0];
  let rate = rateMatch ? (rateMatch[1] ?? rateMatch[2] ?? '').replace(',', '.') : null;
  if (rate !== null && (Number(rate) <= 0 || Number(rate) > 30)) rate = null;
  const rateQuote =
    rateMatch?.index !== undefined ? quoteOf(rateMatch.index, rateMatch.index + rateMatch[0].length) : null;
  if (basis === 'exempt') rate = '0';

  // fees besides the price
  const fees: QuoteFee[] = [];
  const labelOf = (a: Amount) => {
    const words = text
      .slice(a.labelAt, a.at)
      .trim()
      .replace(/(?<![:\s])[:\s]+$/, '');
    const label = words !== '' && a.labelAt < a.at ? words : text.slice(a.end, clauseEnd(a.end)).trim();
    return (
      clip(
        label
          .replace(/^(?:a|an|the|and|und|et|y|e|plus|\+|zzgl\.?|der|die|das|le|la|les|el|il|de)\s+/i, '')
          .replace(/(?<!\s)\s+(?:of|von|de|di|van|by)$/i, ''),
        60,
      ) || 'fee'
    );
  };
  for (const a of usable) {
    if (a === main) continue;
    const isFee =
      a.role === 'fee' ||
      (a.role === 'price' && main?.role === 'labour') ||
      (main?.role === 'hourly' && a.role === 'price' && a.fee !== null);
    if (!isFee || a.included) continue;
    // the parts of a stated total are in it, unless said to come on top
    if (main?.role === 'total' && a.at < main.at && !a.charged) continue;
    fees.push({
      kind: a.fee ?? 'materials',
      label: labelOf(a),
      amount: a.value,
      currency: a.currency,
      vat: a.basis ?? null,
      quote: quoteOf(Math.min(a.labelAt, a.at), Math.max(a.end, clauseEnd(a.end))),
    });
  }
  // extras said to cost more without a price ("materials extra", "zzgl. Anfahrt")
  const priced = new Set(fees.map((f) => f.kind));
  const included = lists.includes.map((x) => fold(x.item));
  for (const { item, at } of lists.charged) {
    const kind = feeKindOf(fold(item));
    if (kind === null || isVat(fold(item)) || priced.has(kind)) continue;
    if (included.some((i) => feeKindOf(i) === kind)) continue;
    priced.add(kind);
    fees.push({
      kind,
      label: clip(item, 60),
      amount: null,
      currency: null,
      vat: null,
      quote: quoteOf(at, Math.min(text.length, at + item.length + 30)).split(/[.;\n]/)[0] ?? item,
    });
  }

  // the hours of an hourly price: in its sentence, else the first stated
  const work =
    main?.role === 'hourly' ? (hours.find((h) => sentenceAt(h.at) === mainSentence) ?? hours[0]) : undefined;

  // the quantity of a price per unit, in the unit's kind: in its sentence, else the first stated
  const quantities = main?.role === 'unit' && main.unit ? quantitiesIn(folded, amounts, main.unit) : [];
  const quantity = quantities.find((q) => sentenceAt(q.at) === mainSentence) ?? quantities[0];

  // dates: how long the offer holds, when they can start
  let validUntil: Day | null = null;
  let validityQuote: string | null = null;
  const validityAt: number[] = [];
  const dates = datesIn(text, today);
  for (const m of folded.matchAll(new RegExp(VALIDITY.source, 'gu'))) {
    const n = m[1] === undefined ? null : Number(m[1]);
    const unit = m[2] ?? '';
    if (n !== null) {
      validUntil = /^(?:week|woche|semaine|semana|settiman|week|weken|tydz|tygod)/.test(unit)
        ? addDays(today, n * 7)
        : /^(?:month|monat|mois|mes|mese|mesi|maand|miesi)/.test(unit)
          ? addMonths(today, n)
          : addDays(today, n);
    } else {
      const d = dates.find((x) => x.at >= m.index + m[0].length && x.at - (m.index + m[0].length) <= 12);
      if (!d) continue;
      validUntil = d.date;
      validityAt.push(d.at);
    }
    validityQuote = quoteOf(m.index, clauseEnd(m.index + m[0].length));
    break;
  }
  if (validUntil === null) {
    const m = VALIDITY_AFTER.exec(folded);
    if (m) {
      const n = Number(m[1]);
      const unit = m[2] ?? '';
      validUntil = /^(?:week|woche|semaine|semana|settiman|weken|tydz|tygod)/.test(unit)
        ? addDays(today, n * 7)
        : /^(?:month|monat|mois|mes|maand|miesi)/.test(unit)
          ? addMonths(today, n)
          : addDays(today, n);
      validityQuote = quoteOf(m.index, m.index + m[0].length);
    }
  }
  const candidates = dates.filter((d) => d.date >= today && !validityAt.includes(d.at));
  const available =
    candidates.find((d) =>
      test(AVAILABLE, folded.slice(Math.max(sentenceAt(d.at)?.at ?? 0, d.at - 40), d.at)),
    ) ??
    candidates.find((d) => test(AVAILABLE, foldedOf(sentenceAt(d.at)))) ??
    candidates[0];

  const noPrice = main === undefined;
  const visit = noPrice && !declined ? lastMatch(SITE_VISIT, folded) : null;
  const excerpt = main
    ? (mainSentence?.text ?? '')
    : (parts.find((s) => test(DECLINE, fold(s.text)))?.text ?? parts[0]?.text ?? '');
  const conditions: string[] = [];
  const addCondition = (c: string | null | undefined) => {
    const t = c?.trim().replace(/\s+/g, ' ');
    if (t && !conditions.some((x) => x.includes(t) || t.includes(x))) conditions.push(clip(t, 100));
  };
  if (vatQuote && basis !== 'unknown')
    addCondition(
      basis === 'exempt'
        ? vatQuote
        : (grossAny.concat(netAny).map((m) => text.slice(m.index ?? 0, (m.index ?? 0) + m[0].length))[0] ??
            null),
    );
  for (const f of fees) addCondition(f.amount === null ? `${f.label} extra` : null);
  for (const x of lists.excludes) addCondition(isVat(fold(x.item)) ? null : `excl. ${x.item}`);
  const warranty =
    /[^.,;:!?\n]{0,30}(?:garantie|warranty|guarantee|garantia|garanzia|gwarancj)[^.,;:!?\n]{0,30}/iu.exec(
      text,
    );
  addCondition(warranty?.[0]);

  return {
    declined,
    price_type:
      main === undefined
        ? null
        : main.high
          ? 'range'
          : main.role === 'hourly'
            ? 'hourly'
            : main.role === 'unit'
              ? 'per_unit'
              : main.from
                ? 'from'
                : 'fixed',
    amount: main?.value ?? null,
    amount_high: main?.high ?? null,
    currency: main?.currency ?? null,
    amount_quote: main
      ? quoteOf(Math.min(main.labelAt, main.at), Math.max(main.end, clauseEnd(main.end)))
      : null,
    estimate: main ? main.about : false,
    unit: main?.role === 'unit' ? unitName(main.unit) : null,
    hours: work
      ? {
          low: work.low,
          high: work.high,
          quote: quoteOf(Math.max(sentenceAt(work.at)?.at ?? 0, work.at - 25), work.end),
        }
      : null,
    quantity: quantity
      ? {
          value: quantity.value,
          high: quantity.high,
          unit: unitName(quantity.unit) ?? quantity.unit,
          quote: quoteOf(Math.max(clauseStart(quantity.at), quantity.at - 25), quantity.end),
        }
      : null,
    vat: { basis, rate, quote: vatQuote, rate_quote: rate === null || basis === 'exempt' ? null : rateQuote },
    fees: fees.slice(0, 10),
    includes: lists.includes.map((x) => clip(x.item, 60)).slice(0, 10),
    excludes: lists.excludes.map((x) => clip(x.item, 60)).slice(0, 10),
    available_from: available?.date ?? null,
    availability_quote: available ? quoteOf(clauseStart(available.at), available.end) : null,
    valid_until: validUntil,
    validity_quote: validityQuote,
    no_price_reason: noPrice && !declined ? (visit ? 'site_visit' : 'not_stated') : null,
    conditions: conditions.slice(0, 10),
    excerpt: clip(excerpt, 300),
    read_by: 'rules',
    dropped: [],
  };
}
