// Starts the real services for a suite, on either storage path: PGlite in memory, or a fresh
// PostgreSQL database created for the suite and dropped after it. In CI both must be there:
// a missing PostgreSQL fails the run instead of silently testing one path.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { type Running, type ServiceName, startServices } from '../../src/services/server.ts';
import { TEST_DEMO_LISTINGS } from './demo.ts';

export type Storage = 'pglite' | 'postgres';
export type { ServiceName };

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://eurus:eurus@127.0.0.1:5432/postgres';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let postgresReachable: boolean | undefined;

async function reachable(): Promise<boolean> {
  if (postgresReachable !== undefined) return postgresReachable;
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    postgresReachable = true;
  } catch (err) {
    if (process.env.CI) throw new Error(`PostgreSQL is required in CI at ${ADMIN_URL}: ${String(err)}`);
    console.warn(
      `PostgreSQL not reachable at ${ADMIN_URL}; the postgres variant is skipped (run scripts/test-deps.sh)`,
    );
    postgresReachable = false;
  }
  return postgresReachable;
}

/** The storage paths to run a suite on: both where PostgreSQL is reachable (always in CI). */
export async function storages(): Promise<Storage[]> {
  return (await reachable()) ? ['pglite', 'postgres'] : ['pglite'];
}

/**
 * Whether a suite of PostgreSQL alone runs (`describe.runIf(await hasPostgres())`): where it is
 * reachable; in CI it must be, and a missing one fails the run instead of skipping.
 */
export function hasPostgres(): Promise<boolean> {
  return reachable();
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface TestServers extends Running {
  adminKey: string;
  storage: Storage;
  databaseUrl: string | undefined;
  stop(): Promise<void>;
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty PostgreSQL database, for instances that share one (start them with `databaseUrl`). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `eurus_test_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`create database ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}

/** Waits for /readyz (the directory answers 503 there until its demo listings are loaded). */
async function untilReady(url: string, timeoutMs = 180_000, gaveUp = () => false): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!gaveUp()) {
    const res = await fetch(`${url}/readyz`).catch(() => undefined);
    if (res?.ok) return;
    if (Date.now() > deadline) throw new Error(`${url}/readyz did not answer 200 within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function startTestServers(
  storage: Storage,
  options: {
    which?: ServiceName[];
    env?: Record<string, string>;
    databaseUrl?: string;
    /** The BOOTSTRAP_ADMIN_KEY; random unless given (instances sharing a database share it). */
    adminKey?: string;
    /** How long the directory may take to be ready (its demo listings loaded). */
    readyTimeoutMs?: number;
  } = {},
): Promise<TestServers> {
  const adminKey = options.adminKey ?? `sk_test_admin_${randomBytes(16).toString('hex')}`;
  let databaseUrl = options.databaseUrl;
  let database: TestDatabase | undefined;
  if (storage === 'postgres' && !databaseUrl) {
    database = await createTestDatabase();
    databaseUrl = database.url;
  }
  const config = {
    // a fixed secrets key, so PostgreSQL runs can store secrets as an operator's would
    ...loadConfig({
      // what follows from the data folder (the index snapshot, the usage journal, the outbox) is
      // a database in memory's, never ./data's: a snapshot written there by one suite was read
      // by another's start, and files there are shared by every suite running
      DATA_DIR: 'memory://',
      DEMO_LISTINGS: TEST_DEMO_LISTINGS,
      SECRETS_ENCRYPTION_KEY: '5e'.repeat(32),
      INBOUND_SMTP_PORT: '0', // any free port: suites run side by side
      ...options.env,
    }),
    host: '127.0.0.1',
    modelPort: 0,
    directoryPort: 0,
    logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
    dataDir: 'memory://',
    databaseUrl: storage === 'postgres' ? databaseUrl : undefined,
    bootstrapAdminKey: adminKey,
  };
  const running = await startServices(config, options.which, { drainMs: 1000 });
  if (running.urls.directory) {
    try {
      // a load that failed leaves /readyz at 503 for ever: its error, not a wait to the timeout
      let failed = false;
      await Promise.race([
        untilReady(running.urls.directory, options.readyTimeoutMs, () => failed),
        running.ready.then(
          () => new Promise<never>(() => undefined),
          (err: unknown) => {
            failed = true;
            throw new Error(`the directory did not start: ${(err as Error)?.stack ?? String(err)}`);
          },
        ),
      ]);
    } catch (err) {
      // how far the load got, for a timeout's message
      const listings = await running.platform.db
        .query<{ n: number }>('select count(*)::int as n from listings')
        .then(
          ([row]) => row?.n,
          (e: unknown) => String(e),
        );
      await running.close();
      await database?.drop();
      if (err instanceof Error) err.message += ` (${String(listings)} listings stored by then)`;
      throw err;
    }
  }
  return {
    ...running,
    adminKey,
    storage,
    databaseUrl,
    async stop() {
      await running.close();
      await database?.drop();
    },
  };
}
