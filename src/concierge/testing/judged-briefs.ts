// The judged set of briefs (issue 32 point 7): what a person means by each, in the directory's
// languages, judged member by member against `understand` (src/concierge/understand.ts).
// src/concierge/brief-readings.test.ts holds every case; `npm run bench:concierge-briefs` prints
// the score. Today is Wednesday 25 November 2026.
import type { ConciergeUnderstanding } from '../../../generated/directory/client/types.gen.ts';
import { understand } from '../understand.ts';

export const TODAY = new Date('2026-11-25T10:00:00Z');

export interface JudgedBrief {
  brief: string;
  language: ConciergeUnderstanding['language'];
  /** NACE class the trade must be (or start with). */
  activity: string;
  /** The place's country and the first part of its gazetteer name. */
  place: { country: string; name: string } | null;
  providers: number;
  when: {
    kind: NonNullable<ConciergeUnderstanding['when']>['kind'];
    from: string | null;
    to: string | null;
  } | null;
  requirements?: string[];
  /** Words the job's description must say, and words it must not (instructions, private details). */
  says: string[];
  never: string[];
}

export const BRIEFS: JudgedBrief[] = [
  {
    brief:
      'Find three plumbers in Berlin to fix a leaking pipe under the kitchen sink before 15 December, ask for a fixed price and compare them.',
    language: 'en',
    activity: '43.22',
    place: { country: 'DE', name: 'Berlin' },
    providers: 3,
    when: { kind: 'by', from: null, to: '2026-12-15' },
    requirements: ['a fixed price'],
    says: ['leaking pipe under the kitchen sink'],
    never: ['Find', 'compare', 'three'],
  },
  {
    brief:
      'We need two electricians near Lyon who can rewire a flat of 60 m² in January. Please compare their quotes.',
    language: 'en',
    activity: '43.21',
    place: { country: 'FR', name: 'Lyon' },
    providers: 2,
    when: { kind: 'window', from: '2027-01-01', to: '2027-01-31' },
    says: ['rewire a flat of 60 m²'],
    never: ['We need', 'compare'],
  },
  {
    brief:
      'Looking for 4 painters in Munich to paint 3 rooms (about 80 m² of walls) in the week of 14 December. My address is Leopoldstraße 12, phone +49 170 1234567.',
    language: 'en',
    activity: '43.34',
    place: { country: 'DE', name: 'München' },
    providers: 4,
    when: { kind: 'window', from: '2026-12-14', to: '2026-12-20' },
    says: ['paint 3 rooms'],
    never: ['Leopoldstra', '1234567'],
  },
  {
    brief:
      'Urgent: a roofer in Hamburg to repair storm damage on a tiled roof as soon as possible, with a warranty.',
    language: 'en',
    activity: '43.91',
    place: { country: 'DE', name: 'Hamburg' },
    providers: 5,
    when: { kind: 'asap', from: '2026-11-25', to: null },
    requirements: ['a warranty', 'urgency'],
    says: ['storm damage on a tiled roof'],
    never: ['Urgent:'],
  },
  {
    brief:
      'Wir suchen drei Installateure in Wien, die in der Woche vom 14. Dezember eine Gastherme tauschen. Bitte Festpreis inklusive Entsorgung anfragen und vergleichen.',
    language: 'de',
    activity: '43.22',
    place: { country: 'AT', name: 'Wien' },
    providers: 3,
    when: { kind: 'window', from: '2026-12-14', to: '2026-12-20' },
    requirements: ['a fixed price', 'what the price includes'],
    says: ['Gastherme tauschen'],
    never: ['Wir suchen', 'vergleichen'],
  },
  {
    brief:
      'Ich brauche einen Maler in Köln für die Fassade eines Einfamilienhauses, ca. 150 m², ab dem 1. März.',
    language: 'de',
    activity: '43.34',
    place: { country: 'DE', name: 'Köln' },
    providers: 5,
    when: { kind: 'from', from: '2027-03-01', to: null },
    says: ['Fassade eines Einfamilienhauses'],
    never: ['Ich brauche'],
  },
  {
    brief:
      'Bitte finden Sie zwei Elektriker in Graz, die bis Mitte Dezember 12 Steckdosen und 4 Deckenleuchten installieren. Rufen Sie mich an: 0316 123456.',
    language: 'de',
    activity: '43.21',
    place: { country: 'AT', name: 'Graz' },
    providers: 2,
    when: { kind: 'by', from: null, to: '2026-12-15' },
    says: ['12 Steckdosen und 4 Deckenleuchten installieren'],
    never: ['finden Sie', '123456'],
  },
  {
    brief:
      'Nous cherchons trois plombiers à Lille pour réparer une fuite dans la cuisine avant le 15 décembre. Merci de demander un prix fixe et de comparer.',
    language: 'fr',
    activity: '43.22',
    place: { country: 'FR', name: 'Lille' },
    providers: 3,
    when: { kind: 'by', from: null, to: '2026-12-15' },
    requirements: ['a fixed price'],
    says: ['réparer une fuite dans la cuisine'],
    never: ['Nous cherchons', 'comparer'],
  },
  {
    brief:
      'Je cherche un électricien à Bordeaux pour installer une borne de recharge dans mon garage, dès que possible. Mon e-mail : paul.martin@example.fr',
    language: 'fr',
    activity: '43.21',
    place: { country: 'FR', name: 'Bordeaux' },
    providers: 5,
    when: { kind: 'asap', from: '2026-11-25', to: null },
    says: ['installer une borne de recharge'],
    never: ['Je cherche', 'example.fr'],
  },
  {
    brief: 'Trouvez deux couvreurs près de Nantes pour remplacer 20 m² de tuiles en janvier, avec garantie.',
    language: 'fr',
    activity: '43.91',
    place: { country: 'FR', name: 'Nantes' },
    providers: 2,
    when: { kind: 'window', from: '2027-01-01', to: '2027-01-31' },
    requirements: ['a warranty'],
    says: ['remplacer 20 m² de tuiles'],
    never: ['Trouvez'],
  },
  {
    brief:
      'Buscamos tres fontaneros en Madrid para cambiar un calentador antes del 20 de diciembre. Por favor, pedir precio cerrado y comparar.',
    language: 'es',
    activity: '43.22',
    place: { country: 'ES', name: 'Madrid' },
    providers: 3,
    when: { kind: 'by', from: null, to: '2026-12-20' },
    requirements: ['a fixed price'],
    says: ['cambiar un calentador'],
    never: ['Buscamos', 'comparar'],
  },
  {
    brief: 'Necesito dos pintores en Valencia para pintar un piso de 90 m² a partir del 10 de enero.',
    language: 'es',
    activity: '43.34',
    place: { country: 'ES', name: 'Valencia' },
    providers: 2,
    when: { kind: 'from', from: '2027-01-10', to: null },
    says: ['pintar un piso de 90 m²'],
    never: ['Necesito'],
  },
  {
    brief:
      'Cerchiamo tre idraulici a Milano per sostituire una caldaia entro il 18 dicembre, con prezzo fisso.',
    language: 'it',
    activity: '43.22',
    place: { country: 'IT', name: 'Milano' },
    providers: 3,
    when: { kind: 'by', from: null, to: '2026-12-18' },
    requirements: ['a fixed price'],
    says: ['sostituire una caldaia'],
    never: ['Cerchiamo'],
  },
  {
    brief:
      'Trova due elettricisti a Torino per rifare l’impianto elettrico di un appartamento di 70 m² a gennaio.',
    language: 'it',
    activity: '43.21',
    place: { country: 'IT', name: 'Torino' },
    providers: 2,
    when: { kind: 'window', from: '2027-01-01', to: '2027-01-31' },
    says: ['appartamento di 70 m²'],
    never: ['Trova'],
  },
  {
    brief:
      'Wij zoeken drie loodgieters in Amsterdam om een lekkende kraan te repareren vóór 12 december. Graag offertes vergelijken.',
    language: 'nl',
    activity: '43.22',
    place: { country: 'NL', name: 'Amsterdam' },
    providers: 3,
    when: { kind: 'by', from: null, to: '2026-12-12' },
    says: ['lekkende kraan te repareren'],
    never: ['Wij zoeken', 'vergelijken'],
  },
  {
    brief: 'Zoek twee schilders in Utrecht voor het schilderen van een woonkamer van 40 m² in januari.',
    language: 'nl',
    activity: '43.34',
    place: { country: 'NL', name: 'Utrecht' },
    providers: 2,
    when: { kind: 'window', from: '2027-01-01', to: '2027-01-31' },
    says: ['woonkamer van 40 m²'],
    never: ['Zoek twee'],
  },
  {
    brief:
      'Szukamy trzech hydraulików w Krakowie do wymiany bojlera przed 15 grudnia. Proszę porównać oferty.',
    language: 'pl',
    activity: '43.22',
    place: { country: 'PL', name: 'Kraków' },
    providers: 3,
    when: { kind: 'by', from: null, to: '2026-12-15' },
    says: ['wymiany bojlera'],
    never: ['Szukamy', 'porównać'],
  },
  {
    brief: 'Potrzebuję dwóch elektryków w Warszawie do montażu 10 gniazdek od 7 stycznia.',
    language: 'pl',
    activity: '43.21',
    place: { country: 'PL', name: 'Warszawa' },
    providers: 2,
    when: { kind: 'from', from: '2027-01-07', to: null },
    says: ['montażu 10 gniazdek'],
    never: ['Potrzebuję'],
  },
  {
    brief:
      'Get quotes from five gardeners in Vienna to cut back hedges and trees (about 40 m of hedge) next week.',
    language: 'en',
    activity: '81.30',
    place: { country: 'AT', name: 'Wien' },
    providers: 5,
    when: { kind: 'window', from: '2026-11-30', to: '2026-12-06' },
    says: ['cut back hedges and trees'],
    never: ['Get quotes', 'five'],
  },
  {
    brief:
      'Find a locksmith in Paris to replace the lock of an apartment door on 2 December; call me on 06 12 34 56 78.',
    language: 'en',
    activity: '95.29',
    place: { country: 'FR', name: 'Paris' },
    providers: 5,
    when: { kind: 'on', from: '2026-12-02', to: '2026-12-02' },
    says: ['replace the lock of an apartment door'],
    never: ['Find', '56 78', 'call me'],
  },
];

