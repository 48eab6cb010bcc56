// Concierge workflows: a brief becomes a chain of durable jobs, one per stage (planning,
// searching, contacting, awaiting_replies, comparing), each of which runs the agent where a
// judgement is needed and writes its outcome, its steps and the next stage's job in one
// transaction. A job that runs twice (a worker killed, a retry) finds the workflow already past
// its stage and does nothing; waiting for answers is a job due at `respond_by`, not a sleeping
// process. The end (succeeded, failed, cancelled) is written once, with the usage record of a
// success and the webhook event in the same transaction, so a workflow sends exactly one final
// event and is billed once, only when it succeeded.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type {
  ConciergeContact,
  ConciergeShortlistEntry,
  CreateConciergeBriefRequest,
  QuoteReading,
  Workflow,
  WorkflowComplexity,
  WorkflowStage,
  WorkflowStep,
} from '../../generated/directory/client/types.gen.ts';
import type { ResponseTool } from '../../generated/model/client/types.gen.ts';
import type { ListingRecord } from '../directory/store.ts';
import { haversineKm } from '../directory/geo.ts';
import { geocode, reverseGeocode } from '../directory/places.ts';
import { type InboundMail, InboundRejected } from '../mail/inbound.ts';
import type { VerifiedDomain } from '../mail/domains.ts';
import { MailSendError, type OutgoingMail, type SentMail } from '../mail/transport.ts';
import type { Db, Queryable } from '../platform/db.ts';
import {
  ApiError,
  BadRequestError,
  ConflictError,
  NotFoundError,
  PermissionDeniedError,
} from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { JobContext, Jobs } from '../platform/jobs.ts';
import type { Logger } from '../platform/logger.ts';
import { formatEur, NANO_PER_EUR, recordUsage } from '../platform/metering.ts';
import { decodeCursor, type Page, pageOf } from '../platform/pagination.ts';
import type { Principal } from '../platform/principal.ts';
import { isSuppressed, suppress } from '../sales/suppressions.ts';
import type { WebhookDelivery } from '../webhooks/delivery.ts';
import { type Agent, AgentFailed, type AgentRun } from './agent.ts';
import { type Candidate, compare, type Outcome } from './compare.ts';
import { readQuote } from './quotes.ts';
import { requestForQuote } from './rfq.ts';
import {
  type BriefHints,
  countIn,
  DEFAULT_MAX_PROVIDERS,
  ENGLISH_NUMBERS,
  type ResolvedPlace,
  tradeOf,
  type Understanding,
  understand,
} from './understand.ts';

export const STAGE = 'concierge.stage';
export const READ = 'concierge.read';
/** Attempts of a stage after the first before the workflow fails. */
const STAGE_RETRIES = 6;
/** Hits the agent's search asks for (the hub's most). */
const SEARCH_LIMIT = 20;
const MAX_RESPOND_DAYS = 30;
const DEFAULT_RESPOND_HOURS = 48;

/** Prices by complexity (docs/concierge.md), billed only on success. */
export const PRICES_NANO: Record<WorkflowComplexity, number> = {
  simple: NANO_PER_EUR / 2,
  standard: 2 * NANO_PER_EUR,
  complex: 5 * NANO_PER_EUR,
};

export const INSTRUCTIONS = [
  'You are the concierge of a business directory. A customer gave you a brief: find providers,',
  'ask them for quotes, and compare them. Work only with the tools you are given: read_brief tells',
  'you what the brief asks for, search_directory (server eurus) searches the directory, read_reply',
  'reads a provider answer, compare_providers ranks them. Never invent providers, prices or dates.',
].join(' ');

/** How the concierge reaches the Sales mail path (src/mail): absent until the service wires it. */
export interface ConciergeMail {
  verifiedDomain(projectId: string, domainId: string): Promise<VerifiedDomain>;
  send(mail: OutgoingMail): Promise<SentMail>;
  /** The one-click opt-out URL of a request for a quote (List-Unsubscribe). */
  unsubscribeUrl(contact: { id: string; token: string }): string;
}

interface Hints extends BriefHints {
  /** The `location` or `near` hint as the directory's geocoder resolved it when the brief came in. */
  resolved?: ResolvedPlace | undefined;
}

interface StoredCandidate extends Candidate {
  email: string | null;
  activity: string | null;
}

export interface WorkflowRow {
  id: string;
  account_id: string;
  project_id: string;
  key_id: string;
  status: Workflow['status'];
  stage: WorkflowStage | null;
  brief: string;
  hints: Hints;
  contact: boolean;
  sending_domain_id: string | null;
  from_address: string | null;
  from_name: string | null;
  respond_by: number | null;
  complexity: WorkflowComplexity;
  price_nano: number;
  webhook_endpoint_id: string | null;
  understanding: Understanding | null;
  candidates: StoredCandidate[];
  shortlist: ConciergeShortlistEntry[];
  steps: WorkflowStep[];
  result: Workflow['result'];
  error: Workflow['error'];
  metadata: Record<string, string>;
  request_id: string;
  agent_steps: number;
  agent_cost_nano: number;
  created: number;
  started_at: number | null;
  completed_at: number | null;
}

interface ContactRow {
  id: string;
  workflow_id: string;
  account_id: string;
  position: number;
  listing_id: string;
  name: string;
  email: string;
  status: 'pending' | 'sending' | ConciergeContact['status'];
  token: string;
  message_id: string | null;
  sent_at: number | null;
  failure: string | null;
  reply: {
    received_at: number;
    from: string;
    subject: string;
    text: string;
    message_id: string | null;
  } | null;
  reading: QuoteReading | null;
  reading_response_id: string | null;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);
