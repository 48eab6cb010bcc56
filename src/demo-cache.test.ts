// The demo directory made at install time (demo-cache.ts): a database started from it holds what
// a first start that makes the listings holds, on disk and in memory; a changed build or a broken
// cache leaves it unused (the listings are made); it carries nothing of an installation, so two
// first starts from it get keys and secrets of their own.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';
import { demoCacheFile, demoCacheKey, usableDemoCache } from './demo-cache.ts';
import { makeDemoCache } from './demo-cache-make.ts';
import { loadDemoDirectory } from './directory/demo.ts';
import { ensureEmbeddings } from './directory/reembed.ts';
import type { Db } from './platform/db.ts';
import { createLogger } from './platform/logger.ts';
import { openPlatform } from './services/context.ts';
import { openStorage } from './storage.ts';

// a size no other test uses: its cache is made where a first start looks for it
const COUNT = 137;
const temporary: string[] = [];
const folder = () => {
  const dir = mkdtempSync(join(tmpdir(), 'demo-cache-test-'));
  temporary.push(dir);
  return join(dir, 'data');
};
let cache: string;

/** What a first start's load leaves: the listings' ids, names and embeddings, and the meta. */
async function contents(db: Db) {
  const rows = await db.query<{ id: string; name: string; embedding: Uint8Array }>(
    "select id, profile->>'name' as name, embedding from listings order by id",
  );
  const digest = createHash('sha256');
  for (const row of rows) digest.update(`${row.id}\0${row.name}\0`).update(row.embedding).update('\0');
  const meta = await db.query('select * from directory_meta order by 1');
  return { count: rows.length, digest: digest.digest('hex'), meta };
}

/** A first start's directory load (services/directory.ts): the demo, then this build's vectors. */
async function firstLoad(db: Db) {
  const { inserted } = await loadDemoDirectory(db, { count: COUNT });
  const { reembedded, reindexed } = await ensureEmbeddings(db);
  return { inserted, reembedded, reindexed };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).map((e) => join(e.parentPath, e.name));
}

beforeAll(async () => {
  cache = await makeDemoCache(COUNT);
}, 120_000);

