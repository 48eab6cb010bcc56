import { describe, expect, it } from 'vitest';
import type { Queryable } from './db.ts';
import type { Principal } from './principal.ts';
import { recordUsage, recordUsageBatched, type UsageRecord } from './metering.ts';

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
  const db: Queryable = {
    query<T>(sql: string, params: unknown[] = []) {
      const rows = params.length / 20;
      if (!sql.startsWith('insert into usage_records') || !Number.isInteger(rows)) throw new Error(sql);
      inserts.push(rows);
      for (let i = 0; i < rows; i++)
        if (params[i * 20 + 14] === 999) return Promise.reject(new Error('bad row'));
      return Promise.resolve([] as T[]);
    },
  };
  return { db, inserts };
}

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
