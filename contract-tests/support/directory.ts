// A directory database for tests: PGlite in memory or, when TEST_DATABASE_URL names a
// PostgreSQL server, a fresh database of its own there (dropped on close, so suites running side
// by side never share one), filled with `count` demo listings and prepared for search as the
// service prepares it (embeddings grouped by activity, ids in order). A test helper.
import { createTestDatabase } from './server.ts';
import { type Db } from '../../src/platform/db.ts';
import { openStorage } from '../../src/storage.ts';
import { loadDemoDirectory } from '../../src/directory/demo.ts';
import { createSearch } from '../../src/directory/search/search.ts';

export async function testDirectory(count: number, seed = 'test'): Promise<Db> {
  const database = process.env.TEST_DATABASE_URL ? await createTestDatabase() : undefined;
  const db = await openStorage({ databaseUrl: database?.url, dataDir: 'memory://' });
  await loadDemoDirectory(db, { count, seed });
  await createSearch(db).prepare(); // as the service does before it says ready
  if (!database) return db;
  return {
    ...db,
    close: async () => {
      await db.close();
      await database.drop();
    },
  };
}
