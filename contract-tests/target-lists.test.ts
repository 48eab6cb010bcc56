// Target lists and the suppression list on the real service, through the generated SDK, on
// both storage paths: a list is built by its job from the very search GET /v1/search answers
// (same hits, same order, those without an email skipped and counted), up to max_members;
// members are paged without gap or duplicate, added and removed by listing id; the account's
// suppression list takes, shows and removes its own entries and keeps the others.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../generated/directory/client/client/index.ts';
import {
  addTargetListMember,
  createSuppression,
  createTargetList,
  deleteSuppression,
  deleteTargetList,
  getSuppression,
  getTargetList,
  listSuppressions,
  listTargetListMembers,
  listTargetLists,
  removeTargetListMember,
  searchListings,
} from '../generated/directory/client/sdk.gen.ts';
import type {
  SearchListingsData,
  TargetList,
  TargetListMember,
} from '../generated/directory/client/types.gen.ts';
import { suppress } from '../src/sales/suppressions.ts';
import { type Storage, startTestServers, storages, type TestServers } from './support/server.ts';
import { componentValidator, explain } from './support/spec.ts';
import { until } from './support/client.ts';

const validList = componentValidator('directory', 'TargetList');
const validMember = componentValidator('directory', 'TargetListMember');
const validSuppression = componentValidator('directory', 'Suppression');

