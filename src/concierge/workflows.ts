// Concierge workflows: a brief becomes a chain of durable jobs, one per stage (planning,
// searching, contacting, awaiting_replies, comparing: one file each in stages/, dispatched by
// STAGES). A stage returns where the workflow goes next with what it found; this runner writes
// that move, its steps and the next stage's job in one transaction. A job that runs twice (a
// worker killed, a retry) finds the workflow already past its stage and does nothing; waiting
// for answers is a job due at `respond_by`, not a sleeping process. The end (succeeded, failed,
// cancelled) is written once, with the usage record of a success and the webhook event in the
// same transaction, so a workflow sends exactly one final event and is billed once, only when it
// succeeded.
import type {
  CreateConciergeBriefRequest,
  Workflow,
  WorkflowStage,
} from '../../generated/directory/client/types.gen.ts';
import type { MailRouting } from '../mail/routing.ts';
import { nowSeconds } from '../platform/clock.ts';
import type { Db, Queryable } from '../platform/db.ts';
import { ApiError, BadRequestError, ConflictError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { JobContext, Jobs } from '../platform/jobs.ts';
import type { Logger } from '../platform/logger.ts';
import { priceText, recordUsage } from '../platform/metering.ts';
import { decodeCursor, type Page, pageOf } from '../platform/pagination.ts';
import type { Principal } from '../platform/principal.ts';
import type { WebhookDelivery } from '../webhooks/delivery.ts';
import type { WebhookStore } from '../webhooks/store.ts';
import {
  type Agent,
  type AgentCall,
  AgentFailed,
  type AgentRun,
  type StructuredCall,
  type StructuredRun,
} from './agent.ts';
import { Answers, isAnswer } from './answers.ts';
import type { CurrencyRates } from './compare.ts';
import { asParam, assertSubscribed, billingOf, checkBrief, resolvePlace, termsOf } from './brief.ts';
import { optOutOf } from './opt-out.ts';
import { awaitReplies } from './stages/awaiting-replies.ts';
import { compareProviders } from './stages/comparing.ts';
import { contact } from './stages/contacting.ts';
import { plan } from './stages/planning.ts';
import { search } from './stages/searching.ts';
import type { ConciergeMail, Stage, StageOutcome } from './stages/stage.ts';
import { READ, STAGE, type StageJob, type WorkflowRow, WorkflowStore } from './store.ts';
import { isFinal, step, workflowOf } from './view.ts';

export type { ConciergeMail } from './stages/stage.ts';

/** Attempts of a stage after the first before the workflow fails. */
const STAGE_RETRIES = 6;

const STAGES: Record<WorkflowStage, Stage> = {
  planning: plan,
  searching: search,
  contacting: contact,
  awaiting_replies: awaitReplies,
  comparing: compareProviders,
};

export interface WorkflowOptions {
  agent: Agent;
  webhooks: WebhookDelivery;
  /** The project's webhook endpoints, one of which a brief may name for its events. */
  endpoints: Pick<WebhookStore, 'row'>;
  /** How requests for quotes go out (the Sales mail path). */
  mail: ConciergeMail;
  /** Where inbound mail and opt-out links go: the concierge registers its answers and its `cq_` tokens. */
  routing: MailRouting;
  logger: Logger;
  /** The origin of listing URLs in the directory's answers. */
  baseUrl: string;
  /** Whether the runtime key can be kept (a secrets key exists). */
  runtimeAvailable: boolean;
  /** Whether an upstream model reads briefs and providers' answers (MODEL_ENGINES names one), checked by code. */
  modelReads?: boolean;
  /** The reference rates quotes in other currencies are compared at (CURRENCY_RATES). */
  rates?: CurrencyRates;
}

export class Workflows {
  readonly #db: Db;
  readonly #jobs: Jobs;
  readonly #options: WorkflowOptions;
  readonly #store: WorkflowStore;
  readonly #answers: Answers;

  constructor(db: Db, jobs: Jobs, options: WorkflowOptions) {
    this.#db = db;
    this.#jobs = jobs;
    this.#options = options;
    this.#store = new WorkflowStore(db, jobs);
    this.#answers = new Answers({
      store: this.#store,
      agent: (row, call) => this.#agent(row, call),
      logger: options.logger,
      retries: STAGE_RETRIES,
      ...(options.modelReads
        ? { structured: (row: WorkflowRow, call: StructuredCall) => this.#structured(row, call) }
        : {}),
    });
    options.routing.inbound({ owns: isAnswer, onMail: (mail) => this.#answers.onMail(mail) });
    options.routing.optOuts('cq_', (link) => optOutOf(this.#store, link));
  }

  async start(): Promise<void> {
    await this.#jobs.define<StageJob>(STAGE, (job, ctx) => this.#onStage(job, ctx), {
      concurrency: 8,
      retryLimit: STAGE_RETRIES,
      retryDelaySeconds: 2,
      retryDelayMaxSeconds: 300,
      expireInSeconds: 900,
    });
    await this.#jobs.define<{ contactId: string }>(
      READ,
      (job, ctx) => this.#answers.read(job.contactId, ctx),
      {
        concurrency: 4,
        retryLimit: STAGE_RETRIES,
        retryDelaySeconds: 2,
        retryDelayMaxSeconds: 300,
      },
    );
  }

  // -- the API

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
    const now = nowSeconds();
    const brief = checkBrief(input, now);
    await assertSubscribed(this.#db, principal.accountId);
    if (input.webhook_endpoint_id !== undefined) {
      await this.#options.endpoints
        .row(principal.projectId, input.webhook_endpoint_id)
        .catch(asParam('webhook_endpoint_id'));
    }
    let from: { address: string; name: string } | null = null;
    if (brief.contact) {
      const domain = await this.#options.mail
        .verifiedDomain(principal.projectId, input.sending_domain_id ?? '')
        .catch(asParam<never>('sending_domain_id'));
      from = {
        address: `${input.from_local_part ?? 'concierge'}@${domain.domain}`,
        name: input.from_name ?? domain.fromName ?? domain.domain,
      };
    }
    const resolved = await resolvePlace(this.#db, brief.hints, this.#options.baseUrl);
    const hints = resolved ? { ...brief.hints, resolved } : brief.hints;
    const terms = termsOf(brief);
    return this.#store.transaction(async (tx) => {
      const row = await this.#store.insert(tx, {
        id: newId('wf'),
        accountId: principal.accountId,
        projectId: principal.projectId,
        keyId: principal.keyId,
        brief: input.brief,
        hints,
        contact: brief.contact,
        sendingDomainId: brief.contact ? (input.sending_domain_id ?? null) : null,
        from,
        respondBy: brief.respondBy,
        complexity: terms.complexity,
        priceNano: terms.priceNano,
        webhookEndpointId: input.webhook_endpoint_id ?? null,
        steps: [terms.accepted],
        metadata: input.metadata ?? {},
        requestId,
        created: now,
      });
      return workflowOf(row, []);
    });
  }

  async get(projectId: string, id: string): Promise<Workflow> {
    return this.#store.snapshot(async (q) => this.#wire(q, await this.#store.row(q, projectId, id)));
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
    const { rows, contacts } = await this.#store.snapshot(async (q) => {
      const rows = await this.#store.page(q, projectId, {
        limit: query.limit,
        status: query.status,
        after: after === undefined ? undefined : { k: after.k as number, id: after.id },
      });
      const shown = rows.slice(0, query.limit).map((r) => r.id);
      return { rows, contacts: await this.#store.contacts(q, shown) };
    });
    return pageOf(
      rows,
      query.limit,
      (r) => workflowOf(r, contacts.get(r.id) ?? []),
      (r) => ({ k: Number(r.created), id: r.id }),
    );
  }

  async cancel(projectId: string, id: string): Promise<Workflow> {
    return this.#store.transaction(async (tx) => {
      const before = await this.#store.row(tx, projectId, id, true);
      if (isFinal(before.status)) {
        throw new ConflictError(
          'workflow_finished',
          `The workflow is already ${before.status}; only a queued or running workflow can be cancelled.`,
        );
      }
      const where = before.status === 'running' ? `while ${before.stage ?? 'running'}` : 'before it started';
      const row = await this.#store.end(tx, id, { status: 'cancelled' }, (stopped) =>
        step(
          null,
          'cancelled',
          `Cancelled ${where}; not billed.${stopped > 0 ? ` ${stopped} request(s) for a quote not sent.` : ''}`,
        ),
      );
      const workflow = await this.#wire(tx, row);
      await this.#emit(tx, row, 'workflow.cancelled', workflow);
      return workflow;
    });
  }

  /** Ends a queued or running workflow as failed (not billed), with the error and the event. */
  async fail(id: string, code: string, message: string, status = 502): Promise<void> {
    await this.#store.transaction(async (tx) => {
      const row = await this.#store.lock(tx, id);
      if (!row || isFinal(row.status)) return;
      const error = new ApiError(status, code, message).body(row.request_id).error;
      const failed = await this.#store.end(tx, id, { status: 'failed', error }, () =>
        step(row.stage, 'failed', `Failed: ${message} Not billed.`),
      );
      await this.#emit(tx, failed, 'workflow.failed', await this.#wire(tx, failed));
    });
  }

  async #wire(q: Queryable, row: WorkflowRow): Promise<Workflow> {
    return workflowOf(row, await this.#store.contactsOf(q, row.id));
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

  // -- the stages

  async #onStage(job: StageJob, ctx: JobContext): Promise<void> {
    let row = await this.#store.load(job.id);
    if (!row || isFinal(row.status)) return;
    if (job.stage === 'planning' && row.status === 'queued') {
      row = await this.#store.begin(row.id);
      if (!row) return;
    }
    if (row.status !== 'running' || row.stage !== job.stage) return;
    const current = row;
    try {
      const outcome = await STAGES[job.stage](current, {
        job,
        signal: ctx.signal,
        db: this.#db,
        store: this.#store,
        mail: this.#options.mail,
        ...(this.#options.rates ? { rates: this.#options.rates } : {}),
        agent: (call) => this.#agent(current, { ...call, signal: ctx.signal }),
        ...(this.#options.modelReads
          ? { structured: (call: StructuredCall) => this.#structured(current, call) }
          : {}),
      });
      await this.#apply(current, job.stage, outcome);
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

  /** Writes where a stage left its workflow. */
  async #apply(row: WorkflowRow, from: WorkflowStage, outcome: StageOutcome): Promise<void> {
    if (outcome === null) return;
    if ('result' in outcome) {
      await this.#store.transaction(async (tx) => {
        const now = nowSeconds();
        const billing = billingOf(row.complexity, outcome.result);
        const billed = step(
          null,
          'billed',
          `Billed ${priceText(billing.priceNano)} (${billing.complexity}): ${billing.reason}.`,
        );
        const done = await this.#store.succeed(
          tx,
          row.id,
          outcome.result,
          [...outcome.steps, billed],
          now,
          billing.priceNano,
        );
        if (!done) return;
        await recordUsage(
          tx,
          {
            accountId: done.account_id,
            projectId: done.project_id,
            keyId: done.key_id,
            scopes: [],
            plan: '',
          },
          {
            service: 'directory',
            model: 'concierge',
            endpoint: '/v1/concierge/briefs',
            units: 1,
            costNano: billing.priceNano,
            status: 200,
            latencyMs: (now - Number(done.created)) * 1000,
          },
        );
        await this.#emit(tx, done, 'workflow.completed', await this.#wire(tx, done));
      });
      return;
    }
    const moved = await this.#store.transaction(async (tx) => {
      const moved = await this.#store.advance(tx, row.id, {
        from,
        to: outcome.to,
        steps: outcome.steps,
        ...(outcome.set ? { set: outcome.set } : {}),
        ...(outcome.startAfter ? { startAfter: outcome.startAfter } : {}),
      });
      if (moved && outcome.contacts) await this.#store.addContacts(tx, row, outcome.contacts);
      return moved;
    });
    // answers may all be in before the wait begins (bounces at once)
    if (moved && outcome.to === 'awaiting_replies') await this.#store.endWaitIfAnswered(row.id);
  }

  async #structured(row: WorkflowRow, call: StructuredCall): Promise<StructuredRun> {
    const run = await this.#options.agent.structured(call);
    await this.#store.addAgentCost(row.id, run);
    return run;
  }

  async #agent(row: WorkflowRow, call: AgentCall): Promise<AgentRun> {
    const run = await this.#options.agent.run(call);
    await this.#store.addAgentCost(row.id, run);
    return run;
  }
}
