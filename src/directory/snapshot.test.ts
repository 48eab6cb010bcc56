// A search cursor pages through a snapshot: every listing up to a sequence number. On
// PostgreSQL, writers run concurrently: a listing whose transaction drew its number early but
// committed late used to slip into a snapshot taken in between. Writers now hold one advisory
// lock from their first insert to their commit (store.ts), so numbers are drawn in commit order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestDatabase,
  hasPostgres as postgresRuns,
  type TestDatabase,
} from '../../contract-tests/support/server.ts';
import { type Db } from '../platform/db.ts';
import { openStorage } from '../storage.ts';
import { demoListing } from './demo.ts';
import { createSearch, type Search } from './search/search.ts';
import { insertListings, type ListingRecord } from './store.ts';

const hasPostgres = await postgresRuns();
let database: TestDatabase;
let db: Db;
let search: Search;

beforeAll(async () => {
  if (!hasPostgres) return;
  database = await createTestDatabase();
  db = await openStorage({ databaseUrl: database.url, dataDir: 'memory://' });
  search = createSearch(db);
});
afterAll(async () => {
  if (!hasPostgres) return;
  await db.close();
  await database.drop();
});

const named = (i: number): ListingRecord => ({ ...demoListing('snapshot', i), name: `Quuxbright ${i}` });
const NOW = new Date('2026-11-20T10:00:00Z');

describe.runIf(hasPostgres)('search snapshots on PostgreSQL', () => {
  it('a listing committed late does not slip into an open cursor', async () => {
    await db.transaction((tx) => insertListings(tx, [named(0), named(1), named(2), named(3)]));

    // A: inserts one listing and holds its transaction open
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let inserted!: () => void;
    const insertedA = new Promise<void>((r) => (inserted = r));
    const a = db.transaction(async (tx) => {
      await insertListings(tx, [named(10)]);
      inserted();
      await held;
    });
    await insertedA;
    // B: starts after A, would draw a higher number and commit first
    let bDone = false;
    const b = db.transaction((tx) => insertListings(tx, [named(11)])).then(() => (bDone = true));
    const params = { q: 'quuxbright', mode: 'keyword' as const, limit: 1 };
    let page;
    let visible: string[];
    let bDoneAtSnapshot: boolean;
    try {
      await new Promise((r) => setTimeout(r, 300));
      page = await search.search(params, NOW, { baseUrl: 'https://x.test' });
      bDoneAtSnapshot = bDone;
      visible = (
        await db.query<{ id: string }>(`select id from listings where name_folded like 'quuxbright%'`)
      ).map((r) => r.id);
    } finally {
      release();
      await Promise.all([a, b]);
    }
    // then A commits: its listing must not appear in the pages of the cursor
    const seen = page.data.map((h) => h.listing.id);
    while (page.next_cursor) {
      page = await search.search({ ...params, cursor: page.next_cursor }, NOW, {
        baseUrl: 'https://x.test',
      });
      seen.push(...page.data.map((h) => h.listing.id));
    }
    expect([...seen].sort()).toEqual([...visible].sort());
    expect(bDoneAtSnapshot).toBe(false); // B waited for A: numbers are drawn in commit order
    expect(visible).toHaveLength(4);

    const seqs = await db.query<{ name: string; seq: number }>(
      `select profile->>'name' as name, seq from listings where name_folded like 'quuxbright 1_' order by seq`,
    );
    expect(seqs.map((r) => r.name)).toEqual(['Quuxbright 10', 'Quuxbright 11']);
    // a new query sees both
    const fresh = await search.search({ ...params, limit: 10 }, NOW, { baseUrl: 'https://x.test' });
    expect(fresh.data).toHaveLength(6);
  });
});
