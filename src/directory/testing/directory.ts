// A directory database for tests: PGlite in memory, or the PostgreSQL of TEST_DATABASE_URL
// (its listings are emptied first), filled with `count` demo listings and prepared for search
// as the service prepares it (embeddings grouped by activity, ids in order). A test helper.
import { type Db } from '../../platform/db.ts';
import { openStorage } from '../../storage.ts';
import { loadDemoDirectory } from '../demo.ts';
import { createSearch } from '../search/search.ts';

export async function testDirectory(count: number, seed = 'test'): Promise<Db> {
  const url = process.env.TEST_DATABASE_URL;
  const db = await openStorage({ databaseUrl: url, dataDir: 'memory://' });
  if (url) await db.query('truncate listings restart identity');
  await loadDemoDirectory(db, { count, seed });
  await createSearch(db).prepare(); // as the service does before it says ready
  return db;
}
