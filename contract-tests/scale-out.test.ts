// Scale-out (README, Contract tests: scale-out): instances started as separate processes on one PostgreSQL
// database and one Redis behave as one service. Limits are taken from the same buckets whichever
// instance a request reaches, and a key revoked on one instance is refused by every other at
// once. Without REDIS_URL each instance limits in its own memory, as the last test shows.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { AccountStore } from '../src/accounts/store.ts';
import { type Db } from '../src/platform/db.ts';
import { openStorage } from '../src/storage.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './support/client.ts';
import { bearer, expectError } from './support/envelope.ts';
import { type Instance, redisAvailable, startInstance, waitReady } from './support/instances.ts';
import { createTestDatabase, hasPostgres, type TestDatabase, TEST_REDIS_URL } from './support/server.ts';
import { explain, operations, responseValidator } from './support/spec.ts';

const RUNS = (await hasPostgres()) && (await redisAvailable());

// Low limits so the suite reaches every 429 in a few requests (src/limits/policies.ts).
const RPM = 10;
const TPM = 600;
const DIRECTORY_RPS = 5; // bursts of 50 a second, a bucket of 1,350 refilled at 5 a second
const DAILY = 12;

const chatOp = operations('model').find((op) => op.operationId === 'createChatCompletion')!;

interface Policy {
  [name: string]: Record<string, number>;
}

/** `"a";q=1;w=2, "b";r=3;t=4` as { a: { q: 1, w: 2 }, b: { r: 3, t: 4 } }. */
function parseFields(header: string | null): Policy {
  const out: Policy = {};
  for (const item of (header ?? '').split(',')) {
    const [name, ...params] = item.trim().split(';');
    if (!name) continue;
    out[name.replaceAll('"', '')] = Object.fromEntries(
      params.map((p) => {
        const [k, v] = p.split('=');
        return [k?.trim() ?? '', Number(v)];
      }),
    );
  }
  return out;
}

function chat(base: string, secret: string, model: string, maxTokens: number): Promise<Response> {
  return fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(secret), 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      messages: [{ role: 'user', content: 'Name one river in Europe.' }],
      max_completion_tokens: maxTokens,
    }),
  });
}

