import { describe, expect, it } from 'vitest';
import type { QuoteReading } from '../../generated/directory/client/types.gen.ts';
import { type Candidate, compare, type Outcome, weightedRating } from './compare.ts';
import { readQuote } from './quotes.ts';

const candidate = (id: string, rating: number, reviews: number, distance = 2): Candidate => ({
  listing_id: `lst_${id.padEnd(26, '0')}`,
  name: id,
  city: 'Wien',
  distance_km: distance,
  rating,
  review_count: reviews,
  claimed: true,
  response_hours: null,
});
const reading = (amount: string | null, from: string | null = null): QuoteReading => ({
  declined: false,
  price_type: amount ? 'fixed' : null,
  amount,
  amount_high: null,
  currency: amount ? 'EUR' : null,
  amount_quote: amount ? `Price ${amount} EUR` : null,
  estimate: false,
  unit: null,
  hours: null,
  quantity: null,
  vat: { basis: 'unknown', rate: null, quote: null, rate_quote: null },
  fees: [],
  includes: [],
  excludes: [],
  available_from: from,
  availability_quote: null,
  valid_until: null,
  validity_quote: null,
  no_price_reason: amount ? null : 'not_stated',
  conditions: [],
  excerpt: amount ? `Price ${amount} EUR.` : 'Call us.',
  read_by: 'rules',
  dropped: [],
});
const options = {
  contact: true,
  language: 'en' as const,
  deadline: '2026-12-11',
  respondBy: '2026-11-27T10:00:00Z',
  tradeTerm: 'plumbers',
  placeName: 'Wien, Wien, Austria',
  country: 'AT',
  askedFor: 4,
  shortlisted: 4,
  radiusKm: 25,
};

describe('quotes in other currencies', () => {
  const zloty = (amount: string): QuoteReading => ({ ...reading(amount), currency: 'PLN' });
  const euro = candidate('Euro', 4.5, 50);
  const pln = candidate('Zloty', 4.5, 50);
  const outcomes = new Map<string, Outcome>([
    [euro.listing_id, { contacted: true, sent_at: 0, replied_at: 600, reading: reading('1500.00') }],
    [pln.listing_id, { contacted: true, sent_at: 0, replied_at: 600, reading: zloty('5000.00') }],
  ]);

  it('converts at the configured dated rate, ranks on it, and shows the rate and its day', () => {
    const result = compare([euro, pln], outcomes, {
      ...options,
      rates: { rates: { PLN: '0.2351' }, date: '2026-12-01' },
    });
    // 5,000 PLN at 0.2351 is 1,175.50 EUR: cheaper than 1,500 EUR
    expect(result.providers.map((p) => p.name)).toEqual(['Zloty', 'Euro']);
    expect(result.recommendation).toBe(pln.listing_id);
    expect(result.providers[0]!.quote!.converted).toEqual({
      currency: 'EUR',
      total: '1175.50',
      total_high: null,
      rate: '0.2351',
      rate_date: '2026-12-01',
    });
    expect(result.providers[0]!.pros).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^€1,175\.50 in the comparison: 1 PLN at €0\.2351 \(rate of 1 December 2026\)$/,
        ),
      ]),
    );
    expect(result.providers[1]!.cons).toEqual(
      expect.arrayContaining([expect.stringMatching(/^€324\.50 dearer than the lowest total/)]),
    );
  });

  it('without a rate: not compared by price, never ranked over a comparable quote, and says why', () => {
    const result = compare([pln, euro], outcomes, options);
    expect(result.providers.map((p) => p.name)).toEqual(['Euro', 'Zloty']);
    expect(result.providers[1]!.quote!.converted).toBeNull();
    expect(result.providers[1]!.cons).toContain('Quoted in PLN, not compared by price');
  });

  it("knows the lev's fixed rate without configuration", () => {
    const lev = candidate('Lev', 4.5, 50);
    const result = compare(
      [lev, euro],
      new Map<string, Outcome>([
        [euro.listing_id, { contacted: true, sent_at: 0, replied_at: 600, reading: reading('1500.00') }],
        [
          lev.listing_id,
          {
            contacted: true,
            sent_at: 0,
            replied_at: 600,
            reading: { ...reading('1955.83'), currency: 'BGN' },
          },
        ],
      ]),
      options,
    );
    expect(result.providers[0]!.name).toBe('Lev');
    expect(result.providers[0]!.quote!.converted).toMatchObject({ total: '1000.00', rate: '0.51129188' });
  });
});

