// One SQL for both storage paths: PGlite (PostgreSQL in WASM) under DATA_DIR by default, a
// PostgreSQL server when DATABASE_URL is set. Both parse values the same way (int8 as number,
// numeric as string, timestamptz as Date, jsonb as objects), so callers never know which.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { type EmbeddedDatabaseLost, openEmbedded } from './embedded.ts';
import { keepPrivate } from './private.ts';
import type { Queryable } from './queryable.ts';

export type { Queryable } from './queryable.ts';

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Kind `pglite`: runs a library's SQL in the embedded database (jobs.ts, for pg-boss): several
   * statements without values (the rows of every one), or one with values.
   */
  readonly script?: (sql: string, params?: unknown[]) => Promise<unknown[]>;
  /** The server's address (kind `postgres`), for a library that keeps its own pool (jobs.ts). */
  readonly url?: string;
  /** Runs `fn` in one transaction; it commits when `fn` resolves and rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

const INT8 = 20;
const toNumber = (value: string) => Number(value);

async function openPglite(
  dataDir: string,
  onLost?: (err: EmbeddedDatabaseLost) => void,
  cluster?: string,
): Promise<Db> {
  if (dataDir !== 'memory://') keepPrivate(dataDir);
  // a worker thread owns it, so its statements never hold the thread that serves HTTP
  const db = await openEmbedded(dataDir, { ...(onLost ? { onLost } : {}), cluster });
  // its initdb wrote the first files 0666 (later ones it makes 0600 itself)
  if (dataDir !== 'memory://') keepPrivate(dataDir);
  return {
    kind: 'pglite',
    query: db.query,
    script: db.script,
    transaction: db.transaction,
    close: db.close,
  };
}

async function openPostgres(url: string, poolSize: number): Promise<Db> {
  const types = {
    getTypeParser: ((oid: number, format?: string) =>
      oid === INT8
        ? toNumber
        : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
  };
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    types,
  });
  pool.on('error', () => {}); // an idle client's error surfaces on its next query
  await pool.query('select 1');
  return {
    kind: 'postgres',
    url,
    async query<T>(sql: string, params: unknown[] = []) {
      return (await pool.query(sql, params)).rows as T[];
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      const client = await pool.connect();
      try {
        await client.query('begin');
        const result = await fn({
          async query<R>(sql: string, params: unknown[] = []) {
            return (await client.query(sql, params)).rows as R[];
          },
        });
        await client.query('commit');
        return result;
      } catch (err) {
        await client.query('rollback').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

/** The platform's own migrations (usage records, idempotency keys). */
export const PLATFORM_MIGRATIONS = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Applies the migrations of these folders in the order of their file names (numbered across all
 * folders: 0001 accounts, 01xx directory, 02xx webhooks, 03xx mail, 05xx agents and mcp, 07xx console and
 * status, 0940 platform), each once, each in a transaction. A file moved to another folder keeps its name, so
 * it is not applied again.
 */
export async function migrate(db: Db, folders: string[] = [PLATFORM_MIGRATIONS]): Promise<string[]> {
  const files = folders
    .flatMap((folder) =>
      readdirSync(folder)
        .filter((f) => f.endsWith('.sql'))
        .map((name) => ({ name, path: join(folder, name) })),
    )
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const names = files.map((f) => f.name);
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice) throw new Error(`migration ${twice} is in two folders`);
  const applied: string[] = [];
  await db.transaction(async (tx) => {
    // One instance migrates at a time; the others wait here, then find nothing left to do.
    await tx.query('select pg_advisory_xact_lock(727274)');
    await tx.query(
      'create table if not exists schema_migrations (id text primary key, applied_at timestamptz not null default now())',
    );
    const done = new Set(
      (await tx.query<{ id: string }>('select id from schema_migrations')).map((r) => r.id),
    );
    for (const file of files) {
      if (done.has(file.name)) continue;
      for (const statement of splitStatements(readFileSync(file.path, 'utf8'))) {
        await tx.query(statement);
      }
      await tx.query('insert into schema_migrations (id) values ($1)', [file.name]);
      applied.push(file.name);
    }
  });
  return applied;
}

// Migrations are plain statements separated by semicolons at line ends (no functions with
// bodies), so the extended protocol of both drivers can run them one by one.
function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*$/m)
    .map((s) =>
      s
        .split('\n')
        .filter((line) => !line.trimStart().startsWith('--'))
        .join('\n')
        .trim(),
    )
    .filter(Boolean);
}

/** Opens the database and applies the migrations of `folders` (the platform's own by default). */
export async function openDb(
  options: {
    databaseUrl?: string | undefined;
    dataDir: string;
    poolSize?: number;
    /** PGlite: told if the embedded database's worker dies (every statement fails from then on). */
    onLost?: (err: EmbeddedDatabaseLost) => void;
    /** PGlite: a dumped cluster a new database starts as (the demo directory's, demo-cache.ts). */
    cluster?: string | undefined;
  },
  folders: string[] = [PLATFORM_MIGRATIONS],
): Promise<Db> {
  const db = options.databaseUrl
    ? await openPostgres(options.databaseUrl, options.poolSize ?? 10)
    : await openPglite(options.dataDir, options.onLost, options.cluster);
  await migrate(db, folders);
  return db;
}
