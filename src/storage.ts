// The one database both services share, with the migrations of every folder that owns tables
// (ARCHITECTURE.md: each folder keeps its own migrations; this root module lists them).
import { fileURLToPath } from 'node:url';
import { type Db, migrate, openDb, PLATFORM_MIGRATIONS } from './platform/db.ts';
import type { EmbeddedDatabaseLost } from './platform/embedded.ts';

const own = (folder: string) => fileURLToPath(new URL(`./${folder}/migrations`, import.meta.url));

export const MIGRATIONS = [
  PLATFORM_MIGRATIONS,
  own('accounts'),
  own('limits'),
  own('directory'),
  own('webhooks'),
  own('agents'),
  own('media'),
  own('mcp'),
  own('console'),
  own('status'),
  own('mail'),
  own('sales'),
  own('concierge'),
  own('crm'),
  own('privacy'),
];

/** Opens PGlite under `dataDir` (or in memory), or the PostgreSQL of `databaseUrl`, migrated. */
export function openStorage(options: {
  databaseUrl?: string | undefined;
  dataDir: string;
  poolSize?: number;
  /** PGlite: told if the embedded database's worker dies. */
  onLost?: (err: EmbeddedDatabaseLost) => void;
  /** PGlite: a dumped cluster a new database starts as (the demo directory's, demo-cache.ts). */
  cluster?: string | undefined;
}): Promise<Db> {
  return openDb(options, MIGRATIONS);
}

/** Applies every folder's migrations (a database opened elsewhere). */
export function migrateStorage(db: Db): Promise<string[]> {
  return migrate(db, MIGRATIONS);
}
