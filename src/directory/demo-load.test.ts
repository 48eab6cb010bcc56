// The demo directory is loaded fast: rows made on a worker thread, the indexes built once after
// the rows are in, each set of trade words and each shared range parsed once. What it stores
// must be exactly what inserting the listings one by one with every value computed in its own
// row stores (the way the directory was loaded before), on PGlite and on PostgreSQL.
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, storages, type TestDatabase } from '../../contract-tests/support/server.ts';
import { LANGS } from '../embeddings/data/thesaurus.ts';
import type { Db, Queryable } from '../platform/db.ts';
import { openStorage } from '../storage.ts';
import { demoListing, loadDemoDirectory } from './demo.ts';
import { startDemoRows } from './demo-rows.ts';
import { listingRow, tsConfigFor } from './store.ts';

const COUNT = 600;
const SEED = 'demo-load';

/** The reference: one row a statement, every value (the full-text vector too) computed in it. */
async function insertOneByOne(db: Queryable, count: number): Promise<void> {
  const types = [
    'text',
    'jsonb',
    'text',
    'text',
    'text',
    'text',
    'text',
    'float8',
    'float8',
    'text[]',
    'boolean',
    'float8',
    'int',
    'int',
    'text',
    'int4multirange',
    'tstzmultirange',
    'tstzmultirange',
    'text[]',
    'bytea',
    'bigint',
    'bigint',
  ];
  for (let i = 0; i < count; i++) {
    const row = listingRow(demoListing(SEED, i));
    const n = row.values.length;
    const tags = LANGS.map((l, j) => `to_tsvector('${tsConfigFor(l)}', $${n + 4 + j})`).join(' || ');
    await db.query(
      `insert into listings (id, profile, name_folded, address_folded, city_folded, district_folded, country, lat, lon,
         activity_path, claimed, rating, review_count, response_time, time_zone, week_open, special_cover,
         special_open, photo_ids, embedding, created, updated, tsv)
       values (${types.map((t, j) => `$${j + 1}::${t}`).join(',')},
         setweight(to_tsvector('simple', $${n + 1}), 'A') || setweight(to_tsvector($${n + 2}::regconfig, $${n + 3}), 'B')
         || setweight(to_tsvector('simple', $${n + 3}), 'D') || setweight(${tags}, 'C'))`,
      [...row.values, row.name, row.config, row.text, ...row.tags],
    );
  }
}

/** Everything stored, in the order of the sequence numbers drawn, and the indexes there are. */
async function stored(db: Queryable) {
  const [content] = await db.query<{ n: number; rows: string; order: string }>(
    `select count(*)::int as n,
       md5(string_agg(concat_ws('|', id, profile::text, name_folded, address_folded, city_folded, district_folded, country,
         lat, lon, activity_path::text, claimed, rating, review_count, response_time, time_zone, week_open::text,
         special_cover::text, special_open::text, photo_ids::text, encode(embedding, 'hex'), created, updated,
         tsv::text, address_tsv::text), E'\\n' order by id)) as rows,
       md5(string_agg(id, ',' order by seq)) as "order"
     from listings`,
  );
  const indexes = await db.query<{ def: string }>(
    `select pg_get_indexdef(indexrelid) as def from pg_index where indrelid = 'listings'::regclass order by 1`,
  );
  return { ...content, indexes: indexes.map((i) => i.def) };
}

const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const database of databases) await database.drop();
});

async function open(storage: string): Promise<Db> {
  if (storage === 'pglite') return openStorage({ dataDir: 'memory://' });
  const database = await createTestDatabase();
  databases.push(database);
  return openStorage({ databaseUrl: database.url, dataDir: 'memory://' });
}

describe.each(await storages())('the demo load (%s)', (storage) => {
  it('stores exactly what inserting each listing by itself stores, indexes included', async () => {
    const fast = await open(storage);
    const slow = await open(storage);
    try {
      const progress: number[] = [];
      const loaded = await loadDemoDirectory(fast, {
        count: COUNT,
        seed: SEED,
        onProgress: (done) => progress.push(done),
      });
      expect(loaded).toEqual({ inserted: COUNT });
      expect(progress.at(-1)).toBe(COUNT);
      await slow.transaction((tx) => insertOneByOne(tx, COUNT));
      const [a, b] = [await stored(fast), await stored(slow)];
      expect(a.n).toBe(COUNT);
      expect(a).toEqual(b);
    } finally {
      await fast.close();
      await slow.close();
    }
  }, 300_000);

  it('takes rows made ahead, and leaves a filled directory as it is', async () => {
    const db = await open(storage);
    try {
      const rows = startDemoRows(50, SEED, 20);
      expect(await loadDemoDirectory(db, { rows })).toEqual({ inserted: 50 });
      const before = await stored(db);
      // a second start: the rows made ahead are dropped, nothing is added
      expect(await loadDemoDirectory(db, { rows: startDemoRows(50, 'other') })).toEqual({ inserted: 0 });
      expect(await stored(db)).toEqual(before);
    } finally {
      await db.close();
    }
  }, 300_000);
});
