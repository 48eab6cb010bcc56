import { describe, expect, it } from 'vitest';
import { briefQuantities, quantitiesIn } from './need.ts';
import { requestForQuote } from './rfq.ts';
import { understand } from './understand.ts';

const today = new Date('2026-11-26T12:00:00Z');
const read = (brief: string) => understand(brief, {}, null, today);

describe('the job described for providers', () => {
  it('keeps the work, place, time and wishes, and drops the instructions to us', () => {
    const u = read(
      'Find three plumbers in Berlin to fix a leaking pipe before 15 December, ask for a fixed price and compare them',
    );
    expect(u.description).toBe(
      [
        'Trade: plumber',
        'Work: Fix a leaking pipe',
        'Place: Berlin',
        'When: by 15 December 2026',
        'Please note: a fixed price is wanted',
      ].join('\n'),
    );
  });

  it('writes in the brief’s language, with its quantities and window', () => {
    const de = read('Wir suchen einen Maler in München für 80 m² Wände in der Woche vom 14. Dezember');
    expect(de.description).toBe(
      [
        'Gewerk: Maler',
        'Arbeiten: 80 m² Wände',
        'Ort: München',
        'Zeitraum: zwischen dem 14. Dezember 2026 und dem 20. Dezember 2026',
      ].join('\n'),
    );
    const fr = read('Je cherche un plombier à Paris pour remplacer un chauffe-eau avant le 15 décembre');
    expect(fr.description).toContain('Travaux: Remplacer un chauffe-eau');
    expect(fr.description).toContain('Période: avant le 15 décembre 2026');
  });

  it('keeps a range of quantities as a range, in every way of writing one', () => {
    const ranges: [string, string, [number, number, string]][] = [
      ['Find a painter in Dublin to paint 15–20 m² of walls', '15–20 m²', [15, 20, 'm²']],
      [
        'Find a tiler in Dublin for a bathroom floor. Size: between 15 and 20 square metres.',
        '15–20 square metres',
        [15, 20, 'square metres'],
      ],
      ['Wir suchen einen Fliesenleger in Köln. Fläche: 15-20 m2, Bad.', '15–20 m2', [15, 20, 'm2']],
      ['Je cherche un peintre à Lyon. Surface : entre 15 et 20 m². Merci.', '15–20 m²', [15, 20, 'm²']],
      ['Cerco un imbianchino a Milano. Superficie: tra 40 e 50 mq.', '40–50 mq', [40, 50, 'mq']],
      ['Szukam glazurnika w Krakowie, od 12 do 14,5 m2 łazienki.', '12–14,5 m2', [12, 14.5, 'm2']],
    ];
    for (const [brief, text, [low, high, unit]] of ranges) {
      const u = read(brief);
      expect(quantitiesIn(brief, u.trade?.activity), brief).toEqual([text]);
      expect(briefQuantities(brief, u.trade?.activity), brief).toEqual([
        expect.objectContaining({ low, high, unit, text }),
      ]);
    }
    // a single figure stays one, and a window of days is no quantity
    expect(
      briefQuantities('Find a painter in Dublin for 80 m² of walls between 14 and 18 December', undefined),
    ).toEqual([{ low: 80, high: 80, unit: 'm²', text: '80 m²', said: '80 m²' }]);
  });

  it('leaves out the customer’s street, phone and e-mail', () => {
    const u = read(
      'Please find 2 electricians in Lyon to install 6 sockets and 3 ceiling lights at Hauptstraße 12, call me on +49 170 1234567 or anna@example.com',
    );
    expect(u.description).toContain('Work: Install 6 sockets and 3 ceiling lights');
    expect(u.description).not.toMatch(/Hauptstra|1234567|example\.com|call me|find/i);
  });

  it('never quotes the brief in the letter', () => {
    const brief =
      'Wir suchen drei Installateure in Wien, die bis Mitte Dezember eine Gastherme (Vaillant, 24 kW) tauschen können. Bitte Festpreis anfragen und vergleichen.';
    const u = read(brief);
    const { text } = requestForQuote({
      language: u.language,
      providerName: 'Installateur Brandl',
      fromName: 'Anna Keller',
      need: u.description ?? '',
      place: 'Wien',
      country: 'AT',
      when: u.when,
      respondBy: new Date('2026-11-27T10:00:00Z'),
      unsubscribeUrl: 'http://127.0.0.1/v1/unsubscribe/x',
    });
    expect(text).toContain('  Arbeiten: Eine Gastherme (Vaillant, 24 kW) tauschen\n');
    expect(text).toContain('  Zeitraum: bis zum 15. Dezember 2026\n');
    expect(text).not.toMatch(/Wir suchen|vergleichen|drei Installateure/);
    // the time is said once, in the description
    expect(text.match(/15\. Dezember 2026/g)).toHaveLength(1);
  });

  it('reads an article as no number of providers ("einen Maler", "un plombier")', () => {
    expect(read('Wir suchen einen Maler in München für die Fassade').max_providers).toBe(5);
    expect(read('Je cherche un plombier à Paris pour une fuite').max_providers).toBe(5);
    expect(read('Wir suchen zwei Maler in München für die Fassade').max_providers).toBe(2);
  });
});
