// The parts of a provider's answer that quotes.ts reads it from: its sentences, its amounts
// (with ranges joined) classified by the words around them (a price, a total, an hourly or unit
// rate, labour, a fee, a VAT amount, or no offer at all), the hours of work it states, and its
// lists of what is included, charged on top and left out. Positions are those of the text.
import { countryCurrency, CURRENCY, currencyOf, MONEY, NUMBER, parseAmount, parseCount } from './money.ts';
import {
  ABOUT_BEFORE,
  CHARGED,
  CHARGED_AFTER,
  EXCLUDED_AFTER,
  EXCLUDES,
  FEES,
  type FeeKind,
  feeKindOf,
  FROM_BEFORE,
  GROSS,
  HOURLY_LABEL,
  HOURS,
  INCLUDED_AFTER,
  INCLUDES,
  LABOUR,
  LIST_JOIN,
  MAX_BEFORE,
  NET,
  NOT_OFFER,
  NOT_WORK_HOURS,
  PER_HOUR_AFTER,
  PER_UNIT_AFTER,
  PRICE,
  QUANTITY,
  RANGE_JOIN,
  RANGE_OPEN,
  TOTAL,
  UNIT_KINDS,
  VAT_WORD,
} from './reply-words.ts';

export interface Span {
  text: string;
  at: number;
  end: number;
}