describe.each(await storages())('target lists on %s', (storage: Storage) => {
  let servers: TestServers;
  let client: ReturnType<typeof createClient>;

  beforeAll(async () => {
    servers = await startTestServers(storage, { which: ['directory'], env: { DEMO_LISTINGS: '600' } });
    client = createClient({ baseUrl: servers.urls.directory!, auth: servers.adminKey });
  }, 240_000);
  afterAll(async () => servers?.stop());

  /** Every hit of a search, as GET /v1/search pages them. */
  async function searchAll(query: NonNullable<SearchListingsData['query']>) {
    const hits = [];
    let cursor: string | null = null;
    do {
      const res: Awaited<ReturnType<typeof searchListings>> = await searchListings({
        client,
        query: { ...query, limit: 100, ...(cursor ? { cursor } : {}) },
      });
      expect(res.response?.status).toBe(200);
      hits.push(...res.data!.data);
      cursor = res.data!.next_cursor;
    } while (cursor);
    return hits;
  }

  async function ready(id: string): Promise<TargetList> {
    return until('the list to be built', async () => {
      const res = await getTargetList({ client, path: { id } });
      expect(validList(res.data), explain(validList)).toBe(true);
      return res.data!.status === 'building' ? undefined : res.data!;
    });
  }

  async function allMembers(id: string, limit: number): Promise<TargetListMember[]> {
    const out: TargetListMember[] = [];
    let cursor: string | null = null;
    do {
      const res: Awaited<ReturnType<typeof listTargetListMembers>> = await listTargetListMembers({
        client,
        path: { id },
        query: { limit, ...(cursor ? { cursor } : {}) },
      });
      expect(res.response?.status).toBe(200);
      for (const m of res.data!.data) expect(validMember(m), explain(validMember)).toBe(true);
      out.push(...res.data!.data);
      cursor = res.data!.next_cursor;
      if (cursor) expect(res.response?.headers.get('link')).toContain('cursor=');
    } while (cursor);
    return out;
  }

  it('builds a list from the same search, in its order, skipping and counting listings without email', async () => {
    const filters = { q: 'plumber' } as const;
    const hits = await searchAll(filters);
    expect(hits.length).toBeGreaterThan(3);
    const withEmail = hits.filter((h) => h.listing.email !== null);
    expect(withEmail.length).toBeLessThan(hits.length); // the demo data has listings without one

    const created = await createTargetList({
      client,
      body: { name: 'Plumbers', filters, metadata: { source: 'test' } },
    });
    expect(created.response?.status).toBe(201);
    expect(validList(created.data), explain(validList)).toBe(true);
    expect(created.data).toMatchObject({ status: 'building', filters, max_members: 1000 });

    const list = await ready(created.data!.id);
    expect(list).toMatchObject({
      status: 'ready',
      member_count: withEmail.length,
      counts: {
        matched: hits.length,
        added: withEmail.length,
        skipped_no_email: hits.length - withEmail.length,
      },
      failure_reason: null,
    });
    expect(list.built_at).toBeGreaterThanOrEqual(list.created);

    // walked with two page sizes: the same members, in the search's order, each once
    const small = await allMembers(list.id, 3);
    const large = await allMembers(list.id, 100);
    expect(small.map((m) => m.id)).toEqual(large.map((m) => m.id));
    expect(large.map((m) => m.listing_id)).toEqual(withEmail.map((h) => h.listing.id));
    expect(large.every((m) => m.status === 'pending' && m.email === m.listing.email)).toBe(true);
    expect(large[0]!.listing).toMatchObject({
      id: withEmail[0]!.listing.id,
      name: withEmail[0]!.listing.name,
    });
  });

  it('stops at max_members, counting only the hits it examined', async () => {
    const filters = { q: 'plumber' } as const;
    const hits = await searchAll(filters);
    const created = await createTargetList({ client, body: { name: 'Top 2', filters, max_members: 2 } });
    const list = await ready(created.data!.id);
    const examined =
      hits.findIndex((_, i) => hits.slice(0, i + 1).filter((h) => h.listing.email).length === 2) + 1;
    expect(list).toMatchObject({
      member_count: 2,
      counts: { added: 2, matched: examined, skipped_no_email: examined - 2 },
    });
  });

  it('takes every filter of the search, and refuses what the search refuses at once', async () => {
    const filters = {
      q: 'restaurant',
      mode: 'keyword',
      country: 'DE',
      near: '52.52,13.405',
      radius_km: 50,
      claimed: false,
      min_rating: 1,
      open_now: true,
      activity: '56',
    } as const;
    const created = await createTargetList({ client, body: { name: 'Every filter', filters } });
    expect(created.response?.status).toBe(201);
    const list = await ready(created.data!.id);
    const hits = await searchAll(filters);
    // open_now is answered as of the build; the rest must agree exactly
    const members = await allMembers(list.id, 100);
    for (const m of members) expect(m.listing.activities.some((a) => a.code.startsWith('56'))).toBe(true);
    expect(list.counts.added).toBe(members.length);
    expect(list.counts.matched).toBeLessThanOrEqual(Math.max(hits.length, list.counts.matched));

    const noQuery = await createTargetList({ client, body: { name: 'x', filters: { mode: 'keyword' } } });
    expect(noQuery.response?.status).toBe(400);
    expect(noQuery.error).toMatchObject({ error: { code: 'missing_query', param: 'filters.q' } });
    const radius = await createTargetList({ client, body: { name: 'x', filters: { q: 'a', radius_km: 5 } } });
    expect(radius.response?.status).toBe(400);
    expect(radius.error).toMatchObject({
      error: { code: 'radius_without_near', param: 'filters.radius_km' },
    });
  });

  it('adds and removes members by listing id, within max_members, and deletes a list', async () => {
    const created = await createTargetList({
      client,
      body: { name: 'Hand-picked', filters: { q: 'plumber' }, max_members: 2 },
    });
    const list = await ready(created.data!.id);
    const members = await allMembers(list.id, 100);
    const full = await addTargetListMember({
      client,
      path: { id: list.id },
      body: { listing_id: members[0]!.listing_id },
    });
    expect(full.response?.status).toBe(409);
    expect(full.error).toMatchObject({ error: { code: 'target_list_full' } });

    const removed = await removeTargetListMember({
      client,
      path: { id: list.id, listing_id: members[1]!.listing_id },
    });
    expect(removed.data).toEqual({ id: members[1]!.id, object: 'target_list_member', deleted: true });
    const again = await removeTargetListMember({
      client,
      path: { id: list.id, listing_id: members[1]!.listing_id },
    });
    expect(again.response?.status).toBe(404);
    expect((await getTargetList({ client, path: { id: list.id } })).data!.member_count).toBe(1);

    const twice = await addTargetListMember({
      client,
      path: { id: list.id },
      body: { listing_id: members[0]!.listing_id },
    });
    expect(twice.error).toMatchObject({ error: { code: 'already_member', param: 'listing_id' } });

    const [other] = (await searchAll({ q: 'bakery' })).filter((h) => h.listing.email !== null);
    const [noEmail] = (await searchAll({ q: 'bakery' })).filter((h) => h.listing.email === null);
    const added = await addTargetListMember({
      client,
      path: { id: list.id },
      body: { listing_id: other!.listing.id },
    });
    expect(added.response?.status).toBe(201);
    expect(validMember(added.data), explain(validMember)).toBe(true);
    expect(added.data).toMatchObject({
      listing_id: other!.listing.id,
      status: 'pending',
      email: other!.listing.email,
    });
    const after = await allMembers(list.id, 100);
    expect(after.map((m) => m.listing_id)).toEqual([members[0]!.listing_id, other!.listing.id]);

    await removeTargetListMember({ client, path: { id: list.id, listing_id: other!.listing.id } });
    const without = await addTargetListMember({
      client,
      path: { id: list.id },
      body: { listing_id: noEmail!.listing.id },
    });
    expect(without.error).toMatchObject({ error: { code: 'listing_without_email', param: 'listing_id' } });
    const unknown = await addTargetListMember({
      client,
      path: { id: list.id },
      body: { listing_id: 'lst_00000000000000000000000000' },
    });
    expect(unknown.response?.status).toBe(404);
    expect(unknown.error).toMatchObject({ error: { code: 'listing_not_found', param: 'listing_id' } });

    const listed = await listTargetLists({ client, query: { limit: 100 } });
    expect(listed.data!.data.map((l) => l.id)).toContain(list.id);
    const deleted = await deleteTargetList({ client, path: { id: list.id } });
    expect(deleted.data).toEqual({ id: list.id, object: 'target_list', deleted: true });
    expect((await getTargetList({ client, path: { id: list.id } })).response?.status).toBe(404);
    expect((await listTargetListMembers({ client, path: { id: list.id } })).response?.status).toBe(404);
  });

  it('keeps lists to their project', async () => {
    const created = await createTargetList({ client, body: { name: 'Mine', filters: { q: 'plumber' } } });
    const [row] = await servers.platform.db.query<{ account_id: string }>(
      'select account_id from api_keys limit 1',
    );
    const project = await servers.platform.accounts.createProject(row!.account_id, 'other team');
    const key = await servers.platform.accounts.createKey(row!.account_id, {
      name: 'sales of the other team',
      projectId: project.id,
      scopes: ['sales'],
    });
    const other = createClient({ baseUrl: servers.urls.directory!, auth: key.secret });
    expect((await getTargetList({ client: other, path: { id: created.data!.id } })).response?.status).toBe(
      404,
    );
    expect((await listTargetLists({ client: other })).data!.data).toEqual([]);
  });
});

