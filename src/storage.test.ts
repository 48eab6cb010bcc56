// The split of migration 0001 (accounts/ took accounts, projects and keys; platform's usage
// records and idempotency keys moved to 0940), on both storages: a database migrated with the
// files as they were before (src/platform/testing/before-0940 holds the two that changed) takes
// 0940 alone, ends with the schema of a new database, and keeps its rows.
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, storages, type TestDatabase } from '../contract-tests/support/server.ts';
import { type Db, migrate, openDb } from './platform/db.ts';
import { sumUsage } from './platform/usage-records.ts';
import { MIGRATIONS } from './storage.ts';

const BEFORE = fileURLToPath(new URL('./platform/testing/before-0940', import.meta.url));
const NEW_FILES = ['0001_accounts.sql', '0940_usage_records.sql'];

/** One folder with every migration as the tree held them before the split (`but` left out). */
function filesBefore(but?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'eurus-before-0940-'));
  for (const folder of MIGRATIONS) {
    for (const name of readdirSync(folder)) {
      if (name.endsWith('.sql') && !NEW_FILES.includes(name)) cpSync(join(folder, name), join(dir, name));
    }
  }
  cpSync(BEFORE, dir, { recursive: true });
  if (but) rmSync(join(dir, but));
  return dir;
}

/** Every column, index and constraint of the public schema, as text to compare. */
async function schemaOf(db: Db): Promise<string[]> {
  const columns = await db.query<{ t: string }>(
    `select concat_ws(' ', table_name, ordinal_position, column_name, data_type, is_nullable, column_default) as t
     from information_schema.columns where table_schema = 'public' and table_name <> 'schema_migrations'`,
  );
  const indexes = await db.query<{ t: string }>(
    `select indexdef as t from pg_indexes where schemaname = 'public'`,
  );
  const constraints = await db.query<{ t: string }>(
    `select conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) as t
     from pg_constraint where connamespace = 'public'::regnamespace`,
  );
  return [...columns, ...indexes, ...constraints].map((r) => r.t).sort();
}

describe.each(await storages())('migrations of a database made before 0940, on %s', (storage) => {
  const dbs: Db[] = [];
  const databases: TestDatabase[] = [];
  const dirs: string[] = [];

  afterAll(async () => {
    for (const db of dbs) await db.close();
    for (const d of databases) await d.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function open(folders: string[]): Promise<Db> {
    const made = storage === 'postgres' ? await createTestDatabase() : undefined;
    if (made) databases.push(made);
    const db = await openDb({ databaseUrl: made?.url, dataDir: 'memory://' }, folders);
    dbs.push(db);
    return db;
  }

  async function migratedBefore(but?: string): Promise<Db> {
    const dir = filesBefore(but);
    dirs.push(dir);
    return open([dir]);
  }

  let fresh: string[];
  beforeAll(async () => {
    fresh = await schemaOf(await open(MIGRATIONS));
  });

  describe.each([
    ['ran 0011', undefined],
    ['ran no 0011 (0940 adds its column)', '0011_usage_rollup.sql'],
  ])('one that %s', (_, but) => {
    let old: Db;
    let applied: string[];
    beforeAll(async () => {
      old = await migratedBefore(but);
      applied = await migrate(old, MIGRATIONS);
    });

    it('takes 0940 alone', () => {
      expect(applied).toEqual(['0940_usage_records.sql']);
    });

    it('ends with the columns, indexes and constraints of a new database', async () => {
      expect(await schemaOf(old)).toEqual(fresh);
    });
  });

  it('keeps the rows written before', async () => {
    const old = await migratedBefore();
    await old.query(`insert into accounts (id, name, created) values ('acc_old', 'Old', 1)`);
    await old.query(
      `insert into usage_records (id, service, account_id, project_id, key_id, model, endpoint, cost_nano,
         status, latency_ms, created, day, requests)
       values ('usg_old', 'model', 'acc_old', 'prj_old', 'key_old', 'queen', '/v1/chat/completions', 70,
         200, 5, 1, '2026-11-02', 3)`,
    );
    await migrate(old, MIGRATIONS);
    expect(await old.query(`select name from accounts where id = 'acc_old'`)).toEqual([{ name: 'Old' }]);
    const [group] = await sumUsage(old, {
      accountId: 'acc_old',
      service: 'model',
      from: '2026-11-01',
      to: '2026-11-30',
      bucket: 'month',
      filters: {},
      groupBy: ['model'],
    });
    expect(group).toMatchObject({
      bucket: '2026-11',
      values: ['queen'],
      sums: { requests: 3, cost_nano: 70 },
    });
  });
});