export interface Judgement {
  brief: string;
  /** The members read wrong, each with what was read. */
  wrong: string[];
}

/** Every member of a case's reading that is not what the person meant. */
export function judge(c: JudgedBrief): Judgement {
  const u = understand(c.brief, {}, null, TODAY);
  const wrong: string[] = [];
  if (u.language !== c.language) wrong.push(`language: ${u.language}`);
  if (!u.trade || !u.trade.activity.startsWith(c.activity))
    wrong.push(`trade: ${u.trade?.activity ?? 'none'}`);
  if (
    c.place === null
      ? u.place !== null
      : u.place?.country !== c.place.country || !u.place.name.startsWith(c.place.name)
  )
    wrong.push(`place: ${u.place?.name ?? 'none'}`);
  if (u.max_providers !== c.providers) wrong.push(`providers: ${u.max_providers}`);
  const when = u.when && { kind: u.when.kind, from: u.when.from, to: u.when.to };
  if (JSON.stringify(when) !== JSON.stringify(c.when)) wrong.push(`when: ${JSON.stringify(when)}`);
  for (const r of c.requirements ?? [])
    if (!u.requirements.includes(r)) wrong.push(`requirement missing: ${r}`);
  const description = u.description ?? '';
  const folded = description.toLowerCase();
  for (const s of c.says) if (!folded.includes(s.toLowerCase())) wrong.push(`description lacks "${s}"`);
  for (const s of c.never) if (description.includes(s)) wrong.push(`description says "${s}"`);
  if (wrong.some((w) => w.startsWith('description')))
    wrong.push(`description: ${JSON.stringify(description)}`);
  return { brief: c.brief, wrong };
}

/** A model's brief reading as the upstream writes it (READING_SCHEMA): every member null or
 * empty but those given. */
export const modelBriefAnswer = (over: Record<string, unknown>): string =>
  JSON.stringify({
    language: null,
    activity: null,
    place: null,
    country: null,
    max_providers: null,
    when_kind: null,
    when_from: null,
    when_to: null,
    when_text: null,
    requirements: [],
    ...over,
  });
