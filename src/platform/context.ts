// What both services share in one process: storage, accounts and keys, the revocation bus.
import { type Authenticator, createAuthenticator } from '../accounts/auth.ts';
import { type Bus, memoryBus, redisBus } from '../accounts/bus.ts';
import { AccountStore } from '../accounts/store.ts';
import type { Config } from '../config.ts';
import { type Limiter, memoryLimiter, redisLimiter } from '../limits/limiter.ts';
import { type Db, openDb } from './db.ts';
import type { Logger } from './logger.ts';

export interface Platform {
  config: Config;
  db: Db;
  accounts: AccountStore;
  auth: Authenticator;
  bus: Bus;
  limiter: Limiter;
  close(): Promise<void>;
}

export async function openPlatform(config: Config, logger: Logger): Promise<Platform> {
  const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const bus = config.redisUrl ? await redisBus(config.redisUrl) : memoryBus();
  const limiter = config.redisUrl ? await redisLimiter(config.redisUrl) : memoryLimiter();
  const accounts = new AccountStore(db);
  if (config.bootstrapAdminKey) {
    const key = await accounts.ensureBootstrapKey(config.bootstrapAdminKey);
    logger.info({ key_id: key.id, account_id: key.account_id }, 'bootstrap admin key ready');
  }
  const auth = createAuthenticator(accounts, bus);
  return {
    config,
    db,
    accounts,
    auth,
    bus,
    limiter,
    async close() {
      await limiter.close();
      await bus.close();
      await db.close();
    },
  };
}
