// The directory API's search and places through the generated SDK, on servers started here or on
// a deployment (`npm run contract -- directory`). Nothing here assumes what the directory holds:
// each test starts from what a search returns. Pagination is walked to the end over a query
// narrowed to one city, with two page sizes that must give the same hits in the same order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/directory/client/client/index.ts';
import {
  geocodePlace,
  getPlaceDetails,
  getPlacePhoto,
  getUsage,
  reverseGeocodePlace,
  searchListings,
} from '../../generated/directory/client/sdk.gen.ts';
import type { SearchHit, SearchListingsData } from '../../generated/directory/client/types.gen.ts';

type SearchQuery = NonNullable<SearchListingsData['query']>;
import { bearer, expectError } from '../support/envelope.ts';
import { explain, operations, responseValidator } from '../support/spec.ts';
import { covers, openSession, type Session, targets } from '../support/target.ts';

const TARGETS = await targets();
const ops = operations('directory');
const ok = (operationId: string) =>
  responseValidator(
    ops.find((o) => o.operationId === operationId)!,
    '200',
  );

function valid(operationId: string, value: unknown) {
  const validate = ok(operationId);
  expect(validate(value), `${operationId}: ${explain(validate)}`).toBe(true);
}

describe.runIf(covers('directory')).each(TARGETS)('directory API search and places (%s)', (label) => {
  let session: Session;
  let key: string;
  let adminKey: string;
  /** Calls answered 200 so far: what the usage report must count. */
  let requests = 0;
  const client = (secret = key) => createClient({ baseUrl: session.urls.directory, auth: secret });
  let first: SearchHit;

  /** One search, counted, checked against the spec. */
  async function search(query: SearchQuery) {
    const res = await searchListings({ client: client(), query });
    requests++;
    expect(res.response?.status, JSON.stringify(res.error)).toBe(200);
    valid('searchListings', res.data);
    return { data: res.data!, link: res.response!.headers.get('link') };
  }

  async function walk(query: SearchQuery, limit: number): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 200; page++) {
      const { data, link } = await search({ ...query, limit, ...(cursor ? { cursor } : {}) });
      expect(data.data.length).toBeLessThanOrEqual(limit);
      ids.push(...data.data.map((hit) => hit.listing.id));
      if (!data.has_more) {
        expect(data.next_cursor).toBeNull();
        return ids;
      }
      expect(data.data).toHaveLength(limit);
      expect(link).toContain('rel="next"');
      expect(link).toContain(encodeURIComponent(data.next_cursor!).slice(0, 20));
      cursor = data.next_cursor!;
    }
    throw new Error('more than 200 pages: narrow the query');
  }

  beforeAll(async () => {
    session = await openSession(label);
    key = (await session.mint(['search', 'places'])).secret;
    adminKey = (await session.mint(['admin'])).secret;
    const { data } = await search({ q: 'restaurant bakery plumber dentist', limit: 5 });
    expect(data.data.length).toBeGreaterThan(0);
    first = data.data[0]!;
  });
  afterAll(async () => session?.close());

  it('ranks hits by score, each with its signals and the full profile, in every mode', async () => {
    for (const mode of ['keyword', 'semantic', 'hybrid'] as const) {
      const { data } = await search({ q: first.listing.name, mode, limit: 10 });
      expect(data.mode).toBe(mode);
      const scores = data.data.map((hit) => hit.score);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
      if (mode !== 'semantic') expect(data.data.map((h) => h.listing.id)).toContain(first.listing.id);
    }
  });

  it('walks a query to its end with no duplicate and no gap: two page sizes, the same hits in the same order', async () => {
    // one city when it holds enough listings for several pages, else the whole country
    let query: SearchQuery = { city: first.listing.address.city, country: first.listing.address.country };
    let large = await walk(query, 100);
    if (large.length < 7) {
      query = { country: first.listing.address.country };
      large = await walk(query, 100);
    }
    const pagesBefore = requests;
    const small = await walk(query, 3);
    expect(requests - pagesBefore).toBeGreaterThan(2); // several pages were walked
    expect(new Set(small).size).toBe(small.length);
    expect(small).toEqual(large);
    expect(small).toContain(first.listing.id);
  });

  it('refuses a cursor it did not issue and a limit out of range with a 400', async () => {
    const headers = bearer(key);
    const base = `${session.urls.directory}/v1/search?q=bakery`;
    const badCursor = await expectError(
      'directory',
      await fetch(`${base}&cursor=not-a-cursor`, { headers }),
      400,
      'invalid_request_error',
      'invalid_cursor',
    );
    expect(badCursor.param).toBe('cursor');
    for (const limit of [0, 101]) {
      const error = await expectError(
        'directory',
        await fetch(`${base}&limit=${limit}`, { headers }),
        400,
        'invalid_request_error',
      );
      expect(error.param).toBe('limit');
    }
  });

  it('filters by distance: every hit lies within radius_km of near', async () => {
    const { lat, lon } = first.listing.geo;
    const { data } = await search({ near: `${lat},${lon}`, radius_km: 5, limit: 50 });
    expect(data.data.map((h) => h.listing.id)).toContain(first.listing.id);
    for (const hit of data.data) {
      const dLat = ((hit.listing.geo.lat - lat) * Math.PI) / 180;
      const dLon = ((hit.listing.geo.lon - lon) * Math.PI) / 180;
      const a =
        Math.sin(dLat / 2) ** 2 +
        Math.cos((lat * Math.PI) / 180) *
          Math.cos((hit.listing.geo.lat * Math.PI) / 180) *
          Math.sin(dLon / 2) ** 2;
      expect(2 * 6371 * Math.asin(Math.sqrt(a))).toBeLessThanOrEqual(5.01);
    }
  });

  it('opens a listing, geocodes its city, and finds it again near its own coordinates', async () => {
    const details = await getPlaceDetails({ client: client(), query: { id: first.listing.id } });
    requests++;
    expect(details.response?.status).toBe(200);
    valid('getPlaceDetails', details.data);
    expect(details.data!.id).toBe(first.listing.id);
    if (!details.data!.claimed) expect(details.data!.photos).toEqual([]);

    const geocoded = await geocodePlace({
      client: client(),
      query: { q: first.listing.address.city.toUpperCase() },
    });
    requests++;
    valid('geocodePlace', geocoded.data);
    expect(geocoded.data!.data.length).toBeGreaterThan(0);

    const { lat, lon } = first.listing.geo;
    const reverse = await reverseGeocodePlace({ client: client(), query: { lat, lon } });
    requests++;
    valid('reverseGeocodePlace', reverse.data);
    expect(reverse.data!.listings.map((l) => l.listing.id)).toContain(first.listing.id);

    const missing = await fetch(
      `${session.urls.directory}/v1/places/details?id=lst_00000000000000000000000000`,
      {
        headers: bearer(key),
      },
    );
    await expectError('directory', missing, 404, 'invalid_request_error');
  });

  it('serves the photos of a claimed listing as JPEG', async () => {
    const { data } = await search({ claimed: true, limit: 50 });
    for (const hit of data.data) expect(hit.listing.claimed).toBe(true);
    const withPhoto = data.data.find((hit) => hit.listing.photos.length > 0);
    expect(withPhoto, 'no claimed listing with a photo among the first 50').toBeDefined();
    if (!withPhoto) return;
    const photo = withPhoto.listing.photos[0]!;
    const res = await getPlacePhoto({ client: client(), path: { id: photo.id }, parseAs: 'blob' });
    requests++;
    expect(res.response?.status).toBe(200);
    expect(res.response?.headers.get('content-type')).toMatch(/^image\/jpeg/);
    const bytes = new Uint8Array(await (res.data as Blob).arrayBuffer());
    expect([bytes[0], bytes[1]]).toEqual([0xff, 0xd8]);
  });

  it('needs the search scope to search and the places scope for places', async () => {
    const placesOnly = (await session.mint(['places'])).secret;
    const searchOnly = (await session.mint(['search'])).secret;
    const refused = await fetch(`${session.urls.directory}/v1/search?q=bakery`, {
      headers: bearer(placesOnly),
    });
    const error = await expectError('directory', refused, 403, 'permission_error', 'insufficient_scope');
    expect(error.message).toContain('search');
    const refusedPlaces = await fetch(`${session.urls.directory}/v1/places/geocode?q=Lyon`, {
      headers: bearer(searchOnly),
    });
    await expectError('directory', refusedPlaces, 403, 'permission_error', 'insufficient_scope');
  });

  it('meters every answered call of this run (errors are not billed): the usage report counts them', async () => {
    const today = new Date().toISOString().slice(0, 10);
    let report: Awaited<ReturnType<typeof getUsage>>['data'];
    // a call is recorded as its answer leaves: allow the last record a moment to land
    for (let attempt = 0; attempt < 20; attempt++) {
      const res = await getUsage({
        client: client(adminKey),
        query: { from: today, to: today, project_id: session.projectId },
      });
      expect(res.response?.status).toBe(200);
      report = res.data;
      if (report?.totals.requests === requests) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    valid('getUsage', report);
    expect(report!.totals.requests).toBe(requests);
  });
});
