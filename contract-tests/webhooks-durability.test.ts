// Webhook deliveries are durable jobs: an instance killed with SIGKILL while messages are
// pending delivers every one of them after a restart (PGlite on disk); an instance started with
// JOB_WORKERS=0 takes events and delivers none; and three instances on one PostgreSQL and one
// Redis (one of them WORKERS=2, one JOB_WORKERS=0) deliver each message once, the survivors
// taking over when one is killed. Instances are real processes started as an operator starts them.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Instance, redisAvailable, startInstance, waitReady } from './support/instances.ts';
import { createTestDatabase, hasPostgres, type TestDatabase, TEST_REDIS_URL } from './support/server.ts';
import { call, until } from './support/client.ts';

/** Counts the deliveries per webhook-id; answers 500 until told to accept. */
class Receiver {
  accept = false;
  seen = new Map<string, number>();
  accepted = new Map<string, number>();
  #server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const id = String(req.headers['webhook-id']);
        this.seen.set(id, (this.seen.get(id) ?? 0) + 1);
        if (!this.accept) return void res.writeHead(500).end();
        this.accepted.set(id, (this.accepted.get(id) ?? 0) + 1);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hook`;
  }

  attempts(): number {
    return [...this.seen.values()].reduce((a, b) => a + b, 0);
  }

  async stop(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise((resolve) => this.#server?.close(resolve));
  }
}

const ENV = {
  OUTBOUND_ALLOW_PRIVATE: 'true',
  // ten attempts a second apart: the kill lands while every message waits for a retry
  WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s,1s,1s,1s,1s,1s,1s,1s',
  WEBHOOK_TIMEOUT_MS: '2000',
  // the webhooks are the directory's: no model API, no demo listings to load and index
  DEMO_LISTINGS: '0',
};

describe('webhook messages pending at a SIGKILL (PGlite on disk)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'webhooks-kill-'));
  const key = `sk_test_admin_${randomBytes(16).toString('hex')}`;
  const receiver = new Receiver();
  let instance: Instance | undefined;
  beforeAll(() => receiver.start());
  afterAll(async () => {
    await instance?.stop();
    await receiver.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('are all delivered after the restart, each with its webhook-id', async () => {
    const env = { ...ENV, DATA_DIR: dir, BOOTSTRAP_ADMIN_KEY: key };
    instance = await startInstance(env, 'directory');
    await waitReady(instance.directory);
    const endpoint = await call(instance.directory, key, 'POST', '/v1/webhook-endpoints', {
      url: receiver.url,
    });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      ids.push(
        (await call(instance.directory, key, 'POST', `/v1/webhook-endpoints/${String(endpoint.id)}/test`))
          .id as string,
      );
    }
    await until('a failed first attempt of each', () => ids.every((id) => receiver.seen.has(id)));
    process.kill(instance.pid, 'SIGKILL');
    expect(await instance.exited).toBe(null);
    receiver.accept = true;

    instance = await startInstance(env, 'directory');
    await until('every message delivered', () => ids.every((id) => receiver.accepted.has(id)));
    const page = await call(
      instance.directory,
      key,
      'GET',
      `/v1/webhook-endpoints/${String(endpoint.id)}/messages?limit=100`,
    );
    const messages = page.data as Array<{ id: string; status: string }>;
    expect(messages.map((m) => m.id).sort()).toEqual([...ids].sort());
    await until('every message recorded delivered', async () => {
      const again = await call(
        instance!.directory,
        key,
        'GET',
        `/v1/webhook-endpoints/${String(endpoint.id)}/messages?limit=100&status=delivered`,
      );
      return (again.data as unknown[]).length === ids.length;
    });
    // nothing arrived that was not sent
    expect([...receiver.seen.keys()].every((id) => ids.includes(id))).toBe(true);
  }, 180_000);
});

describe('an instance with JOB_WORKERS=0 (PGlite on disk)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'webhooks-http-only-'));
  const key = `sk_test_admin_${randomBytes(16).toString('hex')}`;
  const receiver = new Receiver();
  let instance: Instance | undefined;
  beforeAll(() => receiver.start());
  afterAll(async () => {
    await instance?.stop();
    await receiver.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records events and delivers none; the next instance with workers delivers them', async () => {
    receiver.accept = true;
    const env = { ...ENV, DATA_DIR: dir, BOOTSTRAP_ADMIN_KEY: key };
    instance = await startInstance({ ...env, JOB_WORKERS: '0' }, 'directory');
    await waitReady(instance.directory);
    const endpoint = await call(instance.directory, key, 'POST', '/v1/webhook-endpoints', {
      url: receiver.url,
    });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(
        (await call(instance.directory, key, 'POST', `/v1/webhook-endpoints/${String(endpoint.id)}/test`))
          .id as string,
      );
    }
    await new Promise((r) => setTimeout(r, 3000)); // longer than a poll (2 s)
    expect(receiver.attempts()).toBe(0);
    const page = await call(
      instance.directory,
      key,
      'GET',
      `/v1/webhook-endpoints/${String(endpoint.id)}/messages?status=pending`,
    );
    expect((page.data as Array<{ attempts: number }>).map((m) => m.attempts)).toEqual([0, 0, 0, 0, 0]);
    await instance.stop();

    instance = await startInstance(env, 'directory');
    await until('every message delivered', () => ids.every((id) => receiver.accepted.has(id)));
    expect(ids.map((id) => receiver.seen.get(id))).toEqual([1, 1, 1, 1, 1]);
  }, 180_000);
});

const SCALES = (await hasPostgres()) && (await redisAvailable());

describe.runIf(SCALES)('webhook deliveries of three instances on one PostgreSQL and Redis', () => {
  const key = `sk_test_admin_${randomBytes(16).toString('hex')}`;
  const receiver = new Receiver();
  let database: TestDatabase;
  /** WORKERS=2: two processes behind one port, each with its own job workers. */
  let a: Instance;
  let b: Instance;
  /** JOB_WORKERS=0: serves HTTP only. */
  let c: Instance;
  beforeAll(async () => {
    await receiver.start();
    database = await createTestDatabase();
    const env = {
      ...ENV,
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      SECRETS_ENCRYPTION_KEY: '7c'.repeat(32),
      BOOTSTRAP_ADMIN_KEY: key,
    };
    a = await startInstance({ ...env, WORKERS: '2' }, 'directory');
    b = await startInstance(env, 'directory');
    c = await startInstance({ ...env, JOB_WORKERS: '0' }, 'directory');
    await Promise.all([waitReady(a.directory), waitReady(b.directory), waitReady(c.directory)]);
  }, 180_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await c?.stop();
    await receiver.stop();
    await database?.drop();
  });

  it('deliver each of 60 messages once', async () => {
    receiver.accept = true;
    const endpoint = await call(a.directory, key, 'POST', '/v1/webhook-endpoints', { url: receiver.url });
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const via = [a, b, c][i % 3]!;
      ids.push(
        (await call(via.directory, key, 'POST', `/v1/webhook-endpoints/${String(endpoint.id)}/test`))
          .id as string,
      );
    }
    await until('every message delivered', () => ids.every((id) => receiver.accepted.has(id)));
    await new Promise((r) => setTimeout(r, 1500)); // room for a duplicate to show
    expect(ids.filter((id) => receiver.seen.get(id) !== 1)).toEqual([]);
  }, 120_000);

  it('the survivors deliver what a killed instance left pending', async () => {
    receiver.accept = false;
    receiver.seen.clear();
    receiver.accepted.clear();
    const endpoint = await call(b.directory, key, 'POST', '/v1/webhook-endpoints', { url: receiver.url });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      ids.push(
        (await call(b.directory, key, 'POST', `/v1/webhook-endpoints/${String(endpoint.id)}/test`))
          .id as string,
      );
    }
    await until('a failed first attempt of each', () => ids.every((id) => receiver.seen.has(id)));
    process.kill(b.pid, 'SIGKILL');
    await b.exited;
    receiver.accept = true;
    await until(
      'every message delivered by the survivors',
      () => ids.every((id) => receiver.accepted.has(id)),
      90_000,
    );
    expect(ids.filter((id) => (receiver.accepted.get(id) ?? 0) !== 1)).toEqual([]);
  }, 150_000);
});
