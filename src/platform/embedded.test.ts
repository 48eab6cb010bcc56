// The storage contract on both paths (db.ts), and what the embedded database's worker thread
// adds to it (embedded.ts): transactions keep their isolation, errors their PostgreSQL fields,
// values parse alike, pg-boss's scripts roll an aborted block back, close drains, a crash fails
// every statement loudly instead of leaving it waiting.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Db, openDb } from './db.ts';
import { EmbeddedDatabaseLost, openEmbedded, WORKER } from './embedded.ts';
import { newId } from './ids.ts';
import { flushUsage, recordUsage, recordUsageBatched } from './metering.ts';

const POSTGRES = process.env.TEST_DATABASE_URL ?? 'postgres://eurus:eurus@127.0.0.1:5432/postgres';
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'embedded-'));
  dirs.push(dir);
  return dir;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each([
  ['PGlite', () => openDb({ dataDir: 'memory://' })],
  ['PostgreSQL', () => openDb({ databaseUrl: POSTGRES, dataDir: 'memory://' })],
])('storage on %s', (name, open) => {
  let db: Db;
  const opened = open().then((d) => (db = d));
  afterAll(async () => {
    await opened;
    await db.close();
  });
  const table = `test_${newId('t').slice(2).toLowerCase()}`;

  it('parses values alike: int8 as number, numeric as string, timestamptz as Date, jsonb as objects', async () => {
    await opened;
    const [row] = await db.query<Record<string, unknown>>(
      `select 9007199254740991::int8 as big, 1.50::numeric as price, $1::timestamptz as at,
         $2::jsonb as doc, $3::bytea as bytes, $4::text[] as list, null::text as nothing`,
      [new Date('2026-11-26T10:00:00Z'), { a: [1, { b: 'c' }] }, Buffer.from([1, 2, 255]), ['x', null]],
    );
    expect(row).toMatchObject({
      big: 9007199254740991,
      price: '1.50',
      at: new Date('2026-11-26T10:00:00Z'),
      doc: { a: [1, { b: 'c' }] },
      list: ['x', null],
      nothing: null,
    });
    expect(row!.bytes).toBeInstanceOf(Uint8Array);
    expect([...(row!.bytes as Uint8Array)]).toEqual([1, 2, 255]);
  });

  it('keeps an error’s PostgreSQL code and fields, in a transaction too', async () => {
    await opened;
    await db.query(`create table ${table} (id text primary key, n int not null default 0)`);
    await db.query(`insert into ${table} (id) values ('a')`);
    const duplicate = await db.query(`insert into ${table} (id) values ('a')`).catch((e: unknown) => e);
    expect(duplicate).toBeInstanceOf(Error);
    expect(duplicate).toMatchObject({ code: '23505', constraint: `${table}_pkey`, table });
    const inTx = await db
      .transaction(async (tx) => {
        await tx.query(`insert into ${table} (id) values ('b')`);
        await tx.query(`insert into ${table} (id) values ('a')`);
      })
      .catch((e: unknown) => e);
    expect(inTx).toMatchObject({ code: '23505' });
    // rolled back: 'b' is not there
    expect(await db.query(`select id from ${table} order by id`)).toEqual([{ id: 'a' }]);
  });

  it('commits a transaction’s statements together, and a statement outside sees all or none', async () => {
    await opened;
    const t = `${table}_iso`;
    await db.query(`create table ${t} (id int primary key)`);
    let inside!: () => void;
    const held = new Promise<void>((r) => (inside = r));
    let release!: () => void;
    const go = new Promise<void>((r) => (release = r));
    const writing = db.transaction(async (tx) => {
      await tx.query(`insert into ${t} values (1)`);
      inside();
      await go;
      await tx.query(`insert into ${t} values (2)`);
      return 'done';
    });
    await held;
    let seen: unknown;
    const reading = db
      .query<{ n: number }>(`select count(*)::int as n from ${t}`)
      .then((rows) => (seen = rows));
    // PGlite: the reader waits for the commit (one connection); PostgreSQL: it reads the
    // committed state before it (read committed), without waiting for the writer, however long
    // its connection takes to open. Never one row of the two.
    if (name === 'PGlite') {
      await sleep(200);
      expect(seen).toBeUndefined();
      release();
      await reading;
      expect(seen).toEqual([{ n: 2 }]);
    } else {
      await reading;
      expect(seen).toEqual([{ n: 0 }]);
      release();
    }
    expect(await writing).toBe('done');
    expect(await db.query(`select count(*)::int as n from ${t}`)).toEqual([{ n: 2 }]);
  });

  it('stores a batch of usage records in one statement', async () => {
    await opened;
    const principal = {
      accountId: newId('acct'),
      projectId: 'proj_1',
      keyId: 'key_1',
      scopes: [],
      plan: 'standard',
    };
    const record = {
      service: 'model' as const,
      model: null,
      endpoint: '/v1/embeddings',
      inputTokens: 7,
      audioSeconds: 1.25,
      costNano: 12.6,
      status: 200,
      latencyMs: 4.4,
      streamed: true,
    };
    await Promise.all(Array.from({ length: 30 }, () => recordUsageBatched(db, principal, record)));
    await recordUsage(db, principal, { ...record, status: 500 });
    await flushUsage(db);
    const rows = await db.query<Record<string, unknown>>(
      `select count(*)::int as n, sum(input_tokens)::int8 as tokens, sum(audio_seconds) as audio,
         sum(cost_nano)::int8 as cost, bool_and(streamed) as streamed, bool_or(disconnected) as gone,
         count(model)::int as models, min(day)::text = to_char(now() at time zone 'utc', 'YYYY-MM-DD') as today
       from usage_records where account_id = $1`,
      [principal.accountId],
    );
    expect(rows).toEqual([
      {
        n: 31,
        tokens: 217,
        audio: 38.75,
        cost: 31 * 13,
        streamed: true,
        gone: false,
        models: 0,
        today: true,
      },
    ]);
  });
});

