import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embedOne } from '../embeddings/index.ts';
import { type Db } from '../platform/db.ts';
import { openStorage } from '../storage.ts';
import { demoListing, loadDemoDirectory } from './demo.ts';
import { EMBEDDING_DIMENSIONS, insertListings } from './store.ts';
import {
  groupByActivity,
  openVectors,
  refreshVectors,
  similarAmong,
  similarAmongInSlices,
  similarities,
} from './vectors.ts';

// Two copies of one directory: `grouped` is laid out by activity (as the service does after
// its start-up load), `plain` is not.
let grouped: Db;
let plain: Db;
beforeAll(async () => {
  [grouped, plain] = await Promise.all([
    openStorage({ dataDir: 'memory://' }),
    openStorage({ dataDir: 'memory://' }),
  ]);
  // the start-up load groups the embeddings unless told not to
  openVectors(grouped, { group: false });
  openVectors(plain, { group: false });
  for (const db of [grouped, plain]) {
    await loadDemoDirectory(db, { count: 1500, seed: 'vectors' });
    await refreshVectors(db);
  }
});
afterAll(async () => {
  await grouped?.close();
  await plain?.close();
});

const QUERIES = [
  'my kitchen pipe is leaking',
  'toothache',
  'Bäckerei Müller',
  'dinner for two',
  'car repair',
];
const all = (db: Db) =>
  QUERIES.map((q) => similarities(db, embedOne(q, EMBEDDING_DIMENSIONS), Number.MAX_SAFE_INTEGER));

describe('the vector index', () => {
  it('grouping the embeddings by activity changes no similarity, nor those of listings added after', async () => {
    const before = all(grouped);
    expect(before.every((s) => s.seqs.length > 0)).toBe(true);
    groupByActivity(grouped);
    expect(all(grouped)).toEqual(before);
    groupByActivity(grouped); // once only: a second call changes nothing
    expect(all(grouped)).toEqual(before);

    const added = Array.from({ length: 300 }, (_, i) => demoListing('vectors-after', i));
    for (const db of [grouped, plain]) {
      await db.transaction((tx) => insertListings(tx, added));
      await refreshVectors(db);
    }
    const after = all(grouped);
    expect(after).toEqual(all(plain));
    expect(after).not.toEqual(before); // the new listings are in
  });

  it('scores candidates in slices, giving way between them, with the same result', async () => {
    const candidates = Int32Array.from({ length: 1500 }, (_, i) => 1499 - i); // any order
    for (const db of [grouped, plain]) {
      for (const q of QUERIES) {
        const vector = embedOne(q, EMBEDDING_DIMENSIONS);
        let pauses = 0;
        let interleaved = 0;
        const sliced = similarAmongInSlices(
          db,
          vector,
          candidates,
          async () => {
            pauses++;
            await new Promise<void>((resolve) => setImmediate(resolve));
          },
          {},
          200,
        );
        setImmediate(() => interleaved++); // runs while the slices give way
        const result = await sliced;
        expect(result, q).toEqual(similarAmong(db, vector, candidates));
        expect(result.seqs.length, q).toBeGreaterThan(0);
        expect(pauses).toBe(8);
        expect(interleaved).toBe(1);
      }
    }
  });
});
