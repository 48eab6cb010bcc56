// Every error status the spec documents for a built operation is reached by a real request, and
// the answer matches the spec: status documented, body valid against its schema, documented
// headers present and valid (issue 5, point 2). The walk covers every operation of both specs
// that is not pending (contract-tests/schemathesis/<api>.toml), so a newly built operation is
// walked without a change here:
//   401 without a key and with an unknown one; 403 with a key lacking the scope; 413 and 415 on
//   JSON bodies; 429 once a fresh key's budget is spent (limits lowered to one request);
//   404 with an id that does not exist; 409 by reusing an Idempotency-Key with another body.
// 405 is not documented per operation (it belongs to a path's missing methods): the portable
// errors suite checks it, with Allow. 502, 503 and 504 need a failing upstream: upstream-chain.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../src/accounts/store.ts';
import { expectConforms } from './support/conformance.ts';
import { type FakeCrm, startFakeCrm } from './support/crm-vendors.ts';
import { redisAvailable } from './support/instances.ts';
import { type ExampleOptions, exampleBody, fetchExample, pendingOperations } from './support/requests.ts';
import { startTestServers, storages, TEST_REDIS_URL, type TestServers } from './support/server.ts';
import { type Api, type Operation, operations } from './support/spec.ts';

// On the production path where it is there (PostgreSQL, limits in Redis), else PGlite in memory.
const STORAGE = (await storages()).includes('postgres') && (await redisAvailable()) ? 'postgres' : 'pglite';

const BUILT = (['model', 'directory'] as Api[]).flatMap((api) => {
  const pending = new Set(pendingOperations(api));
  return operations(api).filter((op) => !pending.has(op.operationId));
});

const documents = (op: Operation, status: number) => String(status) in op.responses;
const scopesOf = (op: Operation) => op.security?.[0]?.BearerAuth ?? [];
const isPublic = (op: Operation) => op.security !== undefined && op.security.length === 0;
/** Operations the console's session alone may call (GET /v1/sessions/current) take no key: console.test.ts. */
const takesBearer = (op: Operation) =>
  op.security === undefined || op.security.some((r) => 'BearerAuth' in r);
const takesJson = (op: Operation) => op.requestBody?.content['application/json'] !== undefined;
const hasPathId = (op: Operation) => op.parameters.some((p) => p.in === 'path');
const takesIdempotencyKey = (op: Operation) =>
  op.parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');

/** A value of the same shape that names nothing: the example with its last character changed. */
function missing(value: string): string {
  const last = value.at(-1) ?? 'a';
  const other = /[0-9]/.test(last) ? String((Number(last) + 1) % 10) : last === 'z' ? 'y' : 'z';
  return value.slice(0, -1) + other;
}

/** The example body with its first free-text field changed: the same request in every other way. */
function anotherBody(body: unknown): unknown {
  const copy = structuredClone(body) as Record<string, unknown>;
  const edit = (node: unknown): boolean => {
    if (Array.isArray(node)) return node.some(edit);
    if (!node || typeof node !== 'object') return false;
    const record = node as Record<string, unknown>;
    for (const field of ['content', 'name', 'input', 'q', 'prompt', 'text', 'description']) {
      const value = record[field];
      if (typeof value === 'string') {
        record[field] = `${value} (again)`;
        return true;
      }
      if (Array.isArray(value) && typeof value[0] === 'string') {
        value[0] = `${value[0]} (again)`;
        return true;
      }
    }
    if (Object.values(record).some(edit)) return true;
    // no text: a number changed by one (`previous_secret_expires_in`)
    for (const [field, value] of Object.entries(record)) {
      if (typeof value === 'number') {
        record[field] = value + 1;
        return true;
      }
    }
    return false;
  };
  if (!edit(copy)) throw new Error(`no free-text field to change in ${JSON.stringify(body)}`);
  return copy;
}

