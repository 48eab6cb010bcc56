// The revocation epoch: an instance refuses a revoked key on the very next call even when the
// pub/sub message has not reached it (or never does), because it reads the epoch before it
// trusts its cache. With Redis when one is reachable (CI starts one), in memory always.
import type { Request } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisAvailable } from '../../contract-tests/support/instances.ts';
import { TEST_REDIS_URL } from '../../contract-tests/support/server.ts';
import { type Db } from '../platform/db.ts';
import { openStorage } from '../storage.ts';
import { createAuthenticator } from './auth.ts';
import { type Bus, memoryBus, redisBus } from './bus.ts';
import { AccountStore } from './store.ts';

const request = (secret: string) =>
  ({
    get: (name: string) => (name === 'authorization' ? `Bearer ${secret}` : undefined),
    method: 'GET',
    baseUrl: '',
    path: '/v1/models',
  }) as unknown as Request;

/** A bus whose messages never arrive at this instance: only the epoch can tell it. */
function deaf(bus: Bus): Bus {
  return { ...bus, subscribe: () => {} };
}

const BUSES: [string, () => Promise<[Bus, Bus]>][] = [
  [
    'memory',
    async () => {
      const bus = memoryBus();
      return [bus, bus];
    },
  ],
];
if (await redisAvailable()) {
  // The epoch is a key every instance on this Redis bumps: other suites' servers (database 0)
  // revoke keys while this one runs, which would make the control below look again. Its own
  // database keeps the epoch to this file.
  const own = new URL(TEST_REDIS_URL);
  own.pathname = '/15';
  BUSES.push(['redis', async () => [await redisBus(own.toString()), await redisBus(own.toString())]]);
}

let db: Db;
let store: AccountStore;
beforeAll(async () => {
  db = await openStorage({ dataDir: 'memory://' });
  store = new AccountStore(db);
});
afterAll(async () => db?.close());

describe.each(BUSES)('revocation epoch (%s)', (_name, open) => {
  it('instance B refuses a key revoked on A at once, though B never hears the message', async () => {
    const [busA, busB] = await open();
    try {
      const a = createAuthenticator(store, busA);
      const b = createAuthenticator(store, deaf(busB));
      const { accountId } = await store.createAccount('epoch test');
      for (let round = 0; round < 3; round++) {
        const key = await store.createKey(accountId, { name: `round ${round}`, scopes: ['chat'] });
        expect(await b.handler(request(key.secret), [])).toBe(true); // now cached on B
        expect(await b.handler(request(key.secret), [])).toBe(true);
        await store.revokeKey(accountId, key.id);
        await a.invalidate(key.id);
        await expect(b.handler(request(key.secret), [])).rejects.toMatchObject({ status: 401 });
      }
    } finally {
      await busA.close();
      if (busB !== busA) await busB.close();
    }
  });

  it('without a revocation, B keeps serving from its cache (the epoch is what made it look again)', async () => {
    const [busA, busB] = await open();
    try {
      const b = createAuthenticator(store, deaf(busB));
      const { accountId } = await store.createAccount('epoch control');
      const key = await store.createKey(accountId, { name: 'control', scopes: ['chat'] });
      expect(await b.handler(request(key.secret), [])).toBe(true);
      // revoked in the database, but nobody published: B's cache still answers
      await store.revokeKey(accountId, key.id);
      expect(await b.handler(request(key.secret), [])).toBe(true);
    } finally {
      await busA.close();
      if (busB !== busA) await busB.close();
    }
  });
});
