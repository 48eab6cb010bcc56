import type { Express } from 'express';
import { rateLimit } from '../limits/middleware.ts';
import { directoryBuckets } from '../limits/policies.ts';
import { createServiceApp, readSpec } from '../platform/app.ts';
import type { Platform } from './context.ts';
import { idempotency } from '../platform/idempotency.ts';
import type { Logger } from '../platform/logger.ts';
import { progressReporter } from '../platform/progress.ts';
import { consoleCors, isConsoleOrigin } from '../console/cors.ts';
import { CrmConnections } from '../crm/connections.ts';
import { createCrmRouter } from '../crm/routes.ts';
import { CrmSyncs } from '../crm/syncs.ts';
import { createSessionHandler } from '../console/session.ts';
import { ConsoleStore } from '../console/store.ts';
import { DEFAULT_AGENTS_MODEL } from '../agents/runtime.ts';
import { httpAgent, RuntimeKey } from '../concierge/agent.ts';
import { createConciergeRouter } from '../concierge/routes.ts';
import { Workflows } from '../concierge/workflows.ts';
import { domainInUse } from '../sales/campaigns.ts';
import { crmReplySource } from '../sales/replies.ts';
import { startSales } from '../sales/service.ts';
import { isSuppressed } from '../sales/suppressions.ts';
import { TargetLists } from '../sales/target-lists.ts';
import { dnsLookup } from '../mail/dns.ts';
import { SendingDomainStore } from '../mail/domains.ts';
import type { InboundMail } from '../mail/inbound.ts';
import { MailRouting } from '../mail/routing.ts';
import { createSendingDomainRouter } from '../mail/routes.ts';
import { createMailTransport, type MailTransport } from '../mail/transport.ts';
import { createStatusPages } from '../status/pages.ts';
import { createStatusRouter } from '../status/routes.ts';
import { type DirectoryOperationId, serves } from '../platform/route.ts';
import { createDirectoryUsageRouter } from '../usage/routes.ts';
import { WebhookDelivery } from '../webhooks/delivery.ts';
import { createWebhookRouter } from '../webhooks/routes.ts';
import { WebhookStore } from '../webhooks/store.ts';
import { loadDemoDirectory } from '../directory/demo.ts';
import { createDirectoryRouter } from '../directory/routes.ts';
import { EMBEDDING_VERSION, ensureEmbeddings, KEYWORD_VERSION } from '../directory/reembed.ts';
import { createSearch } from '../directory/search/search.ts';
import { countListings } from '../directory/store.ts';
import type { DemoRows } from '../directory/demo-rows.ts';
import { directoryProbes, type Probes } from './probes.ts';

/** Outgoing and incoming mail of the Sales interface (src/mail/). */
export interface DirectoryMail {
  /** Sending domains: `verifiedDomain` for campaigns, `replyDomains` for the inbound listener. */
  domains: SendingDomainStore;
  /** SMTP_URL, else the .eml outbox; DKIM-signed. */
  transport: MailTransport;
  /** What the inbound listener asks (server.ts starts it); `onMail` goes through the mail routing. */
  isReplyDomain(host: string): Promise<boolean>;
  onMail(mail: InboundMail): Promise<void>;
}

export interface DirectoryService {
  app: Express;
  mail: DirectoryMail;
  /**
   * Resolves once the directory is loaded and search is prepared (/readyz then says ready): the
   * listings it holds, how many this start loaded, and the time from the start of the load.
   */
  ready: Promise<{ listings: number; loaded: number; ms: number }>;
  /** The status page's probes of its interfaces (probes.ts). */
  probes: Probes;
  close(): Promise<void>;
}

/** How long after ready the search index's snapshot is written (the first requests go first). */
const SNAPSHOT_AFTER_READY_MS = 1000;

export interface DirectoryServiceOptions {
  /** Where the concierge reaches the Model API (MODEL_API_URL, else the model API of this process). */
  modelUrl?: () => string;
  /** The address this service listens on: photo URLs' origin without PUBLIC_DIRECTORY_URL. */
  ownUrl?: () => string;
  /** The demo listings' rows, started ahead by a first start (demo-rows.ts). */
  demoRows?: DemoRows;
}