const isFinal = (status: string) => status === 'succeeded' || status === 'failed' || status === 'cancelled';
const iso = (unix: number) => new Date(unix * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const seedOf = (id: string) => createHash('sha256').update(id).digest().readUInt32BE(0);
const token = () => {
  // 20 characters of lower-case base32 (RFC 4648 alphabet), as the sales tokens
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  return [...randomBytes(20)].map((b) => alphabet[b & 31]).join('');
};

function step(
  stage: WorkflowStage | null,
  kind: WorkflowStep['kind'],
  message: string,
  agent: string | null = null,
): WorkflowStep {
  return { at: nowSeconds(), stage, kind, message, agent_response_id: agent };
}

/** The complexity of a brief by rule (docs/concierge.md): no contact simple, up to 5 contacted standard, more complex. */
export function complexityOf(contact: boolean, providers: number): WorkflowComplexity {
  if (!contact) return 'simple';
  return providers <= 5 ? 'standard' : 'complex';
}

function contactOf(row: ContactRow): ConciergeContact {
  return {
    listing_id: row.listing_id,
    name: row.name,
    email: row.email,
    status: row.status === 'sending' ? 'pending' : row.status,
    message_id: row.message_id,
    sent_at: row.sent_at === null ? null : Number(row.sent_at),
    reply: row.reply
      ? {
          received_at: row.reply.received_at,
          from: row.reply.from,
          subject: row.reply.subject,
          reading: row.reading,
        }
      : null,
  };
}

export function workflowOf(row: WorkflowRow, contacts: ContactRow[]): Workflow {
  const h = row.hints;
  return {
    id: row.id,
    object: 'workflow',
    status: row.status,
    stage: row.status === 'running' ? row.stage : null,
    brief: row.brief,
    location: h.location ?? null,
    near: h.near ?? null,
    radius_km: h.radius_km ?? null,
    country: (h.country ?? null) as Workflow['country'],
    activity: h.activity ?? null,
    max_providers: h.max_providers ?? null,
    contact: row.contact,
    sender:
      row.from_address && row.sending_domain_id
        ? {
            sending_domain_id: row.sending_domain_id,
            address: row.from_address,
            name: row.from_name ?? row.from_address,
          }
        : null,
    respond_by: row.respond_by === null ? null : iso(Number(row.respond_by)),
    deadline: h.deadline ?? null,
    complexity: row.complexity,
    price: formatEur(Number(row.price_nano)),
    currency: 'EUR',
    webhook_endpoint_id: row.webhook_endpoint_id,
    understanding: row.understanding,
    shortlist: row.shortlist,
    contacts: contacts.sort((a, b) => a.position - b.position).map(contactOf),
    steps: row.steps,
    result: row.result,
    error: row.error,
    metadata: row.metadata,
    created: Number(row.created),
    started_at: row.started_at === null ? null : Number(row.started_at),
    completed_at: row.completed_at === null ? null : Number(row.completed_at),
  };
}

export interface WorkflowOptions {
  agent: Agent;
  webhooks: WebhookDelivery;
  logger: Logger;
  /** The origin of listing URLs in the directory's answers. */
  baseUrl: string;
  /** Whether the runtime key can be kept (a secrets key exists). */
  runtimeAvailable: boolean;
}

type StageJob = { id: string; stage: WorkflowStage; early?: boolean };

export class Workflows {
  readonly #db: Db;
  readonly #jobs: Jobs;
  readonly #options: WorkflowOptions;
  #mail: ConciergeMail | undefined;

  constructor(db: Db, jobs: Jobs, options: WorkflowOptions) {
    this.#db = db;
    this.#jobs = jobs;
    this.#options = options;
  }

  /** The Sales mail path, once the service has one. */
  set mail(mail: ConciergeMail | undefined) {
    this.#mail = mail;
  }

  async start(): Promise<void> {
    await this.#jobs.define<StageJob>(STAGE, (job, ctx) => this.#onStage(job, ctx), {
      concurrency: 8,
      retryLimit: STAGE_RETRIES,
      retryDelaySeconds: 2,
      retryDelayMaxSeconds: 300,
      expireInSeconds: 900,
    });
    await this.#jobs.define<{ contactId: string }>(READ, (job, ctx) => this.#onRead(job.contactId, ctx), {
      concurrency: 4,
      retryLimit: STAGE_RETRIES,
      retryDelaySeconds: 2,
      retryDelayMaxSeconds: 300,
    });
  }

  // ----------------------------------------------------------------------------------------
  // The API

  async create(
    principal: Principal,
    input: CreateConciergeBriefRequest,
    requestId: string,
  ): Promise<Workflow> {
    if (!this.#options.runtimeAvailable) {
      throw new ApiError(
        503,
        'secrets_unavailable',
        'This deployment has no SECRETS_ENCRYPTION_KEY, so the concierge cannot keep its runtime key; ask its operator to set one.',
        { headers: { 'Retry-After': '3600', 'retry-after-ms': '3600000' } },
      );
    }
    const brief = input.brief.trim();
    if (brief.length < 10) {
      throw new BadRequestError(
        'brief_too_short',
        'The brief needs at least 10 characters besides spaces: say what you need, where and by when.',
        {
          param: 'brief',
        },
      );
    }
    if (input.location !== undefined && input.near !== undefined) {
      throw new BadRequestError('location_and_near', 'Give `location` or `near`, not both.', {
        param: 'near',
      });
    }
    if (input.radius_km !== undefined && input.location === undefined && input.near === undefined) {
      throw new BadRequestError('radius_without_place', '`radius_km` needs `location` or `near`.', {
        param: 'radius_km',
      });
    }
    const contact = input.contact ?? input.sending_domain_id !== undefined;
    if (contact && input.sending_domain_id === undefined) {
      throw new BadRequestError(
        'sending_domain_required',
        'Contacting providers needs `sending_domain_id`, a verified sending domain to write from.',
        {
          param: 'sending_domain_id',
        },
      );
    }
    const now = nowSeconds();
    let respondBy: number | null = null;
    if (input.respond_by !== undefined) {
      if (!contact) {
        throw new BadRequestError(
          'respond_by_without_contact',
          '`respond_by` is for briefs that contact providers (`contact: true`).',
          {
            param: 'respond_by',
          },
        );
      }
      const at = Date.parse(input.respond_by);
      if (!Number.isFinite(at)) {
        throw new BadRequestError('validation_failed', '`respond_by` must be an RFC 3339 date-time.', {
          param: 'respond_by',
        });
      }
      respondBy = Math.floor(at / 1000);
      if (respondBy <= now) {
        throw new BadRequestError(
          'respond_by_in_past',
          `\`respond_by\` (${input.respond_by}) is not in the future.`,
          {
            param: 'respond_by',
          },
        );
      }
      if (respondBy > now + MAX_RESPOND_DAYS * 86_400) {
        throw new BadRequestError(
          'respond_by_too_far',
          `\`respond_by\` may be at most ${MAX_RESPOND_DAYS} days ahead.`,
          {
            param: 'respond_by',
          },
        );
      }
    } else if (contact) {
      respondBy = now + DEFAULT_RESPOND_HOURS * 3600;
    }
    await this.#assertSubscribed(principal.accountId);
    if (input.webhook_endpoint_id !== undefined) {
      const [endpoint] = await this.#db.query(
        'select 1 from webhook_endpoints where id = $1 and project_id = $2',
        [input.webhook_endpoint_id, principal.projectId],
      );
      if (!endpoint) {
        throw new NotFoundError(
          'webhook_endpoint_not_found',
          `No webhook endpoint ${input.webhook_endpoint_id} in this project.`,
          {
            param: 'webhook_endpoint_id',
          },
        );
      }
    }
    let from: { address: string; name: string } | null = null;
    if (contact) {
      const mail = this.#mail;
      if (mail === undefined) {
        throw new ApiError(
          503,
          'mail_unavailable',
          'This deployment cannot send mail yet; try `contact: false`.',
          {
            headers: { 'Retry-After': '60', 'retry-after-ms': '60000' },
          },
        );
      }
      const domain = await mail
        .verifiedDomain(principal.projectId, input.sending_domain_id ?? '')
        .catch((err: unknown) => {
          if (err instanceof ApiError)
            throw new ApiError(err.status, err.code, err.message, { param: 'sending_domain_id' });
          throw err;
        });
      from = {
        address: `${input.from_local_part ?? 'concierge'}@${domain.domain}`,
        name: input.from_name ?? domain.fromName ?? domain.domain,
      };
    }
    const hints: Hints = {
      ...(input.location !== undefined ? { location: input.location } : {}),
      ...(input.near !== undefined ? { near: input.near } : {}),
      ...(input.radius_km !== undefined ? { radius_km: input.radius_km } : {}),
      ...(input.country !== undefined ? { country: input.country } : {}),
      ...(input.activity !== undefined ? { activity: input.activity } : {}),
      ...(input.max_providers !== undefined ? { max_providers: input.max_providers } : {}),
      ...(input.deadline !== undefined ? { deadline: input.deadline } : {}),
    };
    const resolved = await this.#resolvePlace(hints);
    if (resolved) hints.resolved = resolved;
    // the providers to contact, as planning will read them: the hint, the number the brief asks for, else 5
    const providers =
      input.max_providers ??
      countIn(brief, tradeOf(brief, input.activity)?.activity) ??
      DEFAULT_MAX_PROVIDERS;
    const complexity = complexityOf(contact, providers);
    const price = PRICES_NANO[complexity];
    const id = newId('wf');
    const accepted = step(
      null,
      'accepted',
      `Accepted as ${complexity} (0.50 EUR simple, 2.00 EUR standard, 5.00 EUR complex, billed only on success): ${
        contact
          ? `up to ${providers} providers to contact`
          : "a comparison on the directory's data, no provider contacted"
      }.`,
    );
    return this.#db.transaction(async (tx) => {
      const [row] = await tx.query<WorkflowRow>(
        `insert into concierge_workflows (id, account_id, project_id, key_id, brief, hints, contact, sending_domain_id,
           from_address, from_name, respond_by, complexity, price_nano, webhook_endpoint_id, steps, metadata, request_id, created)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) returning *`,
        [
          id,
          principal.accountId,
          principal.projectId,
          principal.keyId,
          input.brief,
          JSON.stringify(hints),
          contact,
          contact ? (input.sending_domain_id ?? null) : null,
          from?.address ?? null,
          from?.name ?? null,
          respondBy,
          complexity,
          price,
          input.webhook_endpoint_id ?? null,
          JSON.stringify([accepted]),
          JSON.stringify(input.metadata ?? {}),
          requestId,
          now,
        ],
      );
      await this.#jobs.send<StageJob>(STAGE, { id, stage: 'planning' }, { tx });
      return workflowOf(row!, []);
    });
  }

  async #assertSubscribed(accountId: string): Promise<void> {
    const [active] = await this.#db.query(
      `select 1 from subscriptions where account_id = $1 and plan = 'concierge' and status = 'active'`,
      [accountId],
    );
    if (!active) {
      throw new PermissionDeniedError(
        'subscription_required',
        'Briefs need the account\'s Concierge plan (99 EUR a month): subscribe with POST /v1/subscriptions {"plan": "concierge"} on the Model API.',
      );
    }
  }

  async #resolvePlace(hints: Hints): Promise<ResolvedPlace | null> {
    if (hints.location !== undefined) {
      const found = await geocode(this.#db, hints.location, { country: hints.country, limit: 1 });
      const best = found.data[0];
      if (!best) {
        throw new BadRequestError(
          'location_not_found',
          `No place called '${hints.location}' was found${hints.country ? ` in ${hints.country}` : ''}.`,
          {
            param: 'location',
          },
        );
      }
      return { name: best.formatted, lat: best.lat, lon: best.lon, country: best.country };
    }
    if (hints.near !== undefined) {
      const [lat, lon] = hints.near.split(',').map(Number) as [number, number];
      const at = await reverseGeocode(this.#db, lat, lon, {
        limit: 1,
        now: new Date(),
        baseUrl: this.#options.baseUrl,
      });
      const place = at.place as { name?: string; country?: string } | null;
      return {
        name: place?.name ? `near ${place.name}` : hints.near,
        lat,
        lon,
        country: place?.country ?? hints.country ?? '',
      };
    }
    return null;
  }

  async #contacts(q: Queryable, ids: string[]): Promise<Map<string, ContactRow[]>> {
    const byWorkflow = new Map<string, ContactRow[]>();
    if (ids.length === 0) return byWorkflow;
    const rows = await q.query<ContactRow>(
      'select * from concierge_contacts where workflow_id = any($1) order by position',
      [ids],
    );
    for (const row of rows)
      byWorkflow.set(row.workflow_id, [...(byWorkflow.get(row.workflow_id) ?? []), row]);
    return byWorkflow;
  }

  async #wire(q: Queryable, row: WorkflowRow): Promise<Workflow> {
    return workflowOf(row, (await this.#contacts(q, [row.id])).get(row.id) ?? []);
  }

  async #row(q: Queryable, projectId: string, id: string, lock = false): Promise<WorkflowRow> {
    const [row] = await q.query<WorkflowRow>(
      `select * from concierge_workflows where id = $1 and project_id = $2${lock ? ' for update' : ''}`,
      [id, projectId],
    );
    if (!row)
      throw new NotFoundError('workflow_not_found', `No workflow ${id} in this project.`, { param: 'id' });
    return row;
  }

  /** Reads in one snapshot: a workflow and its contacts as they were at one moment, never a step without its contact's reading. */
  #snapshot<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    return this.#db.transaction(async (tx) => {
      await tx.query('set transaction isolation level repeatable read');
      return fn(tx);
    });
  }

  async get(projectId: string, id: string): Promise<Workflow> {
    return this.#snapshot(async (q) => this.#wire(q, await this.#row(q, projectId, id)));
  }

  async list(
    projectId: string,
    query: { limit: number; cursor: string | undefined; status: Workflow['status'] | undefined },
  ): Promise<Page<Workflow>> {
    const after = decodeCursor(query.cursor);
    if (after !== undefined && (typeof after.k !== 'number' || !Number.isSafeInteger(after.k))) {
      throw new BadRequestError('invalid_cursor', 'The cursor was not issued by this endpoint.', {
        param: 'cursor',
      });
    }
    const { rows, contacts } = await this.#snapshot(async (q) => {
      const rows = await q.query<WorkflowRow>(
        `select * from concierge_workflows where project_id = $1 and ($2::text is null or status = $2)
         and ($3::bigint is null or (created, id) < ($3::bigint, $4::text))
       order by created desc, id desc limit $5`,
        [projectId, query.status ?? null, after?.k ?? null, after?.id ?? '', query.limit + 1],
      );
      return {
        rows,
        contacts: await this.#contacts(
          q,
          rows.slice(0, query.limit).map((r) => r.id),
        ),
      };
    });
    return pageOf(
      rows,
      query.limit,
      (r) => workflowOf(r, contacts.get(r.id) ?? []),
      (r) => ({ k: Number(r.created), id: r.id }),
    );
  }

  async cancel(projectId: string, id: string): Promise<Workflow> {
    return this.#db.transaction(async (tx) => {
      const before = await this.#row(tx, projectId, id, true);
      if (isFinal(before.status)) {
        throw new ConflictError(
          'workflow_finished',
          `The workflow is already ${before.status}; only a queued or running workflow can be cancelled.`,
        );
      }
      const now = nowSeconds();
      const stopped = await tx.query<{ id: string }>(
        `update concierge_contacts set status = 'cancelled' where workflow_id = $1 and status = 'pending' returning id`,
        [id],
      );
      const where = before.status === 'running' ? `while ${before.stage ?? 'running'}` : 'before it started';
      const [row] = await tx.query<WorkflowRow>(
        `update concierge_workflows set status = 'cancelled', stage = null, completed_at = $2, steps = steps || $3::jsonb
         where id = $1 returning *`,
        [
          id,
          now,
          JSON.stringify([
            step(
              null,
              'cancelled',
              `Cancelled ${where}; not billed.${stopped.length > 0 ? ` ${stopped.length} request(s) for a quote not sent.` : ''}`,
            ),
          ]),
        ],
      );
      const workflow = await this.#wire(tx, row!);
      await this.#emit(tx, row!, 'workflow.cancelled', workflow);
      return workflow;
    });
  }

  async #emit(
    tx: Queryable,
    row: WorkflowRow,
    type: 'workflow.completed' | 'workflow.failed' | 'workflow.cancelled',
    workflow: Workflow,
  ) {
    await this.#options.webhooks.emit(row.project_id, type, workflow, {
      tx,
      ...(row.webhook_endpoint_id ? { endpointId: row.webhook_endpoint_id } : {}),
    });
  }

  // ----------------------------------------------------------------------------------------
  // The stages

  async #load(id: string): Promise<WorkflowRow | undefined> {
    const [row] = await this.#db.query<WorkflowRow>('select * from concierge_workflows where id = $1', [id]);
    return row;
  }

  async #onStage(job: StageJob, ctx: JobContext): Promise<void> {
    let row = await this.#load(job.id);
    if (!row || isFinal(row.status)) return;
    if (job.stage === 'planning' && row.status === 'queued') {
      const [started] = await this.#db.query<WorkflowRow>(
        `update concierge_workflows set status = 'running', stage = 'planning', started_at = $2
         where id = $1 and status = 'queued' returning *`,
        [row.id, nowSeconds()],
      );
      if (!started) return;
      row = started;
    }
    if (row.status !== 'running' || row.stage !== job.stage) return;
    try {
      if (job.stage === 'planning') await this.#plan(row, ctx);
      else if (job.stage === 'searching') await this.#search(row, ctx);
      else if (job.stage === 'contacting') await this.#contact(row);
      else if (job.stage === 'awaiting_replies') await this.#stopWaiting(row, job.early === true);
      else await this.#compare(row, ctx);
    } catch (err) {
      const permanent =
        err instanceof AgentFailed || (err instanceof ApiError && err.status < 500 && err.status !== 429);
      if (!permanent && ctx.retryCount < STAGE_RETRIES) throw err;
      this.#options.logger.warn({ err, workflow: row.id, stage: job.stage }, 'concierge workflow failed');
      const code = err instanceof AgentFailed || err instanceof ApiError ? err.code : 'agent_unavailable';
      await this.fail(
        row.id,
        code,
        err instanceof Error ? err.message : String(err),
        err instanceof ApiError || err instanceof AgentFailed ? err.status : 502,
      );
    }
  }

  /**
   * Moves a running workflow from one stage to the next with what the stage found, its steps and
   * the next stage's job, in one transaction; false when it was no longer in `from` (done twice,
   * cancelled).
   */
  async #advance(
    tx: Queryable,
    id: string,
    from: WorkflowStage,
    to: WorkflowStage | null,
    steps: WorkflowStep[],
    set: Record<string, unknown> = {},
    job: { startAfter?: Date } = {},
  ): Promise<boolean> {
    const columns = Object.keys(set);
    const [moved] = await tx.query<{ id: string }>(
      `update concierge_workflows set stage = $3, steps = steps || $4::jsonb${columns.map((c, i) => `, ${c} = $${i + 5}`).join('')}
       where id = $1 and status = 'running' and stage = $2 returning id`,
      [id, from, to, JSON.stringify(steps), ...columns.map((c) => set[c])],
    );
    if (!moved) return false;
    if (to !== null)
      await this.#jobs.send<StageJob>(
        STAGE,
        { id, stage: to },
        { tx, ...(job.startAfter ? { startAfter: job.startAfter } : {}) },
      );
    return true;
  }

  async #agent(row: WorkflowRow, call: Parameters<Agent['run']>[0]): Promise<AgentRun> {
    const run = await this.#options.agent.run(call);
    // the platform's own cost of this workflow, kept for the operator (never billed to the customer)
    await this.#db.query(
      'update concierge_workflows set agent_steps = agent_steps + $2, agent_cost_nano = agent_cost_nano + $3 where id = $1',
      [row.id, run.steps, run.costNano],
    );
    return run;
  }

  async #plan(row: WorkflowRow, ctx: JobContext): Promise<void> {
    const understanding = understand(
      row.brief,
      row.hints,
      row.hints.resolved ?? null,
      new Date(Number(row.created) * 1000),
    );
    const run = await this.#agent(row, {
      instructions: INSTRUCTIONS,
      input: row.brief,
      tools: [
        {
          type: 'function',
          name: 'read_brief',
          description:
            'What the brief asks for: its language, the trade, the place, how many providers, the deadline.',
          parameters: { type: 'object', properties: {}, additionalProperties: false },
        },
      ],
      toolChoice: { type: 'function', name: 'read_brief' },
      answer: () => JSON.stringify(understanding),
      seed: seedOf(row.id),
      metadata: { workflow_id: row.id, stage: 'planning' },
      signal: ctx.signal,
    });
    const u = understanding;
    const message = `Read the brief (${u.language}): ${
      u.trade ? `${u.trade.term} (${u.trade.activity})` : 'no trade the directory knows'
    }${u.place ? ` near ${u.place.name} within ${u.radius_km} km` : ', no place'}; ${u.max_providers} provider(s)${
      u.deadline ? `; deadline ${u.deadline}` : ''
    }${u.requirements.length > 0 ? `; asks for ${u.requirements.join(', ')}` : ''}.`;
    await this.#db.transaction((tx) =>
      this.#advance(
        tx,
        row.id,
        'planning',
        'searching',
        [step('planning', 'planned', message, run.responseId)],
        {
          understanding: JSON.stringify(understanding),
        },
      ),
    );
  }

  async #search(row: WorkflowRow, ctx: JobContext): Promise<void> {
    const u = row.understanding;
    if (!u?.trade) {
      throw new AgentFailed(
        'trade_not_understood',
        'The brief names no trade the directory knows; say what kind of provider you need, or give `activity`.',
        400,
      );
    }
    const where = row.hints.near ?? u.place?.name.split(',')[0] ?? null;
    // written so that any model, the built-in reference engine too, calls the search with these words
    const input = `Find ${ENGLISH_NUMBERS[SEARCH_LIMIT] ?? SEARCH_LIMIT} ${u.trade.term}${where ? ` near ${where}` : ''}`;
    const tool: ResponseTool = {
      type: 'mcp',
      server_label: 'eurus',
      allowed_tools: ['search_directory'],
      require_approval: 'never',
    };
    const run = await this.#agent(row, {
      instructions: `${INSTRUCTIONS}\n\nThe brief: ${row.brief}`,
      input,
      tools: [tool],
      toolChoice: { type: 'mcp', server_label: 'eurus', name: 'search_directory' },
      seed: seedOf(row.id),
      metadata: { workflow_id: row.id, stage: 'searching' },
      signal: ctx.signal,
    });
    const call = run.mcpCalls.find((c) => c.name === 'search_directory');
    if (!call || call.output === null) {
      throw new Error(`The agent's search failed: ${call?.error ?? 'it made no search'}`);
    }
    const hits =
      (JSON.parse(call.output) as { results?: { id: string; distance_km: number | null }[] }).results ?? [];
    const profiles = await this.#db.query<{ profile: ListingRecord }>(
      'select profile from listings where id = any($1)',
      [hits.map((h) => h.id)],
    );
    const byId = new Map(profiles.map((p) => [p.profile.id, p.profile]));
    const suppressed = row.contact
      ? new Set(
          (
            await this.#db.query<{ email: string }>(
              'select email from suppressions where account_id = $1 and email = any($2)',
              [row.account_id, profiles.map((p) => (p.profile.email ?? '').toLowerCase())],
            )
          ).map((s) => s.email),
        )
      : new Set<string>();
    const kept: StoredCandidate[] = [];
    const dropped = { trade: 0, country: 0, distance: 0, email: 0, suppressed: 0 };
    for (const hit of hits) {
      const listing = byId.get(hit.id);
      if (!listing) continue;
      const activity = listing.activities.find((a) => a.code.startsWith(u.trade?.activity ?? ''));
      if (!activity) {
        dropped.trade++;
        continue;
      }
      if (row.hints.country !== undefined && listing.address.country !== row.hints.country) {
        dropped.country++;
        continue;
      }
      const distance = u.place
        ? haversineKm(u.place.lat, u.place.lon, listing.geo.lat, listing.geo.lon)
        : null;
      if (distance !== null && distance > u.radius_km) {
        dropped.distance++;
        continue;
      }
      if (row.contact && !listing.email) {
        dropped.email++;
        continue;
      }
      if (row.contact && suppressed.has((listing.email ?? '').toLowerCase())) {
        dropped.suppressed++;
        continue;
      }
      kept.push({
        listing_id: listing.id,
        name: listing.name,
        city: listing.address.city,
        distance_km: distance === null ? null : Math.round(distance * 10) / 10,
        rating: listing.rating,
        review_count: listing.review_count,
        claimed: listing.claimed,
        response_hours:
          listing.response_time_median_minutes === null
            ? null
            : Math.round(listing.response_time_median_minutes / 6) / 10,
        email: listing.email,
        activity: activity.code,
      });
    }
    const args = Object.entries(call.arguments)
      .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
      .join(', ');
    const leftOut = Object.entries(dropped)
      .filter(([, n]) => n > 0)
      .map(
        ([why, n]) =>
          `${n} ${{ trade: 'of another trade', country: 'in another country', distance: `beyond ${u.radius_km} km`, email: 'without an email address', suppressed: 'on your suppression list' }[why]}`,
      );
    const steps = [
      step(
        'searching',
        'searched',
        `The agent searched the directory (${args}): ${hits.length} result(s), ${kept.length} fit the brief${
          leftOut.length > 0 ? ` (left out: ${leftOut.join(', ')})` : ''
        }.`,
        run.responseId,
      ),
    ];
    if (kept.length === 0) {
      throw new AgentFailed(
        'no_providers_found',
        `No provider in the directory fits the brief. ${steps[0]?.message ?? ''}`,
        400,
      );
    }
    const shortlist: ConciergeShortlistEntry[] = kept.slice(0, u.max_providers).map((c) => ({
      listing_id: c.listing_id,
      name: c.name,
      city: c.city,
      distance_km: c.distance_km,
      rating: c.rating,
      review_count: c.review_count,
      claimed: c.claimed,
      reasons: [
        u.trade?.name ?? '',
        ...(c.distance_km !== null
          ? [`${c.distance_km} km from ${u.place?.name.split(',')[0] ?? 'the place'}`]
          : []),
        c.rating !== null ? `Rated ${c.rating} from ${c.review_count} reviews` : 'No reviews yet',
        ...(c.claimed ? ['Claimed listing'] : []),
        ...(c.response_hours !== null && c.response_hours <= 24
          ? [`Usually answers within ${Math.ceil(c.response_hours)} hours`]
          : []),
      ].filter((r) => r !== ''),
    }));
    steps.push(
      step(
        'searching',
        'shortlisted',
        `Shortlisted ${shortlist.length} of ${kept.length}, in the search's ranking (relevance and trust signals): ${shortlist
          .map((s) => s.name)
          .join(', ')}.`,
      ),
    );
    await this.#db.transaction(async (tx) => {
      const moved = await this.#advance(
        tx,
        row.id,
        'searching',
        row.contact ? 'contacting' : 'comparing',
        steps,
        {
          candidates: JSON.stringify(kept.slice(0, u.max_providers)),
          shortlist: JSON.stringify(shortlist),
        },
      );
      if (!moved || !row.contact) return;
      let position = 0;
      for (const c of kept.slice(0, u.max_providers)) {
        await tx.query(
          `insert into concierge_contacts (id, workflow_id, account_id, position, listing_id, name, email, token)
           values ($1, $2, $3, $4, $5, $6, $7, $8) on conflict (workflow_id, listing_id) do nothing`,
          [
            newId('cq'),
            row.id,
            row.account_id,
            position++,
            c.listing_id,
            c.name,
            (c.email ?? '').toLowerCase(),
            token(),
          ],
        );
      }
    });
  }

  async #contact(row: WorkflowRow): Promise<void> {
    const mail = this.#mail;
    if (mail === undefined) throw new AgentFailed('mail_unavailable', 'This deployment cannot send mail.');
    if (row.sending_domain_id === null || row.from_address === null)
      throw new AgentFailed('mail_unavailable', 'No sending domain.');
    const domain = await mail.verifiedDomain(row.project_id, row.sending_domain_id);
    const u = row.understanding;
    const contacts = await this.#db.query<ContactRow>(
      `select * from concierge_contacts where workflow_id = $1 and status in ('pending', 'sending') order by position`,
      [row.id],
    );
    for (const contact of contacts) {
      // claimed only while the workflow runs: after a cancel, nothing more goes out
      const [claimed] = await this.#db.query<ContactRow>(
        `update concierge_contacts c set status = 'sending' where c.id = $1 and c.status in ('pending', 'sending')
           and exists (select 1 from concierge_workflows w where w.id = c.workflow_id and w.status = 'running')
         returning *`,
        [contact.id],
      );
      if (!claimed) continue;
      if (await isSuppressed(this.#db, row.account_id, contact.email, row.from_address ?? '')) {
        await this.#contactOutcome(row.id, contact.id, { status: 'suppressed' }, [
          step(
            'contacting',
            'not_contacted',
            `Did not write to ${contact.name}: ${contact.email} is on your suppression list.`,
          ),
        ]);
        continue;
      }
      const messageId = `<${contact.id}.0@${domain.domain}>`;
      const address = `q-${contact.token}@${domain.replyDomain}`;
      const { subject, text } = requestForQuote({
        language: u?.language ?? 'en',
        providerName: contact.name,
        fromName: row.from_name ?? row.from_address,
        brief: row.brief,
        place: u?.place?.name.split(',')[0] ?? null,
        deadline: u?.deadline ?? null,
        respondBy: iso(Number(row.respond_by ?? nowSeconds()))
          .replace('T', ' ')
          .replace(/:00Z$/, ' UTC'),
        unsubscribeUrl: mail.unsubscribeUrl(contact),
      });
      try {
        await mail.send({
          from: { name: row.from_name ?? undefined, address: row.from_address },
          to: { name: contact.name, address: contact.email },
          subject,
          text,
          messageId,
          envelopeFrom: address,
          replyTo: address,
          listUnsubscribe: { url: mail.unsubscribeUrl(contact) },
          dkim: domain.dkim,
        });
      } catch (err) {
        if (err instanceof MailSendError && err.permanent) {
          await this.#contactOutcome(row.id, contact.id, { status: 'failed', failure: err.message }, [
            step(
              'contacting',
              'not_contacted',
              `The mail server refused the request to ${contact.name} (${contact.email}): ${err.message}`,
            ),
          ]);
          continue;
        }
        throw err;
      }
      await this.#contactOutcome(
        row.id,
        contact.id,
        { status: 'sent', message_id: messageId, sent_at: nowSeconds() },
        [step('contacting', 'contacted', `Asked ${contact.name} (${contact.email}) for a quote.`)],
      );
    }
    const [sent] = await this.#db.query<{ n: number }>(
      `select count(*)::int as n from concierge_contacts where workflow_id = $1 and status in ('sent', 'replied', 'bounced')`,
      [row.id],
    );
    if ((sent?.n ?? 0) === 0)
      throw new AgentFailed('no_provider_contacted', 'No shortlisted provider could be written to.', 400);
    const respondBy = new Date(Number(row.respond_by ?? nowSeconds()) * 1000);
    await this.#db.transaction((tx) =>
      this.#advance(
        tx,
        row.id,
        'contacting',
        'awaiting_replies',
        [step('contacting', 'note', `Waiting for answers until ${iso(Number(row.respond_by))}.`)],
        {},
        { startAfter: respondBy },
      ),
    );
    await this.#maybeStopWaiting(row.id);
  }

  async #contactOutcome(
    workflowId: string,
    contactId: string,
    set: Record<string, unknown>,
    steps: WorkflowStep[],
  ) {
    const columns = Object.keys(set);
    await this.#db.transaction(async (tx) => {
      await tx.query(
        `update concierge_contacts set ${columns.map((c, i) => `${c} = $${i + 2}`).join(', ')} where id = $1`,
        [contactId, ...columns.map((c) => set[c])],
      );
      await tx.query('update concierge_workflows set steps = steps || $2::jsonb where id = $1', [
        workflowId,
        JSON.stringify(steps),
      ]);
    });
  }

  /** Every contacted provider has answered (or bounced): the comparison need not wait for `respond_by`. */
  async #maybeStopWaiting(id: string): Promise<void> {
    const [open] = await this.#db.query<{ n: number }>(
      `select count(*)::int as n from concierge_contacts where workflow_id = $1
         and (status in ('pending', 'sending') or (status = 'sent') or (status = 'replied' and reading is null))`,
      [id],
    );
    if ((open?.n ?? 1) > 0) return;
    await this.#jobs.send<StageJob>(STAGE, { id, stage: 'awaiting_replies', early: true });
  }

  async #stopWaiting(row: WorkflowRow, early: boolean): Promise<void> {
    if (early) {
      const [open] = await this.#db.query<{ n: number }>(
        `select count(*)::int as n from concierge_contacts where workflow_id = $1 and status in ('pending', 'sending', 'sent')`,
        [row.id],
      );
      if ((open?.n ?? 1) > 0) return;
    }
    await this.#db.transaction((tx) =>
      this.#advance(tx, row.id, 'awaiting_replies', 'comparing', [
        step(
          'awaiting_replies',
          'note',
          early
            ? 'Every provider contacted has answered.'
            : `Stopped waiting at ${iso(Number(row.respond_by ?? nowSeconds()))}.`,
        ),
      ]),
    );
  }

  async #compare(row: WorkflowRow, ctx: JobContext): Promise<void> {
    const u = row.understanding;
    const contacts = (await this.#contacts(this.#db, [row.id])).get(row.id) ?? [];
    const steps: WorkflowStep[] = [];
    for (const c of contacts) {
      if (c.reply && c.reading === null) {
        // an answer that came in as the waiting ended: read now, in code
        c.reading = readQuote(c.reply.text, new Date(c.reply.received_at * 1000));
        await this.#db.query('update concierge_contacts set reading = $2 where id = $1 and reading is null', [
          c.id,
          JSON.stringify(c.reading),
        ]);
        steps.push(step('comparing', 'reply_read', readingMessage(c.name, c.reading)));
      }
    }
    const outcomes = new Map<string, Outcome>(
      contacts.map((c) => [
        c.listing_id,
        {
          contacted: c.sent_at !== null,
          sent_at: c.sent_at === null ? null : Number(c.sent_at),
          replied_at: c.reply?.received_at ?? null,
          reading: c.reading,
        },
      ]),
    );
    const candidates = row.candidates.filter((c) => !row.contact || outcomes.get(c.listing_id)?.contacted);
    const result = compare(candidates, outcomes, {
      contact: row.contact,
      language: u?.language ?? 'en',
      deadline: u?.deadline ?? null,
      respondBy: row.respond_by === null ? null : iso(Number(row.respond_by)),
      tradeName: u?.trade?.name ?? null,
      placeName: u?.place?.name ?? null,
    });
    const run = await this.#agent(row, {
      instructions: INSTRUCTIONS,
      input: `Compare the ${candidates.length} providers for this brief and recommend one: ${row.brief}`,
      tools: [
        {
          type: 'function',
          name: 'compare_providers',
          description:
            'Ranks the providers on price, rating, distance, availability and answer time, with reasons.',
          parameters: { type: 'object', properties: {}, additionalProperties: false },
        },
      ],
      toolChoice: { type: 'function', name: 'compare_providers' },
      answer: () => JSON.stringify(result),
      seed: seedOf(row.id),
      metadata: { workflow_id: row.id, stage: 'comparing' },
      signal: ctx.signal,
    });
    const quoted = result.providers.filter((p) => p.quote !== null).length;
    steps.push(
      step(
        'comparing',
        'compared',
        row.contact
          ? `Compared ${result.providers.length} providers, ${quoted} with a quote; ${result.no_answer.length} did not answer.`
          : `Compared ${result.providers.length} providers on the directory's data.`,
        run.responseId,
      ),
    );
    await this.#db.transaction(async (tx) => {
      const now = nowSeconds();
      const [done] = await tx.query<WorkflowRow>(
        `update concierge_workflows set status = 'succeeded', stage = null, result = $2, completed_at = $3,
           steps = steps || $4::jsonb
         where id = $1 and status = 'running' and stage = 'comparing' returning *`,
        [row.id, JSON.stringify(result), now, JSON.stringify(steps)],
      );
      if (!done) return;
      await recordUsage(
        tx,
        { accountId: done.account_id, projectId: done.project_id, keyId: done.key_id, scopes: [], plan: '' },
        {
          service: 'directory',
          model: 'concierge',
          endpoint: '/v1/concierge/briefs',
          units: 1,
          costNano: Number(done.price_nano),
          status: 200,
          latencyMs: (now - Number(done.created)) * 1000,
        },
      );
      await this.#emit(tx, done, 'workflow.completed', await this.#wire(tx, done));
    });
  }

  /** Ends a queued or running workflow as failed (not billed), with the error and the event. */
  async fail(id: string, code: string, message: string, status = 502): Promise<void> {
    await this.#db.transaction(async (tx) => {
      const [row] = await tx.query<WorkflowRow>(
        'select * from concierge_workflows where id = $1 for update',
        [id],
      );
      if (!row || isFinal(row.status)) return;
      const error = new ApiError(status, code, message).body(row.request_id).error;
      await tx.query(
        `update concierge_contacts set status = 'cancelled' where workflow_id = $1 and status = 'pending'`,
        [id],
      );
      const [failed] = await tx.query<WorkflowRow>(
        `update concierge_workflows set status = 'failed', stage = null, error = $2, completed_at = $3, steps = steps || $4::jsonb
         where id = $1 returning *`,
        [
          id,
          JSON.stringify(error),
          nowSeconds(),
          JSON.stringify([step(row.stage, 'failed', `Failed: ${message} Not billed.`)]),
        ],
      );
      await this.#emit(tx, failed!, 'workflow.failed', await this.#wire(tx, failed!));
    });
  }

  // ----------------------------------------------------------------------------------------
  // Answers

  /** Whether an inbound message is an answer to (or a bounce of) one of our requests for quotes. */
  owns(mail: InboundMail): boolean {
    if (mail.recipients.some((r) => /^q-[a-z2-7]{20}@/.test(r))) return true;
    const ids = [mail.inReplyTo, ...mail.references, mail.bounce?.originalMessageId].filter(
      (x): x is string => !!x,
    );
    return ids.some((x) => x.startsWith('<cq_'));
  }

  /** Stores the first answer of a provider (or a bounce) and has it read; resolves once stored. */
  async onMail(mail: InboundMail): Promise<void> {
    const tokenOf = mail.recipients
      .map((r) => /^q-([a-z2-7]{20})@/.exec(r)?.[1])
      .find((t) => t !== undefined);
    const ids = [mail.inReplyTo, ...mail.references, mail.bounce?.originalMessageId].filter(
      (x): x is string => !!x,
    );
    const [contact] = tokenOf
      ? await this.#db.query<ContactRow>('select * from concierge_contacts where token = $1', [tokenOf])
      : await this.#db.query<ContactRow>(
          'select * from concierge_contacts where message_id = any($1) limit 1',
          [ids],
        );
    if (!contact) {
      throw new InboundRejected(550, '5.1.1 no such request for a quote');
    }
    if (mail.kind === 'auto_reply') return; // an out-of-office is no answer
    const now = nowSeconds();
    if (mail.kind === 'bounce') {
      await this.#db.transaction(async (tx) => {
        const [bounced] = await tx.query(
          `update concierge_contacts set status = 'bounced', failure = $2 where id = $1 and status = 'sent' returning id`,
          [contact.id, mail.bounce?.diagnostic ?? mail.classifiedBy],
        );
        if (!bounced) return;
        if (mail.bounce?.permanent) {
          await tx.query(
            `insert into suppressions (id, account_id, email, reason, campaign_id, created)
             values ($1, $2, $3, 'hard_bounce', null, $4) on conflict (account_id, email) do nothing`,
            [newId('sup'), contact.account_id, contact.email, now],
          );
        }
        await tx.query('update concierge_workflows set steps = steps || $2::jsonb where id = $1', [
          contact.workflow_id,
          JSON.stringify([
            step(
              'awaiting_replies',
              'not_contacted',
              `The request to ${contact.name} bounced: ${mail.classifiedBy}.`,
            ),
          ]),
        ]);
      });
      await this.#maybeStopWaiting(contact.workflow_id);
      return;
    }
    const reply = {
      received_at: Math.floor(mail.receivedAt.getTime() / 1000),
      from: mail.from.address,
      subject: mail.subject.slice(0, 300),
      text: mail.text.slice(0, 100_000),
      message_id: mail.messageId,
    };
    const stored = await this.#db.transaction(async (tx) => {
      const [updated] = await tx.query<{ id: string; running: boolean }>(
        `update concierge_contacts c set status = 'replied', reply = $2 where c.id = $1 and c.reply is null
         returning c.id, exists (select 1 from concierge_workflows w where w.id = c.workflow_id and w.status = 'running') as running`,
        [contact.id, JSON.stringify(reply)],
      );
      if (!updated) return false;
      await tx.query('update concierge_workflows set steps = steps || $2::jsonb where id = $1', [
        contact.workflow_id,
        JSON.stringify([
          step('awaiting_replies', 'reply_received', `${contact.name} answered (${mail.from.address}).`),
        ]),
      ]);
      if (updated.running) await this.#jobs.send(READ, { contactId: contact.id }, { tx });
      return true;
    });
    if (!stored)
      this.#options.logger.info(
        { contact: contact.id },
        'a further answer of a provider kept out (the first one counts)',
      );
  }

  // ----------------------------------------------------------------------------------------
  // Opting out: the one-click link of a request for a quote (`/v1/unsubscribe/cq_<id>.<token>`,
  // served by Sales' unsubscribe pages, which ask the concierge who a `cq_` link stands for)

  /** Who an opt-out token of a request for a quote stands for, or null for a token that is not genuine. */
  async optOutOf(link: string): Promise<{
    contactId: string;
    accountId: string;
    email: string;
    fromName: string;
    fromEmail: string;
  } | null> {
    const match = /^(cq_[0-9A-Za-z]{26})\.([a-z2-7]{20})$/.exec(link);
    if (!match) return null;
    const [row] = await this.#db.query<{
      id: string;
      token: string;
      account_id: string;
      email: string;
      from_name: string | null;
      from_address: string | null;
    }>(
      `select c.id, c.token, c.account_id, c.email, w.from_name, w.from_address
         from concierge_contacts c join concierge_workflows w on w.id = c.workflow_id where c.id = $1`,
      [match[1]],
    );
    if (!row || row.from_address === null) return null;
    const given = Buffer.from(match[2] ?? '');
    const expected = Buffer.from(row.token);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    return {
      contactId: row.id,
      accountId: row.account_id,
      email: row.email,
      fromName: row.from_name ?? row.from_address,
      fromEmail: row.from_address,
    };
  }

  /** Puts the address on the account's suppression list (`unsubscribed`): no later brief or campaign writes to it. */
  async optOut(who: { accountId: string; email: string }): Promise<void> {
    await suppress(this.#db, who.accountId, who.email, 'unsubscribed', null);
  }

  async #onRead(contactId: string, ctx: JobContext): Promise<void> {
    const [contact] = await this.#db.query<ContactRow>('select * from concierge_contacts where id = $1', [
      contactId,
    ]);
    if (!contact?.reply || contact.reading !== null) return;
    const row = await this.#load(contact.workflow_id);
    if (!row || row.status !== 'running') return;
    const reading = readQuote(contact.reply.text, new Date(contact.reply.received_at * 1000));
    let run: AgentRun;
    try {
      run = await this.#agent(row, {
        instructions: INSTRUCTIONS,
        input: `Read the answer of ${contact.name} for its price, availability and conditions.`,
        tools: [
          {
            type: 'function',
            name: 'read_reply',
            description:
              "Reads a provider's answer: the price and currency, the first day they can start, their conditions, whether they decline.",
            parameters: {
              type: 'object',
              properties: {
                contact_id: { type: 'string', const: contact.id, description: 'The request answered.' },
              },
              required: ['contact_id'],
              additionalProperties: false,
            },
          },
        ],
        toolChoice: { type: 'function', name: 'read_reply' },
        answer: () =>
          JSON.stringify({ ...reading, provider: contact.name, reply: contact.reply?.text.slice(0, 4000) }),
        seed: seedOf(contact.id),
        metadata: { workflow_id: row.id, stage: 'awaiting_replies' },
        signal: ctx.signal,
      });
    } catch (err) {
      if (ctx.retryCount < STAGE_RETRIES && !(err instanceof AgentFailed)) throw err;
      // the comparison reads it in code then
      this.#options.logger.warn({ err, contact: contactId }, 'reading an answer with the agent failed');
      return;
    }
    await this.#db.transaction(async (tx) => {
      const [read] = await tx.query(
        'update concierge_contacts set reading = $2, reading_response_id = $3 where id = $1 and reading is null returning id',
        [contactId, JSON.stringify(reading), run.responseId],
      );
      if (!read) return;
      await tx.query('update concierge_workflows set steps = steps || $2::jsonb where id = $1', [
        row.id,
        JSON.stringify([
          step('awaiting_replies', 'reply_read', readingMessage(contact.name, reading), run.responseId),
        ]),
      ]);
    });
    await this.#maybeStopWaiting(row.id);
  }
}

function readingMessage(name: string, reading: QuoteReading): string {
  if (reading.declined) return `${name} declined the job.`;
  const parts = [
    reading.amount !== null ? `quoted ${reading.amount} ${reading.currency ?? ''}`.trim() : 'gave no price',
    ...(reading.available_from ? [`available from ${reading.available_from}`] : []),
    ...(reading.conditions.length > 0 ? [reading.conditions.join('; ')] : []),
  ];
  return `${name} ${parts.join(', ')}.`;
}
