// Sending campaigns, as durable jobs (platform/jobs.ts: at least once, so every handler here is
// idempotent).
//
// - `sales.campaign.tick` (one live chain per campaign, by `tick_gen`): starts a scheduled
//   campaign when it is due, then queues the steps that are due, within the send window and the
//   sending domain's hourly cap: each becomes a campaign_messages row (unique per recipient and
//   step, so two ticks can never queue one step twice) and a send job, in one transaction; then
//   it schedules its successor, or completes the campaign when nothing is left.
// - `sales.message.send`: claims its row (queued → sending, committed), hands the message to the
//   transport with a Message-ID of ours, and records the outcome (→ sent). A retry of an attempt
//   that died between claim and record finds the row `sending` and marks it `interrupted`
//   instead of sending again: the message may or may not have reached the relay, and we choose
//   never to send a step twice over never losing one. The window is the SMTP transaction itself
//   (from MAIL FROM to the relay's 250 and our commit), milliseconds on a local relay.
import type { SendingDomainStore, VerifiedDomain } from '../mail/domains.ts';
import { MailSendError, type MailTransport, type OutgoingMail } from '../mail/transport.ts';
import type { Db, Queryable } from '../platform/db.ts';
import { ApiError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { JobContext, Jobs } from '../platform/jobs.ts';
import type { Logger } from '../platform/logger.ts';
import type { SecretBox } from '../platform/secrets.ts';
import type { WebhookDelivery } from '../webhooks/delivery.ts';
import {
  type CampaignRow,
  campaignOf,
  type Campaigns,
  addCounts,
  type MessageRow,
  pauseReasonOf,
  type RecipientRow,
  TICK,
  type TickJob,
} from './campaigns.ts';
import { isSuppressed, suppress } from './suppressions.ts';
import { escapeHtml, fill, type MergeValues } from './templates.ts';
import { unsubscribeToken } from './opt-out-tokens.ts';
import { nextOpening } from './window.ts';
import { nowSeconds } from '../platform/clock.ts';

export const SEND = 'sales.message.send';
interface SendJob {
  messageId: string;
}

/** Steps queued by one tick at most; a tick that fills its batch schedules the next at once. */
const TICK_BATCH = 200;
/** Retries of a send the relay refused for now (4xx, no connection), with backoff, before it fails. */
const SEND_RETRIES = 5;
/** How often a campaign whose last messages are still on their way looks again. */
const SETTLE_MS = 3000;
const HOUR_MS = 3_600_000;
/** A claim older than this was left by an attempt that died and was never retried (its job spent). */
const STALE_CLAIM = '30 minutes';

export interface SenderOptions {
  /** Where the opt-out links point: the directory API's public origin. */
  baseUrl: string;
  /** The length of a day of `delay_days`, in seconds (CAMPAIGN_DAY_SECONDS). */
  daySeconds: number;
  /** Sends this instance runs at once. */
  concurrency?: number;
  logger: Logger;
}

/** The transport's errors after which nothing reached the relay for sure: retrying cannot send twice. */
function notSent(err: MailSendError): boolean {
  if (err.responseCode !== undefined) return true; // the relay answered with a refusal
  return ['ECONNECTION', 'EDNS', 'ETLS', 'EOUTBOX', 'ECONFIG'].includes(err.code);
}

export class Sender {
  readonly #db: Db;
  readonly #jobs: Jobs;
  readonly #campaigns: Campaigns;
  readonly #domains: SendingDomainStore;
  readonly #transport: MailTransport;
  readonly #box: SecretBox | undefined;
  readonly #webhooks: WebhookDelivery;
  readonly #options: SenderOptions;

  constructor(
    db: Db,
    jobs: Jobs,
    parts: {
      campaigns: Campaigns;
      domains: SendingDomainStore;
      transport: MailTransport;
      box: SecretBox | undefined;
      webhooks: WebhookDelivery;
    },
    options: SenderOptions,
  ) {
    this.#db = db;
    this.#jobs = jobs;
    this.#campaigns = parts.campaigns;
    this.#domains = parts.domains;
    this.#transport = parts.transport;
    this.#box = parts.box;
    this.#webhooks = parts.webhooks;
    this.#options = options;
  }

  async start(): Promise<void> {
    await this.#jobs.define<TickJob>(TICK, (job) => this.#tick(job), {
      concurrency: 2,
      retryLimit: 10,
      retryDelayMaxSeconds: 60,
      expireInSeconds: 300,
    });
    await this.#jobs.define<SendJob>(SEND, (job, ctx) => this.#send(job, ctx), {
      concurrency: this.#options.concurrency ?? 5,
      retryLimit: SEND_RETRIES,
      retryDelaySeconds: 5,
      retryDelayMaxSeconds: 600,
      // one SMTP transaction, bounded by the transport's timeouts; far longer means it died
      expireInSeconds: 600,
    });
  }

  // --- scheduling ---------------------------------------------------------------------------

  /** Schedules the next job of the chain (in `tx`, the campaign row locked): the generation moves on. */
  async #next(tx: Queryable, campaignId: string, at: number): Promise<void> {
    await this.#campaigns.restartTicks(tx, campaignId, new Date(Math.max(at, Date.now())));
  }

  async #tick(job: TickJob): Promise<void> {
    const row = await this.#campaigns.find(job.campaignId);
    if (!row || row.tick_gen !== job.gen) return; // stale: a newer chain runs
    if (row.status === 'scheduled') return this.#startScheduled(row, job);
    if (row.status !== 'sending') return;

    // a sending campaign pauses when its plan or domain is gone (its list is taken already)
    const refusal = await this.#campaigns.startRefusal(row);
    if (refusal && refusal.code !== 'target_list_not_ready') {
      await this.#campaigns.pauseFor(row.id, pauseReasonOf(refusal));
      return;
    }
    const now = Date.now();
    const opening = nextOpening(row.send_window, now);
    if (opening > now) {
      await this.#db.transaction(async (tx) => {
        if (await this.#stillLive(tx, job)) await this.#next(tx, row.id, opening);
      });
      return;
    }
    // The domain's hourly cap, counting every campaign on it.
    const [hour] = await this.#db.query<{ n: number; oldest: Date | null }>(
      `select count(*)::int as n, min(queued_at) as oldest from campaign_messages
       where sending_domain_id = $1 and queued_at > now() - interval '1 hour'`,
      [row.sending_domain_id],
    );
    const allowance = row.hourly_cap - (hour?.n ?? 0);
    // A claim no attempt can still hold (send attempts expire after 10 minutes): its job is spent.
    const stale = await this.#db.query<MessageRow>(
      `select * from campaign_messages where campaign_id = $1 and status = 'sending'
         and claimed_at < now() - interval '${STALE_CLAIM}'`,
      [row.id],
    );
    for (const message of stale) {
      await this.#settle(
        message,
        'interrupted',
        null,
        'the sender stopped while handing the message to the relay; it is not sent again',
      );
    }

    await this.#db.transaction(async (tx) => {
      if (!(await this.#stillLive(tx, job))) return;
      // Addresses suppressed since launch leave before their next step is queued.
      const gone = await tx.query<{ id: string }>(
        `update campaign_recipients r set status = 'suppressed', next_at = null, updated = $3
         where r.campaign_id = $1 and r.next_at is not null and r.status in ('pending', 'contacted')
           and exists (select 1 from suppressions s where s.account_id = $2 and s.email = lower(r.email))
         returning r.id`,
        [row.id, row.account_id, nowSeconds()],
      );
      if (gone.length > 0) {
        await addCounts(tx, row.id, { suppressed: gone.length });
      }
      let queued = 0;
      if (allowance > 0) {
        const due = await tx.query<{ id: string; next_step: number }>(
          `select id, next_step from campaign_recipients
           where campaign_id = $1 and status in ('pending', 'contacted') and next_at <= now()
           order by next_at, position limit $2 for update skip locked`,
          [row.id, Math.min(allowance, TICK_BATCH)],
        );
        const domain = row.from_email.slice(row.from_email.lastIndexOf('@') + 1);
        for (const r of due) {
          const [message] = await tx.query<{ id: string }>(
            `insert into campaign_messages (id, campaign_id, recipient_id, sending_domain_id, step, message_id)
             values ($1, $2, $3, $4, $5, $6) on conflict (recipient_id, step) do nothing returning id`,
            [
              newId('cmm'),
              row.id,
              r.id,
              row.sending_domain_id,
              r.next_step,
              messageIdOf(r.id, r.next_step, domain),
            ],
          );
          await tx.query('update campaign_recipients set next_at = null where id = $1', [r.id]);
          if (!message) continue; // queued before (a tick that ran twice)
          await this.#jobs.send<SendJob>(SEND, { messageId: message.id }, { tx });
          queued++;
        }
        if (due.length === Math.min(allowance, TICK_BATCH) && allowance > due.length) {
          await this.#next(tx, row.id, Date.now());
          return;
        }
      }
      const [later] = await tx.query<{ at: Date | null }>(
        `select min(next_at) as at from campaign_recipients
         where campaign_id = $1 and status in ('pending', 'contacted') and next_at is not null`,
        [row.id],
      );
      const [open] = await tx.query<{ n: number }>(
        `select count(*)::int as n from campaign_messages where campaign_id = $1 and status in ('queued', 'sending')`,
        [row.id],
      );
      const capped = allowance - queued <= 0 && hour?.oldest ? new Date(hour.oldest).getTime() + HOUR_MS : 0;
      if (later?.at) {
        const at = Math.max(new Date(later.at).getTime(), capped);
        await this.#next(tx, row.id, nextOpening(row.send_window, at));
      } else if ((open?.n ?? 0) > 0) {
        await this.#next(tx, row.id, Date.now() + SETTLE_MS);
      } else {
        await this.#complete(tx, row.id);
      }
    });
  }

  /** Whether the job is still the campaign's live tick (in `tx`, locking the row). */
  async #stillLive(tx: Queryable, job: TickJob): Promise<boolean> {
    const row = await this.#campaigns.find(job.campaignId, tx, true);
    return row?.tick_gen === job.gen && row.status === 'sending';
  }

  async #startScheduled(row: CampaignRow, job: TickJob): Promise<void> {
    const due = Number(row.schedule_at ?? 0) * 1000;
    if (due > Date.now()) {
      // early (rescheduled meanwhile): wait for the time
      await this.#db.transaction(async (tx) => {
        const still = await this.#campaigns.find(row.id, tx, true);
        if (still?.tick_gen === job.gen && still.status === 'scheduled') await this.#next(tx, row.id, due);
      });
      return;
    }
    const refusal = await this.#campaigns.startRefusal(row);
    if (refusal) {
      await this.#campaigns.pauseFor(row.id, pauseReasonOf(refusal));
      return;
    }
    await this.#db.transaction(async (tx) => {
      const locked = await this.#campaigns.find(row.id, tx, true);
      if (locked?.tick_gen !== job.gen || locked.status !== 'scheduled') return;
      await this.#campaigns.start(tx, locked);
    });
  }

  /** Completes a sending campaign (once) and tells the project's webhook endpoints. */
  async #complete(tx: Queryable, campaignId: string): Promise<void> {
    const done = await this.#campaigns.complete(tx, campaignId);
    if (done) await this.#webhooks.emit(done.project_id, 'campaign.completed', campaignOf(done), { tx });
  }

  // --- sending ------------------------------------------------------------------------------

  async #send(job: SendJob, ctx: JobContext): Promise<void> {
    const [message] = await this.#db.query<MessageRow>('select * from campaign_messages where id = $1', [
      job.messageId,
    ]);
    if (!message) return; // released meanwhile (a pause), or its campaign deleted
    if (message.status === 'sending') {
      // An attempt claimed it and stopped before recording what happened.
      await this.#settle(
        message,
        'interrupted',
        null,
        'the sender stopped while handing the message to the relay; it is not sent again',
      );
      return;
    }
    if (message.status !== 'queued') return; // done by an attempt that ran before
    const campaign = await this.#campaigns.find(message.campaign_id);
    const [recipient] = await this.#db.query<RecipientRow>(
      'select * from campaign_recipients where id = $1',
      [message.recipient_id],
    );
    if (!campaign || !recipient) return;
    if (campaign.status !== 'sending' || !['pending', 'contacted'].includes(recipient.status)) {
      // paused or cancelled: the step waits (due again when resumed); a recipient who replied,
      // bounced or unsubscribed meanwhile gets no further step
      await this.#release(message, ['pending', 'contacted'].includes(recipient.status));
      return;
    }
    if (await isSuppressed(this.#db, this.#box, campaign.account_id, recipient.email, campaign.from_email)) {
      await this.#db.transaction(async (tx) => {
        await tx.query(`delete from campaign_messages where id = $1 and status = 'queued'`, [message.id]);
        const [left] = await tx.query(
          `update campaign_recipients set status = 'suppressed', next_at = null, updated = $2
           where id = $1 and status in ('pending', 'contacted') returning id`,
          [recipient.id, nowSeconds()],
        );
        if (left) await addCounts(tx, campaign.id, { suppressed: 1 });
      });
      return;
    }
    let domain: VerifiedDomain;
    try {
      domain = await this.#domains.verifiedDomain(campaign.project_id, campaign.sending_domain_id);
    } catch (err) {
      if (err instanceof ApiError) {
        await this.#campaigns.pauseFor(campaign.id, 'sending_domain_not_verified');
        await this.#release(message, true);
        return;
      }
      throw err;
    }
    const previous = await this.#db.query<{ message_id: string }>(
      `select message_id from campaign_messages where recipient_id = $1 and step < $2 and status in ('sent', 'interrupted') order by step`,
      [recipient.id, message.step],
    );
    const mail = this.#compose(
      campaign,
      recipient,
      message,
      domain,
      previous.map((p) => p.message_id),
    );

    // The claim: committed before the relay hears of the message.
    const claimed = await this.#db.query(
      `update campaign_messages set status = 'sending', attempts = attempts + 1, claimed_at = now()
       where id = $1 and status = 'queued' returning id`,
      [message.id],
    );
    if (claimed.length === 0) return;
    try {
      const sent = await this.#transport.send(mail);
      await this.#settle(message, 'sent', sent.via, null);
    } catch (err) {
      const failure = err instanceof MailSendError ? err : null;
      if (failure?.code === 'EAUTH' || failure?.guardRefused) {
        // the relay refuses us (or the guard its address), not the message: stop the campaign
        // until someone looks; retrying each recipient would only fail them all
        this.#options.logger.warn(
          { err, campaign_id: campaign.id },
          failure.guardRefused
            ? 'the outbound guard refuses the SMTP relay address'
            : 'the SMTP relay refused our credentials',
        );
        await this.#campaigns.pauseFor(campaign.id, 'relay_refused');
        await this.#release(message, true, true);
        return;
      }
      if (failure && !failure.permanent && notSent(failure) && ctx.retryCount < SEND_RETRIES) {
        await this.#db.query(
          `update campaign_messages set status = 'queued', error = $2 where id = $1 and status = 'sending'`,
          [message.id, failure.message.slice(0, 500)],
        );
        throw err; // retried by the queue, with backoff
      }
      if (failure?.recipientRejected) {
        await this.#bounce(campaign, recipient, message, failure.message);
        return;
      }
      if (failure && (failure.permanent || notSent(failure))) {
        await this.#settle(message, 'failed', null, failure.message.slice(0, 500));
        return;
      }
      // no answer mid-transaction (a timeout, a dropped connection): it may have gone through
      await this.#settle(
        message,
        'interrupted',
        null,
        `the relay stopped answering while the message was handed over (${String((err as Error)?.message ?? err).slice(0, 300)}); it is not sent again`,
      );
    }
  }

  /** Gives a queued step back: the recipient is due again (when `due`), the row and its job gone. */
  async #release(message: MessageRow, due: boolean, claimed = false): Promise<void> {
    await this.#db.transaction(async (tx) => {
      const [gone] = await tx.query(
        `delete from campaign_messages where id = $1 and status = $2 returning id`,
        [message.id, claimed ? 'sending' : 'queued'],
      );
      if (gone && due) {
        await tx.query(
          `update campaign_recipients set next_at = now() where id = $1 and status in ('pending', 'contacted')`,
          [message.recipient_id],
        );
      }
    });
  }

  /** Records a step's end: sent (or interrupted, counted as failed) moves the recipient on. */
  async #settle(
    message: MessageRow,
    status: 'sent' | 'failed' | 'interrupted',
    via: 'smtp' | 'outbox' | null,
    error: string | null,
  ): Promise<void> {
    await this.#db.transaction(async (tx) => {
      const [done] = await tx.query(
        `update campaign_messages set status = $2, via = $3, error = $4, sent_at = $5
         where id = $1 and status = 'sending' returning id`,
        [message.id, status, via, error, status === 'sent' ? nowSeconds() : null],
      );
      if (!done) return; // recorded by an attempt before
      const campaign = await this.#campaigns.find(message.campaign_id, tx, true);
      const [recipient] = await tx.query<RecipientRow>(
        'select * from campaign_recipients where id = $1 for update',
        [message.recipient_id],
      );
      if (!campaign || !recipient) return;
      const now = nowSeconds();
      if (status === 'failed') {
        await tx.query(
          `update campaign_recipients set status = 'failed', next_at = null, updated = $2
           where id = $1 and status in ('pending', 'contacted')`,
          [recipient.id, now],
        );
        await addCounts(tx, campaign.id, { messages_failed: 1 });
        return;
      }
      const next = campaign.steps[message.step + 1];
      const firstContact = recipient.status === 'pending';
      // a reply that came while the step was on its way keeps the recipient's status
      await tx.query(
        `update campaign_recipients set
           status = case when status = 'pending' then 'contacted' else status end,
           next_step = $2,
           next_at = case when status in ('pending', 'contacted') and $3::bigint is not null
                     then now() + make_interval(secs => $3::bigint) end,
           updated = $4
         where id = $1`,
        [recipient.id, message.step + 1, next ? next.delay_days * this.#options.daySeconds : null, now],
      );
      await addCounts(tx, campaign.id, {
        messages_sent: status === 'sent' ? 1 : 0,
        messages_failed: status === 'interrupted' ? 1 : 0,
        contacted: firstContact ? 1 : 0,
      });
      if (firstContact) {
        await tx.query(
          `update target_list_members set status = 'contacted', updated = $2 where id = $1 and status = 'pending'`,
          [recipient.member_id, now],
        );
      }
    });
  }

  /** The relay refused the recipient for good: a hard bounce, suppressed for the account. */
  async #bounce(
    campaign: CampaignRow,
    recipient: RecipientRow,
    message: MessageRow,
    error: string,
  ): Promise<void> {
    await this.#db.transaction(async (tx) => {
      const [done] = await tx.query(
        `update campaign_messages set status = 'failed', error = $2 where id = $1 and status = 'sending' returning id`,
        [message.id, error.slice(0, 500)],
      );
      if (!done) return;
      await markBounced(tx, campaign, recipient);
    });
  }

  #compose(
    campaign: CampaignRow,
    recipient: RecipientRow,
    message: MessageRow,
    domain: VerifiedDomain,
    previous: string[],
  ): OutgoingMail {
    const unsubscribeUrl = `${this.#options.baseUrl}/v1/unsubscribe/${unsubscribeToken(this.#box, recipient.id)}`;
    const values: MergeValues = {
      ...recipient.merge,
      sender_name: campaign.from_name,
      unsubscribe_url: unsubscribeUrl,
    };
    const step = campaign.steps[message.step]!;
    const first = campaign.steps[0]!;
    const subject =
      step.subject !== null ? fill(step.subject, values) : `Re: ${fill(first.subject ?? '', values)}`;
    const footer =
      `\n\n--\n${campaign.from_name} <${campaign.from_email}>\n` +
      `You receive this message because ${values.company_name} publishes this address in a business directory. ` +
      `To receive no further messages from ${campaign.from_name}, unsubscribe here: ${unsubscribeUrl}\n`;
    const html =
      step.body_html === null
        ? undefined
        : `${fill(step.body_html, values, true)}\n<p style="font-size:12px;color:#666">${escapeHtml(campaign.from_name)} &lt;${escapeHtml(campaign.from_email)}&gt;<br>` +
          `You receive this message because ${escapeHtml(values.company_name)} publishes this address in a business directory. ` +
          `<a href="${escapeHtml(unsubscribeUrl)}">Unsubscribe</a> to receive no further messages from ${escapeHtml(campaign.from_name)}.</p>\n`;
    const replyAddress = `r-${recipient.reply_token}@${domain.replyDomain}`;
    return {
      from: { name: campaign.from_name, address: campaign.from_email },
      to: { name: recipient.name, address: recipient.email },
      subject,
      text: fill(step.body_text, values) + footer,
      html,
      messageId: message.message_id,
      envelopeFrom: replyAddress,
      replyTo: replyAddress,
      inReplyTo: previous.at(-1),
      references: previous.length > 0 ? previous : undefined,
      listUnsubscribe: { url: unsubscribeUrl },
      dkim: domain.dkim,
    };
  }
}

/** `<rcp_….<step>@<domain>>`: one Message-ID per recipient and step, the same on every attempt. */
export function messageIdOf(recipientId: string, step: number, domain: string): string {
  return `<${recipientId}.${step}@${domain}>`;
}

/**
 * Marks a recipient bounced for good (in `tx`): its follow-ups stop, the member is `bounced`,
 * the campaign counts it, and the address goes on the account's suppression list.
 */
export async function markBounced(
  tx: Queryable,
  campaign: Pick<CampaignRow, 'id' | 'account_id'>,
  recipient: RecipientRow,
): Promise<void> {
  const now = nowSeconds();
  const [changed] = await tx.query(
    `update campaign_recipients set status = 'bounced', next_at = null, updated = $2
     where id = $1 and status <> 'bounced' returning id`,
    [recipient.id, now],
  );
  if (!changed) return;
  await addCounts(tx, campaign.id, { bounced: 1 });
  await tx.query(`update target_list_members set status = 'bounced', updated = $2 where id = $1`, [
    recipient.member_id,
    now,
  ]);
  await suppress(tx, campaign.account_id, recipient.email, 'hard_bounce', campaign.id);
}
