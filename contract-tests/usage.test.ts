// GET /v1/usage of the model API, through the generated SDK, on both storage paths: totals are
// the sum of the records, grouping and buckets are exact, and bad periods are 400s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../generated/model/client/client/index.ts';
import { getUsage } from '../generated/model/client/sdk.gen.ts';
import type { Principal } from '../src/platform/principal.ts';
import { type Storage, startTestServers, storages, type TestServers } from './support/server.ts';
import { explain, operations, responseValidator } from './support/spec.ts';

const STORAGES = await storages();
const op = operations('model').find((o) => o.operationId === 'getUsage')!;

describe.each(STORAGES)('model usage on %s', (storage: Storage) => {
  let servers: TestServers;
  let mine: Principal;
  let other: Principal;

  async function record(
    p: Principal,
    model: string,
    day: string,
    input: number,
    output: number,
    cost: number,
  ) {
    await servers.platform.db.query(
      `insert into usage_records (id, service, account_id, project_id, key_id, model, endpoint, input_tokens,
         output_tokens, cost_nano, status, latency_ms, created, day)
       values ($1, 'model', $2, $3, $4, $5, '/v1/chat/completions', $6, $7, $8, 200, 12, $9, $10)`,
      [
        `usg_${Math.random().toString(36).slice(2)}`,
        p.accountId,
        p.projectId,
        p.keyId,
        model,
        input,
        output,
        cost,
        0,
        day,
      ],
    );
  }

  beforeAll(async () => {
    servers = await startTestServers(storage, { which: ['model'] });
    const [admin] = await servers.platform.db.query<{ id: string; account_id: string; project_id: string }>(
      'select id, account_id, project_id from api_keys limit 1',
    );
    mine = {
      accountId: admin!.account_id,
      projectId: admin!.project_id,
      keyId: admin!.id,
      scopes: [],
      plan: 'standard',
    };
    const o = await servers.platform.accounts.createAccount('other');
    other = {
      accountId: o.accountId,
      projectId: o.projectId,
      keyId: 'key_other',
      scopes: [],
      plan: 'standard',
    };
    const second = { ...mine, keyId: 'key_01JD8W3V6Q2M4T7Y9ZBC5XEFGH' };
    await record(mine, 'queen', '2026-10-31', 100, 50, 150_000);
    await record(mine, 'queen', '2026-11-01', 1000, 500, 1_500_000);
    await record(second, 'king', '2026-11-01', 10, 20, 270_000);
    await record(mine, 'prince', '2026-11-02', 7, 3, 950);
    await record(other, 'queen', '2026-11-01', 99999, 99999, 999_999_999);
  });
  afterAll(async () => servers?.stop());

  const client = () => createClient({ baseUrl: servers.urls.model!, auth: servers.adminKey });

  it('sums the records of the period, per day, ungrouped, never another account', async () => {
    const res = await getUsage({ client: client(), query: { from: '2026-11-01', to: '2026-11-03' } });
    expect(res.response?.status).toBe(200);
    const validate = responseValidator(op, '200');
    expect(validate(res.data), explain(validate)).toBe(true);
    const report = res.data!;
    expect(report.totals).toMatchObject({
      requests: 3,
      input_tokens: 1017,
      output_tokens: 523,
      cost: '0.001770950',
    });
    expect(report.data.map((b) => b.start)).toEqual(['2026-11-01', '2026-11-02', '2026-11-03']);
    expect(report.data[0]!.results).toEqual([
      expect.objectContaining({ model: null, requests: 2, input_tokens: 1010, cost: '0.001770000' }),
    ]);
    expect(report.data[2]!.results).toEqual([]);
  });

  it('groups by model and key, buckets by month, filters', async () => {
    const res = await getUsage({
      client: client(),
      query: { from: '2026-10-15', to: '2026-11-30', bucket: 'month', group_by: ['model', 'key_id'] },
    });
    const report = res.data!;
    expect(report.data.map((b) => [b.start, b.end])).toEqual([
      ['2026-10-15', '2026-10-31'],
      ['2026-11-01', '2026-11-30'],
    ]);
    const november = report.data[1]!.results;
    expect(november.map((r) => `${r.model}/${r.key_id}/${r.requests}`).sort()).toEqual(
      [`king/key_01JD8W3V6Q2M4T7Y9ZBC5XEFGH/1`, `prince/${mine.keyId}/1`, `queen/${mine.keyId}/1`].sort(),
    );
    const sum = report.data.flatMap((b) => b.results).reduce((n, r) => n + r.requests, 0);
    expect(sum).toBe(report.totals.requests);
    const filtered = await getUsage({
      client: client(),
      query: { from: '2026-10-01', to: '2026-11-30', model: 'king' },
    });
    expect(filtered.data!.totals).toMatchObject({ requests: 1, cost: '0.000270000' });
  });

  it.each([
    [{ from: '2026-02-30', to: '2026-03-01' }, 'invalid_date', 'from'],
    [{ from: '2026-11-02', to: '2026-11-01' }, 'invalid_period', 'from'],
    [{ from: '2025-01-01', to: '2026-01-02' }, 'invalid_period', 'to'],
  ])('answers 400 for %j', async (query, code, param) => {
    const res = await getUsage({ client: client(), query });
    expect(res.response?.status).toBe(400);
    expect(res.error).toMatchObject({ error: { type: 'invalid_request_error', code, param } });
  });
});
