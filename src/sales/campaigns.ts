// Campaigns: created as drafts (templates checked, the sender's address on the sending domain),
// then scheduled or launched. At the start the target list's members become the campaign's
// recipients (suppressed addresses skipped), and a chain of scheduling jobs (sender.ts) queues
// each step as it comes due. Launching, scheduling and resuming need the account's Sales plan.
import { randomBytes } from 'node:crypto';
import type {
  Campaign,
  CampaignRecipient,
  CampaignRecipientStatus,
  CampaignStatus,
  CreateCampaignRequest,
  Listing,
  SendWindow,
} from '../../generated/directory/client/types.gen.ts';
import { hasActivePlan, PLANS } from '../console/plans.ts';
import { NANO_PER_EUR } from '../platform/metering.ts';
import type { SendingDomainStore } from '../mail/domains.ts';
import { nowSeconds } from '../platform/clock.ts';
import type { Db, Queryable } from '../platform/db.ts';
import {
  ApiError,
  BadRequestError,
  ConflictError,
  NotFoundError,
  PermissionDeniedError,
} from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { Jobs } from '../platform/jobs.ts';
import { numericCursor, type Page, pageOf } from '../platform/pagination.ts';
import type { Principal } from '../platform/principal.ts';
import { checkTemplate, type MergeValues } from './templates.ts';
import { checkWindow } from './window.ts';

/** The scheduling job of a campaign: queues the steps that are due, then schedules its successor. */
export const TICK = 'sales.campaign.tick';
export interface TickJob {
  campaignId: string;
  /** The campaign's tick_gen this job belongs to; a job of another generation is stale. */
  gen: number;
}

/** A step as stored: step 0 is the first message (delay 0), the follow-ups come after. */
export interface StoredStep {
  delay_days: number;
  subject: string | null;
  body_text: string;
  body_html: string | null;
}

export interface CampaignRow {
  id: string;
  account_id: string;
  project_id: string;
  key_id: string;
  name: string;
  target_list_id: string;
  sending_domain_id: string;
  from_email: string;
  from_name: string;
  steps: StoredStep[];
  send_window: SendWindow | null;
  hourly_cap: number;
  status: CampaignStatus;
  paused_reason: Campaign['paused_reason'];
  schedule_at: number | null;
  metadata: Record<string, string>;
  created: number;
  launched_at: number | null;
  completed_at: number | null;
  tick_gen: number;
  recipients: number;
  suppressed: number;
  contacted: number;
  messages_sent: number;
  messages_failed: number;
  replied: number;
  bounced: number;
  unsubscribed: number;
}

export interface RecipientRow {
  id: string;
  campaign_id: string;
  account_id: string;
  project_id: string;
  target_list_id: string;
  member_id: string;
  listing_id: string;
  position: number;
  email: string;
  name: string;
  merge: Omit<MergeValues, 'sender_name' | 'unsubscribe_url'>;
  reply_token: string;
  status: CampaignRecipientStatus;
  next_step: number;
  next_at: Date | null;
  created: number;
  updated: number;
}

export interface MessageRow {
  id: string;
  campaign_id: string;
  recipient_id: string;
  sending_domain_id: string;
  step: number;
  message_id: string;
  status: 'queued' | 'sending' | 'sent' | 'failed' | 'interrupted';
  attempts: number;
  via: 'smtp' | 'outbox' | null;
  error: string | null;
  queued_at: Date;
  claimed_at: Date | null;
  sent_at: number | null;
}

