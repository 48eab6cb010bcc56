// Regression: demo listings named "Autowerkstatt", described as a "Kfz-Werkstatt", were filed
// under 45.40 (motorcycles) and 45.32 (parts retail): names, descriptions and keywords came from
// the thesaurus concept (car_repair serves 45.20, 45.32 and 45.40), not from the class.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../platform/db.ts';
import { CONCEPTS, LANGS } from '../embeddings/data/thesaurus.ts';
import { CLASS_TERMS } from './data/class-terms.ts';
import { demoListing } from './demo.ts';
import { createSearch, type Search } from './search/search.ts';
import { testDirectory } from '../../contract-tests/support/directory.ts';

const primary = (listing: { activities: { code: string; primary: boolean }[] }) =>
  listing.activities.find((a) => a.primary)?.code ?? '';

/** The concept whose words a listing of `code` was given before it had words of its own. */
const conceptOf = (code: string) => CONCEPTS.find((c) => c.nace.includes(code));

/** Classes that share their concept's words because those words are their trade's too. */
const WORDED_BY_CONCEPT: Record<string, string> = {
  '10.13': 'meat products: a butcher makes them',
  '16.23': "builders' carpentry: a carpenter's trade",
  '43.12': 'site preparation: demolition and earthworks',
  '43.29': 'other installation: a builder',
  '43.39': 'other finishing: a builder',
  '43.99': 'other specialised construction: a builder',
  '47.24': 'bread and cakes retail: a bakery',
  '66.22': 'insurance agents and brokers: an insurance broker',
  '68.32': 'property management on a fee basis: an estate agent',
  '62.02': 'computer consultancy: IT services (its own words would lead to the consulting concept)',
  '81.22': 'industrial cleaning: a cleaning company',
  '81.29': 'other cleaning: a cleaning company',
  '95.22': 'household appliance repair: appliance repair',
};

describe('demo listings say what their class is', () => {
  it("gives every class that is not its concept's first words of its own, or a reason", () => {
    const borrowing: string[] = [];
    for (const concept of CONCEPTS) {
      for (const code of concept.nace.slice(1)) {
        if (CONCEPTS.find((c) => c.nace.includes(code)) !== concept) continue; // worded by another
        if (!CLASS_TERMS[code] && !WORDED_BY_CONCEPT[code]) borrowing.push(`${code} (${concept.id})`);
      }
    }
    expect(borrowing).toEqual([]);
  });

  it("never names or describes a class-worded listing by its concept's trade (3,000 listings)", () => {
    let seen = 0;
    for (let i = 0; i < 3000; i++) {
      const listing = demoListing('test', i);
      const code = primary(listing);
      const concept = conceptOf(code);
      if (!CLASS_TERMS[code] || !concept) continue;
      seen++;
      const text = `${listing.name} ${listing.description ?? ''}`.toLowerCase();
      for (const lang of LANGS) {
        const borrowed = concept.terms[lang].split('|')[0]?.toLowerCase() ?? '';
        const own = CLASS_TERMS[code][lang].toLowerCase();
        if (own.includes(borrowed)) continue; // the class's own words contain it (brewery: "beer")
        expect(text.includes(borrowed), `${code} ${listing.name}: ${borrowed}`).toBe(false);
      }
    }
    expect(seen).toBeGreaterThan(300);
  });

  it('words a motorcycle dealer and a parts shop as such, not as a car workshop', () => {
    const carRepair =
      /autowerkstatt|kfz-werkstatt|car repair|mechanic|garagiste|autofficina|taller mecánico|oficina automóvel|mecânico/i;
    let seen = 0;
    for (let i = 0; i < 3000; i++) {
      const listing = demoListing('test', i);
      if (!['45.32', '45.40'].includes(primary(listing))) continue;
      seen++;
      expect(`${listing.name} ${listing.description ?? ''}`, listing.name).not.toMatch(carRepair);
    }
    expect(seen).toBeGreaterThan(20);
  });
});

describe('semantic search agrees with what listings say', () => {
  let db: Db;
  let search: Search;
  beforeAll(async () => {
    db = await testDirectory(2000);
    search = createSearch(db);
  });
  afterAll(async () => {
    await db.close();
  });

  it.each(['fixing car brakes', 'Bremsen reparieren'])('"%s" finds 45.20 first', async (q) => {
    for (const mode of ['semantic', 'hybrid'] as const) {
      const page = await search.search({ q, mode, limit: 5 }, new Date('2026-11-20T10:00:00Z'), {
        baseUrl: 'https://directory.test',
      });
      expect(page.data.length).toBe(5);
      expect(
        page.data.map((hit) => primary(hit.listing)),
        `${mode}`,
      ).toEqual(Array(5).fill('45.20'));
    }
  });
});
