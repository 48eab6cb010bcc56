import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, storages, type TestDatabase } from '../../contract-tests/support/server.ts';
import { embedOne } from '../embeddings/index.ts';
import type { Db } from '../platform/db.ts';
import { openStorage } from '../storage.ts';
import { demoListing, loadDemoDirectory } from './demo.ts';
import { EMBEDDING_VERSION, ensureEmbeddings } from './reembed.ts';
import { EMBEDDING_DIMENSIONS, embeddingText, quantize } from './store.ts';

const COUNT = 1500; // more than one batch of 1,000

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

  const version = async () =>
    (await db.query<{ value: string }>(`select value from directory_meta where key = 'embedding_version'`))[0]
      ?.value;

  describe('stored embeddings follow the embedding engine', () => {
    it('a directory filled by this build is at this build’s version: nothing to do', async () => {
      expect(await version()).toBe(EMBEDDING_VERSION);
      expect(await ensureEmbeddings(db)).toEqual({ reembedded: 0, from: EMBEDDING_VERSION });
    });

    it('vectors of an older engine are recomputed from the stored profiles, every batch, then marked', async () => {
      // what an older engine left: other vectors, and its version
      await db.query(`update listings set embedding = $1`, [quantize(embedOne('something else entirely'))]);
      await db.query(`update directory_meta set value = 'thesaurus-1' where key = 'embedding_version'`);
      const progress: number[] = [];
      const result = await ensureEmbeddings(db, (done) => progress.push(done));
      expect(result).toEqual({ reembedded: COUNT, from: 'thesaurus-1' });
      expect(progress).toEqual([1000, COUNT]);
      expect(await version()).toBe(EMBEDDING_VERSION);
      for (const index of [0, 999, 1000, COUNT - 1]) {
        const record = demoListing('reembed', index);
        const [row] = await db.query<{ embedding: Uint8Array }>(
          `select embedding from listings where id = $1`,
          [record.id],
        );
        const expected = quantize(embedOne(embeddingText(record), EMBEDDING_DIMENSIONS));
        expect(Buffer.from(row!.embedding).equals(Buffer.from(expected))).toBe(true);
      }
      expect(await ensureEmbeddings(db)).toEqual({ reembedded: 0, from: EMBEDDING_VERSION });
    });
  });
});
