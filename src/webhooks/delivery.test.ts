// An endpoint is disabled once its deliveries have failed for the whole disable period, counted
// from the start of its first failed attempt to the start of a later one: never by its first
// failure, however long the transaction that records it waits (under load, the clock of that
// transaction counted as "failing for" a 600 ms period and disabled after one attempt).
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../contract-tests/support/client.ts';
import type { Db } from '../platform/db.ts';
import { type Jobs, openJobs } from '../platform/jobs.ts';
import { createLogger } from '../platform/logger.ts';
import { type Outbound, outbound } from '../platform/outbound.ts';
import { secretBox } from '../platform/secrets.ts';
import { openStorage } from '../storage.ts';
import { WebhookDelivery } from './delivery.ts';
import { WebhookStore } from './store.ts';

describe('an endpoint that fails', () => {
  let db: Db;
  let jobs: Jobs;
  let door: Outbound;
  let receiver: Server;
  let store: WebhookStore;
  let delivery: WebhookDelivery;

  beforeAll(async () => {
    receiver = createServer((_req, res) => res.writeHead(500).end('down'));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const logger = createLogger('silent', 'test');
    db = await openStorage({ dataDir: 'memory://' });
    jobs = await openJobs(db, { workers: 2, logger, pollingIntervalSeconds: 0.5 });
    door = outbound({ allowPrivate: true });
    store = new WebhookStore(db, secretBox(randomBytes(32)), door);
    // a period shorter than any transaction: only the time between attempts may reach it
    delivery = new WebhookDelivery(
      db,
      jobs,
      door,
      store,
      { retryScheduleMs: [0, 300, 300], disableAfterMs: 1, timeoutMs: 2000 },
      logger,
    );
    await delivery.start();
  }, 120_000);

  afterAll(async () => {
    await jobs?.stop();
    await door?.close();
    await db?.close();
    receiver?.close();
  });

  it('is disabled by its second failed attempt, not its first', async () => {
    const { port } = receiver.address() as AddressInfo;
    const endpoint = await store.create('proj_test', { url: `http://127.0.0.1:${port}/hook` });
    const message = await delivery.test('proj_test', endpoint.id);
    const disabled = await until('the disabled endpoint', async () => {
      const row = await store.rowById(endpoint.id);
      return row && !row.enabled ? row : undefined;
    });
    expect(disabled.disabled_reason).toBe('failing');
    const row = await store.message('proj_test', endpoint.id, message.id);
    expect(row.attempts).toBe(2);
  }, 60_000);
});
