// The composition root: what both services share in one process (storage, accounts and keys,
// the revocation bus, limits, the job queue, the outbound guard, the secrets box), made from the
// configuration and handed to each service. It sits above every folder (ARCHITECTURE.md).
import { existsSync } from 'node:fs';
import { closeUsageJournal, openUsageJournal, usageJournalDir } from '../platform/metering.ts';
import { type Authenticator, createAuthenticator } from '../accounts/auth.ts';
import { type Bus, memoryBus, redisBus } from '../accounts/bus.ts';
import { AccountStore } from '../accounts/store.ts';
import { readyInCluster } from '../cluster.ts';
import type { Config } from '../config.ts';
import { AccountLimitsStore } from '../limits/account-limits.ts';
import { type Limiter, memoryLimiter, redisLimiter } from '../limits/limiter.ts';
import { type Db } from '../platform/db.ts';
import { ensureThrottleNamespace } from '../console/store.ts';
import { usableDemoCache } from '../demo-cache.ts';
import { directoryStartsEmpty } from '../directory/demo-rows.ts';
import { openStorage } from '../storage.ts';
import { type Jobs, openJobs } from '../platform/jobs.ts';
import type { Logger } from '../platform/logger.ts';
import type { Registry } from 'prom-client';
import type { ServiceName } from '../platform/app.ts';
import { metricsRegistry } from '../platform/metrics.ts';
import { type Outbound, outbound } from '../platform/outbound.ts';
import { keepPrivate } from '../platform/private.ts';
import { type SecretBox, secretBox, secretsKeyOf } from '../platform/secrets.ts';

export interface Platform {
  config: Config;
  db: Db;
  accounts: AccountStore;
  auth: Authenticator;
  bus: Bus;
  limiter: Limiter;
  /** The durable job queue (JOB_WORKERS handlers in this process). */
  jobs: Jobs;
  /** The one door for calls to addresses customers give (OUTBOUND_ALLOW_PRIVATE). */
  outbound: Outbound;
  /** Seals secrets kept at rest; undefined with DATABASE_URL and no SECRETS_ENCRYPTION_KEY. */
  secrets: SecretBox | undefined;
  /** Each service's Prometheus registry (served by METRICS_KEY on its port, or the metrics listener). */
  metrics: Record<ServiceName, Registry>;
  /** The admin key this start made for an empty database, once (to print it); then undefined. */
  takeFirstRunSecret(): string | undefined;
  /** /readyz of a service that is ready itself: in a cluster, once every worker has been too. */
  readiness(ownReady: boolean): boolean;
  close(): Promise<void>;
}

/** The folders the service writes: its data (PGlite narrows its own as it opens it), mail, usage records. */
function keepFoldersPrivate(config: Config): void {
  const memory = config.dataDir.startsWith('memory://');
  const folders = [memory ? undefined : config.dataDir, config.outboxDir, config.usageJournalDir];
  for (const dir of new Set(folders)) if (dir && existsSync(dir)) keepPrivate(dir, { create: false });
}

export async function openPlatform(config: Config, logger: Logger): Promise<Platform> {
  keepFoldersPrivate(config);
  const cluster = directoryStartsEmpty(config) ? usableDemoCache(config) : undefined;
  if (cluster) logger.info({ cluster }, 'a new database: starting as the demo directory made at install');
  const db = await openStorage({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    // a new PGlite database starts as the demo directory made at install time, when it matches
    cluster,
    // nothing can be stored any more: a restart (by the supervisor) reopens the data on disk, and
    // the usage journal and the job queue's rows carry what was in flight
    onLost: (err) => {
      logger.fatal({ err }, 'the embedded database stopped; exiting');
      process.exit(1);
    },
  });
  // per installation, made fresh when the database started as the demo directory (which has none)
  await ensureThrottleNamespace(db);
  const bus = config.redisUrl ? await redisBus(config.redisUrl) : memoryBus();
  const limiter = config.redisUrl ? await redisLimiter(config.redisUrl) : memoryLimiter();
  const accounts = new AccountStore(db);
  let firstRunSecret: string | undefined;
  if (config.bootstrapAdminKey) {
    const key = await accounts.ensureBootstrapKey(config.bootstrapAdminKey);
    logger.info({ key_id: key.id, account_id: key.account_id }, 'bootstrap admin key ready');
  } else {
    const first = await accounts.firstRunKey();
    if (first) {
      logger.info({ key_id: first.key.id, account_id: first.key.account_id }, 'first-run admin key created');
      firstRunSecret = first.secret;
    }
  }
  if (config.usageJournalDir) {
    const dir = usageJournalDir(config.usageJournalDir, config);
    const replayed = await openUsageJournal(db, dir, logger);
    if (replayed > 0)
      logger.warn({ replayed, dir }, 'usage records of a stopped process stored from the journal');
  }
  const accountLimits = new AccountLimitsStore(db);
  const auth = createAuthenticator(accounts, bus, async (id) => (await accountLimits.get(id)).limits);
  const jobs = await openJobs(db, { workers: config.jobWorkers, logger });
  const { key, source } = secretsKeyOf(
    { key: config.secretsKey, file: config.secretsKeyFile },
    { databaseUrl: config.databaseUrl, dataDir: config.dataDir },
  );
  if (source === 'data_dir') {
    logger.warn(
      { file: `${config.dataDir}/secrets.key` },
      'the secrets key is kept beside the data, so one backup holds both: set SECRETS_KEY_FILE (on another volume) or SECRETS_ENCRYPTION_KEY',
    );
  }
  const door = outbound({ allowPrivate: config.outboundAllowPrivate, dnsServers: config.outboundDnsServers });
  return {
    config,
    db,
    accounts,
    auth,
    bus,
    limiter,
    jobs,
    outbound: door,
    secrets: key === undefined ? undefined : secretBox(key),
    metrics: { model: metricsRegistry('model'), directory: metricsRegistry('directory') },
    readiness: readyInCluster,
    takeFirstRunSecret() {
      const secret = firstRunSecret;
      firstRunSecret = undefined;
      return secret;
    },
    async close() {
      await jobs.stop();
      await closeUsageJournal(db);
      await door.close();
      await limiter.close();
      await bus.close();
      await db.close();
    },
  };
}