describe('the comparison', () => {
  it('ranks the cheaper, better-rated quote first, then dearer quotes, answers without price, and silence last', () => {
    const a = candidate('Alpha', 4.9, 200);
    const b = candidate('Beta', 4.2, 40);
    const c = candidate('Gamma', 5, 3, 0.5);
    const d = candidate('Delta', 4.8, 90);
    const outcomes = new Map<string, Outcome>([
      [
        a.listing_id,
        { contacted: true, sent_at: 0, replied_at: 3600, reading: reading('6480.00', '2026-12-02') },
      ],
      [
        b.listing_id,
        { contacted: true, sent_at: 0, replied_at: 7200, reading: reading('7020.00', '2026-12-20') },
      ],
      [c.listing_id, { contacted: true, sent_at: 0, replied_at: 600, reading: reading(null) }],
      [d.listing_id, { contacted: true, sent_at: 0, replied_at: null, reading: null }],
    ]);
    const result = compare([d, c, b, a], outcomes, options);
    expect(result.providers.map((p) => p.name)).toEqual(['Alpha', 'Beta', 'Gamma', 'Delta']);
    expect(result.recommendation).toBe(a.listing_id);
    expect(result.providers[0]?.pros).toEqual(
      expect.arrayContaining([
        'Lowest total: €6,480.00 incl. VAT',
        'Rated 4.9 from 200 reviews',
        'Available from 2 December 2026, before the deadline (11 December 2026)',
      ]),
    );
    expect(result.providers[1]?.cons).toEqual(
      expect.arrayContaining([
        '€540.00 dearer than the lowest total (€7,020.00 against €6,480.00 incl. VAT)',
        'Available only from 20 December 2026, after the deadline (11 December 2026)',
      ]),
    );
    expect(result.providers[2]?.cons).toContain('Answered without a price');
    expect(result.providers[3]?.cons).toContain('Did not answer by 27 November 2026 at 11:00 CET');
    expect(result.no_answer).toEqual([{ listing_id: d.listing_id, name: 'Delta' }]);
    expect(result.summary).toBe(
      '2 of 4 providers sent a quote. Recommended: Alpha (total €6,480.00 incl. VAT, available from 2 December 2026, rated 4.9 from 200 reviews). No answer: Delta.',
    );
    for (let i = 1; i < result.providers.length; i++)
      expect(result.providers[i]!.score).toBeLessThanOrEqual(result.providers[i - 1]!.score);
  });

  it('weighs a rating by its reviews: 4.8 from 200 beats 5.0 from 2', () => {
    expect(weightedRating(4.8, 200)).toBeGreaterThan(weightedRating(5, 2));
    const result = compare([candidate('Few', 5, 2), candidate('Many', 4.8, 200)], new Map(), {
      ...options,
      contact: false,
      askedFor: 2,
      shortlisted: 2,
    });
    expect(result.providers.map((p) => p.name)).toEqual(['Many', 'Few']);
    expect(result.summary).toMatch(/^Compared 2 providers on the directory's data\. Recommended: Many/);
  });

  it('recommends nobody when no contacted provider answered, and writes the summary in the brief language', () => {
    const a = candidate('Alpha', 4.9, 200);
    const result = compare(
      [a],
      new Map([[a.listing_id, { contacted: true, sent_at: 0, replied_at: null, reading: null }]]),
      { ...options, language: 'de', askedFor: 1, shortlisted: 1 },
    );
    expect(result.recommendation).toBeNull();
    expect(result.summary).toBe(
      '0 von 1 Anbietern haben ein Angebot geschickt. Kein Anbieter passt gut genug, um ihn zu empfehlen. Keine Antwort: Alpha.',
    );
  });

  // issue 32: three plumbers in Berlin, as a new user tried it
  const received = new Date('2026-11-25T10:00:00Z');
  const answered = (text: string): Outcome => ({
    contacted: true,
    sent_at: 0,
    replied_at: 3600,
    reading: readQuote(text, received, 'DE'),
  });
  const berlin = {
    ...options,
    placeName: 'Berlin, Germany',
    country: 'DE',
    deadline: null,
    askedFor: 2,
    shortlisted: 2,
  };

  it('ranks 289 EUR all-in before 245 EUR plus VAT plus a 35 EUR call-out fee (333.20 EUR)', () => {
    const a = candidate('Net', 4.6, 80);
    const b = candidate('Gross', 4.6, 80);
    const result = compare(
      [a, b],
      new Map([
        [
          a.listing_id,
          answered('Hi, EUR 245.00 plus VAT for the repair. The call-out fee of EUR 35 is extra.'),
        ],
        [b.listing_id, answered('Hello, we can do it for 289 EUR including parts, call-out fee and VAT.')],
      ]),
      berlin,
    );
    expect(result.providers.map((p) => [p.name, p.quote?.total])).toEqual([
      ['Gross', '289.00'],
      ['Net', '333.20'],
    ]);
    const [gross, net] = result.providers;
    expect(gross?.pros).toContain('Lowest total: €289.00 incl. VAT');
    expect(gross?.pros).toContain('Includes parts, call-out fee, VAT');
    expect(net?.cons).toContain('€44.20 dearer than the lowest total (€333.20 against €289.00 incl. VAT)');
    // "plus VAT" is never a pro
    expect(net?.pros.join(' ')).not.toMatch(/VAT/);
    expect(net?.quote).toMatchObject({
      amount: '245.00',
      vat_basis: 'net',
      vat_rate: '19',
      comparable: true,
      breakdown: [
        { kind: 'price', amount: '245.00', quote: 'EUR 245.00 plus VAT for the repair' },
        { kind: 'fee', label: 'call-out fee', amount: '35.00', quote: 'call-out fee of EUR 35 is extra' },
        { kind: 'vat', label: 'VAT 19%', amount: '53.20', quote: null },
      ],
    });
    expect(net?.quote?.assumptions).toContain(
      'VAT 19% added (the standard rate in Germany): the reply says "EUR 245.00 plus VAT" without a rate',
    );
    expect(result.recommendation).toBe(b.listing_id);
    expect(result.summary).toMatch(/Recommended: Gross \(total €289\.00 incl\. VAT/);
  });

  it('compares an hourly rate times the stated hours, VAT added, with a fixed price', () => {
    const a = candidate('Hourly', 4.6, 80);
    const b = candidate('Fixed', 4.6, 80);
    const result = compare(
      [a, b],
      new Map([
        [a.listing_id, answered('65 EUR per hour, about 3 hours, plus VAT.')],
        [b.listing_id, answered('220 EUR fixed, VAT included.')],
      ]),
      berlin,
    );
    expect(result.providers.map((p) => [p.name, p.quote?.total])).toEqual([
      ['Fixed', '220.00'],
      ['Hourly', '232.05'],
    ]);
    expect(result.providers[1]?.quote?.breakdown[0]).toMatchObject({
      label: '€65.00 per hour × 3 hours',
      amount: '195.00',
    });
  });

  it('ranks a quote whose total cannot be known after the known ones, and says why', () => {
    const a = candidate('From', 4.9, 300);
    const b = candidate('Rate', 4.9, 300);
    const c = candidate('Extra', 4.9, 300);
    const d = candidate('Known', 3.9, 12);
    const result = compare(
      [a, b, c, d],
      new Map([
        [a.listing_id, answered('Price from 99 EUR incl. VAT.')],
        [b.listing_id, answered('We charge 50 EUR per hour incl. VAT.')],
        [c.listing_id, answered('We can do it for 150 EUR incl. VAT. Materials are extra.')],
        [d.listing_id, answered('Our price is 400 EUR incl. VAT.')],
      ]),
      berlin,
    );
    expect(result.providers[0]?.name).toBe('Known');
    const why = Object.fromEntries(result.providers.map((p) => [p.name, p.quote?.not_comparable_reason]));
    expect(why).toEqual({
      Known: null,
      From: 'Only a starting price: from €99.00',
      Rate: 'A rate of €50.00 per hour, without the hours of work',
      Extra: 'Materials extra, without a price',
    });
    expect(result.providers.find((p) => p.name === 'Extra')?.cons).toContain(
      'Total unknown: Materials extra, without a price',
    );
  });

  it('adds the provider country rate, or the stated one, and takes an unsaid VAT as included', () => {
    const total = (text: string, country: string) => {
      const a = candidate('A', 4, 10);
      return compare([a], new Map([[a.listing_id, answered(text)]]), { ...berlin, country }).providers[0]
        ?.quote;
    };
    expect(total('Il preventivo è di 1.200 euro + IVA.', 'IT')).toMatchObject({
      total: '1464.00',
      vat_rate: '22',
    });
    expect(total('Devis : 180 € HT, TVA 10 %.', 'FR')).toMatchObject({ total: '198.00', vat_rate: '10' });
    expect(total('Entre 300 et 400 € HT, déplacement 40 € TTC.', 'FR')).toMatchObject({
      total: '400.00',
      total_high: '520.00',
    });
    const unsaid = total('Our price is 500 EUR.', 'DE');
    expect(unsaid).toMatchObject({ total: '500.00', vat_basis: 'unknown' });
    expect(unsaid?.assumptions.join(' ')).toMatch(/does not say whether VAT is included/);
    expect(total('Kleinunternehmer gemäß § 19 UStG: 180 € zzgl. Anfahrt 20 €.', 'DE')).toMatchObject({
      total: '200.00',
      vat_basis: 'exempt',
    });
  });

  it('says how many were asked for, and why fewer were compared', () => {
    const a = candidate('Alone', 4.5, 30);
    const result = compare([a], new Map([[a.listing_id, answered('Our price is 400 EUR incl. VAT.')]]), {
      ...berlin,
      askedFor: 3,
      shortlisted: 1,
      language: 'de',
    });
    expect(result).toMatchObject({
      asked_for: 3,
      contacted: 1,
      shortfall:
        '3 Anbieter gewünscht; die Suche hat nur 1 gefunden (plumbers im Umkreis von 25 km um Berlin)',
    });
    expect(result.summary).toContain('3 Anbieter waren gewünscht; nur 1 konnten verglichen werden.');
    const enough = compare([a], new Map(), { ...berlin, contact: false, askedFor: 1, shortlisted: 1 });
    expect(enough).toMatchObject({ asked_for: 1, contacted: null, shortfall: null });
    expect(enough.summary).toMatch(/^Compared 1 provider on the directory's data\./);
  });

  // a German brief, German replies: every word of the comparison is German
  const german = () => {
    const [a, b, c, d, e] = [
      candidate('Netto', 4.6, 80),
      candidate('Brutto', 4.6, 80),
      candidate('AbPreis', 3.1, 12, 30),
      candidate('Absage', 4, 3),
      candidate('Still', 4.5, 40),
    ];
    return {
      candidates: [a, b, c, d, e],
      outcomes: new Map<string, Outcome>([
        [
          a.listing_id,
          answered('Guten Tag, 245,00 € zzgl. MwSt. für die Reparatur, Anfahrtspauschale 35 € extra.'),
        ],
        [
          b.listing_id,
          answered(
            'Guten Tag, Festpreis 289 € inkl. Material, Anfahrt und MwSt., Termin ab 2. Dezember möglich.',
          ),
        ],
        [c.listing_id, answered('Ab 99 € inkl. MwSt.')],
        [d.listing_id, answered('Wir sind leider ausgebucht und können den Auftrag nicht übernehmen.')],
        [e.listing_id, { contacted: true, sent_at: 0, replied_at: null, reading: null }],
      ]),
    };
  };
  const words = (r: ReturnType<typeof compare>) => [
    r.summary,
    r.shortfall ?? '',
    ...r.providers.flatMap((p) => [
      ...p.pros,
      ...p.cons,
      ...(p.quote?.assumptions ?? []),
      p.quote?.not_comparable_reason ?? '',
      ...(p.quote?.breakdown.filter((l) => l.kind !== 'fee').map((l) => l.label) ?? []),
    ]),
  ];

  it('writes pros, cons and assumptions of a German brief in German, money as German writes it', () => {
    const { candidates, outcomes } = german();
    const result = compare(candidates, outcomes, {
      ...berlin,
      language: 'de',
      deadline: '2026-12-11',
      askedFor: 6,
      shortlisted: 5,
    });
    const by = Object.fromEntries(result.providers.map((p) => [p.name, p]));
    expect(result.providers.map((p) => p.name)).toEqual(['Brutto', 'Netto', 'AbPreis', 'Absage', 'Still']);
    expect(by.Brutto?.pros).toEqual(
      expect.arrayContaining([
        'Günstigster Gesamtpreis: 289,00\u00a0€ inkl. MwSt.',
        'Im Preis enthalten: Material, Anfahrt, MwSt',
        'Bewertung 4,6 aus 80 Bewertungen',
        'Verfügbar ab 2. Dezember 2026, vor der Frist (11. Dezember 2026)',
        'Antwort innerhalb einer Stunde',
      ]),
    );
    expect(by.Netto?.cons).toEqual([
      '44,20\u00a0€ teurer als der günstigste Gesamtpreis (333,20\u00a0€ gegenüber 289,00\u00a0€ inkl. MwSt.)',
    ]);
    // "zzgl. MwSt." is never a pro
    expect(by.Netto?.pros.join(' ')).not.toMatch(/MwSt/);
    expect(by.Netto?.quote?.assumptions).toEqual([
      'Anfahrtspauschale wie der Preis als Nettobetrag (zzgl. MwSt.) gerechnet',
      'MwSt. 19\u00a0% hinzugerechnet (Regelsatz Deutschland): die Antwort nennt „zzgl. MwSt.“ ohne Steuersatz',
    ]);
    expect(by.Netto?.quote?.breakdown.map((l) => l.label)).toEqual([
      '245,00\u00a0€',
      'Anfahrtspauschale',
      'MwSt. 19\u00a0%',
    ]);
    expect(by.AbPreis?.cons).toEqual(
      expect.arrayContaining([
        'Gesamtpreis unbekannt: Nur ein Ab-Preis: ab 99,00\u00a0€',
        'Bewertung nur 3,1 aus 12 Bewertungen',
        '30 km von Berlin entfernt',
      ]),
    );
    expect(by.Absage?.cons).toEqual(['Nur 3 Bewertungen', 'Hat den Auftrag abgelehnt']);
    expect(by.Still?.cons).toEqual(['Keine Antwort bis 27. November 2026 um 11:00 MEZ']);
    expect(result.shortfall).toBe(
      '6 Anbieter gewünscht; die Suche hat nur 5 gefunden (plumbers im Umkreis von 25 km um Berlin)',
    );
    expect(result.summary).toContain(
      'Empfehlung: Brutto (Gesamtpreis 289,00\u00a0€ inkl. MwSt., verfügbar ab 2. Dezember 2026',
    );
    // no English template leaks into a German comparison (the trade word is the search's)
    const english =
      /\b(?:VAT|Lowest|dearer|against|Rated|reviews?|Available|Answered|answer|Declined|Includes|Excludes|added|reply|rate|hours?|Total|unknown|Only|from|extra|without|price)\b/;
    for (const text of words(result)) expect(text.replace('plumbers', '')).not.toMatch(english);
  });

  it('writes each language of the directory in its own words', () => {
    const { candidates, outcomes } = german();
    const run = (language: 'en' | 'de' | 'fr' | 'es' | 'it' | 'nl' | 'pl') =>
      compare(candidates, outcomes, {
        ...berlin,
        language,
        deadline: '2026-12-11',
        askedFor: 6,
        shortlisted: 5,
      });
    const expected = {
      en: [
        'Lowest total: €289.00 incl. VAT',
        '€44.20 dearer than the lowest total (€333.20 against €289.00 incl. VAT)',
      ],
      de: [
        'Günstigster Gesamtpreis: 289,00\u00a0€ inkl. MwSt.',
        '44,20\u00a0€ teurer als der günstigste Gesamtpreis (333,20\u00a0€ gegenüber 289,00\u00a0€ inkl. MwSt.)',
      ],
      fr: [
        'Total le plus bas : 289,00\u00a0€ TTC',
        '44,20\u00a0€ de plus que le total le plus bas (333,20\u00a0€ contre 289,00\u00a0€ TTC)',
      ],
      es: [
        'Total más bajo: 289,00\u00a0€ IVA incluido',
        '44,20\u00a0€ más caro que el total más bajo (333,20\u00a0€ frente a 289,00\u00a0€, IVA incluido)',
      ],
      it: [
        'Totale più basso: 289,00\u00a0€ IVA inclusa',
        '44,20\u00a0€ in più rispetto al totale più basso (333,20\u00a0€ contro 289,00\u00a0€ IVA inclusa)',
      ],
      nl: [
        'Laagste totaal: €\u00a0289,00 incl. btw',
        '€\u00a044,20 duurder dan het laagste totaal (€\u00a0333,20 tegen €\u00a0289,00 incl. btw)',
      ],
      pl: [
        'Najniższa łączna cena: 289,00\u00a0€ brutto',
        'O 44,20\u00a0€ drożej niż najniższa łączna cena (333,20\u00a0€ wobec 289,00\u00a0€ brutto)',
      ],
    } as const;
    const seen = new Map<string, string>();
    for (const [language, [lowest, dearer]] of Object.entries(expected)) {
      const result = run(language as keyof typeof expected);
      expect(result.providers[0]?.pros).toContain(lowest);
      expect(result.providers[1]?.cons).toContain(dearer);
      // no two languages share a sentence
      for (const text of words(result).filter((t) =>
        /\p{L}{4}/u.test(t.replace(/plumbers|Berlin|Still/g, '')),
      )) {
        expect([undefined, language], `${language}: ${text}`).toContain(seen.get(text));
        seen.set(text, language);
      }
    }
    expect(run('fr').providers[1]?.quote?.assumptions).toContain(
      'TVA de 19\u00a0% ajoutée (taux normal, Allemagne) : la réponse indique « zzgl. MwSt. » sans taux',
    );
    expect(run('pl').providers.find((p) => p.name === 'Absage')?.cons).toContain('Odmowa przyjęcia zlecenia');
  });
});
