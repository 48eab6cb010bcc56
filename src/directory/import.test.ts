import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../platform/db.ts';
import { demoListing } from './demo.ts';
import { importListings, validateListing } from './import.ts';
import { toListing } from './store.ts';
import { testDirectory } from '../../contract-tests/support/directory.ts';
import { writeListings } from './generate.ts';
import { PassThrough } from 'node:stream';

let db: Db;
const dir = mkdtempSync(join(tmpdir(), 'import-'));
beforeAll(async () => {
  db = await testDirectory(0);
});
afterAll(async () => {
  await db.close();
});

const line = (seed: string, i: number) =>
  JSON.stringify(
    toListing(demoListing(seed, i), new Date('2026-11-20T10:00:00Z'), { baseUrl: 'https://x.test' }),
  );
const count = async () => (await db.query<{ n: number }>('select count(*)::int as n from listings'))[0]?.n;

describe('import', () => {
  it('reports bad lines with their numbers and applies nothing', async () => {
    const bad = JSON.parse(line('imp', 1)) as Record<string, unknown>;
    bad.phone = '0049 89 123';
    delete bad.geo;
    const file = join(dir, 'bad.jsonl');
    writeFileSync(
      file,
      [line('imp', 0), JSON.stringify(bad), line('imp', 2), '{not json', line('imp', 0)].join('\n'),
    );
    const result = await importListings(db, file);
    expect(result.imported).toBe(0);
    expect(result.errors.map((e) => e.line)).toEqual([2, 4, 5]);
    expect(result.errors[0]?.errors.join(' ')).toMatch(/phone/);
    expect(result.errors[0]?.errors.join(' ')).toMatch(/geo/);
    expect(result.errors[2]?.errors.join(' ')).toMatch(/repeats the id of line 1/);
    expect(await count()).toBe(0);
  });

  it('imports generated lines in one transaction, then refuses ids that exist', async () => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    await writeListings(out, 50, 'imp');
    const file = join(dir, 'good.jsonl');
    writeFileSync(file, Buffer.concat(chunks));
    expect(await importListings(db, file, { batchSize: 20 })).toEqual({ imported: 50, errors: [] });
    expect(await count()).toBe(50);
    const again = await importListings(db, file);
    expect(again.imported).toBe(0);
    expect(again.errors).toHaveLength(50);
    expect(await count()).toBe(50);
  });
});

describe('generated listings', () => {
  it('a name cut at 40 characters leaves no hyphen before the TLD (such emails failed the import)', () => {
    // lines 12410, 16342 and 18361 of `generate.ts OUT.jsonl` (seed eurus-bench) had one
    for (const i of [12_409, 16_341, 18_360]) {
      const listing = toListing(demoListing('eurus-bench', i), new Date(), { baseUrl: 'https://x.test' });
      expect(listing.website ?? listing.email ?? '').not.toMatch(/-\./);
      expect(validateListing(listing)).toEqual([]);
    }
  });
});
