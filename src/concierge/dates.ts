// Dates and time expressions as people write them in the directory's languages: `11.12.2026`,
// `2. Dezember`, `le 1er mars`, `14 de diciembre`, `December 24`, `tomorrow`, `ab sofort`, `next
// week`, and the spans a brief means ("week of 14 December" is that week, "bis Mitte Dezember"
// is by the 15th, "en décembre" the month, "del 14 al 18 de diciembre" those days). Positions
// are those of the original text, so a date can be quoted in the words it came from.

export type Day = string; // YYYY-MM-DD

/** Lower case and accents off, one character for one (positions stay those of the original). */
export function fold(text: string): string {
  let out = '';
  for (const c of text) {
    const lower = c.toLowerCase();
    const bare = lower.normalize('NFD').replace(/\p{M}+/gu, '');
    const one = bare === 'ł' ? 'l' : bare === 'ø' ? 'o' : bare;
    out += one.length === c.length ? one : lower.length === c.length ? lower : c;
  }
  return out;
}

const MONTH_NAMES = [
  'january february march april may june july august september october november december',
  'januar februar marz april mai juni juli august september oktober november dezember',
  'janvier fevrier mars avril mai juin juillet aout septembre octobre novembre decembre',
  'enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre',
  'gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre',
  'januari februari maart april mei juni juli augustus september oktober november december',
  'stycznia lutego marca kwietnia maja czerwca lipca sierpnia wrzesnia pazdziernika listopada grudnia',
  'styczen luty marzec kwiecien maj czerwiec lipiec sierpien wrzesien pazdziernik listopad grudzien',
  'styczniu lutym marcu kwietniu maju czerwcu lipcu sierpniu wrzesniu pazdzierniku listopadzie grudniu',
  'janeiro fevereiro marco abril maio junho julho agosto setembro outubro novembro dezembro',
];
export const MONTHS: Record<string, number> = {};
for (const line of MONTH_NAMES) line.split(' ').forEach((name, i) => (MONTHS[name] ??= i + 1));
Object.assign(MONTHS, {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  sept: 9,
  oct: 10,
  okt: 10,
  nov: 11,
  dec: 12,
  dez: 12,
  jaenner: 1,
  janner: 1,
  fevr: 2,
  janv: 1,
  dic: 12,
});
const MONTH = `(${Object.keys(MONTHS)
  .sort((a, b) => b.length - a.length)
  .join('|')})`;

export const iso = (y: number, m: number, d: number): Day | null => {
  const date = new Date(Date.UTC(y, m - 1, d));
  if (date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d) return null;
  return date.toISOString().slice(0, 10);
};

export const dayOf = (date: Date): Day => date.toISOString().slice(0, 10);

export function addDays(day: Day, n: number): Day {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return dayOf(d);
}

export function addMonths(day: Day, n: number): Day {
  const d = new Date(`${day}T00:00:00Z`);
  const target = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, 1));
  const last = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(d.getUTCDate(), last));
  return dayOf(target);
}

