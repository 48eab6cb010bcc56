// The Sales interface's parts, made once per directory service: target lists, suppressions,
// campaigns and their sender (durable jobs), replies (the inbound mail no other feature claims) and
// the opt-out endpoints. Sending domains, the transport and the inbound listener are src/mail's.
import type { SendingDomainStore } from '../mail/domains.ts';
import type { MailRouting } from '../mail/routing.ts';
import type { MailTransport } from '../mail/transport.ts';
import type { Db } from '../platform/db.ts';
import type { Jobs } from '../platform/jobs.ts';
import type { Logger } from '../platform/logger.ts';
import type { SecretBox } from '../platform/secrets.ts';
import type { WebhookDelivery } from '../webhooks/delivery.ts';
import { Campaigns } from './campaigns.ts';
import { upgradeOptOutHashes } from './opt-out-hashes.ts';
import { Replies, type ReplyStored } from './replies.ts';
import { createSalesRouter } from './routes.ts';
import { Sender } from './sender.ts';
import { Suppressions } from './suppressions.ts';
import type { TargetLists } from './target-lists.ts';
import { Unsubscribes } from './unsubscribe.ts';

export interface SalesDeps {
  db: Db;
  /** Target lists, made (and started) by the directory service: the CRM sync reads them too. */
  targetLists: TargetLists;
  jobs: Jobs;
  secrets: SecretBox | undefined;
  logger: Logger;
  webhooks: WebhookDelivery;
  domains: SendingDomainStore;
  transport: MailTransport;
  /** The directory API's public origin: opt-out links. */
  baseUrl: string;
  /** CAMPAIGN_DAY_SECONDS. */
  daySeconds: number;
  /**
   * Sends one instance runs at once: the transport's connections (SMTP_MAX_CONNECTIONS), so no
   * claimed message waits in its pool (a kill would leave it `interrupted` without need).
   */
  sendConcurrency: number;
  /** Where inbound mail and opt-out links go: Sales registers its replies and its `rcp_` tokens. */
  routing: MailRouting;
  /** Called in the transaction that stores a human reply (the CRM sync's `replyStored`). */
  onReplyStored?: ReplyStored;
}

export interface Sales {
  router: ReturnType<typeof createSalesRouter>;
}

export async function startSales(deps: SalesDeps): Promise<Sales> {
  const targetLists = deps.targetLists;
  await upgradeOptOutHashes(deps.db, deps.secrets, deps.logger);
  const campaigns = new Campaigns(deps.db, deps.jobs, { domains: deps.domains });
  const sender = new Sender(
    deps.db,
    deps.jobs,
    {
      campaigns,
      domains: deps.domains,
      transport: deps.transport,
      box: deps.secrets,
      webhooks: deps.webhooks,
    },
    {
      baseUrl: deps.baseUrl,
      daySeconds: deps.daySeconds,
      concurrency: deps.sendConcurrency,
      logger: deps.logger,
    },
  );
  await sender.start();
  const replies = new Replies(deps.db, deps.webhooks, deps.onReplyStored);
  // the replies take the inbound mail no other feature claims: a campaign's, or refused with 550
  deps.routing.inbound({ onMail: (mail) => replies.handle(mail) });
  return {
    router: createSalesRouter({
      targetLists,
      suppressions: new Suppressions(deps.db),
      campaigns,
      replies,
      unsubscribes: new Unsubscribes(deps.db, deps.secrets, deps.routing),
    }),
  };
}
