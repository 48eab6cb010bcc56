import { mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { until } from '../../contract-tests/support/client.ts';
import type { Queryable } from './db.ts';
import type { Principal } from './principal.ts';
import {
  closeUsageJournal,
  flushUsage,
  openUsageJournal,
  recordUsage,
  recordUsageBatched,
  type UsageRecord,
  usageJournalDir,
} from './metering.ts';

const principal: Principal = {
  accountId: 'acct_1',
  projectId: 'proj_1',
  keyId: 'key_1',
  scopes: ['chat'],
  plan: 'standard',
};
const record = (status: number): UsageRecord => ({
  service: 'model',
  model: 'prince',
  endpoint: '/v1/chat/completions',
  inputTokens: 10,
  outputTokens: 5,
  costNano: 1000,
  status,
  latencyMs: 3,
});

/** Records each insert's row count; rejects any insert holding a row of status 999. */
function fakeDb() {
  const inserts: number[] = [];
  const ids: string[] = [];
  const down = { now: false };
  const db: Queryable = {
    query<T>(sql: string, params: unknown[] = []) {
      // one array a column (unnest): ids first, statuses 15th
      const columns = params as unknown[][];
      if (!sql.startsWith('insert into usage_records') || columns.length !== 20) throw new Error(sql);
      if (!sql.endsWith('on conflict (id) do nothing')) throw new Error('a replay must be idempotent');
      if (down.now) return Promise.reject(new Error('database down'));
      const rows = columns[0]!.length;
      inserts.push(rows);
      ids.push(...(columns[0] as string[]));
      if (columns[14]!.includes(999)) return Promise.reject(new Error('bad row'));
      return Promise.resolve([] as T[]);
    },
  };
  return { db, inserts, ids, down };
}

const segments = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
/** A pid no process has (Linux's largest is 4,194,304). */
const DEAD_PID = 4_194_303;

describe('usage records', () => {
  it('recordUsage writes one row at once', async () => {
    const { db, inserts } = fakeDb();
    await recordUsage(db, principal, record(200));
    expect(inserts).toEqual([1]);
  });

  it('recordUsageBatched writes the records of one moment in one insert, each resolved when stored', async () => {
    const { db, inserts } = fakeDb();
    await Promise.all([1, 2, 3, 4, 5].map(() => recordUsageBatched(db, principal, record(200))));
    expect(inserts).toEqual([5]);
    await recordUsageBatched(db, principal, record(200));
    expect(inserts).toEqual([5, 1]);
  });

  it('a failing row in a batch fails alone: the others are written one by one', async () => {
    const { db, inserts } = fakeDb();
    const outcomes = await Promise.allSettled(
      [200, 999, 200].map((s) => recordUsageBatched(db, principal, record(s))),
    );
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(inserts).toEqual([3, 1, 1, 1]);
  });
});

describe('the usage journal', () => {
  it('answers at once, with the record in a segment file, and stores the batch later', async () => {
    const { db, inserts, ids } = fakeDb();
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    await openUsageJournal(db, dir);
    try {
      await Promise.all([1, 2, 3].map(() => recordUsageBatched(db, principal, record(200))));
      expect(inserts).toEqual([]); // not in the database yet
      const [file] = segments(dir);
      const lines = readFileSync(join(dir, file!), 'utf8').trim().split('\n');
      expect(lines).toHaveLength(3);
      expect(JSON.parse(lines[0]!)).toContain('acct_1');
      await flushUsage(db);
      expect(inserts).toEqual([3]);
      expect(ids).toEqual(lines.map((l) => (JSON.parse(l) as string[])[0]));
      expect(segments(dir)).toEqual([]); // stored: the segment is gone
      await recordUsageBatched(db, principal, record(200));
      await new Promise((r) => setTimeout(r, 150)); // the flush interval (50 ms) passes
      expect(inserts).toEqual([3, 1]);
    } finally {
      await closeUsageJournal(db);
    }
  });

  it('keeps one segment across flushes and deletes it once closed and stored', async () => {
    const { db, inserts } = fakeDb();
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    await openUsageJournal(db, dir);
    try {
      await recordUsageBatched(db, principal, record(200));
      await until('the first flush', () => inserts.length === 1, 5_000, 10);
      await recordUsageBatched(db, principal, record(200));
      await until('the second flush', () => inserts.length === 2, 5_000, 10);
      const [file] = segments(dir);
      expect(segments(dir)).toEqual([file]); // both rows in one file, open for the next
      expect(readFileSync(join(dir, file!), 'utf8').trim().split('\n')).toHaveLength(2);
      await until('the segment closed and deleted', () => segments(dir).length === 0, 5_000, 50);
      expect(inserts).toEqual([1, 1]);
    } finally {
      await closeUsageJournal(db);
    }
  });

  it('keeps the rows, in memory and on disk, while the database refuses them', async () => {
    const { db, inserts, down } = fakeDb();
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    await openUsageJournal(db, dir);
    down.now = true;
    await recordUsageBatched(db, principal, record(200));
    await expect(flushUsage(db)).rejects.toThrow('database down');
    expect(segments(dir)).toHaveLength(1);
    down.now = false;
    await recordUsageBatched(db, principal, record(200));
    await closeUsageJournal(db);
    expect(inserts).toEqual([1, 1]);
    expect(segments(dir)).toEqual([]);
  });

  it('replays what a dead process left, skipping a torn last line, and a stale segment of its own pid', async () => {
    const { db, ids } = fakeDb();
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const row = (id: string) =>
      JSON.stringify([
        id,
        'model',
        'acct_1',
        'proj_1',
        'key_1',
        'prince',
        '/v1/chat/completions',
        1,
        1,
        0,
        0,
        0,
        0,
        5,
        200,
        3,
        false,
        false,
        1,
        '2026-11-25',
      ]);
    writeFileSync(
      join(dir, `usage-${DEAD_PID}-abc-0.jsonl`),
      `${row('usg_a')}\n${row('usg_b')}\n${row('usg_torn').slice(0, 20)}`,
    );
    // this pid's: a live writer (another thread) until it has not been written for 30 s
    writeFileSync(join(dir, `usage-${process.pid}-a1-0.jsonl`), `${row('usg_fresh')}\n`);
    writeFileSync(join(dir, `usage-${process.pid}-b2-0.jsonl`), `${row('usg_old')}\n`);
    const longAgo = new Date(Date.now() - 60_000);
    utimesSync(join(dir, `usage-${process.pid}-b2-0.jsonl`), longAgo, longAgo);
    const replayed = await openUsageJournal(db, dir);
    await closeUsageJournal(db);
    expect(replayed).toBe(3);
    expect(ids.sort()).toEqual(['usg_a', 'usg_b', 'usg_old']);
    expect(segments(dir)).toEqual([`usage-${process.pid}-a1-0.jsonl`]);
  });

  it('keeps one directory per database', () => {
    const a = usageJournalDir('/j', { databaseUrl: 'postgres://u:secret@h:5432/a', dataDir: './data' });
    const a2 = usageJournalDir('/j', { databaseUrl: 'postgres://u:other@h:5432/a', dataDir: '/x' });
    const b = usageJournalDir('/j', { databaseUrl: 'postgres://u:secret@h:5432/b', dataDir: './data' });
    const c = usageJournalDir('/j', { dataDir: './data' });
    expect(a).toBe(a2); // the password is no part of it
    expect(new Set([a, b, c]).size).toBe(3);
  });
});
