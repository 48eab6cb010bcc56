import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceApp, readSpec } from '../platform/app.ts';
import type { Db } from '../platform/db.ts';
import { createLogger } from '../platform/logger.ts';
import type { Principal } from '../platform/principal.ts';
import { demoListing } from './demo.ts';
import { createDirectoryRouter } from './routes.ts';
import { createSearch } from './search/search.ts';
import { testDirectory } from '../../contract-tests/support/directory.ts';

const principal: Principal = {
  accountId: 'acct_test',
  projectId: 'proj_test',
  keyId: 'key_test',
  scopes: ['search', 'places'],
  plan: 'standard',
};
let db: Db;
let server: Server;
let base: string;
const AUTH = { authorization: 'Bearer sk_test_directory' };

beforeAll(async () => {
  db = await testDirectory(400, 'routes');
  const app = createServiceApp({
    name: 'directory',
    spec: readSpec('directory'),
    // A fixed principal stands in for the key lookup; scopes are not what these tests are about.
    securityHandler: async (req) => {
      if (req.res) req.res.locals.principal = principal;
      return true;
    },
    docsPath: 'docs/reference/directory.html',
    logger: createLogger('silent', 'directory'),
    routers: [
      createDirectoryRouter({
        db,
        search: createSearch(db),
        publicBaseUrl: () => base,
        now: () => new Date('2026-11-20T10:00:00Z'),
      }).router,
    ],
    isReady: () => true,
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await db.close();
});

const get = (path: string) => fetch(`${base}${path}`, { headers: AUTH });

describe('directory routes (validated requests and responses)', () => {
  it('GET /v1/search pages with Link and meters 0.001 EUR a request', async () => {
    const res = await get('/v1/search?q=restaurant&limit=2&claimed=false');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { listing: { claimed: boolean } }[]; next_cursor: string };
    expect(body.data).toHaveLength(2);
    expect(body.data.every((h) => !h.listing.claimed)).toBe(true);
    expect(res.headers.get('link')).toContain(`cursor=${body.next_cursor}`);
    const next = await get(`/v1/search?q=restaurant&limit=2&claimed=false&cursor=${body.next_cursor}`);
    expect(next.status).toBe(200);
    const usage = await db.query<{ cost_nano: number; model: string }>(
      `select cost_nano, model from usage_records where endpoint = '/v1/search'`,
    );
    expect(usage.length).toBe(2);
    expect(usage.every((u) => u.cost_nano === 1_000_000 && u.model === 'search')).toBe(true);
  });

  it('GET /v1/search sends a repeated page as the same bytes, with its headers', async () => {
    const first = await get('/v1/search?q=bakery&limit=3');
    const again = await get('/v1/search?q=bakery&limit=3');
    expect(again.status).toBe(200);
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(again.headers.get('link')).toBe(first.headers.get('link'));
    expect(await again.text()).toBe(await first.text());
  });

  it('a bad cursor is a 400 invalid_cursor in the envelope', async () => {
    const res = await get('/v1/search?q=bakery&cursor=bogus');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_cursor');
  });

  it('GET /v1/places/details, geocode, reverse and photos answer in the spec’s shapes', async () => {
    let claimed = demoListing('routes', 0);
    for (let i = 1; !claimed.claimed; i++) claimed = demoListing('routes', i);
    const details = await get(`/v1/places/details?id=${claimed.id}`);
    expect(details.status).toBe(200);
    const body = (await details.json()) as { photos: { url: string }[] };
    expect(body.photos.length).toBeGreaterThan(0);
    const photo = await fetch(body.photos[0]!.url, { headers: AUTH });
    expect(photo.status).toBe(200);
    expect(photo.headers.get('content-type')).toBe('image/jpeg');
    expect(photo.headers.get('cache-control')).toBe('private, max-age=86400');

    expect((await get('/v1/places/details?id=lst_00000000000000000000000000')).status).toBe(404);
    const geo = await get('/v1/places/geocode?q=munchen&limit=3');
    expect(geo.status).toBe(200);
    expect(((await geo.json()) as { data: { name: string }[] }).data[0]?.name).toBe('München');
    const rev = await get(`/v1/places/reverse?lat=${claimed.geo.lat}&lon=${claimed.geo.lon}&limit=3`);
    expect(rev.status).toBe(200);

    // metered after the answer was sent: the last call's row may land a moment later
    const usage = async () =>
      db.query<{ cost_nano: number }>(`select cost_nano from usage_records where model = 'places'`);
    await expect.poll(async () => (await usage()).length).toBe(4); // the 404 is not billed
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await usage()).toHaveLength(4); // and nothing more comes
    expect((await usage()).every((u) => u.cost_nano === 500_000)).toBe(true);
  });
});

describe('search parameters', () => {
  it('radius_km without near is a 400; near alone uses the 10 km default', async () => {
    const bad = await get('/v1/search?q=bakery&radius_km=5');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('radius_without_near');
    const nearOnly = await get('/v1/search?near=48.1374%2C11.5755');
    expect(nearOnly.status, await nearOnly.clone().text()).toBe(200);
    expect((await get('/v1/search')).status).toBe(400);
  });
});