function expectRetryHeaders(res: Response): { retryAfter: number; retryAfterMs: number } {
  const retryAfter = Number(res.headers.get('retry-after'));
  const retryAfterMs = Number(res.headers.get('retry-after-ms'));
  expect(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After ${retryAfter}`).toBe(true);
  expect(Number.isInteger(retryAfterMs) && retryAfterMs >= 0, `retry-after-ms ${retryAfterMs}`).toBe(true);
  expect(retryAfter).toBe(Math.max(1, Math.ceil(retryAfterMs / 1000)));
  expect(res.headers.get('ratelimit-policy')).toBeTruthy();
  expect(res.headers.get('ratelimit')).toBeTruthy();
  return { retryAfter, retryAfterMs };
}

describe.runIf(RUNS)('two instances on one PostgreSQL database and one Redis', () => {
  const adminKey = `sk_test_admin_${randomBytes(16).toString('hex')}`;
  let database: TestDatabase;
  let a: Instance;
  let b: Instance;
  let redis: Redis;
  let db: Db;
  let store: AccountStore;
  let bootstrapAccount: string;
  // Keys are minted straight in the database: with 10 requests a minute, the admin key's budget
  // is kept for the revocations and rotations the tests make through the API.
  /** B serves this secret (and so has its key cached). */
  const expectServedOnB = async (secret: string) => {
    const res = await fetch(`${b.model}/v1/models`, { headers: bearer(secret) });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  };
  /** `url` refuses this secret as an invalid key, in the API's error envelope. */
  const expectRefused = async (api: 'model' | 'directory', url: string, secret: string) =>
    expectError(
      api,
      await fetch(url, { headers: bearer(secret) }),
      401,
      'authentication_error',
      'invalid_api_key',
    );
  const mint = async (scopes: string[], accountId = bootstrapAccount) => {
    const key = await store.createKey(accountId, { name: `scale-out ${scopes.join(' ')}`, scopes });
    return { id: key.id, secret: key.secret };
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    redis = new Redis(TEST_REDIS_URL);
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      BOOTSTRAP_ADMIN_KEY: adminKey,
      MODEL_RATE_LIMIT_RPM: String(RPM),
      MODEL_RATE_LIMIT_TPM: String(TPM),
      DIRECTORY_RATE_LIMIT_RPS: String(DIRECTORY_RPS),
      DIRECTORY_DAILY_QUOTA: String(DAILY),
    };
    // Started at the same moment on an empty database, as a deployment rolls out: both migrate,
    // ensure the bootstrap key and load the demo directory without tripping over each other.
    [a, b] = await Promise.all([startInstance(env), startInstance(env)]);
    db = await openStorage({ databaseUrl: database.url, dataDir: 'memory://' });
    store = new AccountStore(db);
    const [row] = await db.query<{ id: string }>(`select id from accounts where name = 'bootstrap'`);
    bootstrapAccount = row!.id;
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await db?.close();
    redis?.disconnect();
    await database?.drop();
  });

  it('both instances become ready when started together on an empty database', async () => {
    const ready = await Promise.allSettled([waitReady(a.directory, 30_000), waitReady(b.directory, 30_000)]);
    expect(
      ready.map((r) => r.status),
      `A:\n${a.output()}\nB:\n${b.output()}`,
    ).toEqual(['fulfilled', 'fulfilled']);
    const [listings] = await db.query<{ n: number }>('select count(*)::int as n from listings');
    expect(listings?.n).toBe(300);
    const [accounts] = await db.query<{ n: number }>(
      `select count(*)::int as n from accounts where name = 'bootstrap'`,
    );
    expect(accounts?.n).toBe(1);
  });

  it('model API: requests per minute come from one budget, whichever instance serves them', async () => {
    const key = await mint(['chat']);
    const remaining: number[] = [];
    for (let i = 0; i < RPM; i++) {
      const res = await chat(i % 2 === 0 ? a.model : b.model, key.secret, 'prince', 5);
      const text = await res.text();
      expect(res.status, text).toBe(200);
      const validate = responseValidator(chatOp, '200');
      expect(validate(JSON.parse(text)), explain(validate)).toBe(true);
      const policy = parseFields(res.headers.get('ratelimit-policy'));
      expect(policy.requests).toEqual({ q: RPM, w: 60 });
      expect(policy.tokens).toEqual({ q: TPM, w: 60 });
      remaining.push(parseFields(res.headers.get('ratelimit')).requests?.r ?? -1);
    }
    // One bucket: each call, on either instance, leaves one request fewer (10 calls take well
    // under the 6 s one request takes to flow back in).
    expect(remaining).toEqual(Array.from({ length: RPM }, (_, i) => RPM - 1 - i));

    for (const base of [a.model, b.model]) {
      const refused = await chat(base, key.secret, 'prince', 5);
      const { retryAfterMs } = expectRetryHeaders(refused);
      expect(retryAfterMs).toBeGreaterThan(0);
      expect(retryAfterMs).toBeLessThanOrEqual(60_000 / RPM);
      expect(refused.headers.get('x-should-retry')).toBeNull();
      expect(parseFields(refused.headers.get('ratelimit')).requests?.r).toBe(0);
      const error = await expectError('model', refused, 429, 'rate_limit_error', 'rate_limit_exceeded');
      expect(error.message).toContain("model 'prince'");
    }
    // The budget is per model: another model of the same key still answers.
    expect((await chat(b.model, key.secret, 'queen', 5)).status).toBe(200);
    const stored = await redis.hget(`rl:model:${key.id}:prince:requests`, 'tokens');
    expect(Number(stored)).toBeLessThan(1);
  });

  it('model API: tokens per minute come from one budget, and a request that can never fit says so', async () => {
    const key = await mint(['chat']);
    // Each call reserves its prompt and max_completion_tokens: three of about 170 fit in 600.
    const first = await chat(a.model, key.secret, 'queen', 150);
    const body = (await first.json()) as { usage: { prompt_tokens: number } };
    expect(first.status).toBe(200);
    const reserved = body.usage.prompt_tokens + 150;
    const afterFirst = parseFields(first.headers.get('ratelimit')).tokens?.r ?? 0;
    expect(afterFirst).toBeGreaterThanOrEqual(TPM - reserved);
    expect(afterFirst).toBeLessThanOrEqual(TPM - reserved + 1);
    expect((await chat(b.model, key.secret, 'queen', 150)).status).toBe(200);
    expect((await chat(a.model, key.secret, 'queen', 150)).status).toBe(200);
    // On its own, B would still hold about 430 tokens; the shared bucket holds about 90.
    const refused = await chat(b.model, key.secret, 'queen', 150);
    const { retryAfterMs } = expectRetryHeaders(refused);
    // 10 tokens a second flow back in: the wait is what the missing tokens take.
    expect(retryAfterMs).toBeGreaterThan(((reserved - (TPM - 3 * reserved) - 10) / (TPM / 60)) * 1000 - 2000);
    expect(retryAfterMs).toBeLessThanOrEqual(((reserved - (TPM - 3 * reserved)) / (TPM / 60)) * 1000);
    expect(refused.headers.get('x-should-retry')).toBeNull();
    await expectError('model', refused, 429, 'rate_limit_error', 'rate_limit_exceeded');

    // More than the whole minute's budget in one request: waiting cannot help.
    const never = await chat(a.model, key.secret, 'king', TPM + 1);
    expectRetryHeaders(never);
    expect(never.headers.get('x-should-retry')).toBe('false');
    await expectError('model', never, 429, 'rate_limit_error', 'rate_limit_exceeded');
  });

  it('directory API: a burst over both instances is cut at the one shared ceiling', async () => {
    // A listing to ask for: details by id is the directory's cheapest call, so the burst is short.
    const scout = await mint(['search']);
    const found = await fetch(`${a.directory}/v1/search?q=bakery&limit=1`, { headers: bearer(scout.secret) });
    const id = ((await found.json()) as { data: Array<{ listing: { id: string } }> }).data[0]?.listing.id;
    expect(id).toBeTruthy();
    const key = await mint(['places']);
    const url = (base: string) => `${base}/v1/places/details?id=${id}`;
    const burst = DIRECTORY_RPS * 10;
    const sustained = DIRECTORY_RPS * 270;
    const sent = burst * 3;
    const started = performance.now();
    const responses = await Promise.all(
      Array.from({ length: sent }, (_, i) =>
        fetch(url(i % 2 === 0 ? a.directory : b.directory), { headers: bearer(key.secret) }),
      ),
    );
    const elapsedS = (performance.now() - started) / 1000;
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    expect(ok.length + refused.length).toBe(sent);
    // The ceiling, plus what flowed back in while the burst was under way (50 a second). Two
    // buckets, one per instance, would each have let their half of the burst through (75 each)
    // as long as it took more than half a second, so the shared bound tells one bucket from two
    // while it stays under what was sent (a burst that took under 2 s, on a loaded machine too).
    const shared = burst + Math.ceil(elapsedS * burst);
    expect(shared, `the burst took ${elapsedS} s`).toBeLessThan(sent);
    expect(ok.length).toBeGreaterThanOrEqual(burst);
    expect(ok.length, `${ok.length} of ${sent} in ${elapsedS} s`).toBeLessThanOrEqual(shared);
    // The sustained bucket is shared as well: after the burst it lacks what both instances took.
    const probe = await fetch(url(b.directory), { headers: bearer(key.secret) });
    await probe.arrayBuffer();
    const left = parseFields(probe.headers.get('ratelimit')).sustained?.r ?? -1;
    const taken = ok.length + (probe.status === 200 ? 1 : 0);
    const refilled = Math.ceil(((performance.now() - started) / 1000) * DIRECTORY_RPS);
    expect(left).toBeGreaterThanOrEqual(sustained - taken);
    expect(left).toBeLessThanOrEqual(sustained - taken + refilled);
    for (const res of refused.slice(0, 3)) {
      const { retryAfterMs } = expectRetryHeaders(res);
      expect(retryAfterMs).toBeLessThanOrEqual(1000);
      expect(res.headers.get('x-should-retry')).toBeNull();
      expect(parseFields(res.headers.get('ratelimit-policy'))).toMatchObject({
        burst: { q: burst, w: 1 },
        sustained: { q: sustained, w: 270 },
      });
      await expectError('directory', res, 429, 'rate_limit_error', 'rate_limit_exceeded');
    }
    await Promise.all(responses.slice(3).map((r) => r.arrayBuffer().catch(() => undefined)));
  });

  it('a key revoked through instance A answers 401 on instance B on the very next call', async () => {
    for (let round = 0; round < 5; round++) {
      const key = await mint(['chat']);
      // B has the key in its cache.
      await expectServedOnB(key.secret);
      const revoked = await fetch(`${a.model}/v1/keys/${key.id}`, {
        method: 'DELETE',
        headers: bearer(adminKey),
      });
      expect(revoked.status).toBe(200);
      await revoked.arrayBuffer();
      await expectRefused('model', `${b.model}/v1/models`, key.secret);
      await expectRefused('directory', `${b.directory}/v1/search?q=x`, key.secret);
    }
  });

  it('a key rotated through instance A without a grace period: the old secret is refused on B at once', async () => {
    const key = await mint(['chat']);
    await expectServedOnB(key.secret);
    const rotated = (await call(a.model, adminKey, 'POST', `/v1/keys/${key.id}/rotate`, {})) as {
      secret: string;
    };
    await expectRefused('model', `${b.model}/v1/models`, key.secret);
    await expectServedOnB(rotated.secret);
  });

  it('directory API: the daily quota of the unlimited plan is counted once over both instances', async () => {
    // A day is a UTC day: a run that would straddle midnight waits for it first.
    const toMidnight = 86_400_000 - (Date.now() % 86_400_000);
    if (toMidnight < 20_000) await new Promise((r) => setTimeout(r, toMidnight + 500));
    const { accountId } = await store.createAccount('unlimited search', 'search_unlimited');
    const key = await mint(['search', 'places'], accountId);
    for (let i = 0; i < DAILY; i++) {
      const res = await fetch(`${i % 2 === 0 ? a.directory : b.directory}/v1/search?q=bakery&limit=1`, {
        headers: bearer(key.secret),
      });
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      const day = parseFields(res.headers.get('ratelimit')).day;
      expect(day?.r).toBe(DAILY - 1 - i);
      expect(parseFields(res.headers.get('ratelimit-policy')).day).toEqual({ q: DAILY, w: 86_400 });
    }
    const untilMidnight = (Math.floor(Date.now() / 86_400_000) + 1) * 86_400 - Date.now() / 1000;
    for (const base of [a.directory, b.directory]) {
      const refused = await fetch(`${base}/v1/search?q=bakery&limit=1`, { headers: bearer(key.secret) });
      const { retryAfter } = expectRetryHeaders(refused);
      // Not before midnight UTC: a day is counted, not refilled a little every second.
      expect(Math.abs(retryAfter - untilMidnight)).toBeLessThan(30);
      expect(refused.headers.get('x-should-retry')).toBe('false');
      expect(parseFields(refused.headers.get('ratelimit')).day?.r).toBe(0);
      await expectError('directory', refused, 429, 'rate_limit_error', 'daily_quota_exceeded');
    }
    // The quota is the search plan's fair use: places calls (billed per call) still answer.
    const places = await fetch(`${a.directory}/v1/places/geocode?q=Lyon`, { headers: bearer(key.secret) });
    await places.arrayBuffer();
    expect(places.status).toBe(200);
    expect(parseFields(places.headers.get('ratelimit')).day).toBeUndefined();
  });
});

describe.runIf(RUNS)('two instances without REDIS_URL', () => {
  const adminKey = `sk_test_admin_${randomBytes(16).toString('hex')}`;
  let database: TestDatabase;
  let a: Instance;
  let b: Instance;

  beforeAll(async () => {
    database = await createTestDatabase();
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: '',
      BOOTSTRAP_ADMIN_KEY: adminKey,
      MODEL_RATE_LIMIT_RPM: '3',
      DEMO_LISTINGS: '0', // only the model API is called here
    };
    [a, b] = await Promise.all([startInstance(env), startInstance(env)]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await database?.drop();
  });

  it('limit in memory, each instance on its own, and write nothing to Redis', async () => {
    const key = (await call(a.model, adminKey, 'POST', '/v1/keys', {
      name: 'memory',
      scopes: ['chat'],
    })) as {
      id: string;
      secret: string;
    };
    const statuses = async (base: string, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) {
        const res = await fetch(`${base}/v1/models`, { headers: bearer(key.secret) });
        await res.arrayBuffer();
        out.push(res.status);
      }
      return out;
    };
    expect(await statuses(a.model, 4)).toEqual([200, 200, 200, 429]);
    // B never saw A's three requests: its own bucket is full.
    expect(await statuses(b.model, 4)).toEqual([200, 200, 200, 429]);
    const redis = new Redis(TEST_REDIS_URL);
    try {
      expect(await redis.keys(`rl:model:${key.id}:*`)).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });
});
