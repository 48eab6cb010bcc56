// Regression: demo listings named "Autowerkstatt", described as a "Kfz-Werkstatt", were filed
// under 45.40 (motorcycles) and 45.32 (parts retail): names, descriptions and keywords came from
// the thesaurus concept (car_repair serves 45.20, 45.32 and 45.40), not from the class.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../platform/db.ts';
import { CONCEPTS, LANGS } from '../embeddings/thesaurus.ts';
import { CLASS_TERMS } from './data/class-terms.ts';
import { demoListing } from './demo.ts';
import { searchListings } from './search.ts';
import { testDirectory } from './test-db.ts';

const primary = (listing: { activities: { code: string; primary: boolean }[] }) =>
  listing.activities.find((a) => a.primary)?.code ?? '';

/** The concept whose words a listing of `code` was given before it had words of its own. */
const conceptOf = (code: string) => CONCEPTS.find((c) => c.nace.includes(code));

describe('demo listings say what their class is', () => {
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
      /autowerkstatt|kfz-werkstatt|car repair|mechanic|garagiste|autofficina|taller mecánico/i;
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
  beforeAll(async () => {
    db = await testDirectory(2000);
  });
  afterAll(async () => {
    await db.close();
  });

  it.each(['fixing car brakes', 'Bremsen reparieren'])('"%s" finds 45.20 first', async (q) => {
    for (const mode of ['semantic', 'hybrid'] as const) {
      const page = await searchListings(db, { q, mode, limit: 5 }, new Date('2026-11-20T10:00:00Z'), {
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
