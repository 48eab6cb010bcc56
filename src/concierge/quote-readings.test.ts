// The judged set of replies (issue 32): each reply with the reading a careful reader gives it.
// Only the members that matter for the comparison are judged; `readQuote` must give exactly these,
// and `quoteTotal` the like-for-like total the comparison ranks on.
import { describe, expect, it } from 'vitest';
import { readQuote } from './quotes.ts';
import { quoteTotal, rankingTotal } from './totals.ts';

const received = new Date('2026-11-25T10:00:00Z'); // a Wednesday

interface Judged {
  reply: string;
  country: string | null;
  declined?: boolean;
  price_type: string | null;
  amount: string | null;
  amount_high?: string | null;
  currency: string | null;
  vat: string;
  rate?: string | null;
  hours?: [number, number] | null;
  fees?: [string, string | null][];
  includes?: string[];
  excludes?: string[];
  available_from?: string | null;
  valid_until?: string | null;
  no_price_reason?: string | null;
  unit?: string | null;
  /** A unit price's stated quantity and its unit (a range: both ends, then the unit); null: none. */
  quantity?: [number, string] | [number, number, string] | null;
  /** The like-for-like total a careful reader reaches, VAT in (a range's two ends); null: it cannot be known. */
  total?: string | [string, string] | null;
}

