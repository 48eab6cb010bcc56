// Where a workflow's state lives: its row in `concierge_workflows`, the providers it writes to in
// `concierge_contacts`, and its next stage's job, written in the transaction that moves it there.
// Every query on the concierge's tables is here; the stages compute, this file keeps.
import { randomBytes } from 'node:crypto';
import type {
  ConciergeContact,
  ConciergeShortlistEntry,
  QuoteReading,
  Workflow,
  WorkflowComplexity,
  WorkflowStage,
  WorkflowStep,
} from '../../generated/directory/client/types.gen.ts';
import { nowSeconds } from '../platform/clock.ts';
import type { Db, Queryable } from '../platform/db.ts';
import { NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { Jobs } from '../platform/jobs.ts';
import type { Candidate } from './compare.ts';
import type { BriefHints, ResolvedPlace, Understanding } from './understand.ts';

export const STAGE = 'concierge.stage';
export const READ = 'concierge.read';

export type StageJob = { id: string; stage: WorkflowStage; early?: boolean };

export interface Hints extends BriefHints {
  /** The `location` or `near` hint as the directory's geocoder resolved it when the brief came in. */
  resolved?: ResolvedPlace | undefined;
}

export interface StoredCandidate extends Candidate {
  email: string | null;
  activity: string | null;
}

/** The model's first answer to a brief, as it gave it (checked again each time it is used). */
export interface BriefReading {
  text: string;
  response_id: string;
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
  billed_nano: number | string | null;
  webhook_endpoint_id: string | null;
  understanding: Understanding | null;
  brief_reading: BriefReading | null;
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

export interface Reply {
  received_at: number;
  from: string;
  subject: string;
  text: string;
  message_id: string | null;
}

export interface ContactRow {
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
  reply: Reply | null;
  reading: QuoteReading | null;
  reading_response_id: string | null;
}

export interface SenderRow {
  id: string;
  token: string;
  account_id: string;
  email: string;
  from_name: string | null;
  from_address: string | null;
}

/** A brief accepted: the row `create` inserts. */
export interface NewWorkflow {
  id: string;
  accountId: string;
  projectId: string;
  keyId: string;
  brief: string;
  hints: Hints;
  contact: boolean;
  sendingDomainId: string | null;
  from: { address: string; name: string } | null;
  respondBy: number | null;
  complexity: WorkflowComplexity;
  priceNano: number;
  webhookEndpointId: string | null;
  steps: WorkflowStep[];
  metadata: Record<string, string>;
  requestId: string;
  created: number;
}

/** What a stage found, written on the workflow as it moves on. */
export interface StageColumns {
  understanding?: Understanding;
  candidates?: StoredCandidate[];
  shortlist?: ConciergeShortlistEntry[];
}

/** A move from one stage to the next: the steps it adds, the columns it sets, the next stage's job. */
export interface Move {
  from: WorkflowStage;
  to: WorkflowStage;
  steps: WorkflowStep[];
  set?: StageColumns;
  /** The next stage's job waits until then (the answers' deadline). */
  startAfter?: Date;
}

/** 20 characters of lower-case base32 (RFC 4648 alphabet), as the sales tokens. */
const token = () => {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  return [...randomBytes(20)].map((b) => alphabet[b & 31]).join('');
};

const json = (value: unknown) => JSON.stringify(value);

export class WorkflowStore {
  readonly #db: Db;
  readonly #jobs: Jobs;

  constructor(db: Db, jobs: Jobs) {
    this.#db = db;
    this.#jobs = jobs;
  }

  get db(): Db {
    return this.#db;
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.#db.transaction(fn);
  }

  /** Reads in one snapshot: a workflow and its contacts as they were at one moment, never a step without its contact's reading. */
  snapshot<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    return this.#db.transaction(async (tx) => {
      await tx.query('set transaction isolation level repeatable read');
      return fn(tx);
    });
  }

  // -- workflows

  async insert(tx: Queryable, w: NewWorkflow): Promise<WorkflowRow> {
    const [row] = await tx.query<WorkflowRow>(
      `insert into concierge_workflows (id, account_id, project_id, key_id, brief, hints, contact, sending_domain_id,
         from_address, from_name, respond_by, complexity, price_nano, webhook_endpoint_id, steps, metadata, request_id, created)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) returning *`,
      [
        w.id,
        w.accountId,
        w.projectId,
        w.keyId,
        w.brief,
        json(w.hints),
        w.contact,
        w.sendingDomainId,
        w.from?.address ?? null,
        w.from?.name ?? null,
        w.respondBy,
        w.complexity,
        w.priceNano,
        w.webhookEndpointId,
        json(w.steps),
        json(w.metadata),
        w.requestId,
        w.created,
      ],
    );
    await this.#jobs.send<StageJob>(STAGE, { id: w.id, stage: 'planning' }, { tx });
    return row!;
  }

  async load(id: string): Promise<WorkflowRow | undefined> {
    const [row] = await this.#db.query<WorkflowRow>('select * from concierge_workflows where id = $1', [id]);
    return row;
  }

  /** A project's workflow, else 404 `workflow_not_found`; `lock` holds it for the transaction. */
  async row(q: Queryable, projectId: string, id: string, lock = false): Promise<WorkflowRow> {
    const [row] = await q.query<WorkflowRow>(
      `select * from concierge_workflows where id = $1 and project_id = $2${lock ? ' for update' : ''}`,
      [id, projectId],
    );
    if (!row)
      throw new NotFoundError('workflow_not_found', `No workflow ${id} in this project.`, { param: 'id' });
    return row;
  }

  async lock(tx: Queryable, id: string): Promise<WorkflowRow | undefined> {
    const [row] = await tx.query<WorkflowRow>('select * from concierge_workflows where id = $1 for update', [
      id,
    ]);
    return row;
  }

  async page(
    q: Queryable,
    projectId: string,
    query: {
      limit: number;
      status: Workflow['status'] | undefined;
      after: { k: number; id: string } | undefined;
    },
  ): Promise<WorkflowRow[]> {
    return q.query<WorkflowRow>(
      `select * from concierge_workflows where project_id = $1 and ($2::text is null or status = $2)
         and ($3::bigint is null or (created, id) < ($3::bigint, $4::text))
       order by created desc, id desc limit $5`,
      [projectId, query.status ?? null, query.after?.k ?? null, query.after?.id ?? '', query.limit + 1],
    );
  }

  /** A queued workflow starts planning; undefined when it was no longer queued. */
  async begin(id: string): Promise<WorkflowRow | undefined> {
    const [started] = await this.#db.query<WorkflowRow>(
      `update concierge_workflows set status = 'running', stage = 'planning', started_at = $2
       where id = $1 and status = 'queued' returning *`,
      [id, nowSeconds()],
    );
    return started;
  }

  /**
   * Moves a running workflow from one stage to the next with what the stage found, its steps and
   * the next stage's job; false when it was no longer in `from` (done twice, cancelled).
   */
  async advance(tx: Queryable, id: string, move: Move): Promise<boolean> {
    const set = Object.entries(move.set ?? {}).filter(([, v]) => v !== undefined);
    const [moved] = await tx.query<{ id: string }>(
      `update concierge_workflows set stage = $3, steps = steps || $4::jsonb${set.map(([c], i) => `, ${c} = $${i + 5}`).join('')}
       where id = $1 and status = 'running' and stage = $2 returning id`,
      [id, move.from, move.to, json(move.steps), ...set.map(([, v]) => json(v))],
    );
    if (!moved) return false;
    await this.#jobs.send<StageJob>(
      STAGE,
      { id, stage: move.to },
      { tx, ...(move.startAfter ? { startAfter: move.startAfter } : {}) },
    );
    return true;
  }

  /** Ends a running workflow in `comparing` as succeeded; undefined when it was no longer there. */
  async succeed(
    tx: Queryable,
    id: string,
    result: NonNullable<Workflow['result']>,
    steps: WorkflowStep[],
    now: number,
    billedNano: number,
  ): Promise<WorkflowRow | undefined> {
    const [done] = await tx.query<WorkflowRow>(
      `update concierge_workflows set status = 'succeeded', stage = null, result = $2, completed_at = $3,
         steps = steps || $4::jsonb, billed_nano = $5
       where id = $1 and status = 'running' and stage = 'comparing' returning *`,
      [id, json(result), now, json(steps), billedNano],
    );
    return done;
  }

  /** Ends a workflow as cancelled or failed; the requests for quotes not yet sent are cancelled. */
  async end(
    tx: Queryable,
    id: string,
    end: { status: 'cancelled' } | { status: 'failed'; error: NonNullable<Workflow['error']> },
    step: (cancelledContacts: number) => WorkflowStep,
  ): Promise<WorkflowRow> {
    const stopped = await tx.query<{ id: string }>(
      `update concierge_contacts set status = 'cancelled' where workflow_id = $1 and status = 'pending' returning id`,
      [id],
    );
    const [row] = await tx.query<WorkflowRow>(
      `update concierge_workflows set status = $2, stage = null, error = $3, completed_at = $4, steps = steps || $5::jsonb
       where id = $1 returning *`,
      [
        id,
        end.status,
        end.status === 'failed' ? json(end.error) : null,
        nowSeconds(),
        json([step(stopped.length)]),
      ],
    );
    return row!;
  }

  async addSteps(q: Queryable, id: string, steps: WorkflowStep[]): Promise<void> {
    await q.query('update concierge_workflows set steps = steps || $2::jsonb where id = $1', [
      id,
      json(steps),
    ]);
  }

  /** Keeps the model's reading of a brief once made; the one kept first when two runs raced. */
  async keepBriefReading(id: string, reading: BriefReading): Promise<BriefReading> {
    const [kept] = await this.#db.query<{ brief_reading: BriefReading | null }>(
      `update concierge_workflows set brief_reading = coalesce(brief_reading, $2::jsonb) where id = $1
       returning brief_reading`,
      [id, json(reading)],
    );
    return kept?.brief_reading ?? reading;
  }

  /** The platform's own cost of a workflow, kept for the operator (never billed to the customer). */
  async addAgentCost(id: string, run: { steps: number; costNano: number }): Promise<void> {
    await this.#db.query(
      'update concierge_workflows set agent_steps = agent_steps + $2, agent_cost_nano = agent_cost_nano + $3 where id = $1',
      [id, run.steps, run.costNano],
    );
  }

  // -- contacts

  async contacts(q: Queryable, ids: string[]): Promise<Map<string, ContactRow[]>> {
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

  async contactsOf(q: Queryable, workflowId: string): Promise<ContactRow[]> {
    return (await this.contacts(q, [workflowId])).get(workflowId) ?? [];
  }

  /** The shortlisted providers to write to, each with a token of its own; a second insert adds nothing. */
  async addContacts(tx: Queryable, row: WorkflowRow, candidates: StoredCandidate[]): Promise<void> {
    let position = 0;
    for (const c of candidates) {
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
  }

  async contact(id: string): Promise<ContactRow | undefined> {
    const [row] = await this.#db.query<ContactRow>('select * from concierge_contacts where id = $1', [id]);
    return row;
  }

  /** The request a reply answers: by the token of its Reply-To address, else by the ids it refers to. */
  async contactAnswered(by: { token: string } | { messageIds: string[] }): Promise<ContactRow | undefined> {
    const [row] =
      'token' in by
        ? await this.#db.query<ContactRow>('select * from concierge_contacts where token = $1', [by.token])
        : await this.#db.query<ContactRow>(
            'select * from concierge_contacts where message_id = any($1) limit 1',
            [by.messageIds],
          );
    return row;
  }

  async unsent(workflowId: string): Promise<ContactRow[]> {
    return this.#db.query<ContactRow>(
      `select * from concierge_contacts where workflow_id = $1 and status in ('pending', 'sending') order by position`,
      [workflowId],
    );
  }

  /** Claims a request for sending, only while its workflow runs: after a cancel, nothing more goes out. */
  async claim(contactId: string): Promise<ContactRow | undefined> {
    const [claimed] = await this.#db.query<ContactRow>(
      `update concierge_contacts c set status = 'sending' where c.id = $1 and c.status in ('pending', 'sending')
         and exists (select 1 from concierge_workflows w where w.id = c.workflow_id and w.status = 'running')
       returning *`,
      [contactId],
    );
    return claimed;
  }

  /** What became of one request for a quote, with its step. */
  async settle(
    workflowId: string,
    contactId: string,
    outcome:
      | { status: 'suppressed' }
      | { status: 'failed'; failure: string }
      | { status: 'sent'; message_id: string; sent_at: number },
    steps: WorkflowStep[],
  ): Promise<void> {
    const columns = Object.entries(outcome);
    await this.#db.transaction(async (tx) => {
      await tx.query(
        `update concierge_contacts set ${columns.map(([c], i) => `${c} = $${i + 2}`).join(', ')} where id = $1`,
        [contactId, ...columns.map(([, v]) => v)],
      );
      await this.addSteps(tx, workflowId, steps);
    });
  }

  async sentCount(workflowId: string): Promise<number> {
    const [sent] = await this.#db.query<{ n: number }>(
      `select count(*)::int as n from concierge_contacts where workflow_id = $1 and status in ('sent', 'replied', 'bounced')`,
      [workflowId],
    );
    return sent?.n ?? 0;
  }

  /** Requests still waiting to go out or for an answer. */
  async awaited(workflowId: string): Promise<number> {
    const [open] = await this.#db.query<{ n: number }>(
      `select count(*)::int as n from concierge_contacts where workflow_id = $1 and status in ('pending', 'sending', 'sent')`,
      [workflowId],
    );
    return open?.n ?? 1;
  }

  /** Every contacted provider has answered (or bounced) and every answer is read: the comparison need not wait for `respond_by`. */
  async endWaitIfAnswered(workflowId: string): Promise<void> {
    const [open] = await this.#db.query<{ n: number }>(
      `select count(*)::int as n from concierge_contacts where workflow_id = $1
         and (status in ('pending', 'sending') or (status = 'sent') or (status = 'replied' and reading is null))`,
      [workflowId],
    );
    if ((open?.n ?? 1) > 0) return;
    await this.#jobs.send<StageJob>(STAGE, { id: workflowId, stage: 'awaiting_replies', early: true });
  }

  /** A bounce of a sent request; false when it was not (or no longer) `sent`. */
  async bounced(tx: Queryable, contactId: string, failure: string): Promise<boolean> {
    const rows = await tx.query(
      `update concierge_contacts set status = 'bounced', failure = $2 where id = $1 and status = 'sent' returning id`,
      [contactId, failure],
    );
    return rows.length > 0;
  }

  /** Keeps a provider's first answer; whether it was the first, and whether its workflow still runs. */
  async replied(tx: Queryable, contactId: string, reply: Reply): Promise<{ running: boolean } | undefined> {
    const [updated] = await tx.query<{ id: string; running: boolean }>(
      `update concierge_contacts c set status = 'replied', reply = $2 where c.id = $1 and c.reply is null
       returning c.id, exists (select 1 from concierge_workflows w where w.id = c.workflow_id and w.status = 'running') as running`,
      [contactId, json(reply)],
    );
    return updated ? { running: updated.running } : undefined;
  }

  /** Keeps what an answer says, once; false when it was read already. */
  async read(
    q: Queryable,
    contactId: string,
    reading: QuoteReading,
    responseId: string | null = null,
  ): Promise<boolean> {
    const rows = await q.query(
      responseId === null
        ? 'update concierge_contacts set reading = $2 where id = $1 and reading is null returning id'
        : 'update concierge_contacts set reading = $2, reading_response_id = $3 where id = $1 and reading is null returning id',
      responseId === null ? [contactId, json(reading)] : [contactId, json(reading), responseId],
    );
    return rows.length > 0;
  }

  async queueRead(tx: Queryable, contactId: string): Promise<void> {
    await this.#jobs.send(READ, { contactId }, { tx });
  }

  /** A request for a quote with its sender, for its opt-out link. */
  async sender(contactId: string): Promise<SenderRow | undefined> {
    const [row] = await this.#db.query<SenderRow>(
      `select c.id, c.token, c.account_id, c.email, w.from_name, w.from_address
         from concierge_contacts c join concierge_workflows w on w.id = c.workflow_id where c.id = $1`,
      [contactId],
    );
    return row;
  }
}
