// The request for a quote the concierge mails to a provider, in the brief's language: who asks,
// the brief itself, by when to answer, what to put in the answer (price, earliest start,
// conditions), and how to opt out (B2B outreach under legitimate interest names its sender
// and carries the opt-out).
import type { Language } from './understand.ts';

export interface RfqInput {
  language: Language;
  providerName: string;
  fromName: string;
  brief: string;
  place: string | null;
  deadline: string | null;
  respondBy: string;
  unsubscribeUrl: string;
}

interface Words {
  subject: (place: string | null) => string;
  hello: (name: string) => string;
  asks: (from: string) => string;
  deadline: (d: string) => string;
  answer: (by: string) => string;
  optOut: (from: string, url: string) => string;
  sentBy: (from: string) => string;
}

const WORDS: Record<Language, Words> = {
  en: {
    subject: (p) => `Request for a quote${p ? ` in ${p}` : ''}`,
    hello: (n) => `Hello ${n},`,
    asks: (f) => `${f} is looking for a provider and asks you for a quote:`,
    deadline: (d) => `The work should be done by ${d}.`,
    answer: (by) =>
      `Please answer this email by ${by} with your price (say whether VAT is included), the earliest day you can start, and your conditions.`,
    optOut: (f, u) => `To receive no further requests from ${f}, open: ${u}`,
    sentBy: (f) => `Sent on behalf of ${f} by its concierge assistant.`,
  },
  de: {
    subject: (p) => `Anfrage: Angebot${p ? ` in ${p}` : ''}`,
    hello: (n) => `Guten Tag ${n},`,
    asks: (f) => `${f} sucht einen Anbieter und bittet Sie um ein Angebot:`,
    deadline: (d) => `Die Arbeit sollte bis ${d} erledigt sein.`,
    answer: (by) =>
      `Bitte antworten Sie auf diese E-Mail bis ${by} mit Ihrem Preis (mit Angabe, ob inkl. MwSt.), dem frühesten Termin und Ihren Bedingungen.`,
    optOut: (f, u) => `Wenn Sie keine weiteren Anfragen von ${f} erhalten möchten: ${u}`,
    sentBy: (f) => `Gesendet im Auftrag von ${f} durch seinen Concierge-Assistenten.`,
  },
  fr: {
    subject: (p) => `Demande de devis${p ? ` à ${p}` : ''}`,
    hello: (n) => `Bonjour ${n},`,
    asks: (f) => `${f} cherche un prestataire et vous demande un devis :`,
    deadline: (d) => `Les travaux doivent être terminés avant le ${d}.`,
    answer: (by) =>
      `Merci de répondre à cet e-mail avant le ${by} en indiquant votre prix (TTC ou HT), la date de début la plus proche et vos conditions.`,
    optOut: (f, u) => `Pour ne plus recevoir de demandes de ${f} : ${u}`,
    sentBy: (f) => `Envoyé pour le compte de ${f} par son assistant concierge.`,
  },
  es: {
    subject: (p) => `Solicitud de presupuesto${p ? ` en ${p}` : ''}`,
    hello: (n) => `Hola ${n}:`,
    asks: (f) => `${f} busca un proveedor y le pide un presupuesto:`,
    deadline: (d) => `El trabajo debe estar terminado antes del ${d}.`,
    answer: (by) =>
      `Responda a este correo antes del ${by} con su precio (indique si incluye IVA), la primera fecha en que puede empezar y sus condiciones.`,
    optOut: (f, u) => `Para no recibir más solicitudes de ${f}: ${u}`,
    sentBy: (f) => `Enviado en nombre de ${f} por su asistente concierge.`,
  },
  it: {
    subject: (p) => `Richiesta di preventivo${p ? ` a ${p}` : ''}`,
    hello: (n) => `Buongiorno ${n},`,
    asks: (f) => `${f} cerca un fornitore e vi chiede un preventivo:`,
    deadline: (d) => `Il lavoro va completato entro il ${d}.`,
    answer: (by) =>
      `Rispondete a questa e-mail entro il ${by} con il prezzo (IVA inclusa o esclusa), la prima data utile e le vostre condizioni.`,
    optOut: (f, u) => `Per non ricevere altre richieste da ${f}: ${u}`,
    sentBy: (f) => `Inviato per conto di ${f} dal suo assistente concierge.`,
  },
  nl: {
    subject: (p) => `Offerteaanvraag${p ? ` in ${p}` : ''}`,
    hello: (n) => `Beste ${n},`,
    asks: (f) => `${f} zoekt een aanbieder en vraagt u om een offerte:`,
    deadline: (d) => `Het werk moet klaar zijn vóór ${d}.`,
    answer: (by) =>
      `Beantwoord deze e-mail vóór ${by} met uw prijs (incl. of excl. btw), de vroegste startdatum en uw voorwaarden.`,
    optOut: (f, u) => `Geen verdere aanvragen van ${f} ontvangen: ${u}`,
    sentBy: (f) => `Verzonden namens ${f} door zijn concierge-assistent.`,
  },
  pl: {
    subject: (p) => `Zapytanie ofertowe${p ? ` – ${p}` : ''}`,
    hello: (n) => `Dzień dobry ${n},`,
    asks: (f) => `${f} szuka wykonawcy i prosi o ofertę:`,
    deadline: (d) => `Prace powinny zostać wykonane do ${d}.`,
    answer: (by) =>
      `Prosimy o odpowiedź na tę wiadomość do ${by} z ceną (brutto czy netto), najwcześniejszym terminem rozpoczęcia i warunkami.`,
    optOut: (f, u) => `Aby nie otrzymywać kolejnych zapytań od ${f}: ${u}`,
    sentBy: (f) => `Wysłano w imieniu ${f} przez jego asystenta concierge.`,
  },
};

/** The subject and plain-text body of a request for a quote. */
export function requestForQuote(input: RfqInput): { subject: string; text: string } {
  const w = WORDS[input.language];
  const quoted = input.brief
    .trim()
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
  const lines = [
    w.hello(input.providerName),
    '',
    w.asks(input.fromName),
    '',
    quoted,
    '',
    ...(input.deadline ? [w.deadline(input.deadline), ''] : []),
    w.answer(input.respondBy),
    '',
    input.fromName,
    '',
    '--',
    w.sentBy(input.fromName),
    w.optOut(input.fromName, input.unsubscribeUrl),
  ];
  return { subject: w.subject(input.place), text: `${lines.join('\n')}\n` };
}
