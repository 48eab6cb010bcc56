// An account's data is its own to take and to erase (issue 29), on both storages: two accounts
// made as people make them (console sign-up), each with keys, a webhook endpoint, a sending
// domain, a suppression, a stored response and usage. A exports: the archive (by its signed
// link, without a key) holds A's objects and none of B's, and no secret. A erases itself after
// re-authenticating: cancelled once, then let run; its keys 401 at once, B is untouched, A's
// billing records stay with the least data, opt-outs stay as hashes that sending checks, and the
// receipt says what was kept and why.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSuppressed } from '../src/sales/suppressions.ts';
import { send } from './support/client.ts';
import { lastLink, mailTo } from './support/outbox.ts';
import { type Storage, startTestServers, storages, type TestServers } from './support/server.ts';
import { explain, operations, responseValidator } from './support/spec.ts';

const STORAGES = await storages();
const ops = Object.fromEntries(operations('model').map((op) => [op.operationId, op]));
const PASSWORD = 'velvet otter climbs 7 quiet stairs';
// Long enough that scheduling, the 409 and the cancel fit inside it on a loaded CI machine (2 s
// did not, at a load of 23 on two cores).
const GRACE_SECONDS = 6;

interface Person {
  email: string;
  cookie: string;
  csrf: string;
  accountId: string;
  key: string;
  keyId: string;
  endpointId: string;
  responseId: string;
  domain: string;
}

type Json = Record<string, unknown> & { error?: { code: string } };

