// GET /v1/search understanding what people type, through the generated SDK against the real
// directory API on both storage paths: a place inside q (read as a location, said in
// `interpreted`, undone by interpret=false), a company named like a place, `city` by any of its
// names with its districts, an unknown city's 400, and typos.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../generated/directory/client/client/index.ts';
import { searchListings } from '../generated/directory/client/sdk.gen.ts';
import type { SearchListingsData } from '../generated/directory/client/types.gen.ts';
import { demoListing } from '../src/directory/demo.ts';
import { insertListings, type ListingRecord } from '../src/directory/store.ts';
import { type Storage, startTestServers, storages, type TestServers } from './support/server.ts';
import { explain, operations, responseValidator } from './support/spec.ts';

const STORAGES = await storages();
const validate = responseValidator(
  operations('directory').find((o) => o.operationId === 'searchListings')!,
  '200',
);
type Query = NonNullable<SearchListingsData['query']>;

const TRADES = {
  plumber: { code: '43.22', name: 'Plumbing, heat and air-conditioning installation', word: 'Klempner' },
  dentist: { code: '86.23', name: 'Dental practice activities', word: 'Zahnarzt' },
  restaurant: { code: '56.10', name: 'Restaurants and mobile food service activities', word: 'Restaurant' },
} as const;

/** A listing of `trade` at a place, on a demo listing's other fields. */
function fixture(
  i: number,
  trade: keyof typeof TRADES,
  name: string,
  place: { city: string; district: string | null; region: string; lat: number; lon: number },
  street = 'Hauptstraße',
): ListingRecord {
  const base = demoListing('understanding', i);
  const t = TRADES[trade];
  return {
    ...base,
    name,
    legal_name: null,
    activities: [{ code: t.code, name: t.name, primary: true }],
    description: `${t.word} in ${place.city}.`,
    languages: ['de'],
    address: {
      street,
      house_number: String(i + 1),
      postal_code: '10115',
      city: place.city,
      district: place.district,
      region: place.region,
      country: 'DE',
      formatted: `${street} ${i + 1}, 10115 ${place.city}, Germany`,
    },
    geo: { lat: place.lat + i / 2000, lon: place.lon },
  };
}

const BERLIN_PLUMBERS = ['Klempner Becker', 'Sanitär Wolf', 'Rohr Richter', 'Haustechnik Koch'];
const TEGEL = { city: 'Berlin', district: 'Tegel', region: 'Berlin', lat: 52.576, lon: 13.294 };
const LANKWITZ = { city: 'Berlin', district: 'Lankwitz', region: 'Berlin', lat: 52.436, lon: 13.346 };
const MUNCHEN = { city: 'München', district: null, region: 'Bayern', lat: 48.137, lon: 11.575 };
const HAMBURG = { city: 'Hamburg', district: null, region: 'Hamburg', lat: 53.55, lon: 9.99 };