export function sentences(text: string): Span[] {
  const out: Span[] = [];
  // a full stop inside a number ("6.480,00", "2.12.2026") or an abbreviation ("inkl.") does not end a sentence
  const pattern =
    /[^.!?\n]+(?:(?:\.(?=\d)|\.(?=\s?[\p{Ll}\d%€(])|(?<=(?<![\d.])\d{1,2})\.(?=\s\p{Lu}\p{Ll}+)|(?<=\b(?:[Ii]nkl|[Zz]zgl|[Ii]ncl|[Ee]xcl|[Ee]xkl|ca|bzw|Nr|Str|Tel|[Mm]wSt|[Uu]St|approx|[Ee]x|z\.B|u\.a|[Gg]esetzl|[Ss]td|[Mm]ax|[Mm]in|[Pp]os|[Ii]nc|[Ee]tc|[Vv]gl|[Ee]inschl|[Zz]uzügl))\.|[.!?](?=\S))[^.!?\n]*)*[.!?]?/gu;
  for (const m of text.matchAll(pattern)) {
    const lead = m[0].length - m[0].trimStart().length;
    const t = m[0].trim();
    if (t !== '') out.push({ text: t, at: m.index + lead, end: m.index + lead + t.length });
  }
  return out;
}

export const clip = (text: string, max: number) =>
  text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;

export type Role = 'price' | 'total' | 'hourly' | 'unit' | 'labour' | 'fee' | 'vat_amount' | 'ignored';

export interface Amount {
  value: string;
  currency: string;
  at: number;
  end: number;
  role: Role;
  fee: FeeKind | null;
  /** Where its label starts (the words that say what it is), else `at`. */
  labelAt: number;
  basis: 'gross' | 'net' | null;
  from: boolean;
  about: boolean;
  max: boolean;
  unit: string | null;
  /** A range's upper end, when this amount is a range's lower end. */
  high: string | null;
  included: boolean;
  charged: boolean;
}

export interface Hours {
  low: number;
  high: number;
  at: number;
  end: number;
}

export interface Quantity {
  value: number;
  /** The upper end of a range; `value` for a single figure. */
  high: number;
  unit: string;
  at: number;
  end: number;
}

/** The last match of a global pattern in a text, or null. */
export function lastMatch(pattern: RegExp, text: string): RegExpMatchArray | null {
  let last: RegExpMatchArray | null = null;
  for (const m of text.matchAll(new RegExp(pattern.source, 'gu'))) last = m;
  return last;
}

export const test = (pattern: RegExp, text: string) => new RegExp(pattern.source, 'u').test(text);

/** Amounts with their currency, and ranges ("300-400 EUR", "zwischen 300 und 400 €") as one. */
export function amountsIn(text: string, folded: string, country: string | null): Amount[] {
  const found: Amount[] = [];
  const blank = (at: number, end: number, value: string, currency: string): Amount => ({
    value,
    currency,
    at,
    end,
    role: 'price',
    fee: null,
    labelAt: at,
    basis: null,
    from: false,
    about: false,
    max: false,
    unit: null,
    high: null,
    included: false,
    charged: false,
  });
  for (const m of text.matchAll(MONEY)) {
    const value = parseAmount(m[2] ?? m[3] ?? '');
    if (value === null || Number(value) <= 0) continue;
    found.push(blank(m.index, m.index + m[0].length, value, currencyOf(m[1] ?? m[4] ?? '', country)));
  }
  // `289,-` without a currency: the country's
  for (const m of text.matchAll(/(?<![\d.,])(\d{1,3}(?:\.\d{3})*|\d+),[-–]{1,2}(?!\s?(?:€|eur|euro))/giu)) {
    if (found.some((f) => m.index >= f.at && m.index < f.end)) continue;
    const value = parseAmount(m[1] ?? '');
    if (value !== null) found.push(blank(m.index, m.index + m[0].length, value, countryCurrency(country)));
  }
  found.sort((a, b) => a.at - b.at);
  // a bare number joined to an amount: the range's lower end
  const out: Amount[] = [];
  for (let i = 0; i < found.length; i++) {
    const a = found[i]!;
    const next = found[i + 1];
    if (next && next.currency === a.currency) {
      const between = folded.slice(a.end, next.at);
      if (
        new RegExp(`^${RANGE_JOIN}$`, 'u').test(between) &&
        !/^\s*(?:and|und|et|y|e|en|i)\s*$/.test(between)
      ) {
        if (Number(next.value) > Number(a.value)) {
          out.push({ ...a, end: next.end, high: next.value });
          i++;
          continue;
        }
      }
      const open = RANGE_OPEN.exec(folded.slice(Math.max(0, a.at - 20), a.at));
      if (open && /^\s*(?:and|und|et|y|e|en|i|to|bis|a|à|al|tot|do|ate)\s*$/u.test(between)) {
        if (Number(next.value) > Number(a.value)) {
          out.push({
            ...a,
            at: a.at - open[0].length + (open[0].length - open[0].trimStart().length),
            end: next.end,
            high: next.value,
            labelAt: a.at - open[0].length,
          });
          i++;
          continue;
        }
      }
    }
    const lower = new RegExp(`(${NUMBER})${RANGE_JOIN}$`, 'u').exec(text.slice(Math.max(0, a.at - 24), a.at));
    if (lower && a.currency !== '' && /^\d/.test(text.slice(a.at, a.end))) {
      const low = parseAmount(lower[1] ?? '');
      const start = a.at - lower[0].length;
      const opened = RANGE_OPEN.exec(folded.slice(Math.max(0, start - 20), start));
      if (low !== null && Number(low) < Number(a.value) && Number(low) > 0) {
        out.push({
          ...a,
          at: start,
          value: low,
          high: a.value,
          labelAt: opened ? start - opened[0].length : start,
        });
        continue;
      }
    }
    out.push(a);
  }
  return out;
}

/** The clause of a sentence an amount stands in: from the last comma, semicolon or bracket before it. */
function clauseBefore(folded: string, from: number, at: number): { text: string; at: number } {
  const before = folded.slice(from, at);
  const cut = Math.max(
    before.lastIndexOf(','),
    before.lastIndexOf(';'),
    before.lastIndexOf('('),
    before.lastIndexOf('\n'),
  );
  // a comma inside a number ("1.234,56") is no clause mark
  const start = cut >= 0 && !/\d/.test(before[cut + 1] ?? '') ? cut + 1 : 0;
  return { text: before.slice(start), at: from + start };
}

/** Classifies each amount by the words around it: what it is, its VAT, whether it is a "from" price. */
export function classify(amounts: Amount[], folded: string, parts: Span[]): void {
  amounts.forEach((a, i) => {
    const sentence = parts.find((s) => a.at >= s.at && a.at < s.end) ?? {
      at: 0,
      end: folded.length,
      text: '',
    };
    const prevEnd = Math.max(sentence.at, amounts[i - 1]?.end ?? 0);
    const nextAt = Math.min(sentence.end, amounts[i + 1]?.at ?? folded.length);
    const clause = clauseBefore(folded, prevEnd, a.at);
    const after = folded.slice(a.end, nextAt);
    const beforeText = folded.slice(Math.max(sentence.at, a.at - 40), a.at);

    const unit =
      PER_UNIT_AFTER.exec(after) ??
      /(?:^|\s)(?:pro|per|je|par|por|al|za)\s?(m²|m2|qm|sqm|lfm|mq|stuck|stück|piece|day|tag|jour|dia|giorno|dag|dzien)\s*(?:[:=]\s*)?$/u.exec(
        clause.text,
      );
    // the nearest label before the amount in its clause decides what it is
    const labels: [Role, FeeKind | null, RegExpMatchArray | null][] = [
      ['ignored', null, lastMatch(NOT_OFFER, clause.text)],
      ['total', null, lastMatch(TOTAL, clause.text)],
      ['hourly', null, lastMatch(HOURLY_LABEL, clause.text)],
      ['labour', null, lastMatch(LABOUR, clause.text)],
      ['price', null, lastMatch(PRICE, clause.text)],
      ...FEES.map(([kind, pattern]): [Role, FeeKind | null, RegExpMatchArray | null] => [
        'fee',
        kind,
        lastMatch(pattern, clause.text),
      ]),
    ];
    const vatBefore =
      /(?:mwst\.?|mehrwertsteuer|ust\.?|umsatzsteuer|vat|tva|iva|btw|ptu)(?:\s*\(?\d{1,2}(?:[.,]\d{1,2})?\s?%\)?)?(?:\s*(?:betragt|amounts\s+to|of|von|de|di|van|w\s+wysokosci))?(?:\s*[:=])?\s*$/u.exec(
        clause.text,
      );
    let best: [Role, FeeKind | null, number] | null = null;
    for (const [role, kind, m] of labels) {
      if (m?.index === undefined) continue;
      const end = m.index + m[0].length;
      if (!best || end > best[2] || (end === best[2] && role === 'fee')) best = [role, kind, end];
    }
    const labelled = best ? labels.find(([r, k, m]) => r === best[0] && k === best[1] && m)?.[2] : null;
    if (
      vatBefore &&
      !lastMatch(GROSS, vatBefore[0]) &&
      !lastMatch(NET, vatBefore[0]) &&
      (!best || best[2] <= vatBefore.index)
    ) {
      a.role = 'vat_amount';
    } else if (test(PER_HOUR_AFTER, after)) {
      a.role = 'hourly';
    } else if (unit) {
      a.role = 'unit';
      a.unit = unit[1] ?? null;
    } else if (best) {
      a.role = best[0];
      a.fee = best[1];
      if (labelled?.index !== undefined) a.labelAt = Math.min(a.labelAt, clause.at + labelled.index);
    } else {
      // a label right after the amount: "35 € Anfahrt", "35 EUR for the call-out"
      const head =
        /^\s*(?:for\s+(?:the\s+)?|fur\s+(?:die\s+|den\s+|das\s+)?|de\s+|pour\s+(?:le\s+|la\s+|les\s+)?|para\s+(?:el\s+|la\s+)?|per\s+(?:il\s+|la\s+|lo\s+)?|voor\s+(?:de\s+|het\s+)?|za\s+|als\s+)?([\p{L}' -]{0,40})/u.exec(
          after,
        )?.[1] ?? '';
      const kind = feeKindOf(head.split(/\s+/).slice(0, 3).join(' '));
      if (kind !== null && !test(INCLUDES, head.split(/\s+/).slice(0, 1).join(' '))) {
        a.role = 'fee';
        a.fee = kind;
      } else if (
        /^\s*(?:mwst|ust|vat|tva|iva|btw)(?![\p{L}])/u.test(after) &&
        !lastMatch(GROSS, after.slice(0, 40)) &&
        !lastMatch(NET, after.slice(0, 40))
      ) {
        a.role = 'vat_amount';
      } else if (test(LABOUR, head.split(/\s+/).slice(0, 2).join(' '))) {
        a.role = 'labour';
      }
    }
    if (a.role !== 'ignored' && test(NOT_OFFER, after.slice(0, 25).split(/[,;]/)[0] ?? ''))
      a.role = 'ignored';
    // an amount inside a list of what a price includes ("incl. call-out fee of 35 EUR") is no extra
    const includedBy = lastMatch(INCLUDES, clause.text);
    if (a.role === 'fee' && includedBy?.index !== undefined) a.included = true;
    if (a.role === 'fee' && test(INCLUDED_AFTER, after)) a.included = true;
    if (a.role === 'fee' && (test(CHARGED_AFTER, after) || lastMatch(CHARGED, clause.text))) a.charged = true;
    // VAT said right after the amount, or as its label
    // VAT as the amount's label ("brutto: 1.428,00 EUR") first: what follows may be its breakdown
    const head = clause.text.slice(-25);
    if (/(?:brutto|ttc|gross|incl\.?\s*(?:vat|btw)|inkl\.?\s*mwst\.?)\s*(?:[:=]\s*)?$/u.test(head))
      a.basis = 'gross';
    else if (
      /(?<![\p{L}])(?:netto|ht|net|nett|excl\.?\s*(?:vat|btw)|zzgl\.?\s*mwst\.?|imponibile)\s*(?:[:=]\s*)?$/u.test(
        head,
      )
    )
      a.basis = 'net';
    const tail = after.slice(0, 60).split(/[;(]|\.\s/)[0] ?? '';
    const gross = lastMatch(GROSS, tail);
    const net = lastMatch(NET, tail);
    const firstOf = (x: RegExpMatchArray | null) => x?.index ?? Infinity;
    if (!a.basis && (gross || net)) a.basis = firstOf(gross) <= firstOf(net) ? 'gross' : 'net';
    a.from = !a.high && test(FROM_BEFORE, beforeText);
    a.about = test(ABOUT_BEFORE, beforeText);
    a.max = test(MAX_BEFORE, beforeText);
  });
}

export function hoursIn(folded: string, amounts: Amount[]): Hours[] {
  const out: Hours[] = [];
  for (const m of folded.matchAll(HOURS)) {
    if (amounts.some((a) => m.index >= a.at && m.index < a.end)) continue;
    const before = folded.slice(Math.max(0, m.index - 30), m.index);
    if (test(NOT_WORK_HOURS, before)) continue;
    const low = parseCount(m[1] ?? '');
    const high = m[2] === undefined ? low : parseCount(m[2]);
    // 24 h, 48 h: a service or an answer time, not the work's length
    if (low === null || high === null || low <= 0 || low > 80 || high < low || [24, 48, 72].includes(low))
      continue;
    out.push({ low, high, at: m.index, end: m.index + m[0].length });
  }
  return out;
}

/** The kind of a unit (`area`, `length`, `piece`, `day`), else the unit itself. */
export function unitKind(unit: string): string {
  const u = unit.trim().replace(/\s+/g, ' ');
  return UNIT_KINDS.find(([, pattern]) => pattern.test(u))?.[0] ?? u;
}

/** The quantities an answer states in `unit`'s kind, outside its amounts. */
export function quantitiesIn(folded: string, amounts: Amount[], unit: string): Quantity[] {
  const kind = unitKind(unit);
  const out: Quantity[] = [];
  for (const m of folded.matchAll(QUANTITY)) {
    if (amounts.some((a) => m.index < a.end && m.index + m[0].length > a.at)) continue;
    const value = parseCount(m[1] ?? '');
    const high = m[2] === undefined ? value : parseCount(m[2]);
    if (value === null || high === null || value <= 0 || high < value || unitKind(m[3] ?? '') !== kind)
      continue;
    out.push({ value, high, unit: m[3] ?? '', at: m.index, end: m.index + m[0].length });
  }
  return out;
}

export interface ListItem {
  item: string;
  /** Where the list's marker starts, and where the list ends. */
  at: number;
  end: number;
}

/** The items of a list that starts at `from` ("parts, call-out fee and VAT"), to the clause's end. */
function listAt(text: string, folded: string, from: number, limit: number): { items: string[]; end: number } {
  // an abbreviation's dot ("MwSt.", "inkl.") and a leading rate ("20 % MwSt.") do not end the list
  const rest = folded
    .slice(from, limit)
    .replace(/(?<![\p{L}])(mwst|ust|inkl|incl|zzgl|excl|exkl|gesetzl|ca|bzw)\./gu, '$1 ')
    .replace(
      /^(\s*)(\d{1,2}(?:[.,]\d{1,2})?)(\s?%)/u,
      (_m, sp: string, n: string, pc: string) => sp + 'x'.repeat(n.length) + pc,
    );
  const stop =
    /[.;:!?\n()€£$]|\s(?:but|aber|mais|pero|ma|maar|ale|mas|available|verfugbar|disponible|disponibile|beschikbaar|dostepn|we\s|wir\s|nous\s|podemos|possiamo|kunnen|gultig|valid|valable|valido|geldig|je\s+nach|depending|selon|segun|a\s+seconda|afhankelijk|piu|plus|mas|zzgl|termin|start|beginn|fruhestens|ab\s+sofort)\b|\d/u.exec(
      rest,
    );
  let span = rest.slice(0, stop?.index ?? rest.length);
  // "excl. btw, voorrijkosten": VAT then a comma ends the list
  const vatFirst = new RegExp(String.raw`^\s*(?:[x\d.,]+\s?%\s*)?(?:${VAT_WORD})\s*,`, 'u').exec(span);
  if (vatFirst) span = span.slice(0, vatFirst[0].length - 1);
  const end = from + span.replace(/(?<![\s,])[\s,]+$/, '').length;
  const original = text.slice(from, end);
  const items = original
    .split(LIST_JOIN)
    .map((s) =>
      s
        .trim()
        .replace(/^(?:the|der|die|das|den|le|la|les|l'|el|los|las|il|lo|i|gli|de|het|o|a|os|as)\s+/i, '')
        .replace(/(?<!\s)\s+(?:at|of|von|de|di|al|à|a|van|w)$/iu, '')
        .trim(),
    )
    .filter((s) => s.length > 1 && s.length <= 60);
  return { items, end };
}

/** The answer's lists of what is included, charged on top, and left out, with where they stand. */
export function listsIn(text: string, folded: string) {
  const includes: ListItem[] = [];
  const charged: ListItem[] = [];
  const excludes: ListItem[] = [];
  const add = (to: ListItem[], items: string[], at: number, end: number) =>
    items.forEach((item) => {
      if (!to.some((x) => x.item.toLowerCase() === item.toLowerCase())) to.push({ item, at, end });
    });
  for (const [marker, target] of [
    [INCLUDES, includes],
    [CHARGED, charged],
    [EXCLUDES, excludes],
  ] as const) {
    for (const m of folded.matchAll(new RegExp(marker.source, 'gu'))) {
      const start = m.index + m[0].length;
      // "plus 19 % MwSt." names VAT, a list of one
      const { items, end } = listAt(text, folded, start, Math.min(folded.length, start + 120));
      add(target, items, m.index, end);
    }
  }
  // postfix forms: "Entsorgung inklusive", "materials are extra", "déplacement non compris"
  for (const [marker, target] of [
    [INCLUDED_AFTER, includes],
    [CHARGED_AFTER, charged],
    [EXCLUDED_AFTER, excludes],
  ] as const) {
    const pattern = new RegExp(marker.source.replace(/^\^/, ''), 'gu');
    for (const m of folded.matchAll(pattern)) {
      // "inkl." before a list is its marker, read above
      if (/(?:inkl|incl)\.?$/u.test(m[0].trim())) continue;
      const before = folded.slice(Math.max(0, m.index - 60), m.index);
      const cut = Math.max(
        before.lastIndexOf('.'),
        before.lastIndexOf(';'),
        before.lastIndexOf(','),
        before.lastIndexOf(':'),
        before.lastIndexOf('\n'),
      );
      let phrase = text.slice(m.index - before.length + cut + 1, m.index).trim();
      // what follows the first figure (and its currency) that words follow: "60 € Anfahrt" -> "Anfahrt"
      // eslint-disable-next-line regexp/no-super-linear-move -- `before` is 60 characters at most
      const figure = /\d[\d.,\s]*(?:(?:euros|euro|eur|€)\s*)?(?=\p{L})/iu.exec(phrase);
      if (figure) phrase = phrase.slice(figure.index + figure[0].length).trim();
      if (marker === INCLUDED_AFTER && /(?<![\p{L}])(?:no|non|not|nicht|niet|nie|nao|não)$/iu.test(phrase))
        continue;
      if (new RegExp(`^(?:${CURRENCY})$`, 'iu').test(phrase)) continue;
      if (phrase.length > 1 && phrase.length <= 60)
        add(
          target,
          [phrase.replace(/^(?:the|der|die|das|le|la|les|el|il|lo|de|het|o|a)\s+/i, '')],
          m.index,
          m.index + m[0].length,
        );
    }
  }
  return { includes, charged, excludes };
}
