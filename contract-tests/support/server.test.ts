// Test services keep nothing in ./data: what follows from the data folder (the search index's
// snapshot, the usage journal, the outbox) is a database in memory's. A snapshot one suite wrote
// to ./data was read by another's start (its 600 listings, then 19,400 caught up) beside it.
import { resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServers, type TestServers } from './server.ts';

let servers: TestServers;
beforeAll(async () => {
  servers = await startTestServers('pglite', { which: ['directory'], env: { DEMO_LISTINGS: '20' } });
});
afterAll(() => servers?.stop());

it('gives test services no file under ./data', () => {
  const config = servers.platform.config;
  expect(config.dataDir).toBe('memory://');
  expect(config.searchSnapshot).toBeUndefined();
  expect(config.usageJournalDir).toBeUndefined();
  expect(config.outboxDir.startsWith(resolve('data'))).toBe(false);
});
