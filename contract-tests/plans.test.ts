// Plans, subscriptions and statements: subscribing to Search unlimited changes what the
// directory API enforces at once (searches not metered, the daily fair-use quota applies) and
// cancelling changes it back; the month's statement bills the subscription pro rata and lists
// the metered usage, with VAT at VAT_RATE.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from './support/client.ts';
import { type Storage, startTestServers, storages, type TestServers } from './support/server.ts';
import { explain, operations, responseValidator } from './support/spec.ts';

const ops = Object.fromEntries(operations('model').map((op) => [op.operationId, op]));

const STORAGES = await storages();

describe.each(STORAGES)('plans and statements on %s', (storage: Storage) => {
  let servers: TestServers;
  let key: string;
  let otherKey: string;

  const call = (secret: string, method: string, path: string, body?: object) =>
    send(servers.urls.model!, secret, method, path, body);
  const search = async () => {
    const res = await send(servers.urls.directory!, key, 'GET', '/v1/search?q=bakery');
    return { status: res.status, code: (res.body.error as { code: string } | undefined)?.code };
  };
  const searchCosts = async () =>
    (
      await servers.platform.db.query<{ cost_nano: number }>(
        `select cost_nano from usage_records where service = 'directory' and model = 'search' order by id`,
      )
    ).map((r) => Number(r.cost_nano));

  beforeAll(async () => {
    servers = await startTestServers(storage, { env: { DIRECTORY_DAILY_QUOTA: '2', VAT_RATE: '21' } });
    const { accountId } = await servers.platform.accounts.createAccount('plans');
    key = (
      await servers.platform.accounts.createKey(accountId, {
        name: 'all',
        scopes: ['admin', 'search', 'chat'],
      })
    ).secret;
    const other = await servers.platform.accounts.createAccount('other');
    otherKey = (
      await servers.platform.accounts.createKey(other.accountId, { name: 'other', scopes: ['admin'] })
    ).secret;
  });
  afterAll(async () => servers?.stop());

  it('lists the four plans with their monthly prices in EUR', async () => {
    const plans = await call(key, 'GET', '/v1/plans');
    expect(responseValidator(ops.listPlans!, '200')(plans.body)).toBe(true);
    expect(
      (plans.body.data as Array<{ id: string; monthly_price: string }>).map((p) => [p.id, p.monthly_price]),
    ).toEqual([
      ['pay_as_you_go', '0.000000000'],
      ['search_unlimited', '199.000000000'],
      ['sales', '199.000000000'],
      ['concierge', '99.000000000'],
    ]);
  });

  it('Search unlimited changes what the directory enforces at once, and cancelling changes it back', async () => {
    expect((await search()).status).toBe(200); // pay-as-you-go: metered, no daily quota
    const sub = await call(key, 'POST', '/v1/subscriptions', { plan: 'search_unlimited' });
    expect(sub.status).toBe(201);
    const validate = responseValidator(ops.createSubscription!, '201');
    expect(validate(sub.body), explain(validate)).toBe(true);
    expect((await call(key, 'POST', '/v1/subscriptions', { plan: 'search_unlimited' })).body).toMatchObject({
      error: { code: 'already_subscribed' },
    });
    expect((await search()).status).toBe(200);
    expect((await search()).status).toBe(200);
    expect(await search()).toEqual({ status: 429, code: 'daily_quota_exceeded' }); // fair use (2 in this test)
    // Usage records may be written in batches: wait for them. 0.001 EUR, then not metered.
    await expect.poll(searchCosts).toEqual([1_000_000, 0, 0]);

    expect((await call(otherKey, 'DELETE', `/v1/subscriptions/${String(sub.body.id)}`)).status).toBe(404);
    const canceled = await call(key, 'DELETE', `/v1/subscriptions/${String(sub.body.id)}`);
    expect(canceled.body).toMatchObject({ status: 'canceled', plan: 'search_unlimited' });
    expect((await search()).status).toBe(200); // no daily quota on pay-as-you-go
    await expect.poll(searchCosts).toEqual([1_000_000, 0, 0, 1_000_000]);
    const listed = await call(key, 'GET', '/v1/subscriptions');
    expect((listed.body.data as Array<{ id: string; status: string }>).map((s) => [s.id, s.status])).toEqual([
      [sub.body.id, 'canceled'],
    ]);
  });

  it('bills subscriptions pro rata and the metered usage on the monthly statement, with VAT', async () => {
    const concierge = await call(key, 'POST', '/v1/subscriptions', { plan: 'concierge' });
    const month = new Date().toISOString().slice(0, 7);
    // Concierge for exactly the month's first three days: 99 EUR x 3 / days in the month.
    const now = new Date();
    const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) / 1000;
    const days = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)).getUTCDate();
    await servers.platform.db.query(
      `update subscriptions set started_at = $2, canceled_at = $3, status = 'canceled' where id = $1`,
      [concierge.body.id, monthStart, monthStart + 3 * 86_400],
    );
    const statement = await call(key, 'GET', `/v1/statements/${month}`);
    expect(statement.status).toBe(200);
    const validate = responseValidator(ops.getStatement!, '200');
    expect(validate(statement.body), explain(validate)).toBe(true);
    const lines = statement.body.lines as Array<{
      kind: string;
      description: string;
      quantity: number;
      amount: string;
    }>;
    const nano = (eur: string) => Math.round(Number(eur) * 1e9);
    const subs = lines.filter((l) => l.kind === 'subscription');
    expect(subs.map((l) => l.description.split(',')[0])).toEqual(['Concierge', 'Search unlimited']);
    // Search unlimited, subscribed and cancelled in the first test: billed for its seconds.
    const all = (await call(key, 'GET', '/v1/subscriptions')).body.data as Array<{
      plan: string;
      started_at: number;
      canceled_at: number;
    }>;
    const unlimited = all.find((x) => x.plan === 'search_unlimited');
    const seconds = (unlimited?.canceled_at ?? 0) - (unlimited?.started_at ?? 0);
    expect(subs[1]?.amount).toBe((Math.round((199e9 * seconds) / (days * 86_400)) / 1e9).toFixed(9));
    expect(subs[0]).toMatchObject({ quantity: 3, amount: (Math.round((99e9 * 3) / days) / 1e9).toFixed(9) });
    const searchLine = lines.find((l) => l.description === 'Directory API: search');
    expect(searchLine).toMatchObject({ kind: 'usage', quantity: 4, amount: '0.002000000' });
    const subtotal = lines.reduce((sum, l) => sum + nano(l.amount), 0);
    expect(nano(statement.body.subtotal as string)).toBe(subtotal);
    expect(statement.body.vat_rate).toBe('21');
    expect(nano(statement.body.vat as string)).toBe(Math.round((subtotal * 2100) / 10_000));
    expect(nano(statement.body.total as string)).toBe(subtotal + nano(statement.body.vat as string));
    // Another month holds nothing; a month that is not one is a 400.
    expect((await call(key, 'GET', '/v1/statements/2020-01')).body.lines).toEqual([]);
    expect((await call(key, 'GET', '/v1/statements/2020-13')).status).toBe(400);
  });
});
