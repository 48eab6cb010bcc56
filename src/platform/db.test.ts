import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { MIGRATIONS, migrateStorage, openStorage } from '../storage.ts';
import type { Db } from './db.ts';
import { newId } from './ids.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('PGlite storage', () => {
  it('migrates once, parses int8 as numbers and rolls a failed transaction back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pglite-'));
    dirs.push(dir);
    const db: Db = await openStorage({ dataDir: dir });
    expect(await migrateStorage(db)).toEqual([]);
    const id = newId('acct');
    await db.query('insert into accounts (id, name, created) values ($1, $2, $3)', [id, 'A', 1763719200]);
    const [row] = await db.query<{ created: number }>('select created from accounts where id = $1', [id]);
    expect(row?.created).toBe(1763719200);
    await expect(
      db.transaction(async (tx) => {
        await tx.query('insert into accounts (id, name, created) values ($1, $2, $3)', ['acct_x', 'B', 1]);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await db.query('select id from accounts where id = $1', ['acct_x'])).toEqual([]);
    await db.close();
  });
});

describe('migrations', () => {
  it('are listed for every folder that owns some', () => {
    const owners = readdirSync('src', { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(`src/${d.name}/migrations`))
      .map((d) => resolve(`src/${d.name}/migrations`));
    expect([...MIGRATIONS].sort()).toEqual(owners.sort());
  });
});

describe('ids', () => {
  it('ascend even within one millisecond', () => {
    const ids = Array.from({ length: 1000 }, () => newId('key', 1763719200000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(1000);
    expect(ids[0]).toMatch(/^key_[0-9A-Z]{26}$/);
  });
});
