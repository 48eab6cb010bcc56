// Answers to campaign messages, as the inbound SMTP listener (src/mail/inbound.ts) hands them
// over: matched to the message they answer by the Reply-To token they were addressed to
// (`r-<token>@reply.<domain>`, also our envelope sender, so bounces come back to it), else by
// In-Reply-To, else by References, and only among the campaigns of the domain the mail was
// addressed to. Stored once (a sender that retries because our 250 was lost stores nothing
// twice), the recipient and member marked, hard bounces suppressed, and the first human reply to
// each message billed 0.50 EUR: the usage record, the reply and the `reply.received` event are
// written in one transaction, and a partial unique index admits one billed reply per message.
import { createHash } from 'node:crypto';
import type { Reply, ReplyKind } from '../../generated/directory/client/types.gen.ts';
import { SALES_REPLY_NANO } from '../console/plans.ts';
import { InboundRejected, type InboundMail } from '../mail/inbound.ts';
import type { Db, Queryable } from '../platform/db.ts';
import { NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { formatEur, recordUsage } from '../platform/metering.ts';
import { numericCursor, type Page, pageOf } from '../platform/pagination.ts';
import type { WebhookDelivery } from '../webhooks/delivery.ts';
import { addCounts, type CampaignRow, type MessageRow, type RecipientRow } from './campaigns.ts';
import { nowSeconds } from '../platform/clock.ts';
import { markBounced } from './sender.ts';

const MAX_TEXT = 100_000;
const TOKEN_ADDRESS = /^r-([a-z2-7]{20})@(.+)$/;

interface ReplyRow {
  id: string;
  account_id: string;
  project_id: string;
  campaign_id: string;
  recipient_id: string;
  member_id: string;
  listing_id: string;
  target_list_id: string;
  step: number;
  in_reply_to: string;
  matched_by: Reply['matched_by'];
  kind: ReplyKind;
  from_address: string;
  from_name: string | null;
  subject: string;
  text: string;
  inbound_id: string;
  received_at: number;
  billed: boolean;
  cost_nano: number;
  crm_synced: boolean;
  created: number;
}

export function replyOf(row: ReplyRow): Reply {
  return {
    id: row.id,
    object: 'reply',
    kind: row.kind,
    campaign_id: row.campaign_id,
    recipient_id: row.recipient_id,
    member_id: row.member_id,
    listing_id: row.listing_id,
    target_list_id: row.target_list_id,
    step: row.step,
    in_reply_to: row.in_reply_to,
    matched_by: row.matched_by,
    from: row.from_address,
    from_name: row.from_name,
    subject: row.subject,
    text: row.text,
    received_at: Number(row.received_at),
    billed: row.billed,
    cost: formatEur(Number(row.cost_nano)),
    currency: 'EUR',
    crm_synced: row.crm_synced,
    created: Number(row.created),
  };
}

interface Match {
  recipient: RecipientRow;
  message: MessageRow;
  by: Reply['matched_by'];
}

/** `<id@host>` as stored: brackets on, surrounding space off. */
const bracketed = (id: string) => `<${id.trim().replace(/^<|>$/g, '')}>`;

/** A human reply as the CRM sync reads it (src/crm/syncs.ts `CrmReply`). */
export interface ReplyForCrm {
  id: string;
  listingId: string;
  subject: string;
  text: string;
  from: string;
  fromName: string | null;
  receivedAt: number;
}

/** What the reply handler tells others, in the transaction that stores a human reply. */
export type ReplyStored = (
  tx: Queryable,
  reply: { projectId: string; targetListId: string; listingId: string },
) => Promise<void>;

export class Replies {
  readonly #db: Db;
  readonly #webhooks: WebhookDelivery;
  /** Called in the transaction that stores a human reply (the CRM sync queues a push of it). */
  readonly #onStored: ReplyStored | undefined;

  constructor(db: Db, webhooks: WebhookDelivery, onStored?: ReplyStored) {
    this.#db = db;
    this.#webhooks = webhooks;
    this.#onStored = onStored;
  }

  /** The reply hosts (`reply.<domain>`, lower case) the mail was addressed to. */
  #hosts(mail: InboundMail): Set<string> {
    return new Set(mail.recipients.map((r) => r.slice(r.lastIndexOf('@') + 1).toLowerCase()));
  }

  /** The sent step of a recipient a message id names, if it is one of ours on these hosts. */
  async #byMessageId(
    ids: string[],
    hosts: Set<string>,
  ): Promise<{ recipient: RecipientRow; message: MessageRow } | undefined> {
    for (const id of ids) {
      const [message] = await this.#db.query<MessageRow>(
        `select * from campaign_messages where message_id = $1 and status in ('sent', 'interrupted')`,
        [bracketed(id)],
      );
      if (!message) continue;
      const domain = message.message_id.slice(message.message_id.lastIndexOf('@') + 1, -1).toLowerCase();
      if (!hosts.has(`reply.${domain}`)) continue;
      const [recipient] = await this.#db.query<RecipientRow>(
        'select * from campaign_recipients where id = $1',
        [message.recipient_id],
      );
      if (recipient) return { recipient, message };
    }
    return undefined;
  }

  async #match(mail: InboundMail): Promise<Match | undefined> {
    const hosts = this.#hosts(mail);
    const referenced = [
      ...(mail.inReplyTo ? [mail.inReplyTo] : []),
      ...(mail.bounce?.originalMessageId ? [mail.bounce.originalMessageId] : []),
    ];
    for (const address of mail.recipients) {
      const token = TOKEN_ADDRESS.exec(address.toLowerCase());
      if (!token) continue;
      const [recipient] = await this.#db.query<RecipientRow & { from_email: string }>(
        `select r.*, c.from_email from campaign_recipients r join campaigns c on c.id = r.campaign_id
         where r.reply_token = $1`,
        [token[1]],
      );
      if (!recipient) continue;
      const domain = recipient.from_email.slice(recipient.from_email.lastIndexOf('@') + 1).toLowerCase();
      if (token[2] !== `reply.${domain}`) continue;
      // the step answered: the one In-Reply-To names, else the latest that went out
      const messages = await this.#db.query<MessageRow>(
        `select * from campaign_messages where recipient_id = $1 and status in ('sent', 'interrupted') order by step desc`,
        [recipient.id],
      );
      const named = messages.find((m) => referenced.some((id) => bracketed(id) === m.message_id));
      const message = named ?? messages[0];
      if (message) return { recipient, message, by: 'token' };
    }
    const byReply = await this.#byMessageId(referenced, hosts);
    if (byReply) return { ...byReply, by: 'in_reply_to' };
    const byReferences = await this.#byMessageId([...mail.references].reverse(), hosts);
    if (byReferences) return { ...byReferences, by: 'references' };
    return undefined;
  }

  /** Stores an inbound message (the listener answers 250 once this resolves), or refuses it with 550. */
  async handle(mail: InboundMail): Promise<void> {
    const match = await this.#match(mail);
    if (!match) {
      throw new InboundRejected(550, '5.1.1 This address and message match no campaign message of ours');
    }
    const { recipient, message, by } = match;
    const inboundId = mail.messageId
      ? bracketed(mail.messageId).slice(0, 998)
      : `sha256:${createHash('sha256').update(mail.raw).digest('hex')}`;
    const text = mail.text.length > MAX_TEXT ? mail.text.slice(0, MAX_TEXT) : mail.text;
    const receivedAt = Math.floor(mail.receivedAt.getTime() / 1000);
    await this.#db.transaction(async (tx) => {
      const [campaign] = await tx.query<CampaignRow>('select * from campaigns where id = $1 for update', [
        recipient.campaign_id,
      ]);
      const [locked] = await tx.query<RecipientRow>(
        'select * from campaign_recipients where id = $1 for update',
        [recipient.id],
      );
      if (!campaign || !locked) return;
      const [seen] = await tx.query('select 1 from replies where recipient_id = $1 and inbound_id = $2', [
        locked.id,
        inboundId,
      ]);
      if (seen) return; // the sender retried a message we stored
      const kind = mail.kind;
      const [billedBefore] = await tx.query(
        'select 1 from replies where recipient_id = $1 and step = $2 and billed',
        [locked.id, message.step],
      );
      const billed = kind === 'human' && !billedBefore;
      const [row] = await tx.query<ReplyRow>(
        `insert into replies (id, account_id, project_id, campaign_id, recipient_id, member_id, listing_id,
           target_list_id, step, in_reply_to, matched_by, kind, from_address, from_name, subject, text,
           inbound_id, received_at, billed, cost_nano, created)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
         returning *`,
        [
          newId('rpl'),
          campaign.account_id,
          campaign.project_id,
          campaign.id,
          locked.id,
          locked.member_id,
          locked.listing_id,
          locked.target_list_id,
          message.step,
          message.message_id,
          by,
          kind,
          mail.from.address,
          mail.from.name || null,
          mail.subject.slice(0, 998),
          text,
          inboundId,
          receivedAt,
          billed,
          billed ? SALES_REPLY_NANO : 0,
          nowSeconds(),
        ],
      );
      if (billed) {
        await recordUsage(
          tx,
          {
            accountId: campaign.account_id,
            projectId: campaign.project_id,
            keyId: campaign.key_id,
            scopes: [],
            plan: '',
          },
          {
            service: 'directory',
            model: 'sales',
            endpoint: 'reply',
            units: 1,
            costNano: SALES_REPLY_NANO,
            status: 200,
            latencyMs: 0,
          },
        );
      }
      if (kind === 'human') {
        await this.#replied(tx, campaign, locked);
        await this.#webhooks.emit(campaign.project_id, 'reply.received', replyOf(row!), { tx });
        await this.#onStored?.(tx, {
          projectId: campaign.project_id,
          targetListId: locked.target_list_id,
          listingId: locked.listing_id,
        });
      } else if (kind === 'bounce' && mail.bounce?.permanent !== false) {
        await markBounced(tx, campaign, locked);
      }
    });
  }

  /** A person answered: the recipient's follow-ups stop; recipient and member are `replied`. */
  async #replied(tx: Queryable, campaign: CampaignRow, recipient: RecipientRow): Promise<void> {
    const now = nowSeconds();
    const [first] = await tx.query(
      `update campaign_recipients set status = 'replied', next_at = null, updated = $2
       where id = $1 and status in ('pending', 'contacted', 'failed') returning id`,
      [recipient.id, now],
    );
    if (!first) return;
    await addCounts(tx, campaign.id, { replied: 1 });
    await tx.query(
      `update target_list_members set status = 'replied', updated = $2
       where id = $1 and status in ('pending', 'contacted')`,
      [recipient.member_id, now],
    );
  }

  async get(projectId: string, id: string): Promise<Reply> {
    const [row] = await this.#db.query<ReplyRow>('select * from replies where id = $1 and project_id = $2', [
      id,
      projectId,
    ]);
    if (!row) throw new NotFoundError('reply_not_found', `No reply ${id} in this project.`);
    return replyOf(row);
  }

  async list(
    projectId: string,
    query: {
      limit: number;
      cursor: string | undefined;
      campaignId: string | undefined;
      kind: ReplyKind | undefined;
    },
  ): Promise<Page<Reply>> {
    const after = numericCursor(query.cursor);
    const rows = await this.#db.query<ReplyRow>(
      `select * from replies where project_id = $1 and ($2::text is null or campaign_id = $2)
         and ($3::text is null or kind = $3)
         and ($4::bigint is null or (created, id) < ($4::bigint, $5::text))
       order by created desc, id desc limit $6`,
      [
        projectId,
        query.campaignId ?? null,
        query.kind ?? null,
        after?.k ?? null,
        after?.id ?? '',
        query.limit + 1,
      ],
    );
    return pageOf(rows, query.limit, replyOf, (r) => ({ k: Number(r.created), id: r.id }));
  }
}

/**
 * The human replies of a target list's members as the CRM sync reads them (src/crm/syncs.ts
 * `ReplySource`): by id after `afterId` (of one listing), and the mark that they are in a CRM.
 */
export function crmReplySource(db: Db): {
  replies(
    targetListId: string,
    options: { listingId: string | null; afterId: string | null; limit: number },
  ): Promise<ReplyForCrm[]>;
  markSynced(tx: Queryable, replyIds: string[]): Promise<void>;
} {
  return {
    async replies(targetListId, options) {
      const rows = await db.query<ReplyRow>(
        `select * from replies where target_list_id = $1 and kind = 'human'
           and ($2::text is null or listing_id = $2) and ($3::text is null or id > $3)
         order by id limit $4`,
        [targetListId, options.listingId, options.afterId, options.limit],
      );
      return rows.map((r) => ({
        id: r.id,
        listingId: r.listing_id,
        subject: r.subject,
        text: r.text,
        from: r.from_address,
        fromName: r.from_name,
        receivedAt: Number(r.received_at),
      }));
    },
    async markSynced(tx, replyIds) {
      if (replyIds.length > 0) {
        await tx.query('update replies set crm_synced = true where id = any($1::text[])', [replyIds]);
      }
    },
  };
}
