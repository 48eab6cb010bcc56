import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, storages, type TestDatabase } from '../../contract-tests/support/server.ts';
import { embedOne } from '../embeddings/index.ts';
import type { Db } from '../platform/db.ts';
import { openStorage } from '../storage.ts';
import { demoListing, loadDemoDirectory } from './demo.ts';
import { EMBEDDING_VERSION, ensureEmbeddings, KEYWORD_VERSION } from './reembed.ts';
import { EMBEDDING_DIMENSIONS, embeddingText, quantize, tsvInputs, tsvSql } from './store.ts';

const COUNT = 1500; // more than one batch of 1,000
const UP_TO_DATE = { reembedded: 0, reindexed: 0, from: EMBEDDING_VERSION };

describe.each(await storages())('on %s', (storage) => {
  let db: Db;
  let database: TestDatabase | undefined;

  beforeAll(async () => {
    if (storage === 'postgres') database = await createTestDatabase();
    db = await openStorage({ databaseUrl: database?.url, dataDir: 'memory://' });
    await loadDemoDirectory(db, { count: COUNT, seed: 'reembed' });
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  const version = async (key = 'embedding_version') =>
    (await db.query<{ value: string }>(`select value from directory_meta where key = $1`, [key]))[0]?.value;

  /** Whether listing `index`'s stored vector and `tsv` are what this build computes for it. */
  async function derivedAsThisBuild(index: number): Promise<{ embedding: boolean; tsv: boolean }> {
    const record = demoListing('reembed', index);
    const inputs = tsvInputs(record);
    const [row] = await db.query<{ embedding: Uint8Array; same: boolean }>(
      `select embedding, tsv = ${tsvSql((i) => `$${i + 2}::text`)} as same from listings where id = $1`,
      [record.id, ...inputs],
    );
    const expected = quantize(embedOne(embeddingText(record), EMBEDDING_DIMENSIONS));
    return { embedding: Buffer.from(row!.embedding).equals(Buffer.from(expected)), tsv: row!.same };
  }

  describe('stored embeddings and trade words follow the code', () => {
    it('a directory filled by this build is at this build’s versions: nothing to do', async () => {
      expect(await version()).toBe(EMBEDDING_VERSION);
      expect(await version('keyword_version')).toBe(KEYWORD_VERSION);
      expect(await ensureEmbeddings(db)).toEqual(UP_TO_DATE);
    });

    it('vectors of an older engine are recomputed from the stored profiles, every batch, then marked', async () => {
      // what an older engine left: other vectors, and its version
      await db.query(`update listings set embedding = $1`, [quantize(embedOne('something else entirely'))]);
      await db.query(`update directory_meta set value = 'thesaurus-1' where key = 'embedding_version'`);
      const progress: number[] = [];
      const result = await ensureEmbeddings(db, (done) => progress.push(done));
      expect(result).toEqual({ reembedded: COUNT, reindexed: 0, from: 'thesaurus-1' });
      expect(progress).toEqual([1000, COUNT]);
      expect(await version()).toBe(EMBEDDING_VERSION);
      for (const index of [0, 999, 1000, COUNT - 1]) {
        expect(await derivedAsThisBuild(index)).toEqual({ embedding: true, tsv: true });
      }
      expect(await ensureEmbeddings(db)).toEqual(UP_TO_DATE);
    });

    it('a directory from before keyword_version gets its trade words again, vectors untouched', async () => {
      // what the seven-language build left: no Portuguese trade words, and no keyword_version
      await db.query(`update listings set tsv = to_tsvector('simple', name_folded)`);
      await db.query(`delete from directory_meta where key = 'keyword_version'`);
      expect(await derivedAsThisBuild(0)).toEqual({ embedding: true, tsv: false });
      const [before] = await db.query<{ n: number }>(
        `select count(*)::int as n from listings where tsv @@ to_tsquery('portuguese', 'canalizador')`,
      );
      expect(before!.n).toBe(0);
      expect(await ensureEmbeddings(db)).toEqual({
        reembedded: 0,
        reindexed: COUNT,
        from: EMBEDDING_VERSION,
      });
      expect(await version('keyword_version')).toBe(KEYWORD_VERSION);
      for (const index of [0, 999, 1000, COUNT - 1]) {
        expect(await derivedAsThisBuild(index)).toEqual({ embedding: true, tsv: true });
      }
      // every plumber, whatever its language, is found by the Portuguese word
      const [plumbers] = await db.query<{ n: number; found: number }>(
        `select count(*)::int as n,
           count(*) filter (where tsv @@ to_tsquery('portuguese', 'canalizador'))::int as found
         from listings where activity_path && array['43.22']`,
      );
      expect(plumbers!.n).toBeGreaterThan(5);
      expect(plumbers!.found).toBe(plumbers!.n);
      expect(await ensureEmbeddings(db)).toEqual(UP_TO_DATE);
    });

    const indexes = async () =>
      (
        await db.query<{ indexdef: string }>(
          `select indexdef from pg_indexes where tablename = 'listings' order by indexname`,
        )
      ).map((r) => r.indexdef);

    it('a large rewrite sets the indexes aside, and one stopped half-way goes on at the next start', async () => {
      const before = await indexes();
      expect(before.length).toBeGreaterThan(5);
      await db.query(`update listings set embedding = $1`, [quantize(embedOne('something else entirely'))]);
      await db.query(`update directory_meta set value = 'thesaurus-1' where key = 'embedding_version'`);
      const large = { setIndexesAsideFrom: 0 };
      // stopped after its first batch (as a kill would), with the indexes dropped
      await expect(
        ensureEmbeddings(
          db,
          () => {
            throw new Error('stopped');
          },
          large,
        ),
      ).rejects.toThrow('stopped');
      expect((await indexes()).length).toBeLessThan(before.length);
      expect(await version()).toBe('thesaurus-1');
      const progress: number[] = [];
      const result = await ensureEmbeddings(db, (done) => progress.push(done), large);
      expect(result).toEqual({ reembedded: COUNT, reindexed: 0, from: 'thesaurus-1' });
      expect(progress).toEqual([COUNT]); // the first 1,000 were done by the stopped run
      expect(await indexes()).toEqual(before);
      expect(await version()).toBe(EMBEDDING_VERSION);
      for (const index of [0, 999, 1000, COUNT - 1]) {
        expect(await derivedAsThisBuild(index)).toEqual({ embedding: true, tsv: true });
      }
      const [left] = await db.query<{ n: number }>(
        `select count(*)::int as n from directory_meta where key like 'rederive_%'`,
      );
      expect(left!.n).toBe(0);
      expect(await ensureEmbeddings(db)).toEqual(UP_TO_DATE);
    });
  });
});
