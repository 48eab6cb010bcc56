// The request for a quote the concierge mails to a provider, as a letter in the brief's language
// and the customer's name: who asks, the job as `need.ts` describes it, when the work is wanted (as people write dates in
// that language: "zwischen dem 14. und dem 20. Dezember 2026"), by when to answer, what the answer
// should state (the total and its VAT, fees, the earliest start, how long it holds), and how to
// opt out (B2B outreach under legitimate interest names its sender and carries the opt-out).
import type { ConciergeUnderstanding } from '../../generated/directory/client/types.gen.ts';

type When = NonNullable<ConciergeUnderstanding['when']>;
type Language = ConciergeUnderstanding['language'];

export interface RfqInput {
  language: Language;
  providerName: string;
  fromName: string;
  /** The job described for providers (`describeNeed`), never the brief itself. */
  need: string;
  place: string | null;
  /** The provider's country: the time zone the answer-by time is written in. */
  country: string | null;
  when: When | null;
  respondBy: Date;
  unsubscribeUrl: string;
}

/** The locale each language of a brief is written in (letters, comparisons). */
export const LOCALES: Record<Language, string> = {
  en: 'en-GB',
  de: 'de-DE',
  fr: 'fr-FR',
  es: 'es-ES',
  it: 'it-IT',
  nl: 'nl-NL',
  pl: 'pl-PL',
};
const ZONES: Record<string, string> = {
  AT: 'Europe/Vienna',
  BE: 'Europe/Brussels',
  BG: 'Europe/Sofia',
  CY: 'Asia/Nicosia',
  CZ: 'Europe/Prague',
  DE: 'Europe/Berlin',
  DK: 'Europe/Copenhagen',
  EE: 'Europe/Tallinn',
  ES: 'Europe/Madrid',
  FI: 'Europe/Helsinki',
  FR: 'Europe/Paris',
  GR: 'Europe/Athens',
  HR: 'Europe/Zagreb',
  HU: 'Europe/Budapest',
  IE: 'Europe/Dublin',
  IT: 'Europe/Rome',
  LT: 'Europe/Vilnius',
  LU: 'Europe/Luxembourg',
  LV: 'Europe/Riga',
  MT: 'Europe/Malta',
  NL: 'Europe/Amsterdam',
  PL: 'Europe/Warsaw',
  PT: 'Europe/Lisbon',
  RO: 'Europe/Bucharest',
  SE: 'Europe/Stockholm',
  SI: 'Europe/Ljubljana',
  SK: 'Europe/Bratislava',
};

/** A day as the language writes it: "15. Dezember 2026", "15 décembre 2026". */
export function dayText(day: string, language: Language): string {
  return new Intl.DateTimeFormat(LOCALES[language], {
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    timeZone: 'UTC',
  }).format(new Date(`${day}T00:00:00Z`));
}

/** A moment as the language writes it, in the provider's time zone: "27. November 2026 um 11:00 MEZ". */
export function momentText(at: Date, language: Language, country: string | null): string {
  const timeZone = (country && ZONES[country]) ?? 'UTC';
  const text = new Intl.DateTimeFormat(LOCALES[language], {
    dateStyle: 'long',
    timeStyle: 'short',
    timeZone,
  }).format(at);
  const zone = new Intl.DateTimeFormat(LOCALES[language], { timeZoneName: 'short', timeZone })
    .formatToParts(at)
    .find((p) => p.type === 'timeZoneName')?.value;
  return zone ? `${text} ${zone}` : text;
}

interface Words {
  subject: (place: string | null) => string;
  hello: (name: string) => string;
  asks: (from: string) => string;
  when: Record<When['kind'], (from: string, to: string) => string>;
  work: (when: string) => string;
  answer: (by: string) => string;
  points: string[];
  regards: string;
  optOut: (from: string, url: string) => string;
  sentBy: (from: string) => string;
}

