import { describe, expect, it } from 'vitest';
import { ownWords, parseAmount, readQuote } from './quotes.ts';

const today = new Date('2026-11-25T10:00:00Z');

describe('reading a provider answer', () => {
  it('parses amounts in European and English notation', () => {
    expect(
      ['6.480,00', '6,480.00', '7 020', '7020', '7.020', '1.234.567,5', '99,9', "1'250.00"].map(parseAmount),
    ).toEqual(['6480.00', '6480.00', '7020.00', '7020.00', '7020.00', '1234567.50', '99.90', '1250.00']);
    expect(parseAmount('12.34.5')).toBeNull();
    // every grouping sign of CLDR's EU locales: no-break space, narrow no-break space, apostrophes
    expect(
      ['2\u00a0150,00', '2\u202f150,00', '2\u2009150,00', '2’150.00', '2 150,00'].map(parseAmount),
    ).toEqual(Array(5).fill('2150.00'));
  });

  it('reads "2 150,00 € TTC" as French mail clients write it, whatever space groups it', () => {
    for (const space of ['\u00a0', '\u202f', ' ']) {
      const reading = readQuote(
        `Bonjour, notre devis : 2${space}150,00\u00a0€ TTC, disponible le 14/12/2026.`,
        today,
        'FR',
      );
      expect(reading, JSON.stringify(space)).toMatchObject({ amount: '2150.00', currency: 'EUR' });
    }
  });

  it('reads the price, the first day and the conditions, in several languages', () => {
    expect(
      readQuote(
        'Guten Tag,\n\nwir können am 2. Dezember kommen. Festpreis 6.480,00 EUR inkl. 20 % MwSt. und Entsorgung.\n\nAm 25.11.2026 schrieb Anna Keller:\n> bis 11.12.2026, Budget 9.000 EUR',
        today,
      ),
    ).toMatchObject({
      declined: false,
      amount: '6480.00',
      currency: 'EUR',
      available_from: '2026-12-02',
      conditions: ['inkl. 20 % MwSt.'],
      includes: ['20 % MwSt.', 'Entsorgung'],
      vat: { basis: 'gross', rate: '20', quote: 'inkl. 20 % MwSt.', rate_quote: '20 % MwSt.' },
    });
    expect(
      readQuote('Hello, our price is € 7,020.00 including VAT, we can start from December 5.', today),
    ).toMatchObject({
      amount: '7020.00',
      available_from: '2026-12-05',
      conditions: ['including VAT'],
    });
    expect(
      readQuote('Bonjour, notre devis : 5 900 € TTC, disponible à partir du 3 décembre.', today),
    ).toMatchObject({
      amount: '5900.00',
      available_from: '2026-12-03',
      conditions: ['TTC'],
    });
    expect(readQuote('Dzień dobry, cena 12 500 zł brutto, termin od 10 grudnia.', today)).toMatchObject({
      amount: '12500.00',
      currency: 'PLN',
      available_from: '2026-12-10',
    });
    expect(readQuote('Buongiorno, il preventivo è di 3.200 euro IVA inclusa.', today)).toMatchObject({
      amount: '3200.00',
      conditions: ['IVA inclusa'],
    });
  });

  it('prefers the amount called a price to a larger one that is not', () => {
    expect(
      readQuote('Der Kessel allein kostet im Handel 9.900 EUR. Unser Festpreis: 6.200 EUR.', today).amount,
    ).toBe('6200.00');
  });

  it('reads a currency word only where it stands alone: "environ 30" is not 30 RON', () => {
    // the end of a word ("envi-ron", "lo-ft") is no currency, so these answers name no price
    for (const reply of [
      'Bonjour, nous pouvons venir lundi. Il y a environ 30 m² de carrelage à poser.',
      'Hello, the loft 40 m² needs new boards; we will send the price next week.',
    ]) {
      expect(readQuote(reply, today), reply).toMatchObject({ amount: null, currency: null });
    }
    // and where it stands alone, it is read
    expect(readQuote('Bonjour, environ 30 m² : 1 200 € TTC.', today)).toMatchObject({
      amount: '1200.00',
      currency: 'EUR',
    });
    expect(readQuote('Bună ziua, prețul este 1.500 RON cu TVA.', today)).toMatchObject({
      amount: '1500.00',
      currency: 'RON',
    });
    expect(readQuote('Jó napot, az ár 40 000 Ft áfával.', today)).toMatchObject({
      amount: '40000.00',
      currency: 'HUF',
    });
  });

  it('knows a refusal, and an answer without a price', () => {
    expect(readQuote('Leider haben wir im Dezember keine Kapazität.', today)).toMatchObject({
      declined: true,
      amount: null,
    });
    expect(readQuote('Please call us on Monday to discuss it.', today)).toMatchObject({
      declined: false,
      amount: null,
      excerpt: 'Please call us on Monday to discuss it.',
    });
  });

  it('reads only the provider own words, not the request quoted below', () => {
    expect(ownWords('Yes, 500 EUR.\n\nOn Tue, 25 Nov 2026 Anna wrote:\n> Budget 9000 EUR')).toBe(
      'Yes, 500 EUR.',
    );
    expect(ownWords("Oui.\n-----Message d'origine-----\nBudget")).toBe('Oui.');
  });
});