export function campaignOf(row: CampaignRow): Campaign {
  const [first, ...followUps] = row.steps;
  return {
    id: row.id,
    object: 'campaign',
    name: row.name,
    target_list_id: row.target_list_id,
    sending_domain_id: row.sending_domain_id,
    from_email: row.from_email,
    from_name: row.from_name,
    subject: first?.subject ?? '',
    body_text: first?.body_text ?? '',
    body_html: first?.body_html ?? null,
    follow_ups: followUps.map((s) => ({
      delay_days: s.delay_days,
      subject: s.subject,
      body_text: s.body_text,
      body_html: s.body_html,
    })),
    send_window: row.send_window,
    hourly_cap: row.hourly_cap,
    schedule_at: row.schedule_at === null ? null : Number(row.schedule_at),
    status: row.status,
    paused_reason: row.paused_reason,
    stats: {
      recipients: row.recipients,
      suppressed: row.suppressed,
      contacted: row.contacted,
      messages_sent: row.messages_sent,
      messages_failed: row.messages_failed,
      replied: row.replied,
      bounced: row.bounced,
      unsubscribed: row.unsubscribed,
    },
    metadata: row.metadata,
    created: Number(row.created),
    launched_at: row.launched_at === null ? null : Number(row.launched_at),
    completed_at: row.completed_at === null ? null : Number(row.completed_at),
  };
}

export function recipientOf(row: RecipientRow, messages: MessageRow[]): CampaignRecipient {
  return {
    id: row.id,
    object: 'campaign_recipient',
    campaign_id: row.campaign_id,
    member_id: row.member_id,
    listing_id: row.listing_id,
    email: row.email,
    name: row.name,
    status: row.status,
    messages: messages.map((m) => ({
      step: m.step,
      message_id: m.message_id,
      status: m.status,
      via: m.via,
      sent_at: m.sent_at === null ? null : Number(m.sent_at),
      error: m.error,
    })),
    next_step_at: row.next_at === null ? null : Math.floor(new Date(row.next_at).getTime() / 1000),
    created: Number(row.created),
    updated: Number(row.updated),
  };
}

/** The merge values a listing gives (the sender's name and the opt-out URL come at sending). */
export function mergeOf(listing: Listing): RecipientRow['merge'] {
  const primary = listing.activities.find((a) => a.primary) ?? listing.activities[0];
  return {
    company_name: listing.name,
    legal_name: listing.legal_name ?? listing.name,
    city: listing.address.city,
    postal_code: listing.address.postal_code,
    country: listing.address.country,
    website: listing.website ?? '',
    activity: primary?.name ?? '',
  };
}

/** A reply token: 20 lower-case base32 characters (100 random bits), safe in any mailbox's local part. */
function replyToken(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  return [...randomBytes(20)].map((b) => alphabet[b & 31]).join('');
}

export interface CampaignsOptions {
  domains: SendingDomainStore;
}

export class Campaigns {
  readonly #db: Db;
  readonly #jobs: Jobs;
  readonly #domains: SendingDomainStore;

  constructor(db: Db, jobs: Jobs, options: CampaignsOptions) {
    this.#db = db;
    this.#jobs = jobs;
    this.#domains = options.domains;
  }

