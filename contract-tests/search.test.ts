// GET /v1/search through the generated SDK against the real directory API on both storage paths:
// a walk of every page with listings added between the pages (some ranking first) sees exactly
// the ranking of its first page's snapshot, no duplicate and no gap; the Link header carries the
// next page; a later search sees the new listings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../generated/directory/client/client/index.ts';
import { searchListings } from '../generated/directory/client/sdk.gen.ts';
import type { SearchListingsData } from '../generated/directory/client/types.gen.ts';
import { demoListing } from '../src/directory/demo.ts';
import { insertListings } from '../src/directory/store.ts';
import { type Storage, startTestServers, storages, type TestServers } from './support/server.ts';
import { explain, operations, responseValidator } from './support/spec.ts';

const STORAGES = await storages();
const validate = responseValidator(
  operations('directory').find((o) => o.operationId === 'searchListings')!,
  '200',
);
type Query = NonNullable<SearchListingsData['query']>;

describe.each(STORAGES)('search pages on %s', (storage: Storage) => {
  let servers: TestServers;
  let client: ReturnType<typeof createClient>;

  beforeAll(async () => {
    servers = await startTestServers(storage, { which: ['directory'], env: { DEMO_LISTINGS: '600' } });
    client = createClient({ baseUrl: servers.urls.directory!, auth: servers.adminKey });
  });
  afterAll(async () => servers?.stop());

  async function page(query: Query) {
    const res = await searchListings({ client, query });
    expect(res.response?.status, JSON.stringify(res.error)).toBe(200);
    expect(validate(res.data), explain(validate)).toBe(true);
    return { data: res.data!, link: res.response!.headers.get('link') };
  }

  async function ids(query: Query): Promise<string[]> {
    const out: string[] = [];
    let next: string | null = null;
    do {
      const { data } = await page({ ...query, limit: 100, ...(next ? { cursor: next } : {}) });
      out.push(...data.data.map((hit) => hit.listing.id));
      next = data.next_cursor;
    } while (next);
    return out;
  }

  for (const mode of ['keyword', 'hybrid', 'semantic'] as const) {
    it(`${mode}: walks every hit once, in order, while listings that rank anywhere are added`, async () => {
      const query: Query = { q: 'repair', mode, limit: 9 };
      const before = await ids(query);
      expect(before.length).toBeGreaterThan(20);

      const seen: string[] = [];
      let { data, link } = await page(query);
      seen.push(...data.data.map((hit) => hit.listing.id));
      let added = 0;
      const inserted: { id: string; name: string }[] = [];
      while (data.next_cursor) {
        expect(link).toMatch(/^<[^>]*\/v1\/search\?[^>]*cursor=[^>]+>; rel="next"$/);
        const fresh = [demoListing(`walk-${mode}`, added), demoListing(`walk-${mode}`, added + 1)];
        await servers.platform.db.transaction((tx) => insertListings(tx, fresh));
        inserted.push(...fresh.map((l) => ({ id: l.id, name: l.name })));
        added += 2;
        ({ data, link } = await page({ ...query, cursor: data.next_cursor }));
        seen.push(...data.data.map((hit) => hit.listing.id));
      }
      expect(link).toBeNull();
      expect(added).toBeGreaterThan(2);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toEqual(before);

      // a new search sees what was added: a listing added during the walk is found by its name;
      // by keyword the old hits all remain (semantic keeps hits relative to the best one, so a
      // closer newcomer may push weak ones out)
      const after = await ids(query);
      if (mode === 'keyword') expect(after).toEqual(expect.arrayContaining(before));
      const probe = inserted[0]!;
      const { data: found } = await page({ q: probe.name, mode, limit: 50 });
      expect(found.data.map((hit) => hit.listing.id)).toContain(probe.id);
    });
  }
});