describe('the embedded database’s worker', () => {
  it('opens PostgreSQL with a 32 MB buffer pool, not 128 MB held in memory for good', async () => {
    const db = await openEmbedded('memory://');
    try {
      expect(await db.query('show shared_buffers')).toEqual([{ shared_buffers: '32MB' }]);
    } finally {
      await db.close();
    }
  });

  it('runs pg-boss’s scripts: every statement’s rows, and a failed block rolled back before the next', async () => {
    const db = await openEmbedded('memory://');
    try {
      await db.query('create table s (id int primary key)');
      expect(
        await db.script('begin; insert into s values (1) returning id; select 2 as two; commit;'),
      ).toEqual([{ id: 1 }, { two: 2 }]);
      await expect(db.script('begin; insert into s values (3); select 1/0; commit;')).rejects.toMatchObject({
        code: '22012',
      });
      // not inside the aborted block (25P02), and its insert is gone
      expect(await db.query('select id from s order by id')).toEqual([{ id: 1 }]);
      expect(await db.script('select $1::int as v', [5])).toEqual([{ v: 5 }]);
    } finally {
      await db.close();
    }
  });

  it('carries a large result whole', async () => {
    const db = await openEmbedded('memory://');
    try {
      const rows = await db.query<{ i: number; t: string }>(
        `select i, repeat('x', 100) as t from generate_series(1, 100000) i`,
      );
      expect(rows).toHaveLength(100_000);
      expect(rows[99_999]).toEqual({ i: 100_000, t: 'x'.repeat(100) });
    } finally {
      await db.close();
    }
  });

  it('closes after what was asked before, refuses what comes after, and keeps it on disk', async () => {
    const dir = tempDir();
    const db = await openEmbedded(dir);
    await db.query('create table c (id int primary key)');
    let release!: () => void;
    const go = new Promise<void>((r) => (release = r));
    const open = db.transaction(async (tx) => {
      await tx.query('insert into c values (1)');
      await go;
      await tx.query('insert into c values (2)');
    });
    const queued = db.query('insert into c values (3)');
    await sleep(50);
    const closing = db.close();
    await expect(db.query('select 1')).rejects.toBeInstanceOf(EmbeddedDatabaseLost);
    release();
    await open;
    await queued;
    await closing;
    await expect(db.query('select 1')).rejects.toBeInstanceOf(EmbeddedDatabaseLost);
    const again = await openEmbedded(dir);
    expect(await again.query('select id from c order by id')).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
    await again.close();
  });

  it('fails every waiting and later statement loudly when the worker crashes', async () => {
    const lost: Error[] = [];
    const db = await openEmbedded('memory://', { onLost: (err) => lost.push(err) });
    let release!: () => void;
    const go = new Promise<void>((r) => (release = r));
    const open = db.transaction(async (tx) => {
      await tx.query('select 1');
      await go;
    });
    await sleep(50);
    const waiting = db.query('select 1');
    // a request the worker cannot read: it throws on its own thread, uncaught
    db[WORKER].postMessage([null]);
    await expect(waiting).rejects.toBeInstanceOf(EmbeddedDatabaseLost);
    release();
    await expect(open).rejects.toBeInstanceOf(EmbeddedDatabaseLost);
    await expect(db.query('select 1')).rejects.toThrow(/embedded database failed/);
    await expect(db.transaction(async () => undefined)).rejects.toBeInstanceOf(EmbeddedDatabaseLost);
    expect(lost).toHaveLength(1);
    await db.close();
  });
});