  async create(principal: Principal, input: CreateCampaignRequest): Promise<Campaign> {
    checkTemplate(input.subject, 'subject');
    checkTemplate(input.body_text, 'body_text');
    if (input.body_html) checkTemplate(input.body_html, 'body_html');
    const followUps = input.follow_ups ?? [];
    followUps.forEach((f, i) => {
      if (f.subject) checkTemplate(f.subject, `follow_ups[${i}].subject`);
      checkTemplate(f.body_text, `follow_ups[${i}].body_text`);
      if (f.body_html) checkTemplate(f.body_html, `follow_ups[${i}].body_html`);
    });
    const window = input.send_window ?? null;
    if (window) checkWindow(window);
    const [list] = await this.#db.query<{ id: string }>(
      'select id from target_lists where id = $1 and project_id = $2',
      [input.target_list_id, principal.projectId],
    );
    if (!list) {
      throw new NotFoundError(
        'target_list_not_found',
        `No target list ${input.target_list_id} in this project.`,
        {
          param: 'target_list_id',
        },
      );
    }
    const domain = await this.#domains
      .get(principal.projectId, input.sending_domain_id)
      .catch((err: unknown) => {
        if (err instanceof NotFoundError) {
          throw new NotFoundError(err.code, err.message, { param: 'sending_domain_id' });
        }
        throw err;
      });
    const at = input.from_email.lastIndexOf('@');
    if (input.from_email.slice(at + 1).toLowerCase() !== domain.domain.toLowerCase()) {
      throw new BadRequestError(
        'from_not_on_domain',
        `from_email must be an address on the sending domain ${domain.domain} (DKIM and DMARC align on it).`,
        { param: 'from_email' },
      );
    }
    const steps: StoredStep[] = [
      {
        delay_days: 0,
        subject: input.subject,
        body_text: input.body_text,
        body_html: input.body_html ?? null,
      },
      ...followUps.map((f) => ({
        delay_days: f.delay_days,
        subject: f.subject ?? null,
        body_text: f.body_text,
        body_html: f.body_html ?? null,
      })),
    ];
    const [row] = await this.#db.query<CampaignRow>(
      `insert into campaigns (id, account_id, project_id, key_id, name, target_list_id, sending_domain_id,
         from_email, from_name, steps, send_window, hourly_cap, metadata, created)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) returning *`,
      [
        newId('cmp'),
        principal.accountId,
        principal.projectId,
        principal.keyId,
        input.name,
        input.target_list_id,
        input.sending_domain_id,
        input.from_email.slice(0, at + 1) + domain.domain.toLowerCase(),
        input.from_name,
        JSON.stringify(steps),
        window === null ? null : JSON.stringify(window),
        input.hourly_cap ?? 100,
        JSON.stringify(input.metadata ?? {}),
        nowSeconds(),
      ],
    );
    return campaignOf(row!);
  }

  async row(projectId: string, id: string, q: Queryable = this.#db, lock = false): Promise<CampaignRow> {
    const [row] = await q.query<CampaignRow>(
      `select * from campaigns where id = $1 and project_id = $2${lock ? ' for update' : ''}`,
      [id, projectId],
    );
    if (!row) throw new NotFoundError('campaign_not_found', `No campaign ${id} in this project.`);
    return row;
  }

  /** A campaign's row by its id alone (the sender's jobs carry no project), locked in `q` with `lock`. */
  async find(id: string, q: Queryable = this.#db, lock = false): Promise<CampaignRow | undefined> {
    const [row] = await q.query<CampaignRow>(
      `select * from campaigns where id = $1${lock ? ' for update' : ''}`,
      [id],
    );
    return row;
  }

  /** Completes a sending campaign (in `tx`), once: its row, or undefined if it was not sending. */
  async complete(tx: Queryable, id: string): Promise<CampaignRow | undefined> {
    const [done] = await tx.query<CampaignRow>(
      `update campaigns set status = 'completed', completed_at = $2, next_tick_at = null
       where id = $1 and status = 'sending' returning *`,
      [id, nowSeconds()],
    );
    return done;
  }

  async get(projectId: string, id: string): Promise<Campaign> {
    return campaignOf(await this.row(projectId, id));
  }

  async list(
    projectId: string,
    query: { limit: number; cursor: string | undefined; status: CampaignStatus | undefined },
  ): Promise<Page<Campaign>> {
    const after = numericCursor(query.cursor);
    const rows = await this.#db.query<CampaignRow>(
      `select * from campaigns where project_id = $1 and ($2::text is null or status = $2)
         and ($3::bigint is null or (created, id) < ($3::bigint, $4::text))
       order by created desc, id desc limit $5`,
      [projectId, query.status ?? null, after?.k ?? null, after?.id ?? '', query.limit + 1],
    );
    return pageOf(rows, query.limit, campaignOf, (r) => ({ k: Number(r.created), id: r.id }));
  }

  async recipients(
    projectId: string,
    id: string,
    query: { limit: number; cursor: string | undefined; status: CampaignRecipientStatus | undefined },
  ): Promise<Page<CampaignRecipient>> {
    await this.row(projectId, id);
    const after = numericCursor(query.cursor);
    const rows = await this.#db.query<RecipientRow>(
      `select * from campaign_recipients where campaign_id = $1 and ($2::text is null or status = $2)
         and ($3::integer is null or (position, id) > ($3::integer, $4::text))
       order by position, id limit $5`,
      [id, query.status ?? null, after?.k ?? null, after?.id ?? '', query.limit + 1],
    );
    const served = rows.slice(0, query.limit);
    const messages =
      served.length === 0
        ? []
        : await this.#db.query<MessageRow>(
            `select * from campaign_messages where recipient_id = any($1::text[]) order by step`,
            [served.map((r) => r.id)],
          );
    const byRecipient = new Map<string, MessageRow[]>();
    for (const m of messages)
      byRecipient.set(m.recipient_id, [...(byRecipient.get(m.recipient_id) ?? []), m]);
    return pageOf(
      rows,
      query.limit,
      (r) => recipientOf(r, byRecipient.get(r.id) ?? []),
      (r) => ({ k: r.position, id: r.id }),
    );
  }

  /** What the start of a campaign depends on, read now (a failed read throws: no decision on it). */
  async #startFacts(row: CampaignRow): Promise<StartFacts> {
    const planActive = await hasActivePlan(this.#db, row.account_id, 'sales');
    let domainRefusal: ApiError | null = null;
    try {
      await this.#domains.verifiedDomain(row.project_id, row.sending_domain_id);
    } catch (err) {
      // unverified or gone is the domain's answer; anything else is a failure to read it
      if (!(err instanceof ApiError && (err.code === 'sending_domain_not_verified' || err.status === 404)))
        throw err;
      domainRefusal = err;
    }
    const [list] = await this.#db.query<{ status: string }>('select status from target_lists where id = $1', [
      row.target_list_id,
    ]);
    return { planActive, domainRefusal, listStatus: list?.status ?? null };
  }

  /**
   * Why `row` may not start (or go on sending) now, as the error a launch, schedule or resume
   * answers; null when it may. Launch and the sender decide by this one rule.
   */
  async startRefusal(row: CampaignRow): Promise<ApiError | null> {
    return mayStart(row, await this.#startFacts(row));
  }

  async #mayStart(row: CampaignRow): Promise<void> {
    const refusal = await this.startRefusal(row);
    if (refusal) throw refusal;
  }

  /** A new chain of scheduling jobs (the old one goes stale), its first job due at `at`. */
  async restartTicks(tx: Queryable, campaignId: string, at: Date): Promise<void> {
    const [row] = await tx.query<{ tick_gen: number }>(
      `update campaigns set tick_gen = tick_gen + 1, next_tick_at = $2 where id = $1 returning tick_gen`,
      [campaignId, at],
    );
    await this.#jobs.send<TickJob>(
      TICK,
      { campaignId, gen: row!.tick_gen },
      { tx, ...(at.getTime() > Date.now() ? { startAfter: at } : {}) },
    );
  }

  /**
   * Takes the target list's members as recipients (in `tx`, the campaign row locked) and makes
   * the campaign `sending`; suppressed addresses become `suppressed` recipients.
   */
  async start(tx: Queryable, row: CampaignRow): Promise<void> {
    const now = nowSeconds();
    let after = -1;
    let total = 0;
    let suppressed = 0;
    for (;;) {
      const members = await tx.query<{
        id: string;
        listing_id: string;
        position: number;
        email: string;
        listing: Listing;
        suppressed: boolean;
      }>(
        `select m.id, m.listing_id, m.position, m.email, m.listing,
           exists (select 1 from suppressions s where s.account_id = $2 and s.email = lower(m.email)) as suppressed
         from target_list_members m where m.target_list_id = $1 and m.position > $3
         order by m.position limit 500`,
        [row.target_list_id, row.account_id, after],
      );
      if (members.length === 0) break;
      after = members.at(-1)!.position;
      const params: unknown[] = [];
      const values = members.map((m) => {
        const base = params.length;
        params.push(
          newId('rcp'),
          row.id,
          row.account_id,
          row.project_id,
          row.target_list_id,
          m.id,
          m.listing_id,
          m.position,
          m.email,
          m.listing.name,
          JSON.stringify(mergeOf(m.listing)),
          replyToken(),
          m.suppressed ? 'suppressed' : 'pending',
          m.suppressed ? null : new Date(),
          now,
        );
        return `(${Array.from({ length: 15 }, (_, i) => `$${base + i + 1}`).join(', ')}, $${base + 15})`;
      });
      total += members.length;
      suppressed += members.filter((m) => m.suppressed).length;
      await tx.query(
        `insert into campaign_recipients (id, campaign_id, account_id, project_id, target_list_id, member_id,
           listing_id, position, email, name, merge, reply_token, status, next_at, created, updated)
         values ${values.join(', ')}`,
        params,
      );
    }
    await tx.query(
      `update campaigns set status = 'sending', paused_reason = null, recipients = $2, suppressed = $3,
         launched_at = coalesce(launched_at, $4), schedule_at = $4 where id = $1`,
      [row.id, total, suppressed, now],
    );
    await this.restartTicks(tx, row.id, new Date());
  }

  async launch(projectId: string, id: string): Promise<Campaign> {
    const before = await this.row(projectId, id);
    this.#launchable(before);
    await this.#mayStart(before);
    return this.#db.transaction(async (tx) => {
      const row = await this.row(projectId, id, tx, true);
      this.#launchable(row);
      await this.start(tx, row);
      return campaignOf(await this.row(projectId, id, tx));
    });
  }

  #launchable(row: CampaignRow): void {
    if (row.status !== 'draft' && row.status !== 'scheduled') {
      throw new ConflictError(
        'campaign_not_launchable',
        `The campaign is ${row.status}; only a draft or scheduled campaign can be launched.`,
      );
    }
  }

  async schedule(projectId: string, id: string, sendAt: number): Promise<Campaign> {
    const before = await this.row(projectId, id);
    if (sendAt <= nowSeconds()) {
      throw new BadRequestError(
        'send_at_in_past',
        'send_at must be in the future; launch the campaign to send now.',
        {
          param: 'send_at',
        },
      );
    }
    this.#schedulable(before);
    await this.#mayStart(before);
    return this.#db.transaction(async (tx) => {
      const row = await this.row(projectId, id, tx, true);
      this.#schedulable(row);
      await tx.query(
        `update campaigns set status = 'scheduled', schedule_at = $2, launched_at = $3 where id = $1`,
        [id, sendAt, nowSeconds()],
      );
      await this.restartTicks(tx, id, new Date(sendAt * 1000));
      return campaignOf(await this.row(projectId, id, tx));
    });
  }

  #schedulable(row: CampaignRow): void {
    if (row.status !== 'draft' && row.status !== 'scheduled') {
      throw new ConflictError(
        'campaign_not_schedulable',
        `The campaign is ${row.status}; only a draft or scheduled campaign can be scheduled.`,
      );
    }
  }

  async pause(projectId: string, id: string): Promise<Campaign> {
    return this.#db.transaction(async (tx) => {
      const row = await this.row(projectId, id, tx, true);
      if (row.status !== 'sending' && row.status !== 'scheduled') {
        throw new ConflictError(
          'campaign_not_pausable',
          `The campaign is ${row.status}; only a scheduled or sending campaign can be paused.`,
        );
      }
      await tx.query(`update campaigns set status = 'paused', paused_reason = 'requested' where id = $1`, [
        id,
      ]);
      return campaignOf(await this.row(projectId, id, tx));
    });
  }

  /** Pauses a sending or scheduled campaign for a reason of ours (the sender found it cannot go on). */
  async pauseFor(campaignId: string, reason: NonNullable<Campaign['paused_reason']>): Promise<void> {
    await this.#db.query(
      `update campaigns set status = 'paused', paused_reason = $2 where id = $1 and status in ('sending', 'scheduled')`,
      [campaignId, reason],
    );
  }

  async resume(projectId: string, id: string): Promise<Campaign> {
    const before = await this.row(projectId, id);
    this.#paused(before);
    await this.#mayStart(before);
    return this.#db.transaction(async (tx) => {
      const row = await this.row(projectId, id, tx, true);
      this.#paused(row);
      if (await this.#started(tx, id)) {
        await tx.query(`update campaigns set status = 'sending', paused_reason = null where id = $1`, [id]);
        await this.restartTicks(tx, id, new Date());
      } else if (row.schedule_at !== null && Number(row.schedule_at) * 1000 > Date.now()) {
        // paused while scheduled, and its time is still ahead
        await tx.query(`update campaigns set status = 'scheduled', paused_reason = null where id = $1`, [id]);
        await this.restartTicks(tx, id, new Date(Number(row.schedule_at) * 1000));
      } else {
        // paused while scheduled, now past its time: it starts as a launch would
        await this.start(tx, row);
      }
      return campaignOf(await this.row(projectId, id, tx));
    });
  }

  async #started(q: Queryable, id: string): Promise<boolean> {
    return (
      (await q.query('select 1 from campaign_recipients where campaign_id = $1 limit 1', [id])).length > 0
    );
  }

  #paused(row: CampaignRow): void {
    if (row.status !== 'paused') {
      throw new ConflictError(
        'campaign_not_paused',
        `The campaign is ${row.status}; only a paused campaign can be resumed.`,
      );
    }
  }

  async cancel(projectId: string, id: string): Promise<Campaign> {
    return this.#db.transaction(async (tx) => {
      const row = await this.row(projectId, id, tx, true);
      if (row.status === 'completed' || row.status === 'cancelled') {
        throw new ConflictError('campaign_finished', `The campaign is ${row.status} already.`);
      }
      await tx.query(
        `update campaigns set status = 'cancelled', paused_reason = null, completed_at = $2 where id = $1`,
        [id, nowSeconds()],
      );
      return campaignOf(await this.row(projectId, id, tx));
    });
  }

  /** Whether a campaign that has not ended uses the sending domain (it cannot be deleted). */
}

