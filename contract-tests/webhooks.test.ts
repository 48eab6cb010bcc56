// Webhook endpoints end to end on the real service: a receiver on loopback gets signed events,
// verified by the `standardwebhooks` package (not our code); it fails (500, timeout, refused
// connection, 410) and recovers, and the message arrives with the same webhook-id; a message
// that never succeeds ends `failed` and its endpoint is disabled; the secret rotates with both
// signatures sent meanwhile; a failed message is re-sent by hand. Retry delays are compressed
// with WEBHOOK_RETRY_SCHEDULE; the default is the real one.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { componentValidator, explain } from './support/spec.ts';
import { startTestServers, storages, type TestServers } from './support/server.ts';
import { send, until } from './support/client.ts';

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

type Behaviour = 'ok' | 'fail' | 'hang' | 'gone' | 'flood';

/** A 500 with a body of 50 MB, written as fast as the sender reads it. */
function flood(res: ServerResponse): void {
  res.writeHead(500, { 'content-type': 'text/plain' });
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let sent = 0;
  const more = () => {
    while (sent < 50 * 1024 * 1024) {
      sent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', more);
    }
    res.end();
  };
  res.on('error', () => undefined);
  more();
}

/** A webhook receiver on loopback whose answer per path is set by the test. */
class Receiver {
  received: Received[] = [];
  behaviour = new Map<string, Behaviour>();
  #server: Server | undefined;
  port = 0;

  async start(port = 0): Promise<void> {
    this.#server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        this.received.push({
          path,
          headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        });
        const behaviour = this.behaviour.get(path) ?? 'ok';
        if (behaviour === 'hang') return;
        if (behaviour === 'fail') return void res.writeHead(500).end('{"error":"database unavailable"}');
        if (behaviour === 'gone') return void res.writeHead(410).end('gone');
        if (behaviour === 'flood') return void flood(res);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.#server.address() as AddressInfo).port;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async stop(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise((resolve) => this.#server?.close(resolve));
  }
}

interface Endpoint {
  id: string;
  secret?: string;
  status: string;
  enabled: boolean;
  disabled_reason: string | null;
}
interface Message {
  id: string;
  status: string;
  attempts: number;
  event_type: string;
  attempt_log: Array<{
    duration_ms: number;
    status_code: number | null;
    outcome: string;
    error: string | null;
    response: string | null;
  }>;
}

function client(servers: () => TestServers) {
  const call = (method: string, path: string, body?: object) =>
    send(servers().urls.directory!, servers().adminKey, method, path, body);
  const messages = async (endpoint: string, status?: string) =>
    (await call('GET', `/v1/webhook-endpoints/${endpoint}/messages${status ? `?status=${status}` : ''}`)).body
      .data as Message[];
  const message = async (endpoint: string, id: string) => (await messages(endpoint)).find((m) => m.id === id);
  return { call, messages, message };
}

const validEndpoint = componentValidator('directory', 'WebhookEndpoint');
const validMessage = componentValidator('directory', 'WebhookMessage');

