// A new PGlite database is a copy of the installed PGlite's fresh cluster (pglite-template.ts)
// instead of initdb's work: the copy holds what initdb makes (so the migrations make the same
// schema on it), on disk and in memory, and a restart opens the folder as it is.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateStorage } from '../storage.ts';
import { type Db, openDb } from './db.ts';
import { makeTemplate, readTemplate, templateFile } from './pglite-template.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'pglite-template-'));
  dirs.push(dir);
  return dir;
};

/** Queries of PGlite itself or of our Db. */
type Reader = { query<T>(sql: string): Promise<T[]> };

/** What a cluster holds that a copy could get wrong: catalogs, roles, databases, settings. */
async function catalog(db: Reader) {
  return {
    relations: await db.query(
      `select n.nspname, c.relname, c.relkind from pg_class c join pg_namespace n on n.oid = c.relnamespace
       order by 1, 2`,
    ),
    columns: await db.query(
      `select table_schema, table_name, column_name, data_type, is_nullable, column_default
       from information_schema.columns order by 1, 2, 3`,
    ),
    roles: await db.query('select rolname, rolsuper from pg_roles order by 1'),
    databases: await db.query('select datname, encoding, datcollate from pg_database order by 1'),
    settings: await db.query(
      `select name, setting from pg_settings where source not in ('default', 'override', 'session')
       order by 1`,
    ),
  };
}

const systemId = async (db: Reader) =>
  String(
    (await db.query<{ id: string }>('select system_identifier::text as id from pg_control_system()'))[0]?.id,
  );

describe('the PGlite template', () => {
  it('holds what initdb makes', async () => {
    const file = await makeTemplate(join(tempDir(), 'cluster.tar.gz'));
    const copy = await PGlite.create({ loadDataDir: new Blob([readFileSync(file)]) });
    const fresh = await PGlite.create();
    const on = (db: PGlite): Reader => ({ query: async <T>(sql: string) => (await db.query<T>(sql)).rows });
    try {
      expect(await catalog(on(copy))).toEqual(await catalog(on(fresh)));
    } finally {
      await copy.close();
      await fresh.close();
    }
  }, 120_000);

  it('is what a new database on disk or in memory starts from', async () => {
    if (!existsSync(templateFile())) await makeTemplate(); // `npm ci` makes it
    const template = await PGlite.create({ loadDataDir: readTemplate()! });
    const id = await systemId({ query: async <T>(sql: string) => (await template.query<T>(sql)).rows });
    await template.close();
    const opened: Db[] = [];
    try {
      const folder = join(tempDir(), 'data');
      for (const dataDir of [folder, 'memory://']) {
        const db = await openDb({ dataDir });
        opened.push(db);
        // initdb draws a new system identifier; a copy keeps the template's
        expect(await systemId(db)).toBe(id);
        await migrateStorage(db);
      }
      const [onDisk, inMemory] = opened as [Db, Db];
      expect(await catalog(onDisk)).toEqual(await catalog(inMemory));
      await onDisk.close();
      // a restart opens the folder as it is
      const again = await openDb({ dataDir: folder });
      opened[0] = again;
      expect(await systemId(again)).toBe(id);
    } finally {
      await Promise.all(opened.map((db) => db.close()));
    }
  }, 120_000);
});