afterAll(() => {
  rmSync(cache, { force: true });
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

describe('a database started from the demo cache', () => {
  let fresh: Awaited<ReturnType<typeof contents>>;
  beforeAll(async () => {
    const db = await openStorage({ dataDir: 'memory://' });
    try {
      expect((await firstLoad(db)).inserted).toBe(COUNT);
      fresh = await contents(db);
    } finally {
      await db.close();
    }
  }, 120_000);

  it.each(['memory', 'disk'])('holds what a fresh load makes (%s), and loads nothing', async (where) => {
    const dataDir = where === 'memory' ? 'memory://' : folder();
    expect(usableDemoCache({ databaseUrl: undefined, demoListings: COUNT })).toBe(cache);
    const db = await openStorage({ dataDir, cluster: cache });
    try {
      expect(await firstLoad(db)).toEqual({ inserted: 0, reembedded: 0, reindexed: 0 });
      const copied = await contents(db);
      expect(copied.count).toBe(COUNT);
      expect(copied).toEqual(fresh);
    } finally {
      await db.close();
    }
    if (where === 'disk') {
      // issue 27 point 6: the copied cluster is private like one initdb made
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      for (const path of filesUnder(dataDir)) {
        expect([path, statSync(path).mode & 0o077]).toEqual([path, 0]);
      }
    }
  });

  it('is made again for another build: a changed file changes the key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'demo-cache-key-'));
    temporary.push(dir);
    cpSync(new URL('./directory/migrations', import.meta.url), dir, { recursive: true });
    const before = demoCacheKey(COUNT, [dir]);
    const [first] = readdirSync(dir);
    writeFileSync(join(dir, first!), `${readFileSync(join(dir, first!), 'utf8')}\n-- changed\n`);
    expect(demoCacheKey(COUNT, [dir])).not.toBe(before);
    expect(demoCacheKey(COUNT + 1)).not.toBe(demoCacheKey(COUNT));
    expect(demoCacheFile(COUNT, 'another')).not.toBe(cache);
    // nothing made for a size or a build: no cache, the start makes the listings
    expect(usableDemoCache({ databaseUrl: undefined, demoListings: COUNT + 1 })).toBeUndefined();
    expect(usableDemoCache({ databaseUrl: 'postgres://x', demoListings: COUNT })).toBeUndefined();
  });

  it.each(['memory', 'disk'])(
    'a broken or missing cache falls back to making the listings (%s)',
    async (where) => {
      const dir = mkdtempSync(join(tmpdir(), 'demo-cache-broken-'));
      temporary.push(dir);
      const broken = join(dir, 'broken.tar.gz');
      writeFileSync(broken, 'not a cluster');
      for (const cluster of [broken, join(dir, 'missing.tar.gz')]) {
        const db = await openStorage({ dataDir: where === 'memory' ? 'memory://' : folder(), cluster });
        try {
          expect((await firstLoad(db)).inserted).toBe(COUNT);
          expect(await contents(db)).toEqual(fresh);
        } finally {
          await db.close();
        }
      }
    },
  );
});

describe('the demo cache holds nothing of an installation', () => {
  it('has no account, key or secret in it', async () => {
    const entries = execFileSync('tar', ['-tzf', cache], { encoding: 'utf8' });
    expect(entries).not.toMatch(/secrets\.key|signing|outbox|usage-journal|search-index/);
    const db = await openStorage({ dataDir: 'memory://', cluster: cache });
    try {
      for (const table of [
        'accounts',
        'projects',
        'api_keys',
        'usage_records',
        'idempotency_keys',
        'console_settings',
      ]) {
        const [row] = await db.query<{ n: number }>(`select count(*)::int as n from ${table}`);
        expect([table, row?.n]).toEqual([table, 0]);
      }
    } finally {
      await db.close();
    }
  });

  it('two first starts from it make their own admin keys and secrets key', async () => {
    const starts: Array<Record<string, unknown>> = [];
    for (const dataDir of [folder(), folder()]) {
      const config = loadConfig({ DATA_DIR: dataDir, DEMO_LISTINGS: String(COUNT), LOG_LEVEL: 'silent' });
      const platform = await openPlatform(config, createLogger('silent', 'platform', config.logFormat));
      try {
        const secret = platform.takeFirstRunSecret();
        const [listings] = await platform.db.query<{ n: number }>('select count(*)::int as n from listings');
        const keys = await platform.db.query<{ id: string }>('select id from api_keys');
        const [throttle] = await platform.db.query<{ value: string }>(
          "select value from console_settings where name = 'throttle_namespace'",
        );
        starts.push({
          secret,
          listings: listings?.n,
          keys: keys.map((k) => k.id),
          throttle: throttle?.value,
        });
      } finally {
        await platform.close();
      }
      const key = join(dataDir, 'secrets.key');
      starts.at(-1)!.secretsKey = statSync(key, { throwIfNoEntry: false })
        ? readFileSync(key, 'hex')
        : undefined;
    }
    const [a, b] = starts as unknown as Array<{
      secret?: string;
      listings?: number;
      keys: string[];
      throttle?: string;
      secretsKey?: string;
    }>;
    expect(a!.listings).toBe(COUNT); // started as the cache
    expect(a!.secret).toBeTruthy();
    expect(b!.secret).toBeTruthy();
    expect(a!.secret).not.toBe(b!.secret);
    expect(a!.keys).toHaveLength(1);
    expect(a!.keys).not.toEqual(b!.keys);
    expect(a!.throttle).toMatch(/^[0-9a-f]{32}$/);
    expect(a!.throttle).not.toBe(b!.throttle);
    if (a!.secretsKey !== undefined) expect(a!.secretsKey).not.toBe(b!.secretsKey);
  }, 60_000);
});
