import { describe, expect, it } from 'vitest';
import { datesIn, dayOf } from './dates.ts';
import { detectLanguage, pluralize, understand } from './understand.ts';

const today = new Date('2026-11-25T10:00:00Z');

describe('reading a brief', () => {
  it('finds the language, the trade, the place, the count and the deadline in each language', () => {
    const cases: [string, object][] = [
      [
        'Find three plumbers in Vienna who can fix a leak before 11 December; ask for a fixed price.',
        {
          language: 'en',
          trade: { activity: '43.22', term: 'plumbers' },
          place: { name: 'Wien, Wien, Austria' },
          max_providers: 3,
          deadline: '2026-12-11',
          requirements: ['a fixed price'],
        },
      ],
      [
        'Wir suchen zwei Elektriker in München, die bis zum 15.01.2027 eine Wohnung neu verkabeln.',
        {
          language: 'de',
          trade: { activity: '43.21', term: 'electricians' },
          place: { country: 'DE', query: 'München' },
          max_providers: 2,
          deadline: '2027-01-15',
        },
      ],
      [
        "Nous cherchons deux électriciens à Lyon pour refaire l'installation électrique avant le 15 janvier 2027.",
        {
          language: 'fr',
          trade: { activity: '43.21' },
          place: { query: 'Lyon', country: 'FR' },
          max_providers: 2,
          deadline: '2027-01-15',
        },
      ],
      [
        'Buscamos dos fontaneros en Madrid para cambiar un calentador.',
        { language: 'es', place: { country: 'ES' }, max_providers: 2 },
      ],
      [
        'Cerchiamo tre idraulici a Milano per una perdita in cucina, urgente.',
        {
          language: 'it',
          trade: { activity: '43.22' },
          place: { query: 'Milano' },
          max_providers: 3,
          requirements: ['urgency'],
        },
      ],
      [
        'Zoek drie loodgieters in Amsterdam voor een lekkage, graag een offerte.',
        { language: 'nl', place: { country: 'NL' }, max_providers: 3 },
      ],
      [
        'Szukamy trzech hydraulików w Krakowie do wymiany rur.',
        {
          language: 'pl',
          trade: { activity: '43.22' },
          place: { name: 'Kraków, Małopolskie, Poland' },
          max_providers: 3,
        },
      ],
    ];
    for (const [brief, expected] of cases)
      expect(understand(brief, {}, null, today), brief).toMatchObject(expected);
  });

  it('takes a multi-word place introduced as a place over a bigger one sharing a word', () => {
    expect(understand('Drei Installateure in Bruck an der Mur gesucht.', {}, null, today).place?.name).toBe(
      'Bruck an der Mur, Steiermark, Austria',
    );
  });

  it('lets the hints decide over the brief', () => {
    const u = understand(
      'Find three plumbers in Vienna.',
      { max_providers: 7, activity: '43.21', radius_km: 5 },
      { name: 'Graz, Steiermark, Austria', lat: 47.07, lon: 15.44, country: 'AT' },
      today,
    );
    expect(u).toMatchObject({
      trade: { activity: '43.21', term: 'electricians' },
      place: { name: 'Graz, Steiermark, Austria' },
      max_providers: 7,
      radius_km: 5,
    });
  });

  it('says when no trade or place is named', () => {
    expect(understand('Please help me with something soon, thanks a lot.', {}, null, today)).toMatchObject({
      trade: null,
      place: null,
      max_providers: 5,
    });
  });

  it('writes dates as ISO days, a day without a year the next one', () => {
    expect(
      datesIn('am 2. Dezember, dann 3.3.2027, le 1er mars, December 24', dayOf(today)).map((d) => d.date),
    ).toEqual(['2026-12-02', '2027-03-03', '2027-03-01', '2026-12-24']);
  });

  it('writes a trade in the plural', () => {
    expect(pluralize('bakery')).toBe('bakeries');
    expect(pluralize('heating engineer')).toBe('heating engineers');
  });

  it('tells a French brief by its words', () => {
    expect(detectLanguage('Bonjour, nous cherchons un plombier')).toBe('fr');
  });

  it('reads time as people mean it: a week, a month, part of a month, a span of days, a first day', () => {
    const when = (brief: string) => {
      const u = understand(brief, {}, null, today);
      return [u.when, u.deadline];
    };
    expect(when('Find three plumbers in Berlin for the week of 14 December; compare the quotes.')).toEqual([
      { kind: 'window', from: '2026-12-14', to: '2026-12-20', text: 'the week of 14 December' },
      '2026-12-20',
    ]);
    expect(when('Wir suchen zwei Elektriker in Hamburg, bis Mitte Dezember.')).toEqual([
      { kind: 'by', from: null, to: '2026-12-15', text: 'bis Mitte Dezember' },
      '2026-12-15',
    ]);
    expect(when('Nous cherchons un plombier à Lyon en décembre.')).toEqual([
      { kind: 'window', from: '2026-12-01', to: '2026-12-31', text: 'en décembre' },
      '2026-12-31',
    ]);
    expect(when('Buscamos dos fontaneros en Madrid del 14 al 18 de diciembre.')).toEqual([
      { kind: 'window', from: '2026-12-14', to: '2026-12-18', text: 'del 14 al 18 de diciembre' },
      '2026-12-18',
    ]);
    expect(when('Wir suchen einen Maler in Köln ab 7. Dezember.')).toEqual([
      { kind: 'from', from: '2026-12-07', to: null, text: 'ab 7. Dezember' },
      null,
    ]);
    expect(when('Zoek een loodgieter in Utrecht, uiterlijk 12 december.')).toEqual([
      { kind: 'by', from: null, to: '2026-12-12', text: 'uiterlijk 12 december' },
      '2026-12-12',
    ]);
    expect(when('Szukamy hydraulika w Krakowie na początku stycznia.')).toEqual([
      { kind: 'window', from: '2027-01-01', to: '2027-01-10', text: 'na początku stycznia' },
      '2027-01-10',
    ]);
    expect(when('Cerchiamo un idraulico a Milano, urgente.')[0]).toMatchObject({ kind: 'asap', to: null });
    // the deadline hint wins over the brief's words
    expect(
      understand('Plumbers in Berlin, week of 14 December.', { deadline: '2026-12-11' }, null, today),
    ).toMatchObject({
      when: { kind: 'by', from: null, to: '2026-12-11', text: null },
      deadline: '2026-12-11',
    });
  });
});
