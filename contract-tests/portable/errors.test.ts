// The error contract of both APIs (docs/errors.md), on servers started here or on a
// deployment: every status in the envelope with x-request-id, 405 with Allow, and a real 429
// with Retry-After, retry-after-ms and the RateLimit fields, reached on a fresh key by sending more
// than its RateLimit-Policy allows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, expectError } from '../support/envelope.ts';
import type { Api } from '../support/spec.ts';
import { covers, openSession, type Session, targets } from '../support/target.ts';

const TARGETS = await targets();
const OVER_10_MB = 'x'.repeat(11 * 1024 * 1024);

interface Case {
  api: Api;
  /** A secured GET the key of `scope` may call, and the scope it needs. */
  get: { path: string; scope: string };
  /** A scope that does not cover `get`. */
  otherScope: string;
  /** A POST taking JSON. */
  post: string;
  /** Methods paths do not take, and what each path allows. */
  notAllowed: { method: string; path: string; allow: string[] }[];
  /** POSTs taking JSON, each with a body over 10 MB: 413 from every one. */
  tooLarge: { path: string; body: unknown }[];
  /** The secured GET the burst sends, and its scope: the cheapest the API has. Default `get`. */
  burstGet?: { path: string; scope: string };
}

const CASES: Case[] = [
  {
    api: 'model',
    get: { path: '/v1/keys', scope: 'admin' },
    otherScope: 'chat',
    post: '/v1/projects',
    notAllowed: [
      { method: 'PUT', path: '/v1/keys', allow: ['GET', 'POST'] },
      { method: 'GET', path: '/v1/chat/completions', allow: ['POST'] },
    ],
    tooLarge: [
      { path: '/v1/projects', body: { name: OVER_10_MB } },
      {
        path: '/v1/chat/completions',
        body: { model: 'queen', messages: [{ role: 'user', content: OVER_10_MB }] },
      },
    ],
  },
  {
    api: 'directory',
    get: { path: '/v1/search?q=bakery', scope: 'search' },
    otherScope: 'places',
    post: '/v1/target-lists',
    notAllowed: [{ method: 'PUT', path: '/v1/search', allow: ['GET'] }],
    tooLarge: [{ path: '/v1/target-lists', body: { name: OVER_10_MB } }],
    // a photo that does not exist: a 404 from one indexed lookup, far cheaper than a search; the
    // limiter counts it all the same (every call of the key shares its buckets)
    burstGet: { path: '/v1/places/photos/pho_00000000000000000000000000', scope: 'places' },
  },
];

interface PolicyItem {
  name: string;
  /** The quota: requests allowed in `window` seconds. */
  quota: number;
  window: number;
}

/** The items of a RateLimit-Policy field, e.g. `"burst";q=600;w=1, "bucket";q=16200;w=270`. */
function policyItems(field: string): PolicyItem[] {
  return [...field.matchAll(/"([^"]+)";q=(\d+);w=(\d+)/g)].map((m) => ({
    name: m[1]!,
    quota: Number(m[2]),
    window: Number(m[3]),
  }));
}

/**
 * Sends requests, `concurrency` at a time, until one answers 429. How many the key may send comes
 * from its policy, not from this client's speed: an item allows its quota plus what its window
 * gives back while the burst runs (quota / window a second), so once more than that was sent for
 * any item, the limiter should have refused. A client slower than every item's rate cannot exceed
 * the policy: that is said, after `seconds`, rather than read as a missing 429.
 */