describe.each(await storages())('webhook endpoints on %s', (storage) => {
  let servers: TestServers;
  const receiver = new Receiver();
  const { call, messages, message } = client(() => servers);

  beforeAll(async () => {
    await receiver.start();
    servers = await startTestServers(storage, {
      which: ['directory'],
      env: {
        OUTBOUND_ALLOW_PRIVATE: 'true',
        WEBHOOK_RETRY_SCHEDULE: '0s,300ms,300ms,300ms,300ms',
        WEBHOOK_TIMEOUT_MS: '1000',
      },
    });
  }, 240_000);
  afterAll(async () => {
    await servers?.stop();
    await receiver.stop();
  });

  it('creates an endpoint with its secret once, and delivers a test event the standardwebhooks library verifies', async () => {
    const created = await call('POST', '/v1/webhook-endpoints', {
      url: receiver.url('/hooks/test'),
      description: 'the office ERP',
    });
    expect(created.status).toBe(201);
    const endpoint = created.body as unknown as Endpoint;
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(endpoint).toMatchObject({ status: 'active', enabled: true, disabled_reason: null });
    const fetched = await call('GET', `/v1/webhook-endpoints/${endpoint.id}`);
    expect(validEndpoint(fetched.body), explain(validEndpoint)).toBe(true);
    expect(JSON.stringify(fetched.body)).not.toContain(endpoint.secret);
    const listed = await call('GET', '/v1/webhook-endpoints');
    expect(JSON.stringify(listed.body)).not.toContain(endpoint.secret);
    const [row] = await servers.platform.db.query<{ secret_sealed: string }>(
      'select secret_sealed from webhook_endpoints where id = $1',
      [endpoint.id],
    );
    expect(row?.secret_sealed).not.toContain(endpoint.secret!.slice(6));

    const sent = await call('POST', `/v1/webhook-endpoints/${endpoint.id}/test`);
    expect(sent.status).toBe(202);
    expect(validMessage(sent.body), explain(validMessage)).toBe(true);
    const got = await until('the test event', () => receiver.at('/hooks/test')[0]);
    const event = new Webhook(endpoint.secret!).verify(got.body, got.headers) as {
      id: string;
      type: string;
      data: { object: { endpoint_id: string } };
    };
    expect(event).toMatchObject({
      id: sent.body.id,
      type: 'test',
      data: { object: { endpoint_id: endpoint.id } },
    });
    expect(got.headers['webhook-id']).toBe(sent.body.id);
    const delivered = await until('the delivered state', async () => {
      const m = await message(endpoint.id, sent.body.id as string);
      return m?.status === 'delivered' ? m : undefined;
    });
    expect(validMessage(delivered), explain(validMessage)).toBe(true);
    expect(delivered.attempt_log).toMatchObject([{ outcome: 'delivered', status_code: 204 }]);
    // a wrong secret fails verification: the test is not vacuous
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(got.body, got.headers),
    ).toThrow();
  });

  it('replays a create with its Idempotency-Key, secret included, yet stores no secret readable', async () => {
    const idem = `idem-webhook-${Date.now()}`;
    const create = () =>
      fetch(`${servers.urls.directory}/v1/webhook-endpoints`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${servers.adminKey}`,
          'Content-Type': 'application/json',
          'Idempotency-Key': idem,
        },
        body: JSON.stringify({ url: receiver.url('/hooks/idempotent'), description: 'replayed once' }),
      });
    const first = await create();
    const again = await create();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const created = (await first.json()) as Endpoint;
    const replayed = (await again.json()) as Endpoint;
    expect(replayed.id).toBe(created.id);
    expect(replayed.secret).toBe(created.secret); // the retry gets it back
    const rows = await servers.platform.db.query<{ key: string; body: string | null }>(
      'select key, body from idempotency_keys',
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.key).not.toContain('idem-');
      expect(row.body ?? '').not.toContain(created.secret!.slice(6));
      expect(row.body ?? '').not.toContain('replayed once');
    }
  });

  it('retries through a 500, a timeout and a refused connection, then delivers with the same webhook-id', async () => {
    const flaky = new Receiver();
    await flaky.start();
    flaky.behaviour.set('/hooks/flaky', 'fail');
    try {
      const endpoint = (await call('POST', '/v1/webhook-endpoints', { url: flaky.url('/hooks/flaky') }))
        .body as unknown as Endpoint;
      const sent = await call('POST', `/v1/webhook-endpoints/${endpoint.id}/test`);
      const id = sent.body.id as string;
      await until('the 500', () => flaky.at('/hooks/flaky').length >= 1 || undefined);
      flaky.behaviour.set('/hooks/flaky', 'hang');
      await until('the timeout', () => flaky.at('/hooks/flaky').length >= 2 || undefined);
      // the third attempt finds nobody listening
      const port = flaky.port;
      await until(
        'the timeout recorded',
        async () => ((await message(endpoint.id, id))?.attempts ?? 0) >= 2 || undefined,
      );
      await flaky.stop();
      await until(
        'the refused connection',
        async () => ((await message(endpoint.id, id))?.attempts ?? 0) >= 3 || undefined,
      );
      flaky.behaviour.set('/hooks/flaky', 'ok');
      await flaky.start(port);
      const delivered = await until('the delivery', async () => {
        const m = await message(endpoint.id, id);
        return m?.status === 'delivered' ? m : undefined;
      });
      expect(delivered.attempts).toBe(4);
      expect(delivered.attempt_log.map((a) => a.status_code)).toEqual([500, null, null, 204]);
      expect(delivered.attempt_log[0]?.response).toBe('{"error":"database unavailable"}');
      expect(delivered.attempt_log[1]?.error).toMatch(/timeout/);
      expect(delivered.attempt_log[2]?.error).toMatch(/refused/);
      const last = flaky.at('/hooks/flaky').at(-1)!;
      expect(last.headers['webhook-id']).toBe(id);
      expect(new Webhook(endpoint.secret!).verify(last.body, last.headers)).toMatchObject({ id });
    } finally {
      await flaky.stop();
    }
  });

  it('ends a message that never succeeds as failed, marks the endpoint failing, and re-sends it by hand', async () => {
    receiver.behaviour.set('/hooks/down', 'fail');
    const endpoint = (await call('POST', '/v1/webhook-endpoints', { url: receiver.url('/hooks/down') }))
      .body as unknown as Endpoint;
    const id = (await call('POST', `/v1/webhook-endpoints/${endpoint.id}/test`)).body.id as string;
    const failed = await until('the failed state', async () => {
      const m = await message(endpoint.id, id);
      return m?.status === 'failed' ? m : undefined;
    });
    expect(failed.attempts).toBe(5); // the five attempts of the schedule
    expect((await messages(endpoint.id, 'failed')).map((m) => m.id)).toEqual([id]);
    expect((await call('GET', `/v1/webhook-endpoints/${endpoint.id}`)).body.status).toBe('failing');

    receiver.behaviour.set('/hooks/down', 'ok');
    const resent = await call('POST', `/v1/webhook-endpoints/${endpoint.id}/messages/${id}/resend`);
    expect(resent.status).toBe(202);
    expect(resent.body.status).toBe('pending');
    const delivered = await until('the re-sent delivery', async () => {
      const m = await message(endpoint.id, id);
      return m?.status === 'delivered' ? m : undefined;
    });
    expect(delivered.attempts).toBe(6);
    const last = receiver.at('/hooks/down').at(-1)!;
    expect(last.headers['webhook-id']).toBe(id);
    expect((await call('GET', `/v1/webhook-endpoints/${endpoint.id}`)).body.status).toBe('active');
  });

  it('disables an endpoint that answers 410 Gone at once, and tells the endpoints subscribed', async () => {
    const watcher = (
      await call('POST', '/v1/webhook-endpoints', {
        url: receiver.url('/hooks/watcher'),
        event_types: ['endpoint.disabled'],
      })
    ).body as unknown as Endpoint;
    receiver.behaviour.set('/hooks/gone', 'gone');
    const endpoint = (await call('POST', '/v1/webhook-endpoints', { url: receiver.url('/hooks/gone') }))
      .body as unknown as Endpoint;
    const id = (await call('POST', `/v1/webhook-endpoints/${endpoint.id}/test`)).body.id as string;
    const failed = await until('the failed state', async () => {
      const m = await message(endpoint.id, id);
      return m?.status === 'failed' ? m : undefined;
    });
    expect(failed.attempts).toBe(1);
    const after = (await call('GET', `/v1/webhook-endpoints/${endpoint.id}`)).body;
    expect(after).toMatchObject({ enabled: false, status: 'disabled', disabled_reason: 'gone' });
    const told = await until('the endpoint.disabled event', () => receiver.at('/hooks/watcher')[0]);
    const event = new Webhook(watcher.secret!).verify(told.body, told.headers) as {
      type: string;
      data: { object: { id: string; disabled_reason: string } };
    };
    expect(event).toMatchObject({
      type: 'endpoint.disabled',
      data: { object: { id: endpoint.id, disabled_reason: 'gone' } },
    });
    // a disabled endpoint takes no test event until it is enabled again
    expect((await call('POST', `/v1/webhook-endpoints/${endpoint.id}/test`)).status).toBe(409);
    receiver.behaviour.set('/hooks/gone', 'ok');
    const enabled = await call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { enabled: true });
    expect(enabled.body).toMatchObject({ enabled: true, status: 'active', disabled_reason: null });
    expect((await call('POST', `/v1/webhook-endpoints/${endpoint.id}/test`)).status).toBe(202);
    await until('a delivery after enabling', () => receiver.at('/hooks/gone').length >= 2 || undefined);
  });

  it('rotates the secret: both signatures are sent while the previous one is kept', async () => {
    const endpoint = (await call('POST', '/v1/webhook-endpoints', { url: receiver.url('/hooks/rotate') }))
      .body as unknown as Endpoint;
    const rotated = await call('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, {
      previous_secret_expires_in: 3600,
    });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.secret as string;
    expect(fresh).not.toBe(endpoint.secret);
    await call('POST', `/v1/webhook-endpoints/${endpoint.id}/test`);
    const got = await until('the event', () => receiver.at('/hooks/rotate')[0]);
    expect(got.headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(() => new Webhook(fresh).verify(got.body, got.headers)).not.toThrow();
    expect(() => new Webhook(endpoint.secret!).verify(got.body, got.headers)).not.toThrow();

    // without an overlap the old secret stops at once
    await call('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, {
      previous_secret_expires_in: 0,
    });
    const newest = (
      await call('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, {
        previous_secret_expires_in: 0,
      })
    ).body.secret as string;
    await call('POST', `/v1/webhook-endpoints/${endpoint.id}/test`);
    const next = await until('the second event', () => receiver.at('/hooks/rotate')[1]);
    expect(next.headers['webhook-signature']?.split(' ')).toHaveLength(1);
    expect(() => new Webhook(newest).verify(next.body, next.headers)).not.toThrow();
    expect(() => new Webhook(fresh).verify(next.body, next.headers)).toThrow();
  });

  const newEndpoint = async (path: string) =>
    (await call('POST', '/v1/webhook-endpoints', { url: receiver.url(path) })).body as unknown as Endpoint;

  it('updates an endpoint: its description and event types, disabled by hand', async () => {
    const endpoint = await newEndpoint('/hooks/update');
    const updated = await call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, {
      description: 'changed',
      event_types: ['workflow.completed'],
      enabled: false,
    });
    expect(updated.body).toMatchObject({
      description: 'changed',
      event_types: ['workflow.completed'],
      status: 'disabled',
      disabled_reason: 'manual',
    });
  });

  it('pages endpoints without repeating one', async () => {
    await newEndpoint('/hooks/paged');
    const first = await call('GET', '/v1/webhook-endpoints?limit=2');
    expect(first.body.has_more).toBe(true);
    const second = await call(
      'GET',
      `/v1/webhook-endpoints?limit=2&cursor=${first.body.next_cursor as string}`,
    );
    const ids = [...(first.body.data as Endpoint[]), ...(second.body.data as Endpoint[])].map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("shows another account none of a project's endpoints", async () => {
    const endpoint = await newEndpoint('/hooks/theirs');
    const tenant = await servers.platform.accounts.createAccount('another tenant');
    const theirs = await servers.platform.accounts.createKey(tenant.accountId, {
      name: 'theirs',
      scopes: ['concierge'],
    });
    const asThem = (method: string, path: string) =>
      send(servers.urls.directory!, theirs.secret, method, path);
    expect((await asThem('GET', `/v1/webhook-endpoints/${endpoint.id}`)).status).toBe(404);
    expect((await asThem('GET', `/v1/webhook-endpoints/${endpoint.id}/messages`)).status).toBe(404);
    expect((await asThem('POST', `/v1/webhook-endpoints/${endpoint.id}/test`)).status).toBe(404);
    expect((await asThem('DELETE', `/v1/webhook-endpoints/${endpoint.id}`)).status).toBe(404);
    expect((await asThem('GET', '/v1/webhook-endpoints')).body.data).toEqual([]);
    expect((await call('GET', `/v1/webhook-endpoints/${endpoint.id}`)).status).toBe(200);
  });

  it('deletes an endpoint: then it is not found', async () => {
    const endpoint = await newEndpoint('/hooks/deleted');
    expect((await call('DELETE', `/v1/webhook-endpoints/${endpoint.id}`)).body).toEqual({
      id: endpoint.id,
      object: 'webhook_endpoint',
      deleted: true,
    });
    expect((await call('GET', `/v1/webhook-endpoints/${endpoint.id}`)).status).toBe(404);
  });
});

describe('webhook endpoints that fail for the whole disable period', () => {
  let servers: TestServers;
  const receiver = new Receiver();
  const { call, message } = client(() => servers);

  beforeAll(async () => {
    await receiver.start();
    servers = await startTestServers((await storages())[0]!, {
      which: ['directory'],
      env: {
        OUTBOUND_ALLOW_PRIVATE: 'true',
        WEBHOOK_RETRY_SCHEDULE: '0s,400ms,400ms,400ms',
        WEBHOOK_DISABLE_AFTER: '600ms',
      },
    });
  }, 240_000);
  afterAll(async () => {
    await servers?.stop();
    await receiver.stop();
  });

  it('are disabled with reason failing, their message ends failed, and endpoint.disabled is sent', async () => {
    const watcher = (
      await call('POST', '/v1/webhook-endpoints', {
        url: receiver.url('/hooks/failing-watcher'),
        event_types: ['endpoint.disabled'],
      })
    ).body as unknown as Endpoint;
    receiver.behaviour.set('/hooks/failing', 'fail');
    const endpoint = (await call('POST', '/v1/webhook-endpoints', { url: receiver.url('/hooks/failing') }))
      .body as unknown as Endpoint;
    const id = (await call('POST', `/v1/webhook-endpoints/${endpoint.id}/test`)).body.id as string;
    const disabled = await until('the disabled endpoint', async () => {
      const e = (await call('GET', `/v1/webhook-endpoints/${endpoint.id}`)).body;
      return e.status === 'disabled' ? e : undefined;
    });
    expect(disabled).toMatchObject({ enabled: false, disabled_reason: 'failing' });
    const failed = await message(endpoint.id, id);
    expect(failed?.attempts).toBeGreaterThanOrEqual(2);
    const told = await until('the endpoint.disabled event', () => receiver.at('/hooks/failing-watcher')[0]);
    expect(new Webhook(watcher.secret!).verify(told.body, told.headers)).toMatchObject({
      type: 'endpoint.disabled',
      data: { object: { id: endpoint.id, status: 'disabled', disabled_reason: 'failing' } },
    });
    // nothing more is attempted while it is disabled
    const seen = receiver.at('/hooks/failing').length;
    await new Promise((r) => setTimeout(r, 1200));
    expect(receiver.at('/hooks/failing').length).toBe(seen);
  });
});

describe('receivers that hang or answer 50 MB', () => {
  let servers: TestServers;
  const receiver = new Receiver();
  const { call, message } = client(() => servers);

  beforeAll(async () => {
    await receiver.start();
    servers = await startTestServers((await storages())[0]!, {
      which: ['directory'],
      env: {
        OUTBOUND_ALLOW_PRIVATE: 'true',
        WEBHOOK_RETRY_SCHEDULE: '0s,1h',
        WEBHOOK_TIMEOUT_MS: '5000',
      },
    });
  }, 240_000);
  afterAll(async () => {
    await servers?.stop();
    await receiver.stop();
  });

  it('do not hold up the deliveries to other endpoints; of 50 MB the first 1 KB is read', async () => {
    receiver.behaviour.set('/hooks/hang', 'hang');
    receiver.behaviour.set('/hooks/flood', 'flood');
    const create = async (path: string) =>
      ((await call('POST', '/v1/webhook-endpoints', { url: receiver.url(path) })).body as unknown as Endpoint)
        .id;
    const [hang, flooding, fast] = [
      await create('/hooks/hang'),
      await create('/hooks/flood'),
      await create('/hooks/fast'),
    ];
    // more hanging deliveries than the instance has workers (JOB_WORKERS, 16)
    const hanging: string[] = [];
    for (let i = 0; i < 24; i++) {
      hanging.push((await call('POST', `/v1/webhook-endpoints/${hang}/test`)).body.id as string);
    }
    await until('hanging attempts under way', () => receiver.at('/hooks/hang').length >= 4 || undefined);
    const flooded = (await call('POST', `/v1/webhook-endpoints/${flooding}/test`)).body.id as string;
    const sent = Date.now();
    const quick = (await call('POST', `/v1/webhook-endpoints/${fast}/test`)).body.id as string;
    const got = await until('the fast endpoint’s event', () => receiver.at('/hooks/fast')[0]);
    // well inside the 5 s the hanging receiver holds its attempts
    expect(got.at - sent).toBeLessThan(2000);
    expect(got.headers['webhook-id']).toBe(quick);
    const greedy = await until('the flooded attempt', async () => {
      const m = await message(flooding, flooded);
      return m?.attempts ? m : undefined;
    });
    expect(greedy.attempt_log[0]).toMatchObject({ status_code: 500, outcome: 'failed' });
    expect(greedy.attempt_log[0]?.response).toHaveLength(1024);
    // the hanging endpoint's attempts end at the timeout, a few at a time
    const timedOut = await until(
      'the hanging attempts timed out',
      async () => {
        const page = (await call('GET', `/v1/webhook-endpoints/${hang}/messages?limit=100`)).body
          .data as Message[];
        return page.find((m) => m.id === hanging[0] && m.attempts > 0);
      },
      20_000,
    );
    expect(timedOut.attempt_log[0]?.error).toMatch(/timeout: no answer within 5000 ms/);
    expect(timedOut.attempt_log[0]?.duration_ms).toBeGreaterThanOrEqual(4900);
  }, 60_000);
});

describe('webhook URLs as production checks them', () => {
  let servers: TestServers;
  const { call } = client(() => servers);
  beforeAll(async () => {
    servers = await startTestServers((await storages())[0]!, { which: ['directory'] });
  }, 240_000);
  afterAll(async () => {
    await servers?.stop();
  });

  it.each([
    ['http://hooks.example.com/x', 'insecure_webhook_url'],
    ['https://127.0.0.1/hook', 'private_network_url'],
    ['https://10.0.0.8/hook', 'private_network_url'],
    ['https://169.254.169.254/latest/meta-data', 'private_network_url'],
    ['https://[::1]/hook', 'private_network_url'],
    ['https://[::ffff:127.0.0.1]/hook', 'private_network_url'],
    ['https://localhost:8443/hook', 'private_network_url'],
  ])('refuses %s with 400 %s', async (url, code) => {
    const res = await call('POST', '/v1/webhook-endpoints', { url });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code, param: 'url' } });
  });

  it('refuses a private URL on update too', async () => {
    const res = await call('PATCH', '/v1/webhook-endpoints/whep_01JD1RNJ47E65GH2BH8VGS9ZM5', {
      url: 'https://127.0.0.1/x',
    });
    expect(res.status).toBe(400);
  });
});
