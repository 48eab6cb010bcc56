import { describe, expect, it } from 'vitest';
import { dayText, momentText, requestForQuote } from './rfq.ts';

const input = {
  providerName: 'Installateur Brandl',
  fromName: 'Anna Keller',
  need: 'Gewerk: Installateur\nArbeiten: Eine Gastherme tauschen\nOrt: Wien',
  place: 'Wien',
  country: 'AT',
  when: { kind: 'window' as const, from: '2026-12-14', to: '2026-12-20', text: 'week of 14 December' },
  respondBy: new Date('2026-11-27T10:00:00Z'),
  unsubscribeUrl: 'http://127.0.0.1/v1/unsubscribe/x',
};

describe('the request for a quote', () => {
  it('writes dates as each language does, the answer-by time in the provider time zone', () => {
    expect(
      (['en', 'de', 'fr', 'es', 'it', 'nl', 'pl'] as const).map((l) => dayText('2026-12-14', l)),
    ).toEqual([
      '14 December 2026',
      '14. Dezember 2026',
      '14 décembre 2026',
      '14 de diciembre de 2026',
      '14 dicembre 2026',
      '14 december 2026',
      '14 grudnia 2026',
    ]);
    expect(momentText(new Date('2026-11-27T10:00:00Z'), 'de', 'AT')).toBe('27. November 2026 um 11:00 MEZ');
    expect(momentText(new Date('2026-11-27T10:00:00Z'), 'en', null)).toBe('27 November 2026 at 10:00 UTC');
  });

  it('says when the work is wanted as a window, and what the answer should state', () => {
    const { subject, text } = requestForQuote({ ...input, language: 'de' });
    expect(subject).toBe('Anfrage: Angebot in Wien');
    expect(text).toContain(
      'Die Arbeiten sollten zwischen dem 14. Dezember 2026 und dem 20. Dezember 2026 ausgeführt werden.',
    );
    expect(text).toContain('bis 27. November 2026 um 11:00 MEZ');
    expect(text).toContain('- Anfahrt, Fahrtkosten oder sonstige Zuschläge\n');
    expect(text).toContain('Mit freundlichen Grüßen\nAnna Keller\n');
    expect(text).not.toMatch(/\d{4}-\d{2}-\d{2}|Concierge/);
    const en = requestForQuote({
      ...input,
      language: 'en',
      when: { kind: 'by', from: null, to: '2026-12-11', text: null },
    });
    expect(en.text).toContain('The work should be done by 11 December 2026.');
    expect(en.text).toContain('- the total price, and whether it includes VAT (at what rate)\n');
    expect(en.text).not.toMatch(/assistant/);
    const fr = requestForQuote({
      ...input,
      language: 'fr',
      country: 'FR',
      when: { kind: 'from', from: '2026-12-07', to: null, text: null },
    });
    expect(fr.text).toContain('Les travaux sont à réaliser à partir du 7 décembre 2026.');
  });
});