const SET: Judged[] = [
  // the Berlin case of the issue
  {
    reply:
      'Hello, we can do it for 289 EUR including parts, call-out fee and VAT. We can come on 2 December.',
    country: 'DE',
    total: '289.00',
    price_type: 'fixed',
    amount: '289.00',
    currency: 'EUR',
    vat: 'gross',
    fees: [],
    includes: ['parts', 'call-out fee', 'VAT'],
    available_from: '2026-12-02',
  },
  {
    reply:
      'Hi, EUR 245.00 plus VAT for the repair. The call-out fee of EUR 35 is extra. Available from Monday.',
    country: 'DE',
    total: '333.20',
    price_type: 'fixed',
    amount: '245.00',
    currency: 'EUR',
    vat: 'net',
    fees: [['call_out', '35.00']],
    available_from: '2026-11-30',
  },
  {
    reply: 'Our rate is 65 EUR per hour, about 3 hours, plus VAT.',
    country: 'DE',
    total: '232.05',
    price_type: 'hourly',
    amount: '65.00',
    currency: 'EUR',
    vat: 'net',
    hours: [3, 3],
  },
  {
    reply: '220 EUR fixed, VAT included.',
    country: 'DE',
    total: '220.00',
    price_type: 'fixed',
    amount: '220.00',
    currency: 'EUR',
    vat: 'gross',
  },
  // German
  {
    reply: 'Festpreis 6.480,00 EUR inkl. 20 % MwSt. und Entsorgung.',
    country: 'AT',
    total: '6480.00',
    price_type: 'fixed',
    amount: '6480.00',
    currency: 'EUR',
    vat: 'gross',
    rate: '20',
    includes: ['20 % MwSt.', 'Entsorgung'],
  },
  {
    reply: 'Stundensatz 58 € netto, geschätzt 2-3 Stunden, zzgl. Anfahrt 25 €.',
    country: 'DE',
    total: ['167.79', '236.81'],
    price_type: 'hourly',
    amount: '58.00',
    currency: 'EUR',
    vat: 'net',
    hours: [2, 3],
    fees: [['call_out', '25.00']],
  },
  {
    reply: 'Guten Tag, wir bieten die Reparatur für 320,- € zzgl. MwSt. an. Anfahrtspauschale 39 € netto.',
    country: 'DE',
    total: '427.21',
    price_type: 'fixed',
    amount: '320.00',
    currency: 'EUR',
    vat: 'net',
    fees: [['call_out', '39.00']],
  },
  {
    reply: 'Gesamtpreis brutto: 1.428,00 EUR (netto 1.200,00 EUR + 19 % MwSt. 228,00 EUR).',
    country: 'DE',
    total: '1428.00',
    price_type: 'fixed',
    amount: '1428.00',
    currency: 'EUR',
    vat: 'gross',
    rate: '19',
    fees: [],
  },
  {
    reply: 'Wir berechnen 75 €/Std. zzgl. Material. Voraussichtlich 4 Stunden.',
    country: 'DE',
    total: null,
    price_type: 'hourly',
    amount: '75.00',
    currency: 'EUR',
    vat: 'unknown',
    hours: [4, 4],
    fees: [['materials', null]],
  },
  {
    reply: 'Die Kosten liegen zwischen 800 und 1.100 Euro inkl. MwSt., je nach Aufwand.',
    country: 'AT',
    total: ['800.00', '1100.00'],
    price_type: 'range',
    amount: '800.00',
    amount_high: '1100.00',
    currency: 'EUR',
    vat: 'gross',
  },
  {
    reply: 'Leider sind wir bis Januar ausgebucht.',
    country: 'DE',
    declined: true,
    price_type: null,
    amount: null,
    currency: null,
    vat: 'unknown',
    no_price_reason: null,
  },
  {
    reply: 'Wir müssten uns das vor Ort ansehen. Besichtigung ist kostenlos.',
    country: 'DE',
    price_type: null,
    amount: null,
    currency: null,
    vat: 'unknown',
    no_price_reason: 'site_visit',
  },
  {
    reply: 'Angebot: 2.350 € inkl. MwSt., gültig bis 31.12.2026. Start ab 7. Dezember möglich.',
    country: 'DE',
    total: '2350.00',
    price_type: 'fixed',
    amount: '2350.00',
    currency: 'EUR',
    vat: 'gross',
    available_from: '2026-12-07',
    valid_until: '2026-12-31',
  },
  {
    reply: 'Preis pro m² 45 € zzgl. MwSt., ca. 20 m².',
    country: 'DE',
    total: '1071.00',
    price_type: 'per_unit',
    amount: '45.00',
    currency: 'EUR',
    vat: 'net',
    unit: 'm²',
    quantity: [20, 'm²'],
  },
  {
    reply: 'Bonjour, pose du carrelage à 38 € HT le m², environ 30 m². TVA 20 %.',
    country: 'FR',
    total: '1368.00',
    price_type: 'per_unit',
    amount: '38.00',
    currency: 'EUR',
    vat: 'net',
    unit: 'm²',
    quantity: [30, 'm²'],
  },
  {
    reply: 'Skirting boards fitted at EUR 14.50 per metre plus VAT, about 12 m in total.',
    country: 'IE',
    total: '214.02',
    price_type: 'per_unit',
    amount: '14.50',
    currency: 'EUR',
    vat: 'net',
    unit: 'metre',
    quantity: [12, 'm'],
  },
  // a range of quantities: the total's two ends (issue 32)
  {
    reply: 'Fliesen verlegen: 45 € pro m² zzgl. MwSt., je nach Raum 15–20 m².',
    country: 'DE',
    total: ['803.25', '1071.00'],
    price_type: 'per_unit',
    amount: '45.00',
    currency: 'EUR',
    vat: 'net',
    unit: 'm²',
    quantity: [15, 20, 'm²'],
  },
  {
    reply: 'We charge EUR 30 per m2 including VAT, for between 15 and 20 square metres.',
    country: 'IE',
    total: ['450.00', '600.00'],
    price_type: 'per_unit',
    amount: '30.00',
    currency: 'EUR',
    vat: 'gross',
    unit: 'm2',
    quantity: [15, 20, 'square metres'],
  },
  {
    reply: 'Bonjour, peinture à 25 € TTC le m², entre 40 et 50 m² selon les pièces.',
    country: 'FR',
    total: ['1000.00', '1250.00'],
    price_type: 'per_unit',
    amount: '25.00',
    currency: 'EUR',
    vat: 'gross',
    unit: 'm²',
    quantity: [40, 50, 'm²'],
  },
  {
    reply: 'Buongiorno, posa a 20 € al metro quadrato IVA inclusa, circa 15-20 mq.',
    country: 'IT',
    total: ['300.00', '400.00'],
    price_type: 'per_unit',
    amount: '20.00',
    currency: 'EUR',
    vat: 'gross',
    quantity: [15, 20, 'mq'],
  },
  {
    // a unit price without its quantity: no total, not a guessed one
    reply: 'Wir berechnen 45 € pro m² zzgl. MwSt.',
    country: 'DE',
    total: null,
    price_type: 'per_unit',
    amount: '45.00',
    currency: 'EUR',
    vat: 'net',
    unit: 'm²',
    quantity: null,
  },
  {
    reply: 'Anzahlung 500 €, Gesamtpreis 2.000 € inkl. MwSt.',
    country: 'DE',
    total: '2000.00',
    price_type: 'fixed',
    amount: '2000.00',
    currency: 'EUR',
    vat: 'gross',
  },
  {
    reply: 'Kleinunternehmer gemäß § 19 UStG: 180 € pauschal.',
    country: 'DE',
    total: '180.00',
    price_type: 'fixed',
    amount: '180.00',
    currency: 'EUR',
    vat: 'exempt',
    rate: '0',
  },
  // French
  {
    reply: 'Entre 300 et 400 € HT, déplacement 40 € TTC. Devis valable 30 jours.',
    country: 'FR',
    total: ['400.00', '520.00'],
    price_type: 'range',
    amount: '300.00',
    amount_high: '400.00',
    currency: 'EUR',
    vat: 'net',
    fees: [['call_out', '40.00']],
    valid_until: '2026-12-25',
  },
  {
    reply: 'A partir de 150 € TTC.',
    country: 'FR',
    total: null,
    price_type: 'from',
    amount: '150.00',
    currency: 'EUR',
    vat: 'gross',
  },
  {
    reply: 'Bonjour, pour ce dépannage comptez 180 € HT, plus 45 € de déplacement.',
    country: 'FR',
    total: '270.00',
    price_type: 'fixed',
    amount: '180.00',
    currency: 'EUR',
    vat: 'net',
    fees: [['call_out', '45.00']],
  },
  {
    reply: "Le devis s'élève à 1 250,00 € TTC, main d'oeuvre et fournitures comprises.",
    country: 'FR',
    total: '1250.00',
    price_type: 'fixed',
    amount: '1250.00',
    currency: 'EUR',
    vat: 'gross',
    fees: [],
  },
  {
    reply: 'Malheureusement nous ne pouvons pas intervenir avant février.',
    country: 'FR',
    declined: true,
    price_type: null,
    amount: null,
    currency: null,
    vat: 'unknown',
  },
  // Spanish
  {
    reply: 'Nuestro presupuesto es de 450 € + IVA. Desplazamiento incluido.',
    country: 'ES',
    total: '544.50',
    price_type: 'fixed',
    amount: '450.00',
    currency: 'EUR',
    vat: 'net',
    fees: [],
    includes: ['Desplazamiento'],
  },
  {
    reply: 'El precio total es 605 euros IVA incluido, podemos empezar el 9 de diciembre.',
    country: 'ES',
    total: '605.00',
    price_type: 'fixed',
    amount: '605.00',
    currency: 'EUR',
    vat: 'gross',
    available_from: '2026-12-09',
  },
  {
    reply: 'Tarifa por hora 40 €, unas 5 horas, IVA no incluido.',
    country: 'ES',
    total: '242.00',
    price_type: 'hourly',
    amount: '40.00',
    currency: 'EUR',
    vat: 'net',
    hours: [5, 5],
    includes: [],
  },
  // Italian
  {
    reply: 'Il preventivo è di 1.200 euro + IVA, valido 30 giorni.',
    country: 'IT',
    total: '1464.00',
    price_type: 'fixed',
    amount: '1200.00',
    currency: 'EUR',
    vat: 'net',
    valid_until: '2026-12-25',
  },
  {
    reply: 'Il costo è di 900 € IVA esclusa, più 50 € di uscita.',
    country: 'IT',
    total: '1159.00',
    price_type: 'fixed',
    amount: '900.00',
    currency: 'EUR',
    vat: 'net',
    fees: [['call_out', '50.00']],
  },
  {
    reply: 'Preventivo: 1.100 euro IVA compresa, smaltimento incluso. Disponibili dal 3 dicembre.',
    country: 'IT',
    total: '1100.00',
    price_type: 'fixed',
    amount: '1100.00',
    currency: 'EUR',
    vat: 'gross',
    includes: ['IVA', 'smaltimento'],
    available_from: '2026-12-03',
  },
  {
    reply: 'Purtroppo non possiamo accettare il lavoro.',
    country: 'IT',
    declined: true,
    price_type: null,
    amount: null,
    currency: null,
    vat: 'unknown',
  },
  // Dutch
  {
    reply: 'Onze prijs is € 750,- excl. btw, voorrijkosten € 45.',
    country: 'NL',
    total: '961.95',
    price_type: 'fixed',
    amount: '750.00',
    currency: 'EUR',
    vat: 'net',
    fees: [['call_out', '45.00']],
    excludes: ['btw'],
  },
  {
    reply: 'Totaalprijs € 1.089,00 incl. 21% btw.',
    country: 'NL',
    total: '1089.00',
    price_type: 'fixed',
    amount: '1089.00',
    currency: 'EUR',
    vat: 'gross',
    rate: '21',
  },
  {
    reply: 'Helaas kunnen wij deze klus niet aannemen.',
    country: 'NL',
    declined: true,
    price_type: null,
    amount: null,
    currency: null,
    vat: 'unknown',
  },
  {
    reply: 'We need to see the job first, can we visit on Thursday?',
    country: 'NL',
    price_type: null,
    amount: null,
    currency: null,
    vat: 'unknown',
    no_price_reason: 'site_visit',
  },
  // Polish, Portuguese, Czech, Swedish
  {
    reply: 'Cena usługi: 1 800 zł netto + 23% VAT. Dojazd gratis.',
    country: 'PL',
    total: '2214.00',
    price_type: 'fixed',
    amount: '1800.00',
    currency: 'PLN',
    vat: 'net',
    rate: '23',
  },
  {
    reply: 'Koszt 2.460 zł brutto, termin od 15 grudnia.',
    country: 'PL',
    total: '2460.00',
    price_type: 'fixed',
    amount: '2460.00',
    currency: 'PLN',
    vat: 'gross',
    available_from: '2026-12-15',
  },
  {
    reply: 'O orçamento é 350 € + IVA, deslocação 30 €.',
    country: 'PT',
    total: '467.40',
    price_type: 'fixed',
    amount: '350.00',
    currency: 'EUR',
    vat: 'net',
    fees: [['call_out', '30.00']],
  },
  {
    reply: 'Our price: 12 000 Kč bez DPH.',
    country: 'CZ',
    total: '14520.00',
    price_type: 'fixed',
    amount: '12000.00',
    currency: 'CZK',
    vat: 'net',
  },
  {
    reply: 'Pris 4 500 kr inkl. moms.',
    country: 'SE',
    total: '4500.00',
    price_type: 'fixed',
    amount: '4500.00',
    currency: 'SEK',
    vat: 'gross',
  },
  // English, other cases
  {
    reply: 'We charge £80 per hour plus VAT, estimated 2 hours.',
    country: null,
    total: null,
    price_type: 'hourly',
    amount: '80.00',
    currency: 'GBP',
    vat: 'net',
    hours: [2, 2],
  },
  {
    reply: 'Price from 199 EUR excl. VAT; final price after inspection.',
    country: 'IE',
    total: null,
    price_type: 'from',
    amount: '199.00',
    currency: 'EUR',
    vat: 'net',
  },
  {
    reply: 'Our quote is 1,450 EUR including VAT at 23%. Valid for 14 days.',
    country: 'IE',
    total: '1450.00',
    price_type: 'fixed',
    amount: '1450.00',
    currency: 'EUR',
    vat: 'gross',
    rate: '23',
    valid_until: '2026-12-09',
  },
  {
    reply: 'Thanks for asking. Please call us to discuss.',
    country: 'DE',
    price_type: null,
    amount: null,
    currency: null,
    vat: 'unknown',
    no_price_reason: 'not_stated',
  },
  {
    reply: 'We can do it for 500 EUR. Materials are extra.',
    country: 'DE',
    total: null,
    price_type: 'fixed',
    amount: '500.00',
    currency: 'EUR',
    vat: 'unknown',
    fees: [['materials', null]],
  },
  {
    reply: 'Labour 300 EUR, materials approx. 150 EUR, all plus VAT.',
    country: 'DE',
    total: '535.50',
    price_type: 'fixed',
    amount: '300.00',
    currency: 'EUR',
    vat: 'net',
    fees: [['materials', '150.00']],
  },
  {
    reply: 'Weekend surcharge of 50 EUR applies; base price 260 EUR incl. VAT.',
    country: 'BE',
    total: '310.00',
    price_type: 'fixed',
    amount: '260.00',
    currency: 'EUR',
    vat: 'gross',
    fees: [['surcharge', '50.00']],
  },
  {
    reply: 'We are not VAT registered. Total 400 EUR.',
    country: 'IE',
    total: '400.00',
    price_type: 'fixed',
    amount: '400.00',
    currency: 'EUR',
    vat: 'exempt',
    rate: '0',
  },
];