describe(`documented error statuses of every built operation (${STORAGE})`, () => {
  let servers: TestServers;
  let accountId: string;
  const base = (op: Operation) => servers.urls[op.api] as string;
  /** A fresh key: with one request a minute per key, each check gets its own budget. */
  const mint = async (scopes: readonly string[]) =>
    (await servers.platform.accounts.createKey(accountId, { name: 'error walk', scopes: [...scopes] }))
      .secret;
  const keyFor = (op: Operation) => mint(scopesOf(op).length ? scopesOf(op) : ['chat']);

  beforeAll(async () => {
    servers = await startTestServers(STORAGE, {
      env: {
        MODEL_RATE_LIMIT_RPM: '1',
        DIRECTORY_RATE_LIMIT_RPS: '0.1', // a burst of one request, refilled in a second
        // the examples' webhook URL (hooks.keller-haustechnik.de) is saved without resolving it
        OUTBOUND_ALLOW_PRIVATE: 'true',
        ...(STORAGE === 'postgres' ? { REDIS_URL: TEST_REDIS_URL } : {}),
      },
    });
    const [row] = await servers.platform.db.query<{ account_id: string }>(
      'select account_id from api_keys limit 1',
    );
    accountId = row!.account_id;
    // briefs need the Concierge plan, launching campaigns the Sales plan: subscribed, so their
    // operations reach their handlers
    await servers.platform.db.query(
      `insert into subscriptions (id, account_id, plan, status, started_at, created)
       values ('sub_errorwalkconcierge00000000', $1, 'concierge', 'active', 0, 0),
              ('sub_errorwalksales000000000000', $1, 'sales', 'active', 0, 0)`,
      [accountId],
    );
  });
  afterAll(async () => {
    await servers?.stop();
    await hubspot?.close();
  });

  /** A CRM that accepts the connections the walk makes (HubSpot's contract, behind Prism). */
  let hubspot: FakeCrm | undefined;
  const crmBody = async () => {
    hubspot ??= await startFakeCrm('hubspot');
    return { provider: 'hubspot', credentials: { access_token: hubspot.token }, base_url: hubspot.url };
  };
  /** A connection of the walk's project (made once), so its operations reach their handlers. */
  let crmConnection: string | undefined;
  const ensureCrmConnection = async () => {
    if (crmConnection) return crmConnection;
    const res = await fetch(`${servers.urls.directory}/v1/crm-connections`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await mint(['sales'])}`, 'content-type': 'application/json' },
      body: JSON.stringify(await crmBody()),
    });
    expect(res.status, await res.clone().text()).toBeLessThan(300);
    crmConnection = ((await res.json()) as { id: string }).id;
    return crmConnection;
  };

  /**
   * Two requests that differ only in their body, each of which would succeed on its own: a
   * resource unique by a field (an MCP server's `label`, a sending domain's `domain`, a
   * suppressed `email`) gets fresh values, so the walk's earlier requests with the example do not
   * make these a 409 of another kind; a target list member needs a ready list and real listings.
   */
  const twoRequests = async (
    op: Operation,
  ): Promise<[Pick<ExampleOptions, 'body' | 'pathParams'>, Pick<ExampleOptions, 'body' | 'pathParams'>]> => {
    const example = exampleBody(op) as Record<string, unknown>;
    const n = Date.now() % 1e6;
    if (op.operationId === 'createCrmConnection') {
      const body = await crmBody();
      return [{ body: { ...body, sync_replies: true } }, { body: { ...body, sync_replies: false } }];
    }
    if (op.operationId === 'syncCrmConnection') {
      const pathParams = { id: await ensureCrmConnection() };
      return [
        { pathParams, body: { target_list_id: await readyTargetList() } },
        { pathParams, body: { target_list_id: await readyTargetList() } },
      ];
    }
    if (op.operationId === 'addTargetListMember') {
      const [first, second] = await listingIds(2);
      const pathParams = { id: await readyTargetList() };
      return [
        { pathParams, body: { ...example, listing_id: first } },
        { pathParams, body: { ...example, listing_id: second } },
      ];
    }
    for (const field of ['label', 'domain', 'email'] as const) {
      const value = example[field];
      if (typeof value !== 'string') continue;
      const fresh = (tag: string) =>
        field === 'label'
          ? `walk-${tag}-${n}`
          : field === 'domain'
            ? `walk-${tag}-${n}.${value}`
            : `walk-${tag}-${n}@${value.split('@')[1] ?? 'example.eu'}`;
      return [{ body: { ...example, [field]: fresh('a') } }, { body: { ...example, [field]: fresh('b') } }];
    }
    return [{}, { body: anotherBody(example) }];
  };

  /** Ids of `count` listings of the demo directory. */
  const listingIds = async (count: number) =>
    (
      await servers.platform.db.query<{ id: string }>(
        "select id from listings where profile->>'email' is not null order by id limit $1",
        [count],
      )
    ).map((r) => r.id);

  /** A target list of the account, built and `ready`, for the member operations. */
  const readyTargetList = async () => {
    const res = await fetch(`${servers.urls.directory}/v1/target-lists`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await mint(['sales'])}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'walk', filters: { q: 'bakery' }, max_members: 5 }),
    });
    expect(res.status, await res.clone().text()).toBeLessThan(300);
    const { id } = (await res.json()) as { id: string };
    const poll = await mint(['sales']);
    await expect
      .poll(
        async () => {
          const got = await fetch(`${servers.urls.directory}/v1/target-lists/${id}`, {
            headers: { authorization: `Bearer ${poll}` },
          });
          return ((await got.json()) as { status?: string }).status;
        },
        { timeout: 30_000, interval: 1_100 },
      )
      .toBe('ready');
    return id;
  };

  /** The examples' webhook endpoint (again, when the walk deleted it), so its operations reach their handlers. */
  const ensureExampleEndpoint = async () => {
    const example = 'whep_01JD1RNJ47E65GH2BH8VGS9ZM5';
    await servers.platform.db.query(
      `insert into webhook_endpoints (id, project_id, url, event_types, secret_sealed, created)
       values ($1, $2, 'https://hooks.keller-haustechnik.de/eurus/concierge', '["test"]', $3, 1794990000)
       on conflict (id) do nothing`,
      [
        example,
        await servers.platform.accounts.defaultProject(accountId),
        servers.platform.secrets!.seal(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, example),
      ],
    );
  };

  /**
   * The objects the campaign examples name (target list, sending domain, draft campaign), so a
   * campaign example reaches its handler: the campaign is a draft again, as before the walk's
   * first request.
   */
  const ensureCampaignExamples = async () => {
    const db = servers.platform.db;
    const project = await servers.platform.accounts.defaultProject(accountId);
    const list = 'tl_01JDNPZX45HY43KWJRP1XPA7Z3';
    await db.query(
      `insert into target_lists (id, account_id, project_id, name, filters, max_members, status, created, built_at)
       values ($1, $2, $3, 'walk', '{"q": "walk"}', 10, 'ready', 1794816720, 1794816723) on conflict (id) do nothing`,
      [list, accountId, project],
    );
    // createSendingDomain's own example may have added the domain under another id
    const domain = 'sd_01JDS3C4DWA7N36096Q14DR9GP';
    await db.query(
      `delete from sending_domains where project_id = $1 and domain = 'mail.keller-haustechnik.de' and id <> $2`,
      [project, domain],
    );
    await db.query(
      `insert into sending_domains (id, account_id, project_id, domain, dkim_selector, dkim_private_key_sealed,
         dns_records, status, verified_at, created)
       values ($1, $2, $3, 'mail.keller-haustechnik.de', 'eurus-walk', 'v1.x.x.x', '[]', 'verified', 1794817500, 1794817000)
       on conflict (id) do nothing`,
      [domain, accountId, project],
    );
    await db.query(
      `insert into campaigns (id, account_id, project_id, key_id, name, target_list_id, sending_domain_id, from_email,
         from_name, steps, hourly_cap, created)
       values ('cmp_01JDQY77ZXYYK596NGYA1DQ91K', $1, $2, 'key_walk', 'walk', $3, $4, 'anna@mail.keller-haustechnik.de',
         'Anna Keller', '[{"delay_days": 0, "subject": "Hallo", "body_text": "Hallo", "body_html": null}]', 100, 1794994000)
       on conflict (id) do update set status = 'draft', launched_at = null, schedule_at = null`,
      [accountId, project, list, domain],
    );
  };

  it('walks every built operation of both specs', () => {
    expect(BUILT.map((op) => op.operationId)).toEqual(
      expect.arrayContaining([
        'createChatCompletion',
        'listModels',
        'createKey',
        'searchListings',
        'getPlaceDetails',
      ]),
    );
  });

  // GET /status.json takes no key, parameter or body: it documents no 4xx to walk
  const walked = BUILT.filter((op) => Object.keys(op.responses).some((status) => status.startsWith('4')));
  describe.each(walked.map((op) => ({ id: `${op.api} ${op.operationId}`, op })))('$id', ({ op }) => {
    if (documents(op, 401))
      it('401 without a key and with an unknown key', async () => {
        await expectConforms(op, await fetchExample(base(op), op, { key: null }), 401);
        await expectConforms(op, await fetchExample(base(op), op, { key: `sk_${'0'.repeat(48)}` }), 401);
      });

    // A signed image URL takes no key: its 403 is a signature that does not match.
    if (op.operationId === 'getImageFile')
      it('403 for a signature that does not match', async () => {
        const body = (await expectConforms(op, await fetchExample(base(op), op, { key: null }), 403)) as {
          error: { code: string };
        };
        expect(body.error.code).toBe('invalid_signature');
      });

    if (documents(op, 403) && scopesOf(op).length > 0)
      it('403 with a key lacking the scope', async () => {
        // Lacking every scope any of the operation's requirements names (chat or agents, ...).
        const named = (op.security ?? []).flatMap((r) => r.BearerAuth ?? []);
        const key = await mint(ALL_SCOPES.filter((s) => !named.includes(s)));
        const body = (await expectConforms(op, await fetchExample(base(op), op, { key }), 403)) as {
          error: { code: string; message: string };
        };
        expect(body.error.code).toBe('insufficient_scope');
      });

    if (documents(op, 413) && takesJson(op))
      it('413 on a JSON body over the limit', async () => {
        const key = await keyFor(op);
        const res = await fetchExample(base(op), op, {
          key,
          body: { ...(exampleBody(op) as object), padding: 'x'.repeat(11 * 1024 * 1024) },
        });
        await expectConforms(op, res, 413);
      });

    if (documents(op, 415) && takesJson(op))
      it('415 on a body that is not JSON', async () => {
        const key = await keyFor(op);
        const res = await fetch(`${base(op)}${op.path.replace(/\{[^}]+\}/g, 'x')}`, {
          method: op.method,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' },
          body: JSON.stringify(exampleBody(op)),
        });
        await expectConforms(op, res, 415);
      });

    // An operation that needs no key (the console's sign-up, log-in, resets) is throttled per
    // client address and per email address instead, at most 60 tries in its window.
    if (documents(op, 429) && (isPublic(op) || takesBearer(op)))
      it('429 once the key has spent its budget', async () => {
        const key = await keyFor(op);
        let res: Response | undefined;
        for (let i = 0; i < (isPublic(op) ? 100 : 4); i++) {
          res = await fetchExample(base(op), op, { key });
          if (res.status === 429) break;
          await res.arrayBuffer();
        }
        const body = (await expectConforms(op, res!, 429)) as { error: { code: string } };
        expect(body.error.code).toBe('rate_limit_exceeded');
      });

    // An image URL's id is covered by its signature: an unsigned id is a 403 before it is looked
    // up; contract-tests/media.test.ts signs a missing id to reach the 404.
    if (documents(op, 404) && hasPathId(op) && op.operationId !== 'getImageFile')
      it('404 for an id that names nothing', async () => {
        const key = await keyFor(op);
        let res = await fetchExample(base(op), op, { key });
        if (res.status !== 404) {
          // The example names something that exists (a model of the catalogue): change it.
          await res.arrayBuffer();
          const pathParams = Object.fromEntries(
            op.parameters
              .filter((p) => p.in === 'path')
              .map((p) => [p.name, missing(String(p.example ?? p.schema?.example ?? ''))]),
          );
          res = await fetchExample(base(op), op, { key: await keyFor(op), pathParams });
        }
        await expectConforms(op, res, 404);
      });

    // a request without a body (a test event) has no other body to reuse its key with
    if (documents(op, 409) && takesIdempotencyKey(op) && takesJson(op))
      it('409 for an Idempotency-Key reused with another body', async () => {
        const key = await mint(ALL_SCOPES);
        if (op.path.startsWith('/v1/webhook-endpoints/{id}')) await ensureExampleEndpoint();
        if (op.path.startsWith('/v1/campaigns')) await ensureCampaignExamples();
        const headers = { 'idempotency-key': `walk-${op.operationId}-${Date.now()}` };
        const [a, b] = await twoRequests(op);
        const first = await fetchExample(base(op), op, { key, headers, ...a });
        expect(first.status, await first.text()).toBeLessThan(300);
        const res = await fetchExample(base(op), op, { key: await mint(ALL_SCOPES), headers, ...b });
        // A second key of the same account: idempotency keys belong to the account.
        const body = (await expectConforms(op, res, 409)) as { error: { code: string } };
        expect(body.error.code).toBe('idempotency_key_reused');
      });
  });

  // 404 and 409 that no generic request reaches.
  it('createKey: 404 for a project that does not exist', async () => {
    const op = BUILT.find((o) => o.operationId === 'createKey')!;
    const res = await fetchExample(servers.urls.model as string, op, {
      key: await mint(['admin']),
      body: { name: 'nowhere', scopes: ['chat'], project_id: `proj_${'0'.repeat(26)}` },
    });
    await expectConforms(op, res, 404);
  });

  it('getPlaceDetails: 404 for a listing that does not exist', async () => {
    const op = BUILT.find((o) => o.operationId === 'getPlaceDetails')!;
    const res = await fetchExample(servers.urls.directory as string, op, {
      key: await mint(['places']),
      query: { id: `lst_${'0'.repeat(26)}` },
    });
    await expectConforms(op, res, 404);
  });

  it('rotateKey: 409 key_not_active for a revoked key', async () => {
    const op = BUILT.find((o) => o.operationId === 'rotateKey')!;
    const victim = await servers.platform.accounts.createKey(accountId, {
      name: 'to revoke',
      scopes: ['chat'],
    });
    await servers.platform.accounts.revokeKey(accountId, victim.id);
    const res = await fetchExample(servers.urls.model as string, op, {
      key: await mint(['admin']),
      pathParams: { id: victim.id },
      body: {},
    });
    const body = (await expectConforms(op, res, 409)) as { error: { code: string } };
    expect(body.error.code).toBe('key_not_active');
  });
});