/** Monday of the week `day` is in (weeks run Monday to Sunday, as ISO 8601 and Europe count them). */
export function mondayOf(day: Day): Day {
  const weekday = (new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7;
  return addDays(day, -weekday);
}

const lastOfMonth = (y: number, m: number): Day => dayOf(new Date(Date.UTC(y, m, 0)));

export interface DateMention {
  date: Day;
  /** Where the words that name it start and end in the text. */
  at: number;
  end: number;
}

/** A day and month without a year: the next one on or after `today`. */
function nextDay(m: number, d: number, y: number | undefined, today: Day): Day | null {
  if (y !== undefined) return iso(y < 100 ? 2000 + y : y, m, d);
  const year = Number(today.slice(0, 4));
  const thisYear = iso(year, m, d);
  return thisYear !== null && thisYear < today ? iso(year + 1, m, d) : thisYear;
}

const WEEKDAYS: string[][] = [
  ['monday', 'montag', 'lundi', 'lunes', 'lunedi', 'maandag', 'poniedzialek', 'segunda-feira', 'segunda'],
  ['tuesday', 'dienstag', 'mardi', 'martes', 'martedi', 'dinsdag', 'wtorek', 'terca-feira', 'terca'],
  [
    'wednesday',
    'mittwoch',
    'mercredi',
    'miercoles',
    'mercoledi',
    'woensdag',
    'sroda',
    'sroda',
    'quarta-feira',
    'quarta',
  ],
  ['thursday', 'donnerstag', 'jeudi', 'jueves', 'giovedi', 'donderdag', 'czwartek', 'quinta-feira', 'quinta'],
  ['friday', 'freitag', 'vendredi', 'viernes', 'venerdi', 'vrijdag', 'piatek', 'sexta-feira', 'sexta'],
  ['saturday', 'samstag', 'samedi', 'sabado', 'sabato', 'zaterdag', 'sobota', 'sabado'],
  ['sunday', 'sonntag', 'dimanche', 'domingo', 'domenica', 'zondag', 'niedziela', 'domingo'],
];
const WEEKDAY_OF = new Map<string, number>();
WEEKDAYS.forEach((names, i) => names.forEach((n) => WEEKDAY_OF.set(n, i)));
const WEEKDAY = `(${[...WEEKDAY_OF.keys()].sort((a, b) => b.length - a.length).join('|')})`;

const NEXT_WEEK =
  /(?<![\p{L}])(?:next week|nachste woche|kommende woche|la semaine prochaine|semaine prochaine|la proxima semana|la semana que viene|la settimana prossima|settimana prossima|la prossima settimana|volgende week|komende week|w przyszlym tygodniu|przyszly tydzien|na proxima semana|para a semana)(?![\p{L}])/gu;

const RELATIVE: [RegExp, (today: Day) => Day][] = [
  [
    /(?<![\p{L}])(?:today|heute|aujourd'hui|aujourd’hui|hoy|oggi|vandaag|dzis|dzisiaj|hoje|immediately|right away|straight away|ab sofort|sofort|umgehend|immediatement|des maintenant|tout de suite|de inmediato|inmediatamente|enseguida|subito|da subito|immediatamente|direct|meteen|per direct|od zaraz|od razu|natychmiast|imediatamente|de imediato|ja)(?![\p{L}])/gu,
    (t) => t,
  ],
  [/(?<![\p{L}])(?:tomorrow|morgen|demain|manana|domani|jutro|amanha)(?![\p{L}])/gu, (t) => addDays(t, 1)],
  [
    /(?<![\p{L}])(?:day after tomorrow|ubermorgen|apres-demain|pasado manana|dopodomani|overmorgen|pojutrze|depois de amanha)(?![\p{L}])/gu,
    (t) => addDays(t, 2),
  ],
  [NEXT_WEEK, (t) => addDays(mondayOf(t), 7)],
];

/**
 * The dates a text names, in order: `2026-12-11`, `11.12.2026`, `11/12/2026`, `2.12.`, `11
 * December 2026`, `11. Dezember`, `December 11`, `14 de diciembre`, `le 1er mars`, weekdays (the
 * next one after `today`), `tomorrow`, `ab sofort` (today), `next week` (its Monday). A date
 * without a year is the next one on or after `today`.
 */
export function datesIn(text: string, today: Day): DateMention[] {
  const found: DateMention[] = [];
  const folded = fold(text);
  const push = (date: Day | null, at: number, end: number) => {
    if (date) found.push({ date, at, end });
  };
  for (const m of folded.matchAll(/(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)/g))
    push(iso(Number(m[1]), Number(m[2]), Number(m[3])), m.index, m.index + m[0].length);
  for (const m of folded.matchAll(/(?<![\d.,])(\d{1,2})[./](\d{1,2})[./](\d{4}|\d{2})(?![\d])/g))
    push(nextDay(Number(m[2]), Number(m[1]), Number(m[3]), today), m.index, m.index + m[0].length);
  // `2.12.` or `02.12` (no year): day and month, not a price (`2.50`) nor a time (`14.30 Uhr`)
  for (const m of folded.matchAll(/(?<![\d.,€$])(\d{1,2})\.(\d{1,2})\.(?![\d])(?!\s?(?:uhr|h\b|€|eur))/g))
    push(nextDay(Number(m[2]), Number(m[1]), undefined, today), m.index, m.index + m[0].length);
  const dayMonth = new RegExp(
    String.raw`(?<![\d.,])(\d{1,2})(?:\.|er|st|nd|rd|th|º|°)?\s*(?:de\s+|of\s+)?${MONTH}\.?(?:,?\s+(?:de\s+)?(\d{4}))?(?![\p{L}])`,
    'gu',
  );
  for (const m of folded.matchAll(dayMonth)) {
    const month = MONTHS[m[2] ?? ''];
    if (month === undefined) continue;
    push(
      nextDay(month, Number(m[1]), m[3] === undefined ? undefined : Number(m[3]), today),
      m.index,
      m.index + m[0].length,
    );
  }
  const monthDay = new RegExp(
    String.raw`(?<![\p{L}])${MONTH}\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?!\d|[.,]\d)(?:,?\s+(\d{4}))?`,
    'gu',
  );
  for (const m of folded.matchAll(monthDay)) {
    const month = MONTHS[m[1] ?? ''];
    if (month === undefined) continue;
    push(
      nextDay(month, Number(m[2]), m[3] === undefined ? undefined : Number(m[3]), today),
      m.index,
      m.index + m[0].length,
    );
  }
  for (const m of folded.matchAll(new RegExp(String.raw`(?<![\p{L}])${WEEKDAY}(?![\p{L}])`, 'gu'))) {
    const weekday = WEEKDAY_OF.get(m[1] ?? '');
    if (weekday === undefined) continue;
    // a weekday with a date beside it is that date's ("Freitag, 27. November")
    const now = (new Date(`${today}T00:00:00Z`).getUTCDay() + 6) % 7;
    const ahead = (weekday - now + 7) % 7 || 7;
    push(addDays(today, ahead), m.index, m.index + m[0].length);
  }
  for (const [pattern, date] of RELATIVE)
    for (const m of folded.matchAll(pattern)) push(date(today), m.index, m.index + m[0].length);
  found.sort((a, b) => a.at - b.at || b.end - a.end);
  // a mention inside a longer one is part of it ("Freitag, 27. November" keeps the date)
  const kept: DateMention[] = [];
  for (const f of found) {
    const last = kept.at(-1);
    if (last && f.at < last.end) continue;
    const near = found.find(
      (g) => g !== f && g.at >= f.end && g.at - f.end <= 3 && WEEKDAY_OF.has(folded.slice(f.at, f.end)),
    );
    if (near) continue;
    kept.push(f);
  }
  return kept;
}

export type WhenKind = 'by' | 'on' | 'window' | 'from' | 'asap';

export interface When {
  kind: WhenKind;
  from: Day | null;
  to: Day | null;
  /** The words of the text that say it. */
  text: string;
}

const w = (alternatives: string) => String.raw`(?<![\p{L}])(?:${alternatives})`;

/** Words before a date that make it the last day ("by", "bis", "avant le", "entro il"...). */
const BY = w(
  String.raw`by(?: the)?|before(?: the)?|no later than|until|till|at the latest by|bis(?: spatestens)?(?: zum| zur| am)?|spatestens(?: am| bis(?: zum)?)?|vor dem|noch vor dem|avant(?: le| la fin)?|d'ici(?: le| au)?|au plus tard(?: le)?|jusqu'au|antes(?: del?| de la)?|para el|a mas tardar(?: el)?|hasta(?: el)?|entro(?: il| l'| la| fine)?|prima del|uiterlijk(?: op)?|voor|voordat|tot|najpozniej(?: do)?|do|przed|ate(?: ao| a| dia)?|antes de`,
);
/** Words before a date that make it the day ("on", "am", "le"...). */
const ON = w(String.raw`on(?: the)?|am|le|el dia|el|il|op|w dniu|dnia|no dia|em`);
/** Words before a date that make it the first day ("from", "ab", "à partir du"...). */
const FROM = w(
  String.raw`from(?: the)?|starting(?: on| from)?|after(?: the)?|ab(?: dem| dem| der)?|nach dem|a partir du|a partir de(?:l)?|des le|apres le|desde(?: el)?|despues del|a partire dal|dal|vanaf|na|od|po|a partir de|depois de`,
);
const WEEK_OF = w(
  String.raw`(?:in )?(?:the )?week (?:of|commencing|beginning|starting)(?: the| on)?|(?:in der )?woche (?:vom|ab dem|ab)|(?:la |pendant la |dans la )?semaine du|(?:la |en la |durante la )?semana del|(?:la |nella |durante la )?settimana del|(?:in )?(?:de )?week van|(?:w )?tygodniu od|tydzien od|(?:na )?semana de`,
);
const BETWEEN = w(
  String.raw`between(?: the)?|zwischen(?: dem)?|vom|entre(?: le| el)?|del|dal|tussen|van|od|de`,
);
const AND = String.raw`\s*(?:-|–|—|and(?: the)?|und(?: dem)?|bis(?: zum)?|et(?: le)?|au|y(?: el)?|al|a|e|en|tot|do|to|till|until)\s*`;
const MID = w(
  String.raw`mid(?:-|\s)|mitte|mi-|a mediados de|mediados de|a meta(?: di)?|meta|half|w polowie|polowa|em meados de|meados de|middle of`,
);
const EARLY = w(
  String.raw`early|beginning of|start of|anfang|fruh im|debut|au debut de|a principios de|principios de|all'inizio di|inizio|inizi di|begin|na poczatku|poczatek|no inicio de|inicio de`,
);
const LATE = w(
  String.raw`late|end of|the end of|ende|fin|a la fin de|a finales de|finales de|fine|alla fine di|eind|pod koniec|koniec|no final de|final de`,
);
const IN_MONTH = w(String.raw`in|im|en|a|nel|nel mese di|in de maand|w|em|during|durante|pendant`);
const ASAP = w(
  String.raw`asap|as soon as possible|urgent(?:ly)?(?![\p{L}])|right away|immediately|dringend|so schnell wie moglich|sofort|schnellstmoglich|des que possible|au plus vite|urgence|urgente(?:ment)?|lo antes posible|cuanto antes|lo prima possibile|al piu presto|zo snel mogelijk|spoed|z pilna|pilne|jak najszybciej|o mais rapidamente possivel|com urgencia|o quanto antes`,
);

/**
 * The time a brief asks for, as people mean it: a window ("week of 14 December", "in
 * December", "mid-December", "14-18 December"), a last day ("by 11 December", "bis Mitte
 * Dezember"), a day ("on 14 December"), a first day ("from 14 December"), or as soon as possible.
 */
export function whenIn(text: string, today: Day): When | null {
  const folded = fold(text);
  // a sentence's full stop after a month's whole name is not part of the words
  const quote = (at: number, end: number) =>
    text
      .slice(at, end)
      .trim()
      .replace(/(?<=\p{L}{4})\.$/u, '');
  const dates = datesIn(text, today);
  const year = Number(today.slice(0, 4));
  const monthYear = (m: number, y: string | undefined) => {
    if (y !== undefined) return Number(y);
    const thisMonth = Number(today.slice(5, 7));
    return m < thisMonth ? year + 1 : year;
  };

  // a range of days: "14-18 December", "between 14 and 18 December", "del 14 al 18 de diciembre"
  const range = new RegExp(
    String.raw`(?:${BETWEEN}\s+)?(\d{1,2})\.?(?:er|st|nd|rd|th)?${AND}(?:the\s+|dem\s+|le\s+|el\s+|il\s+)?(\d{1,2})\.?(?:er|st|nd|rd|th)?\s*(?:de\s+|of\s+)?${MONTH}(?:\s+(?:de\s+)?(\d{4}))?(?![\p{L}])`,
    'gu',
  );
  for (const m of folded.matchAll(range)) {
    const month = MONTHS[m[3] ?? ''];
    if (month === undefined) continue;
    const y = monthYear(month, m[4]);
    const from = iso(y, month, Number(m[1]));
    const to = iso(y, month, Number(m[2]));
    if (from && to && from <= to)
      return { kind: 'window', from, to, text: quote(m.index, m.index + m[0].length) };
  }
  // "week of 14 December"
  for (const d of dates) {
    const before = folded.slice(Math.max(0, d.at - 40), d.at);
    const m = new RegExp(`${WEEK_OF}\\s*$`, 'u').exec(before);
    if (m) {
      const monday = mondayOf(d.date);
      return { kind: 'window', from: monday, to: addDays(monday, 6), text: quote(d.at - m[0].length, d.end) };
    }
  }
  // "KW 51", "calendar week 51", "semaine 51"
  const week =
    /(?<![\p{L}])(?:kw|calendar week|kalenderwoche|semaine|semana|settimana|week|tydzien)\s?(\d{1,2})(?!\d)/u.exec(
      folded,
    );
  if (week) {
    const n = Number(week[1]);
    const jan4 = `${year}-01-04`;
    let monday = addDays(mondayOf(jan4), (n - 1) * 7);
    if (addDays(monday, 6) < today) monday = addDays(mondayOf(`${year + 1}-01-04`), (n - 1) * 7);
    if (n >= 1 && n <= 53)
      return {
        kind: 'window',
        from: monday,
        to: addDays(monday, 6),
        text: quote(week.index, week.index + week[0].length),
      };
  }
  // parts of a month: "mid-December", "Anfang Januar", "fin décembre", "in December"
  const parts: [string, (y: number, m: number) => [Day | null, Day | null]][] = [
    [MID, (y, m) => [iso(y, m, 11), iso(y, m, 20)]],
    [EARLY, (y, m) => [iso(y, m, 1), iso(y, m, 10)]],
    [LATE, (y, m) => [iso(y, m, 21), lastOfMonth(y, m)]],
  ];
  for (const [words, span] of parts) {
    const re = new RegExp(
      String.raw`${words}\s*(?:of\s+|de\s+|di\s+|du mois de\s+)?${MONTH}(?:\s+(\d{4}))?(?![\p{L}])`,
      'gu',
    );
    for (const m of folded.matchAll(re)) {
      const month = MONTHS[m[1] ?? ''];
      if (month === undefined) continue;
      const [from, to] = span(monthYear(month, m[2]), month);
      if (!from || !to) continue;
      const before = folded.slice(Math.max(0, m.index - 30), m.index);
      const by = new RegExp(`${BY}\\s*$`, 'u').exec(before);
      // "bis Mitte Dezember": by the 15th
      const last = words === MID ? iso(monthYear(month, m[2]), month, 15) : to;
      if (by)
        return {
          kind: 'by',
          from: null,
          to: last,
          text: quote(m.index - by[0].length, m.index + m[0].length),
        };
      return { kind: 'window', from, to, text: quote(m.index, m.index + m[0].length) };
    }
  }
  // a date with the word before it
  for (const d of dates) {
    const before = folded.slice(Math.max(0, d.at - 30), d.at);
    const by = new RegExp(`${BY}\\s*$`, 'u').exec(before);
    if (by) return { kind: 'by', from: null, to: d.date, text: quote(d.at - by[0].length, d.end) };
    const from = new RegExp(`${FROM}\\s*$`, 'u').exec(before);
    if (from) return { kind: 'from', from: d.date, to: null, text: quote(d.at - from[0].length, d.end) };
    const on = new RegExp(`${ON}\\s*$`, 'u').exec(before);
    if (on) return { kind: 'on', from: d.date, to: d.date, text: quote(d.at - on[0].length, d.end) };
  }
  // a whole month: "in December", "im Januar"
  const inMonth = new RegExp(String.raw`${IN_MONTH}\s+${MONTH}(?:\s+(\d{4}))?(?![\p{L}])`, 'gu');
  for (const m of folded.matchAll(inMonth)) {
    const month = MONTHS[m[1] ?? ''];
    if (month === undefined) continue;
    const y = monthYear(month, m[2]);
    const from = iso(y, month, 1);
    return {
      kind: 'window',
      from: from && from < today ? today : from,
      to: lastOfMonth(y, month),
      text: quote(m.index, m.index + m[0].length),
    };
  }
  const first = dates[0];
  // "next week" alone is that week, Monday to Sunday
  const nextWeek = new RegExp(NEXT_WEEK.source, 'u').exec(folded);
  if (nextWeek && first && dates.length === 1 && first.at === nextWeek.index) {
    return {
      kind: 'window',
      from: first.date,
      to: addDays(first.date, 6),
      text: quote(nextWeek.index, nextWeek.index + nextWeek[0].length),
    };
  }
  if (first) return { kind: 'by', from: null, to: first.date, text: quote(first.at, first.end) };
  const asap = new RegExp(ASAP, 'u').exec(folded);
  if (asap)
    return { kind: 'asap', from: today, to: null, text: quote(asap.index, asap.index + asap[0].length) };
  return null;
}