describe.each(STORAGES)('an account exports and erases itself on %s', (storage: Storage) => {
  let servers: TestServers;
  let outbox: string;
  let a: Person;
  let b: Person;

  async function call(
    base: string,
    method: string,
    path: string,
    auth: Record<string, string>,
    body?: object,
  ) {
    const res = await send(base, null, method, path, body, auth);
    return { status: res.status, json: res.body as Json, headers: res.headers };
  }
  const model = (method: string, path: string, auth: Record<string, string>, body?: object) =>
    call(servers.urls.model!, method, path, auth, body);
  const directory = (method: string, path: string, auth: Record<string, string>, body?: object) =>
    call(servers.urls.directory!, method, path, auth, body);
  const bearer = (p: Person) => ({ authorization: `Bearer ${p.key}` });
  const session = (p: Person) => ({ cookie: p.cookie, 'x-csrf-token': p.csrf });

  async function person(name: string): Promise<Person> {
    const email = `${name}.${storage}@example.eu`;
    expect((await model('POST', '/v1/sign-ups', {}, { email, password: PASSWORD })).status).toBe(202);
    const token = new URL(lastLink(outbox, email, '/console/verify')).searchParams.get('token');
    await model('POST', '/v1/email-verifications', {}, { token });
    const login = await fetch(`${servers.urls.model}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    const cookie = /^([^;]+)/.exec(login.headers.get('set-cookie') ?? '')![1]!;
    const s = (await login.json()) as { csrf_token: string; account_id: string };
    const auth = { cookie, 'x-csrf-token': s.csrf_token };
    const key = await model('POST', '/v1/keys', auth, {
      name: `${name} key`,
      scopes: ['admin', 'chat', 'sales', 'concierge'],
    });
    const bearerAuth = { authorization: `Bearer ${String(key.json.secret)}` };
    const endpoint = await directory('POST', '/v1/webhook-endpoints', bearerAuth, {
      url: `http://127.0.0.1:9/${name}/hooks`,
    });
    expect(endpoint.status).toBe(201);
    const domain = `${name}-${storage}.shop.test`;
    expect((await directory('POST', '/v1/sending-domains', bearerAuth, { domain })).status).toBe(201);
    expect(
      (await directory('POST', '/v1/suppressions', bearerAuth, { email: `optout-${name}@customer.test` }))
        .status,
    ).toBe(201);
    const response = await model('POST', '/v1/responses', bearerAuth, {
      model: 'queen',
      input: `a note only ${name} wrote`,
      store: true,
    });
    expect(response.status).toBe(200);
    return {
      email,
      cookie,
      csrf: s.csrf_token,
      accountId: s.account_id,
      key: String(key.json.secret),
      keyId: String(key.json.id),
      endpointId: String(endpoint.json.id),
      responseId: String(response.json.id),
      domain,
    };
  }

  beforeAll(async () => {
    outbox = mkdtempSync(join(tmpdir(), 'eurus-account-data-'));
    servers = await startTestServers(storage, {
      env: {
        MAIL_OUTBOX_DIR: outbox,
        OUTBOUND_ALLOW_PRIVATE: 'true',
        ERASURE_GRACE_PERIOD: `${GRACE_SECONDS}s`,
      },
    });
    a = await person('ada');
    b = await person('bob');
  }, 240_000);
  afterAll(async () => {
    await servers?.stop();
    rmSync(outbox, { recursive: true, force: true });
  });

  it(
    "exports A's data, and none of B's, by a signed link that works without a key",
    { timeout: 60_000 },
    async () => {
      const started = await model('POST', '/v1/account/exports', bearer(a));
      expect(started.status).toBe(202);
      const validate = responseValidator(ops.createAccountExport!, '202');
      expect(validate(started.json), explain(validate)).toBe(true);
      const id = String(started.json.id);
      // B cannot see A's export
      expect((await model('GET', `/v1/account/exports/${id}`, bearer(b))).status).toBe(404);
      let done = started.json;
      for (let i = 0; i < 100 && done.status !== 'completed'; i++) {
        await new Promise((r) => setTimeout(r, 200));
        done = (await model('GET', `/v1/account/exports/${id}`, session(a))).json;
      }
      expect(done.status).toBe('completed');
      const link = String(done.download_url);
      expect(link.startsWith(`${servers.urls.model}/v1/account/exports/${id}/archive?expires=`)).toBe(true);
      const download = await fetch(link);
      expect(download.status).toBe(200);
      expect(download.headers.get('content-disposition')).toMatch(/attachment/);
      const text = await download.text();
      const archive = JSON.parse(text) as Record<string, Record<string, unknown>>;
      expect(archive).toMatchObject({ object: 'account_archive', account_id: a.accountId });
      for (const mine of [
        a.accountId,
        a.keyId,
        a.endpointId,
        a.responseId,
        a.domain,
        a.email,
        'optout-ada@customer.test',
      ]) {
        expect(text).toContain(mine);
      }
      for (const theirs of [
        b.accountId,
        b.keyId,
        b.endpointId,
        b.responseId,
        b.domain,
        b.email,
        'optout-bob',
      ]) {
        expect(text).not.toContain(theirs);
      }
      expect(text).not.toContain(a.key);
      for (const secret of [
        'secret_hash',
        'password_hash',
        'dkim_private_key_sealed',
        'secret_sealed',
        'token_hash',
      ]) {
        expect(text).not.toContain(`"${secret}"`);
      }
      expect((archive.console?.statements as unknown[]).length).toBeGreaterThan(0);
      // a tampered or foreign link is nothing
      const tampered = link.replace(/signature=./, (m) =>
        m.endsWith('A') ? `${m.slice(0, -1)}B` : `${m.slice(0, -1)}A`,
      );
      expect((await fetch(tampered)).status).toBe(404);
    },
  );

  it('erases A after re-authentication and a cancellable grace period; B is untouched', async () => {
    const wrongConfirm = await model('DELETE', '/v1/account', session(a), {
      confirm: b.accountId,
      password: PASSWORD,
    });
    expect(wrongConfirm.status).toBe(400);
    const wrongPassword = await model('DELETE', '/v1/account', bearer(a), {
      confirm: a.accountId,
      password: 'nope',
    });
    expect(wrongPassword.status).toBe(401);
    const first = await model('DELETE', '/v1/account', session(a), {
      confirm: a.accountId,
      password: PASSWORD,
    });
    expect(first.status).toBe(202);
    const validate = responseValidator(ops.deleteAccount!, '202');
    expect(validate(first.json), explain(validate)).toBe(true);
    expect(first.json.status).toBe('scheduled');
    expect(
      (await model('DELETE', '/v1/account', bearer(a), { confirm: a.accountId, password: PASSWORD })).status,
    ).toBe(409);
    const cancelled = await model('POST', '/v1/account/erasure/cancel', bearer(a));
    expect(cancelled.json.status).toBe('cancelled');
    await new Promise((r) => setTimeout(r, GRACE_SECONDS * 1000 + 500));
    // the cancelled erasure did nothing
    expect((await model('GET', '/v1/models', bearer(a))).status).toBe(200);

    const erasure = await model('DELETE', '/v1/account', bearer(a), {
      confirm: a.accountId,
      password: PASSWORD,
    });
    expect(erasure.status).toBe(202);
    const kept = (erasure.json.receipt as { kept: Array<{ what: string; why: string }> }).kept;
    expect(kept.map((k) => k.what).join('\n')).toMatch(/usage records/);
    expect(kept.map((k) => k.what).join('\n')).toMatch(/suppression list .* keyed hash \(HMAC-SHA256/);
    let status = 200;
    for (let i = 0; i < 150 && status !== 401; i++) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await model('GET', '/v1/models', bearer(a))).status;
    }
    expect(status).toBe(401);
    for (let i = 0; i < 150; i++) {
      const [row] = await servers.platform.db.query<{ status: string }>(
        `select status from account_erasures where account_id = $1 order by created desc limit 1`,
        [a.accountId],
      );
      if (row?.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect((await directory('GET', '/v1/webhook-endpoints', bearer(a))).status).toBe(401);
    expect((await model('GET', '/v1/sessions/current', session(a))).status).toBe(401);
    const login = await model('POST', '/v1/sessions', {}, { email: a.email, password: PASSWORD });
    expect(login.status).toBe(401);

    // B untouched
    expect((await model('GET', '/v1/models', bearer(b))).status).toBe(200);
    const endpoints = await directory('GET', '/v1/webhook-endpoints', bearer(b));
    expect((endpoints.json.data as Array<{ id: string }>).map((e) => e.id)).toEqual([b.endpointId]);
    expect((await model('GET', `/v1/responses/${b.responseId}`, bearer(b))).status).toBe(200);

    // A's billing records kept, with the least data; everything else of A gone
    const db = servers.platform.db;
    const [account] = await db.query<{ name: string }>('select name from accounts where id = $1', [
      a.accountId,
    ]);
    expect(account?.name).toBe('erased');
    const usage = await db.query('select * from usage_records where account_id = $1', [a.accountId]);
    expect(usage.length).toBeGreaterThan(0);
    for (const [table, column] of [
      ['api_keys', 'account_id'],
      ['console_users', 'account_id'],
      ['sending_domains', 'account_id'],
      ['suppressions', 'account_id'],
      ['responses', 'account_id'],
      ['account_exports', 'account_id'],
    ] as const) {
      expect(await db.query(`select 1 from ${table} where ${column} = $1`, [a.accountId]), table).toEqual([]);
    }
    const dump = JSON.stringify(
      await db.query('select * from usage_records where account_id = $1', [a.accountId]),
    );
    expect(dump).not.toContain(a.email);

    // opt-outs honoured for good: whoever sends from A's domain, the hash refuses the address
    const box = servers.platform.secrets;
    expect(await isSuppressed(db, box, b.accountId, 'OPTOUT-ada@customer.test', `hello@${a.domain}`)).toBe(
      true,
    );
    expect(await isSuppressed(db, box, b.accountId, 'optout-ada@customer.test', `hello@${b.domain}`)).toBe(
      false,
    );
    const hashes = JSON.stringify(await db.query('select * from suppression_hashes'));
    expect(hashes).not.toContain('optout-ada');
    // keyed: hashing a list of addresses does not find it
    expect(hashes).not.toContain(createHash('sha256').update('optout-ada@customer.test').digest('hex'));
    expect(hashes).toContain('hmac-sha256');

    // the receipt: on the erasure (kept as proof) and mailed to A's former address
    const [receipt] = await db.query<{ status: string; receipt: { kept: unknown[] } }>(
      'select status, receipt from account_erasures where account_id = $1 and status = $2',
      [a.accountId, 'completed'],
    );
    expect(receipt?.receipt.kept.length).toBeGreaterThan(0);
    const mail = mailTo(outbox, a.email).at(-1);
    expect(mail?.subject).toBe('Your Eurus account is erased');
    expect(mail?.text).toMatch(/Kept, and why:[\s\S]*usage records[\s\S]*why:/);
  }, 180_000);
});