describe.each(STORAGES)('understanding q on %s', (storage: Storage) => {
  let servers: TestServers;
  let client: ReturnType<typeof createClient>;

  beforeAll(async () => {
    servers = await startTestServers(storage, { which: ['directory'], env: { DEMO_LISTINGS: '300' } });
    client = createClient({ baseUrl: servers.urls.directory!, auth: servers.adminKey });
    const fixtures = [
      fixture(0, 'plumber', 'Klempner Becker', TEGEL),
      fixture(1, 'plumber', 'Sanitär Wolf', TEGEL),
      fixture(2, 'plumber', 'Rohr Richter', LANKWITZ),
      fixture(3, 'plumber', 'Haustechnik Koch', LANKWITZ),
      fixture(4, 'plumber', 'Klempner Hansen', HAMBURG),
      fixture(5, 'plumber', 'Klempner Jansen', HAMBURG),
      fixture(6, 'dentist', 'Praxis Huber', MUNCHEN),
      fixture(7, 'dentist', 'Zahnarzt München', MUNCHEN),
      fixture(8, 'dentist', 'Dr. Keller', MUNCHEN),
      fixture(9, 'dentist', 'Zahnarzt Hamburg', HAMBURG),
      fixture(11, 'dentist', 'Praxis am Dom', { ...MUNCHEN, lat: 48.1372, lon: 11.5755 }, 'Marienplatz'),
      fixture(12, 'plumber', 'Sanitär am Platz', { ...MUNCHEN, lat: 48.1374, lon: 11.5752 }, 'Marienplatz'),
      fixture(10, 'restaurant', 'Paris Bar', {
        ...TEGEL,
        district: 'Charlottenburg',
        lat: 52.506,
        lon: 13.322,
      }),
    ];
    await servers.platform.db.transaction((tx) => insertListings(tx, fixtures));
  });
  afterAll(async () => servers?.stop());

  async function search(query: Query) {
    const res = await searchListings({ client, query });
    expect(res.response?.status, JSON.stringify(res.error)).toBe(200);
    expect(validate(res.data), explain(validate)).toBe(true);
    return res.data!;
  }

  for (const mode of ['keyword', 'hybrid'] as const) {
    it(`${mode}: a place in q is a location, in any language, and says so`, async () => {
      // Portuguese as written in Portugal and in Brazil ("Berlim"), for listings written in German
      for (const q of [
        'plumber in Berlin',
        'Klempner Berlin',
        'Sanitär in Berlin',
        'canalizador em Berlim',
        'encanadores em Berlin',
      ]) {
        const page = await search({ q, mode, limit: 5 });
        expect(page.interpreted?.place?.name, q).toBe('Berlin');
        expect(page.interpreted?.place?.country).toBe('DE');
        expect(page.interpreted?.place?.radius_km).toBeGreaterThan(10);
        expect(page.interpreted?.q).toBe(q.replace(/ ((in|em) )?Berli[nm]$/, ''));
        // the four above, and any plumber of the demo listings in Berlin
        expect(page.data.length, q).toBeGreaterThanOrEqual(4);
        expect(page.data.map((h) => h.listing.name)).toEqual(expect.arrayContaining(BERLIN_PLUMBERS));
        for (const hit of page.data) {
          expect(hit.listing.address.city).toBe('Berlin');
          expect(hit.listing.activities[0]!.code).toBe('43.22');
          expect(hit.signals.distance_km).not.toBeNull();
        }
      }
      const dentists = await search({ q: 'Zahnarzt München', mode, limit: 5 });
      expect(dentists.interpreted?.place?.name).toBe('München');
      expect(dentists.data.map((h) => h.listing.name)).toEqual(
        expect.arrayContaining(['Praxis Huber', 'Zahnarzt München', 'Dr. Keller']),
      );
      expect(dentists.data.every((h) => h.listing.address.city === 'München')).toBe(true);
    });
  }

  it('never worse: a reading that finds nothing is let go of step by step, and says so', async () => {
    // Köpenick is a district of Berlin with no plumber within its 3 km: the whole of Berlin
    const district = await search({ q: 'Klempner in Köpenick', mode: 'keyword', limit: 20 });
    expect(district.interpreted?.relaxed).toEqual(['district_to_city']);
    expect(district.interpreted?.place).toMatchObject({ name: 'Berlin', kind: 'municipality' });
    expect(district.data.map((h) => h.listing.name)).toEqual(expect.arrayContaining(BERLIN_PLUMBERS));
    // Potsdam has none within its own radius; Lankwitz's are within 25 km
    const widened = await search({ q: 'Klempner in Potsdam', mode: 'keyword', limit: 20 });
    expect(widened.interpreted?.relaxed).toEqual(['radius_widened']);
    expect(widened.interpreted?.place).toMatchObject({ name: 'Potsdam', radius_km: 25 });
    expect(widened.data.map((h) => h.listing.name)).toEqual(
      expect.arrayContaining(['Rohr Richter', 'Haustechnik Koch']),
    );
    expect(widened.data.every((h) => h.signals.distance_km! <= 25)).toBe(true);
    // nothing within 25 km of Inari (Lapland): the trade anywhere, and the next pages keep to it
    for (const mode of ['keyword', 'hybrid'] as const) {
      const anywhere = await search({ q: 'Klempner in Inari', mode, limit: 2 });
      expect(anywhere.interpreted?.relaxed, mode).toEqual(['radius_widened', 'place_dropped']);
      expect(anywhere.interpreted?.place).toBeNull();
      expect(anywhere.interpreted?.q).toBe('Klempner');
      expect(anywhere.data).toHaveLength(2);
      const next = await search({ q: 'Klempner in Inari', mode, limit: 2, cursor: anywhere.next_cursor! });
      expect(next.interpreted?.relaxed).toEqual(['radius_widened', 'place_dropped']);
      expect(next.data.map((h) => h.listing.id)).not.toContain(anywhere.data[0]!.listing.id);
    }
    // a reading that finds something is kept as it is
    expect((await search({ q: 'Klempner in Tegel', mode: 'keyword' })).interpreted?.relaxed).toEqual([]);
    // the words a sentence is built with are no listing's words
    for (const q of ["I'm looking for a good plumber in Berlin", 'where can I find a plumber in Berlin?']) {
      const sentence = await search({ q, mode: 'keyword', limit: 20 });
      expect(sentence.interpreted?.relaxed, q).toEqual(['function_words_dropped']);
      expect(sentence.interpreted?.q, q).toBe('plumber');
      expect(sentence.data.map((h) => h.listing.name)).toEqual(expect.arrayContaining(BERLIN_PLUMBERS));
    }
  });

  it('a street after "near" is searched around the listings on it', async () => {
    const page = await search({ q: 'Zahnarzt near Marienplatz', mode: 'keyword', limit: 10 });
    expect(page.interpreted?.place).toMatchObject({
      kind: 'street',
      name: 'Marienplatz',
      municipality: 'München',
      geonames_id: null,
      radius_km: 2,
    });
    expect(page.interpreted?.q).toBe('Zahnarzt');
    expect(page.data.map((h) => h.listing.name)).toEqual(expect.arrayContaining(['Praxis am Dom']));
    expect(page.data.every((h) => h.signals.distance_km! <= 2)).toBe(true);
  });

  it('interpret=false searches the words as typed', async () => {
    const page = await search({ q: 'Klempner Berlin', mode: 'keyword', interpret: false, limit: 20 });
    expect(page.interpreted).toBeNull();
    expect(page.data.every((h) => h.signals.distance_km === null)).toBe(true);
  });

  it('a company named like a place elsewhere is the company', async () => {
    const page = await search({ q: 'Paris Bar', mode: 'keyword', limit: 5 });
    expect(page.interpreted?.place).toBeNull();
    expect(page.data[0]!.listing.name).toBe('Paris Bar');
  });

  it('city by any of its names takes in its districts; a district is itself', async () => {
    for (const city of ['Berlin', 'berlin', 'BERLIN']) {
      const page = await search({ q: 'Klempner', city, mode: 'keyword', limit: 20 });
      expect(page.data.map((h) => h.listing.name)).toEqual(expect.arrayContaining(BERLIN_PLUMBERS));
      expect(page.data.every((h) => h.listing.address.city === 'Berlin')).toBe(true);
    }
    for (const city of ['Munich', 'München', 'Monaco di Baviera', 'muenchen']) {
      const page = await search({ q: 'Zahnarzt', city, limit: 20 });
      expect(page.data.length, city).toBeGreaterThanOrEqual(3);
      expect(page.data.every((h) => h.listing.address.city === 'München')).toBe(true);
    }
    const tegel = await search({ q: 'Klempner', city: 'Tegel', mode: 'keyword', limit: 20 });
    expect(tegel.data.map((h) => h.listing.name)).toEqual(
      expect.arrayContaining(['Klempner Becker', 'Sanitär Wolf']),
    );
    expect(tegel.data.every((h) => h.listing.address.district === 'Tegel')).toBe(true);
  });

  it('an unknown city is a 400 that suggests the nearest names', async () => {
    const res = await searchListings({ client, query: { q: 'Zahnarzt', city: 'Munchn' } });
    expect(res.response?.status).toBe(400);
    expect(res.error).toMatchObject({ error: { code: 'unknown_city', param: 'city' } });
    expect(JSON.stringify(res.error)).toContain('München');
  });

  it('typos: one from 5 letters, two from 9, exact words untouched', async () => {
    for (const [q, to] of [
      ['Klemner', 'klempner'],
      ['Zahnartz', 'zahnarzt'],
      ['Restuarant', 'restaurant'],
    ] as const) {
      for (const mode of ['keyword', 'hybrid', 'semantic'] as const) {
        const page = await search({ q, mode, limit: 5 });
        expect(page.interpreted?.corrections, `${q} ${mode}`).toEqual([{ from: q, to }]);
        expect(page.data.length, `${q} ${mode}`).toBeGreaterThan(0);
      }
    }
    const exact = await search({ q: 'Klempner', mode: 'keyword', limit: 5 });
    expect(exact.interpreted?.corrections).toEqual([]);
    // a typo and a place together
    const both = await search({ q: 'Klemner in Berlin', mode: 'keyword', limit: 5 });
    expect(both.interpreted).toMatchObject({ q: 'klempner', place: { name: 'Berlin' } });
    expect(both.data.map((h) => h.listing.name)).toEqual(expect.arrayContaining(BERLIN_PLUMBERS));
    expect(both.data.every((h) => h.listing.address.city === 'Berlin')).toBe(true);
  });
});