describe('the judged set of replies', () => {
  it.each(SET.map((c) => [c.reply.slice(0, 60), c] as const))('reads %s', (_name, c) => {
    const r = readQuote(c.reply, received, c.country);
    const got: Record<string, unknown> = {
      declined: r.declined,
      price_type: r.price_type,
      amount: r.amount,
      currency: r.currency,
      vat: r.vat.basis,
    };
    const want: Record<string, unknown> = {
      declined: c.declined ?? false,
      price_type: c.price_type,
      amount: c.amount,
      currency: c.currency,
      vat: c.vat,
    };
    if (c.amount_high !== undefined) [got.amount_high, want.amount_high] = [r.amount_high, c.amount_high];
    if (c.rate !== undefined) [got.rate, want.rate] = [r.vat.rate, c.rate];
    if (c.hours !== undefined) [got.hours, want.hours] = [r.hours && [r.hours.low, r.hours.high], c.hours];
    if (c.fees !== undefined) [got.fees, want.fees] = [r.fees.map((f) => [f.kind, f.amount]), c.fees];
    if (c.includes !== undefined) [got.includes, want.includes] = [r.includes, c.includes];
    if (c.excludes !== undefined) [got.excludes, want.excludes] = [r.excludes, c.excludes];
    if (c.available_from !== undefined)
      [got.available_from, want.available_from] = [r.available_from, c.available_from];
    if (c.valid_until !== undefined) [got.valid_until, want.valid_until] = [r.valid_until, c.valid_until];
    if (c.no_price_reason !== undefined)
      [got.no_price_reason, want.no_price_reason] = [r.no_price_reason, c.no_price_reason];
    if (c.unit !== undefined) [got.unit, want.unit] = [r.unit, c.unit];
    if (c.quantity !== undefined)
      [got.quantity, want.quantity] = [
        r.quantity &&
          (r.quantity.high === r.quantity.value
            ? [r.quantity.value, r.quantity.unit]
            : [r.quantity.value, r.quantity.high, r.quantity.unit]),
        c.quantity,
      ];
    expect(got).toEqual(want);
  });

  it('brings each to the total a careful reader reaches, and ranks on it', () => {
    const judged = SET.filter((c) => c.total !== undefined);
    expect(judged.length).toBeGreaterThanOrEqual(36);
    for (const c of judged) {
      const q = quoteTotal(readQuote(c.reply, received, c.country), c.country);
      const got = q?.total_high ? [q.total, q.total_high] : (q?.total ?? null);
      expect(got, c.reply).toEqual(c.total);
    }
    // the euro quotes, cheapest first by what they may cost at most: the Berlin case's 289 before 333.20
    const euro = judged.filter((c) => c.currency === 'EUR' && c.total !== null);
    const ranked = [...euro].sort((a, b) => {
      const at = (c: Judged) =>
        rankingTotal(quoteTotal(readQuote(c.reply, received, c.country), c.country)!) ?? 0n;
      return Number(at(a) - at(b));
    });
    const most = (c: Judged) => Number(Array.isArray(c.total) ? c.total[1] : c.total);
    expect(ranked.map(most)).toEqual(euro.map(most).sort((a, b) => a - b));
    expect(ranked.findIndex((c) => c.total === '289.00')).toBeLessThan(
      ranked.findIndex((c) => c.total === '333.20'),
    );
  });

  it('quotes the words every figure came from', () => {
    const r = readQuote(
      'Hi, EUR 245.00 plus VAT for the repair. The call-out fee of EUR 35 is extra.',
      received,
      'DE',
    );
    expect(r.amount_quote).toContain('EUR 245.00 plus VAT');
    expect(r.vat.quote).toContain('plus VAT');
    expect(r.fees[0]?.quote).toContain('EUR 35');
    const hourly = readQuote('Our rate is 65 EUR per hour, about 3 hours, plus VAT.', received, 'DE');
    expect(hourly.hours?.quote).toBe('65 EUR per hour, about 3 hours');
    const perUnit = quoteTotal(
      readQuote('Preis pro m² 45 € zzgl. MwSt., ca. 20 m².', received, 'DE'),
      'DE',
      'de',
    );
    expect(perUnit?.breakdown[0]).toMatchObject({
      label: expect.stringMatching(/^45,00\s€ pro m² × 20 m²$/u),
      amount: '900.00',
    });
    expect(perUnit?.assumptions[0]).toBe('Die Menge laut Antwort: „ca. 20 m²“');
    for (const c of SET) {
      const reading = readQuote(c.reply, received, c.country);
      for (const quote of [
        reading.amount_quote,
        reading.vat.quote,
        reading.vat.rate_quote,
        reading.hours?.quote,
        reading.quantity?.quote,
        reading.validity_quote,
        reading.availability_quote,
        ...reading.fees.map((f) => f.quote),
      ])
        if (quote) expect(c.reply).toContain(quote.replace(/…$/, ''));
    }
  });
});
