import { describe, expect, it } from 'vitest';
import type { QuoteReading } from '../../generated/directory/client/types.gen.ts';
import { type Candidate, compare, type Outcome, weightedRating } from './compare.ts';

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
  tradeName: null,
  placeName: 'Wien, Wien, Austria',
};

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
        'Lowest price: 6480.00 EUR',
        'Rated 4.9 from 200 reviews',
        'Available from 2026-12-02, before the deadline 2026-12-11',
      ]),
    );
    expect(result.providers[1]?.cons).toEqual(
      expect.arrayContaining([
        '540.00 EUR dearer than the lowest quote',
        'Available from 2026-12-20, after the deadline 2026-12-11',
      ]),
    );
    expect(result.providers[2]?.cons).toContain('Answered without a price');
    expect(result.providers[3]?.cons).toContain('Did not answer by 2026-11-27T10:00:00Z');
    expect(result.no_answer).toEqual([{ listing_id: d.listing_id, name: 'Delta' }]);
    expect(result.summary).toBe(
      '2 of 4 providers sent a quote. Recommended: Alpha (price 6480.00 EUR, available from 2026-12-02, rated 4.9 from 200 reviews). No answer: Delta.',
    );
    for (let i = 1; i < result.providers.length; i++)
      expect(result.providers[i]!.score).toBeLessThanOrEqual(result.providers[i - 1]!.score);
  });

  it('weighs a rating by its reviews: 4.8 from 200 beats 5.0 from 2', () => {
    expect(weightedRating(4.8, 200)).toBeGreaterThan(weightedRating(5, 2));
    const result = compare([candidate('Few', 5, 2), candidate('Many', 4.8, 200)], new Map(), {
      ...options,
      contact: false,
    });
    expect(result.providers.map((p) => p.name)).toEqual(['Many', 'Few']);
    expect(result.summary).toMatch(/^Compared 2 providers on the directory's data\. Recommended: Many/);
  });

  it('recommends nobody when no contacted provider answered, and writes the summary in the brief language', () => {
    const a = candidate('Alpha', 4.9, 200);
    const result = compare(
      [a],
      new Map([[a.listing_id, { contacted: true, sent_at: 0, replied_at: null, reading: null }]]),
      { ...options, language: 'de' },
    );
    expect(result.recommendation).toBeNull();
    expect(result.summary).toBe(
      '0 von 1 Anbietern haben ein Angebot geschickt. Kein Anbieter passt gut genug, um ihn zu empfehlen. Keine Antwort: Alpha.',
    );
  });
});
