// The demo rows' worker draws from the places it is handed: the gazetteer is parsed once, on the
// thread that starts it (search needs it there anyway), not a second time on the worker.
import { describe, expect, it } from 'vitest';
import { euCities } from './data/gazetteer.ts';
import { demoListing, useDemoCities } from './demo.ts';
import { DEMO_CITY_POPULATION, startDemoRows } from './demo-rows.ts';
import { listingRow, type ListingRow } from './store.ts';

async function all(rows: AsyncIterable<ListingRow[]>): Promise<ListingRow[]> {
  const out: ListingRow[] = [];
  for await (const batch of rows) out.push(...batch);
  return out;
}

describe('demo rows made on a worker', () => {
  it('are the rows this thread makes, from the places this thread hands over', async () => {
    const made = await all(startDemoRows(40, 'demo-rows', 16));
    expect(made).toEqual(Array.from({ length: 40 }, (_, i) => listingRow(demoListing('demo-rows', i))));
  }, 60_000);

  it('come only from the places handed over', async () => {
    // Malta's places: a worker that read the gazetteer itself would draw from all the EU's
    const malta = euCities(DEMO_CITY_POPULATION).filter((p) => p.country === 'MT');
    expect(malta.length).toBeGreaterThan(3);
    const made = await all(startDemoRows(30, 'demo-rows', 10, malta));
    const everywhere = Array.from({ length: 30 }, (_, i) => listingRow(demoListing('demo-rows', i)));
    try {
      useDemoCities(malta);
      const inMalta = Array.from({ length: 30 }, (_, i) => demoListing('demo-rows', i));
      expect(new Set(inMalta.map((l) => l.address.country))).toEqual(new Set(['MT']));
      expect(made).toEqual(inMalta.map(listingRow));
      expect(made).not.toEqual(everywhere);
    } finally {
      useDemoCities(euCities(DEMO_CITY_POPULATION));
    }
  }, 60_000);
});