/** What a campaign's start depends on: the account's Sales plan, its sending domain, its list. */
export interface StartFacts {
  planActive: boolean;
  /** The domain store's refusal (not verified, or gone), or null when the domain is verified. */
  domainRefusal: ApiError | null;
  /** The target list's status, or null when it was deleted. */
  listStatus: string | null;
}

/** The one rule of a campaign's start: the refusal for `row` given `facts`, or null when it may start. */
export function mayStart(row: CampaignRow, facts: StartFacts): ApiError | null {
  if (!facts.planActive) {
    return new PermissionDeniedError(
      'subscription_required',
      `Sending campaigns needs the Sales plan (${PLANS.sales.monthlyNano / NANO_PER_EUR} EUR a month): subscribe with POST /v1/subscriptions {"plan": "sales"} on the Model API, or in the console.`,
    );
  }
  if (facts.domainRefusal) return facts.domainRefusal;
  if (facts.listStatus !== 'ready') {
    return new ConflictError(
      'target_list_not_ready',
      facts.listStatus
        ? `The target list ${row.target_list_id} is ${facts.listStatus}; a campaign is sent to a ready list.`
        : `The target list ${row.target_list_id} was deleted.`,
      { param: 'target_list_id' },
    );
  }
  return null;
}

/** The reason a campaign pauses for when `mayStart` refuses it (a list not ready waits as `requested`). */
export function pauseReasonOf(refusal: ApiError): NonNullable<Campaign['paused_reason']> {
  if (refusal.code === 'subscription_required') return 'plan_inactive';
  if (refusal.code === 'target_list_not_ready') return 'requested';
  return 'sending_domain_not_verified';
}

/** Whether a campaign that is scheduled, sending or paused sends from the domain (it may not be deleted). */
export async function domainInUse(db: Queryable, projectId: string, domainId: string): Promise<boolean> {
  const rows = await db.query(
    `select 1 from campaigns where project_id = $1 and sending_domain_id = $2
       and status in ('scheduled', 'sending', 'paused') limit 1`,
    [projectId, domainId],
  );
  return rows.length > 0;
}

/** The counters of a campaign that its sending, replies and opt-outs move on. */
export type CampaignCounter =
  'contacted' | 'messages_sent' | 'messages_failed' | 'suppressed' | 'bounced' | 'unsubscribed' | 'replied';

/** Adds to a campaign's counters, in the caller's transaction. */
export async function addCounts(
  q: Queryable,
  campaignId: string,
  counts: Partial<Record<CampaignCounter, number>>,
): Promise<void> {
  const added = Object.entries(counts).filter(([, n]) => n !== 0);
  if (added.length === 0) return;
  const sets = added.map(([counter], i) => `${counter} = ${counter} + $${i + 2}`).join(', ');
  await q.query(`update campaigns set ${sets} where id = $1`, [campaignId, ...added.map(([, n]) => n)]);
}