describe.each(await storages())('the suppression list on %s', (storage: Storage) => {
  let servers: TestServers;
  let client: ReturnType<typeof createClient>;

  beforeAll(async () => {
    servers = await startTestServers(storage, { which: ['directory'], env: { DEMO_LISTINGS: '0' } });
    client = createClient({ baseUrl: servers.urls.directory!, auth: servers.adminKey });
  }, 240_000);
  afterAll(async () => servers?.stop());

  it('adds, shows, lists and removes manual entries, case-insensitively', async () => {
    const first = await createSuppression({ client, body: { email: 'Info@Keller-Haustechnik.de' } });
    expect(first.response?.status).toBe(201);
    expect(validSuppression(first.data), explain(validSuppression)).toBe(true);
    expect(first.data).toMatchObject({
      email: 'info@keller-haustechnik.de',
      reason: 'manual',
      campaign_id: null,
    });
    const again = await createSuppression({ client, body: { email: 'info@keller-haustechnik.de' } });
    expect(again.response?.status).toBe(200);
    expect(again.data!.id).toBe(first.data!.id);

    const got = await getSuppression({ client, path: { email: 'INFO@keller-haustechnik.de' } });
    expect(got.data).toEqual(first.data);
    for (let i = 0; i < 5; i++) await createSuppression({ client, body: { email: `a${i}@example.eu` } });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof listSuppressions>> = await listSuppressions({
        client,
        query: { limit: 2, ...(cursor ? { cursor } : {}) },
      });
      seen.push(...page.data!.data.map((s) => s.email));
      cursor = page.data!.next_cursor;
    } while (cursor);
    expect(seen).toEqual([
      'a4@example.eu',
      'a3@example.eu',
      'a2@example.eu',
      'a1@example.eu',
      'a0@example.eu',
      'info@keller-haustechnik.de',
    ]);

    const removed = await deleteSuppression({ client, path: { email: 'info@keller-haustechnik.de' } });
    expect(removed.data).toEqual({ id: first.data!.id, object: 'suppression', deleted: true });
    const gone = await getSuppression({ client, path: { email: 'info@keller-haustechnik.de' } });
    expect(gone.response?.status).toBe(404);
    expect(gone.error).toMatchObject({ error: { code: 'suppression_not_found' } });
  });

  it('keeps unsubscribes and hard bounces: they cannot be removed, and a manual add does not change them', async () => {
    const [row] = await servers.platform.db.query<{ account_id: string }>(
      'select account_id from api_keys limit 1',
    );
    const accountId = row?.account_id;
    expect(accountId).toBeTruthy();
    await suppress(
      servers.platform.db,
      accountId!,
      'Gone@Example.eu',
      'unsubscribed',
      'cmp_01JDQY77ZXYYK596NGYA1DQ91K',
    );
    await suppress(
      servers.platform.db,
      accountId!,
      'bounced@example.eu',
      'hard_bounce',
      'cmp_01JDQY77ZXYYK596NGYA1DQ91K',
    );
    const unsubscribed = await listSuppressions({ client, query: { reason: 'unsubscribed' } });
    expect(unsubscribed.data!.data.map((s) => s.email)).toEqual(['gone@example.eu']);
    const kept = await createSuppression({ client, body: { email: 'gone@example.eu' } });
    expect(kept.response?.status).toBe(200);
    expect(kept.data).toMatchObject({
      reason: 'unsubscribed',
      campaign_id: 'cmp_01JDQY77ZXYYK596NGYA1DQ91K',
    });
    for (const email of ['gone@example.eu', 'bounced@example.eu']) {
      const refused = await deleteSuppression({ client, path: { email } });
      expect(refused.response?.status).toBe(409);
      expect(refused.error).toMatchObject({ error: { code: 'suppression_not_removable', param: 'email' } });
    }
  });
});
