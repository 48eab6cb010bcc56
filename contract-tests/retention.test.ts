// Retention (issue 29, point 4): the daily sweep (src/privacy, a durable scheduled job) drops
// stored responses past RETENTION_STORED_RESPONSES, strips replies past RETENTION_INBOUND_MAIL and
// rolls usage records past RETENTION_REQUEST_LOGS into daily sums, on both storages, with the
// usage report and the statement unchanged by the roll-up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { accountDataParts } from '../src/privacy/parts.ts';
import { Privacy } from '../src/privacy/service.ts';
import { createLogger } from '../src/platform/logger.ts';
import { type Storage, startTestServers, storages, type TestServers } from './support/server.ts';

const STORAGES = await storages();
const DAY = 86_400;

describe.each(STORAGES)('the retention sweep on %s', (storage: Storage) => {
  let servers: TestServers;
  let privacy: Privacy;
  let account: { accountId: string; projectId: string; keyId: string };
  const now = Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    servers = await startTestServers(storage, { which: ['model'] });
    const { db } = servers.platform;
    const [admin] = await db.query<{ id: string; account_id: string; project_id: string }>(
      'select id, account_id, project_id from api_keys limit 1',
    );
    account = { accountId: admin!.account_id, projectId: admin!.project_id, keyId: admin!.id };
    privacy = new Privacy({
      db,
      jobs: servers.platform.jobs,
      parts: accountDataParts(db, '0', servers.platform.secrets),
      invalidateKey: async () => undefined,
      mailReceipt: async () => undefined,
      graceMs: 1000,
      exportLinkTtlMs: 1000,
      retention: loadConfig({}).retention,
      logger: createLogger('silent', 'privacy'),
    });
    const response = (id: string, updated: number) =>
      db.query(
        `insert into responses (id, account_id, project_id, key_id, model, status, background, created, updated,
           body, input_items, context)
         values ($1, $2, $3, $4, 'queen', 'completed', false, $5, $5, '{}', '[]', '[]')`,
        [id, account.accountId, account.projectId, account.keyId, updated],
      );
    await response('resp_old', now - 31 * DAY);
    await response('resp_new', now - 29 * DAY);
    const usage = (id: string, created: number, cost: number, key = account.keyId) =>
      db.query(
        `insert into usage_records (id, service, account_id, project_id, key_id, model, endpoint, input_tokens,
           output_tokens, cost_nano, status, latency_ms, created, day)
         values ($1, 'model', $2, $3, $4, 'queen', '/v1/chat/completions', 10, 5, $5, 200, 12, $6::bigint,
           to_timestamp($6::bigint)::date)`,
        [id, account.accountId, account.projectId, key, cost, created],
      );
    const old = now - 20 * DAY;
    await usage('usg_a', old, 1000);
    await usage('usg_b', old + 1, 2000);
    await usage('usg_c', old + 2, 4000, 'key_01JD8W3V6Q2M4T7Y9ZBC5XOTHR');
    await usage('usg_d', now - 60, 8000);
    await db.query(
      `insert into replies (id, account_id, project_id, campaign_id, recipient_id, member_id, listing_id,
         target_list_id, step, in_reply_to, matched_by, kind, from_address, from_name, subject, text,
         inbound_id, received_at, billed, cost_nano, created)
       values ($1, $2, $3, 'cmp_x', 'rcp_x', 'mem_x', 'lst_x', 'tl_x', 0, '<m@x>', 'token', 'human',
         'someone@customer.test', 'Some One', 'Re: offer', 'private words', 'in_x', $4, true, 0, $4)`,
      ['rpl_old', account.accountId, account.projectId, now - 181 * DAY],
    );
  }, 240_000);
  afterAll(async () => servers?.stop());

  async function report() {
    const day = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);
    const res = await fetch(
      `${servers.urls.model}/v1/usage?from=${day(now - 30 * DAY)}&to=${day(now)}&group_by=key_id`,
      { headers: { authorization: `Bearer ${servers.adminKey}` } },
    );
    return (await res.json()) as { totals: unknown; data: unknown };
  }

  it('drops what is past its retention and keeps every figure', async () => {
    const before = await report();
    const pruned = await privacy.sweep();
    expect(pruned).toMatchObject({ stored_responses: 1, replies: 1, usage_rolled_to_days: 2 });
    const { db } = servers.platform;
    expect((await db.query<{ id: string }>('select id from responses')).map((r) => r.id)).toEqual([
      'resp_new',
    ]);
    const rows = await db.query<{ endpoint: string; requests: string | number; latency_ms: number }>(
      'select endpoint, requests, latency_ms from usage_records where account_id = $1 order by endpoint, requests',
      [account.accountId],
    );
    expect(rows.map((r) => [r.endpoint, Number(r.requests)])).toEqual([
      ['/v1/chat/completions', 1],
      ['rollup:day', 1],
      ['rollup:day', 2],
    ]);
    expect(await report()).toEqual(before);
    const [reply] = await db.query<{ text: string; from_address: string }>(
      `select text, from_address from replies where id = 'rpl_old'`,
    );
    expect(reply).toEqual({ text: '', from_address: 'erased' });
    // a second sweep finds nothing more to do
    expect(await privacy.sweep()).toMatchObject({ stored_responses: 0, replies: 0, usage_rolled_to_days: 0 });
  });

  it('past RETENTION_USAGE_DETAIL, daily sums lose key and project, and the totals stay', async () => {
    const before = await report();
    const shorter = new Privacy({
      db: servers.platform.db,
      jobs: servers.platform.jobs,
      parts: accountDataParts(servers.platform.db, '0', servers.platform.secrets),
      invalidateKey: async () => undefined,
      mailReceipt: async () => undefined,
      graceMs: 1000,
      exportLinkTtlMs: 1000,
      retention: loadConfig({ RETENTION_USAGE_DETAIL: '10d' }).retention,
      logger: createLogger('silent', 'privacy'),
    });
    expect(await shorter.sweep()).toMatchObject({ usage_rolled_to_accounts: 1 });
    const [rolled] = await servers.platform.db.query<{ key_id: string; requests: string | number }>(
      `select key_id, requests from usage_records where endpoint = 'rollup:account'`,
    );
    expect(rolled).toMatchObject({ key_id: '' });
    expect(Number(rolled?.requests)).toBe(3);
    expect((await report()).totals).toEqual(before.totals);
  });
});