const WORDS: Record<Language, Words> = {
  en: {
    subject: (p) => `Request for a quote${p ? ` in ${p}` : ''}`,
    hello: (n) => `Hello ${n},`,
    asks: (f) => `${f} is looking for a provider and asks you for a quote:`,
    when: {
      window: (f, t) => `between ${f} and ${t}`,
      by: (_f, t) => `by ${t}`,
      on: (f) => `on ${f}`,
      from: (f) => `from ${f}`,
      asap: () => 'as soon as possible',
    },
    work: (w) => `The work should be done ${w}.`,
    answer: (by) => `Please reply to this email by ${by}, stating:`,
    points: [
      'the total price, and whether it includes VAT (at what rate)',
      'any call-out, travel or other fees',
      'the earliest day you can start',
      'how long your quote is valid',
    ],
    regards: 'Kind regards,',
    optOut: (f, u) => `To receive no further requests from ${f}, open: ${u}`,
    sentBy: (f) => `Sent on behalf of ${f}.`,
  },
  de: {
    subject: (p) => `Anfrage: Angebot${p ? ` in ${p}` : ''}`,
    hello: (n) => `Guten Tag ${n},`,
    asks: (f) => `${f} sucht einen Anbieter und bittet Sie um ein Angebot:`,
    when: {
      window: (f, t) => `zwischen dem ${f} und dem ${t}`,
      by: (_f, t) => `bis zum ${t}`,
      on: (f) => `am ${f}`,
      from: (f) => `ab dem ${f}`,
      asap: () => 'so bald wie möglich',
    },
    work: (w) => `Die Arbeiten sollten ${w} ausgeführt werden.`,
    answer: (by) => `Bitte antworten Sie auf diese E-Mail bis ${by} mit folgenden Angaben:`,
    points: [
      'Gesamtpreis, und ob er die MwSt. enthält (zu welchem Satz)',
      'Anfahrt, Fahrtkosten oder sonstige Zuschläge',
      'frühester Termin',
      'wie lange das Angebot gilt',
    ],
    regards: 'Mit freundlichen Grüßen',
    optOut: (f, u) => `Wenn Sie keine weiteren Anfragen von ${f} erhalten möchten: ${u}`,
    sentBy: (f) => `Gesendet im Auftrag von ${f}.`,
  },
  fr: {
    subject: (p) => `Demande de devis${p ? ` à ${p}` : ''}`,
    hello: (n) => `Bonjour ${n},`,
    asks: (f) => `${f} cherche un prestataire et vous demande un devis :`,
    when: {
      window: (f, t) => `entre le ${f} et le ${t}`,
      by: (_f, t) => `avant le ${t}`,
      on: (f) => `le ${f}`,
      from: (f) => `à partir du ${f}`,
      asap: () => 'dès que possible',
    },
    work: (w) => `Les travaux sont à réaliser ${w}.`,
    answer: (by) => `Merci de répondre à cet e-mail avant le ${by} en indiquant :`,
    points: [
      'le prix total, HT ou TTC (à quel taux de TVA)',
      'les frais de déplacement ou autres frais',
      'la date de début la plus proche',
      'la durée de validité du devis',
    ],
    regards: 'Cordialement,',
    optOut: (f, u) => `Pour ne plus recevoir de demandes de ${f} : ${u}`,
    sentBy: (f) => `Envoyé pour le compte de ${f}.`,
  },
  es: {
    subject: (p) => `Solicitud de presupuesto${p ? ` en ${p}` : ''}`,
    hello: (n) => `Hola ${n}:`,
    asks: (f) => `${f} busca un proveedor y le pide un presupuesto:`,
    when: {
      window: (f, t) => `entre el ${f} y el ${t}`,
      by: (_f, t) => `antes del ${t}`,
      on: (f) => `el ${f}`,
      from: (f) => `a partir del ${f}`,
      asap: () => 'lo antes posible',
    },
    work: (w) => `El trabajo debe realizarse ${w}.`,
    answer: (by) => `Le rogamos que responda a este correo antes del ${by} indicando:`,
    points: [
      'el precio total y si incluye IVA (a qué tipo)',
      'gastos de desplazamiento u otros cargos',
      'la primera fecha en que puede empezar',
      'la validez del presupuesto',
    ],
    regards: 'Atentamente,',
    optOut: (f, u) => `Para no recibir más solicitudes de ${f}: ${u}`,
    sentBy: (f) => `Enviado en nombre de ${f}.`,
  },
  it: {
    subject: (p) => `Richiesta di preventivo${p ? ` a ${p}` : ''}`,
    hello: (n) => `Buongiorno ${n},`,
    asks: (f) => `${f} cerca un fornitore e vi chiede un preventivo:`,
    when: {
      window: (f, t) => `tra il ${f} e il ${t}`,
      by: (_f, t) => `entro il ${t}`,
      on: (f) => `il ${f}`,
      from: (f) => `dal ${f}`,
      asap: () => 'il prima possibile',
    },
    work: (w) => `Il lavoro va eseguito ${w}.`,
    answer: (by) => `Vi preghiamo di rispondere a questa e-mail entro il ${by} indicando:`,
    points: [
      'il prezzo totale, IVA inclusa o esclusa (a quale aliquota)',
      'eventuali costi di uscita, trasferta o altri costi',
      'la prima data utile',
      'la validità del preventivo',
    ],
    regards: 'Cordiali saluti,',
    optOut: (f, u) => `Per non ricevere altre richieste da ${f}: ${u}`,
    sentBy: (f) => `Inviato per conto di ${f}.`,
  },
  nl: {
    subject: (p) => `Offerteaanvraag${p ? ` in ${p}` : ''}`,
    hello: (n) => `Beste ${n},`,
    asks: (f) => `${f} zoekt een aanbieder en vraagt u om een offerte:`,
    when: {
      window: (f, t) => `tussen ${f} en ${t}`,
      by: (_f, t) => `vóór ${t}`,
      on: (f) => `op ${f}`,
      from: (f) => `vanaf ${f}`,
      asap: () => 'zo snel mogelijk',
    },
    work: (w) => `Het werk moet ${w} worden uitgevoerd.`,
    answer: (by) => `Wilt u deze e-mail vóór ${by} beantwoorden, met:`,
    points: [
      'de totaalprijs, incl. of excl. btw (tegen welk tarief)',
      'voorrijkosten, reiskosten of andere kosten',
      'de vroegste startdatum',
      'hoe lang de offerte geldig is',
    ],
    regards: 'Met vriendelijke groet,',
    optOut: (f, u) => `Geen verdere aanvragen van ${f} ontvangen: ${u}`,
    sentBy: (f) => `Verzonden namens ${f}.`,
  },
  pl: {
    subject: (p) => `Zapytanie ofertowe${p ? ` – ${p}` : ''}`,
    hello: (n) => `Dzień dobry ${n},`,
    asks: (f) => `${f} szuka wykonawcy i prosi o ofertę:`,
    when: {
      window: (f, t) => `między ${f} a ${t}`,
      by: (_f, t) => `do ${t}`,
      on: (f) => `w dniu ${f}`,
      from: (f) => `od ${f}`,
      asap: () => 'jak najszybciej',
    },
    work: (w) => `Prace należy wykonać ${w}.`,
    answer: (by) => `Prosimy o odpowiedź na tę wiadomość do ${by}, z podaniem:`,
    points: [
      'ceny całkowitej, netto czy brutto (jaka stawka VAT)',
      'kosztów dojazdu lub innych opłat',
      'najwcześniejszego terminu rozpoczęcia',
      'terminu ważności oferty',
    ],
    regards: 'Z poważaniem,',
    optOut: (f, u) => `Aby nie otrzymywać kolejnych zapytań od ${f}: ${u}`,
    sentBy: (f) => `Wysłano w imieniu ${f}.`,
  },
};

/** The subject and plain-text body of a request for a quote. */
export function requestForQuote(input: RfqInput): { subject: string; text: string } {
  const w = WORDS[input.language];
  const quoted = input.need
    .trim()
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
  const day = (d: string | null) => (d === null ? '' : dayText(d, input.language));
  const when = input.when ? w.when[input.when.kind](day(input.when.from), day(input.when.to)) : null;
  const lines = [
    w.hello(input.providerName),
    '',
    w.asks(input.fromName),
    '',
    quoted,
    '',
    // the description says when already; a `deadline` hint alone may set it
    ...(when && !input.need.includes(when) ? [w.work(when), ''] : []),
    w.answer(momentText(input.respondBy, input.language, input.country)),
    ...w.points.map((p) => `- ${p}`),
    '',
    w.regards,
    input.fromName,
    '',
    '--',
    w.sentBy(input.fromName),
    w.optOut(input.fromName, input.unsubscribeUrl),
  ];
  return { subject: w.subject(input.place), text: `${lines.join('\n')}\n` };
}