async function burstUntil429(
  url: string,
  secret: string,
  policy: PolicyItem[],
  concurrency = 50,
  seconds = 300,
): Promise<{ refused: Response | undefined; problem: string | undefined }> {
  const started = Date.now();
  let sent = 0;
  let refused: Response | undefined;
  let problem: string | undefined;
  const elapsed = () => (Date.now() - started) / 1000;
  // what an item allows by now; the requests in flight are counted as sent before they answer
  const allowed = (item: PolicyItem) => item.quota + (item.quota / item.window) * elapsed() + concurrency;
  const worker = async () => {
    while (!refused && !problem) {
      const over = policy.find((item) => sent > allowed(item));
      if (over) {
        problem = `no 429 after ${sent} requests in ${elapsed().toFixed(1)} s, though "${over.name}" allows ${over.quota} in ${over.window} s`;
        break;
      }
      if (elapsed() > seconds) {
        const rate = Math.min(...policy.map((i) => i.quota / i.window));
        problem = `this client sent ${Math.round(sent / elapsed())} requests a second, too few to exceed a policy that gives back ${rate} a second: no test of the 429`;
        break;
      }
      sent++;
      const res = await fetch(url, { headers: bearer(secret) });
      if (res.status === 429 && !refused) refused = res;
      else await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { refused, problem: refused ? undefined : problem };
}

describe.each(TARGETS)('errors (%s)', (label) => {
  let session: Session;
  beforeAll(async () => {
    // 1/s sustained, at most 10 in any second: the burst reaches its 429 even when the machine
    // is too busy to serve 60 requests a second
    session = await openSession(label, { directoryRps: 1 });
  });
  afterAll(async () => session?.close());

  describe.each(CASES.filter((c) => covers(c.api)))('$api API', (c) => {
    const url = (path: string) => `${session.urls[c.api]}${path}`;

    it('401 missing_api_key without a key, invalid_api_key with an unknown one', async () => {
      await expectError(c.api, await fetch(url(c.get.path)), 401, 'authentication_error', 'missing_api_key');
      const unknown = await fetch(url(c.get.path), { headers: bearer(`sk_${'0'.repeat(48)}`) });
      await expectError(c.api, unknown, 401, 'authentication_error', 'invalid_api_key');
    });

    it('403 insufficient_scope naming the scope needed', async () => {
      const key = await session.mint([c.otherScope]);
      const error = await expectError(
        c.api,
        await fetch(url(c.get.path), { headers: bearer(key.secret) }),
        403,
        'permission_error',
        'insufficient_scope',
      );
      expect(error.message).toContain(`'${c.get.scope}'`);
    });

    it('404 on a path no operation serves', async () => {
      const res = await fetch(url('/v1/no-such-thing'), { headers: bearer(session.adminKey) });
      await expectError(c.api, res, 404, 'invalid_request_error', 'not_found');
    });

    it.each(c.notAllowed)('405 with Allow on $method $path', async ({ method, path, allow }) => {
      const res = await fetch(url(path), { method, headers: bearer(session.adminKey) });
      const allowed = res.headers.get('allow') ?? '';
      await expectError(c.api, res, 405, 'invalid_request_error', 'method_not_allowed');
      for (const m of allow) expect(allowed).toContain(m);
    });

    it.each(c.tooLarge)('413 on a JSON body over 10 MB to POST $path', async ({ path, body }) => {
      const res = await fetch(url(path), {
        method: 'POST',
        headers: { ...bearer(session.adminKey), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await expectError(c.api, res, 413, 'invalid_request_error', 'payload_too_large');
    });

    it('415 on a body of a media type the operation does not take', async () => {
      const res = await fetch(url(c.post), {
        method: 'POST',
        headers: { ...bearer(session.adminKey), 'content-type': 'text/plain' },
        body: 'name=x',
      });
      await expectError(c.api, res, 415, 'invalid_request_error', 'unsupported_media_type');
    });

    it('400 on a body that is not JSON', async () => {
      const res = await fetch(url(c.post), {
        method: 'POST',
        headers: { ...bearer(session.adminKey), 'content-type': 'application/json' },
        body: '{"name": ',
      });
      await expectError(c.api, res, 400, 'invalid_request_error', 'invalid_json');
    });

    it('sends RateLimit-Policy and RateLimit, and a real 429 with Retry-After and retry-after-ms', async () => {
      const burst = c.burstGet ?? c.get;
      const key = await session.mint([...new Set([c.get.scope, burst.scope])]);
      const first = await fetch(url(c.get.path), { headers: bearer(key.secret) });
      await first.arrayBuffer();
      expect(first.headers.get('ratelimit-policy')).toMatch(/^"[a-z]+";q=\d+;w=\d+/);
      expect(first.headers.get('ratelimit')).toMatch(/^"[a-z]+";r=\d+;t=\d+/);
      expect(first.headers.get('x-request-id')).toBeTruthy();

      // the policy of the path the burst sends to (every call of the key shares its buckets)
      const probe = await fetch(url(burst.path), { headers: bearer(key.secret) });
      await probe.arrayBuffer();
      const policy = policyItems(probe.headers.get('ratelimit-policy') ?? '');
      expect(policy.length, 'RateLimit-Policy on the burst path').toBeGreaterThan(0);
      const { refused, problem } = await burstUntil429(url(burst.path), key.secret, policy);
      expect(problem).toBeUndefined();
      const res = refused as Response;
      const retryAfter = Number(res.headers.get('retry-after'));
      const retryAfterMs = Number(res.headers.get('retry-after-ms'));
      expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true);
      expect(Number.isInteger(retryAfterMs) && retryAfterMs >= 0).toBe(true);
      expect(retryAfterMs).toBeLessThanOrEqual(retryAfter * 1000);
      expect(res.headers.get('ratelimit-policy')).toBeTruthy();
      expect(res.headers.get('ratelimit')).toMatch(/r=0/);
      await expectError(c.api, res, 429, 'rate_limit_error', 'rate_limit_exceeded');
    });
  });
});