export async function createDirectoryService(
  platform: Platform,
  logger: Logger,
  options: DirectoryServiceOptions = {},
): Promise<DirectoryService> {
  const count = platform.config.demoListings;
  let ready = false;
  // the search index's snapshot (for the next start) is written after ready is said (in pieces,
  // requests served between them), or on closing if that comes first
  let snapshotWrite: Promise<void> | undefined;
  const writeSnapshot = () =>
    (snapshotWrite ??= search.writeSnapshot().then(
      (written) => {
        if (typeof written === 'number') logger.info({ written }, 'search index snapshot written');
        else if (written !== 'not needed') logger.warn({ why: written }, 'search index snapshot not written');
      },
      (err: unknown) => logger.warn({ err }, 'search index snapshot not written'),
    ));
  const search = createSearch(platform.db, {
    cache: platform.config.searchCache,
    vectorKernel: platform.config.vectorKernel,
    snapshot: platform.config.searchSnapshot,
  });
  // An empty directory is filled with the demo listings; /readyz says ready only after.
  const loading = (async () => {
    const started = Date.now();
    const { inserted } = await loadDemoDirectory(platform.db, {
      count,
      ...(options.demoRows ? { rows: options.demoRows } : {}),
      onProgress: progressReporter(logger, platform.config.logFormat, 'loading the demo directory'),
    });
    const { reembedded, reindexed, from } = await ensureEmbeddings(
      platform.db,
      progressReporter(logger, platform.config.logFormat, 'bringing the listings up to this build'),
    );
    if (reembedded > 0 || reindexed > 0) {
      logger.info(
        { reembedded, reindexed, from, to: EMBEDDING_VERSION, keywords: KEYWORD_VERSION },
        'listings brought up to this build’s embedding engine and trade words',
      );
    }
    const loadStarted = Date.now();
    await search.prepare(); // loads the vector index, then what ranking keeps beside it
    logger.info({ ...search.indexOrigin(), ms: Date.now() - loadStarted }, 'search index loaded');
    const result = { listings: await countListings(platform.db), loaded: inserted, ms: Date.now() - started };
    if (inserted > 0) logger.info({ inserted, ms: result.ms }, 'demo directory loaded');
    ready = true;
    setTimeout(() => void writeSnapshot(), SNAPSHOT_AFTER_READY_MS).unref();
    return result;
  })();
  loading.catch((err: unknown) => logger.error({ err }, 'loading the demo directory failed'));

  const webhooks = new WebhookStore(
    platform.db,
    platform.secrets,
    platform.outbound,
    platform.config.retention.webhookMessagesMs / 1000,
  );
  const delivery = new WebhookDelivery(
    platform.db,
    platform.jobs,
    platform.outbound,
    webhooks,
    {
      retryScheduleMs: platform.config.webhookRetryScheduleMs,
      disableAfterMs: platform.config.webhookDisableAfterMs,
      timeoutMs: platform.config.webhookTimeoutMs,
    },
    logger,
  );
  await delivery.start();
  const salesBaseUrl =
    platform.config.publicDirectoryUrl ?? `http://localhost:${platform.config.directoryPort}`;
  const targetLists = new TargetLists(platform.db, platform.jobs, { search, baseUrl: salesBaseUrl, logger });
  await targetLists.start();
  const config = platform.config;
  const modelUrl = (): string =>
    config.modelApiUrl ?? options.modelUrl?.() ?? `http://127.0.0.1:${config.modelPort}`;
  const domains = new SendingDomainStore(platform.db, platform.secrets, {
    inboundHost: platform.config.mail.inboundHost,
    spfInclude: platform.config.mail.spfInclude,
    lookup: dnsLookup({ servers: platform.config.mail.dnsServers }),
    inUse: (projectId, domainId) => domainInUse(platform.db, projectId, domainId),
  });
  const transport = createMailTransport({
    smtpUrl: platform.config.mail.smtpUrl,
    outboxDir: platform.config.outboxDir,
    maxConnections: platform.config.mail.smtpMaxConnections,
    timeoutMs: platform.config.mail.smtpTimeoutMs,
    addressOf: (host) => platform.outbound.address(host, 'operator'),
  });
  // where inbound mail and opt-out links go: Sales and the concierge register as they are made
  const routing = new MailRouting();
  const crmConnections = new CrmConnections(platform.db, platform.secrets, platform.outbound, {
    checkTimeoutMs: platform.config.crmCheckTimeoutMs,
  });
  const crmSyncs = new CrmSyncs(
    platform.db,
    platform.jobs,
    { connections: crmConnections, targetLists, webhooks: delivery, replies: crmReplySource(platform.db) },
    { logger },
  );
  await crmSyncs.start();

  const sales = await startSales({
    db: platform.db,
    targetLists,
    jobs: platform.jobs,
    secrets: platform.secrets,
    logger,
    webhooks: delivery,
    domains,
    transport,
    baseUrl: salesBaseUrl,
    daySeconds: platform.config.campaignDaySeconds,
    sendConcurrency: platform.config.mail.smtpMaxConnections,
    routing,
    // a human reply queues its member's push to the project's CRMs that sync replies
    onReplyStored: (tx, reply) => crmSyncs.replyStored(tx, reply),
  });
  const runtimeKey = new RuntimeKey(platform.db, platform.accounts, platform.secrets);
  const workflows = new Workflows(platform.db, platform.jobs, {
    agent: httpAgent(modelUrl, runtimeKey),
    webhooks: delivery,
    endpoints: webhooks,
    routing,
    mail: {
      verifiedDomain: (projectId, domainId) => domains.verifiedDomain(projectId, domainId),
      send: (message) => transport.send(message),
      unsubscribeUrl: (contact) => `${salesBaseUrl}/v1/unsubscribe/${contact.id}.${contact.token}`,
      suppressed: (accountId, email, fromAddress) =>
        isSuppressed(platform.db, platform.secrets, accountId, email, fromAddress),
    },
    logger,
    baseUrl: salesBaseUrl,
    runtimeAvailable: runtimeKey.available,
    rates: platform.config.currencyRates,
    // the built-in engine cannot read; an upstream model can, its figures checked by the rules
    modelReads: config.engines[DEFAULT_AGENTS_MODEL].type === 'upstream',
  });
  await workflows.start();
  const mail: DirectoryMail = {
    domains,
    transport,
    isReplyDomain: async (host) => (await domains.replyDomains(host)).length > 0,
    onMail: (message) => routing.onMail(message),
  };

  const limits = rateLimit(platform.limiter, (req, principal) => ({
    key: `directory:${principal.keyId}`,
    buckets: directoryBuckets(principal, platform.config.limits, { search: req.path === '/v1/search' }),
    what: 'this key',
  }));
  const app = createServiceApp({
    name: 'directory',
    spec: readSpec('directory'),
    metrics: { registry: platform.metrics.directory, key: platform.config.metricsKey },
    docsPath: 'docs/reference/directory.html',
    jsonLimit: '1mb', // the spec's request body limit (its info table): no operation takes more
    corsOrigins: platform.config.corsOrigins,
    logger,
    securityHandler: platform.auth.handler,
    // The console reads the directory's usage and manages webhook endpoints with its session,
    // from its own origin (src/console/cors.ts).
    credentialedCors: consoleCors(platform.config.publicModelUrl),
    otherSecurityHandlers: {
      SessionCookie: createSessionHandler(
        new ConsoleStore(platform.db, platform.accounts),
        platform.accounts,
        {
          consoleOrigin: (req, origin) => isConsoleOrigin(req, origin, platform.config.publicModelUrl),
        },
      ),
    },
    pages: [createStatusPages(platform.db)],
    middleware: [limits, idempotency(platform.db, readSpec('directory'))],
    routers: serves<DirectoryOperationId>()(
      createDirectoryRouter({
        db: platform.db,
        search,
        publicBaseUrl: () =>
          platform.config.publicDirectoryUrl ??
          options.ownUrl?.() ??
          `http://127.0.0.1:${platform.config.directoryPort}`,
      }),
      createDirectoryUsageRouter(platform.db, {
        project: (accountId, id) => platform.accounts.getProject(accountId, id),
        key: (accountId, id) => platform.accounts.getKey(accountId, id),
      }),
      createWebhookRouter(webhooks, delivery),
      sales.router,
      createSendingDomainRouter(domains),
      createConciergeRouter(workflows),
      createCrmRouter({ connections: crmConnections, syncs: crmSyncs }),
      createStatusRouter(platform.db),
    ),
    isReady: () => platform.readiness(ready),
  });
  return {
    app,
    mail,
    ready: loading,
    probes: directoryProbes({
      db: platform.db,
      search,
      transport,
      jobs: platform.jobs,
      door: platform.outbound,
      modelUrl,
      baseUrl: () => platform.config.publicDirectoryUrl ?? options.ownUrl?.() ?? salesBaseUrl,
    }),
    close: async () => {
      await loading.catch(() => undefined);
      if (ready) await writeSnapshot();
      await transport.close();
    },
  };
}
