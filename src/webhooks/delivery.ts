// Events to webhook endpoints, as Standard Webhooks v1 messages. An event becomes one message per
// endpoint subscribed to it, written with its first delivery job in one transaction, so nothing
// emitted is lost and nothing is sent for a transaction that rolled back. Each attempt is a
// durable job (platform/jobs.ts): it POSTs the message's stored body through the outbound guard,
// records the attempt, and on failure sends the next attempt's job, due after the next delay of
// WEBHOOK_RETRY_SCHEDULE (up to 10 % later, so retries of many messages spread out). The message
// id is the `webhook-id` of every attempt: a receiver that sees a message twice (an instance
// killed between the answer and its record) knows it by that id.
//
// An endpoint whose deliveries have all failed for WEBHOOK_DISABLE_AFTER (5 days) is disabled,
// and so is one that answers 410 Gone; the project's other endpoints subscribed to
// `endpoint.disabled` are told.
import type { WebhookEventType, WebhookMessage } from '../../generated/directory/client/types.gen.ts';
import type { Db, Queryable } from '../platform/db.ts';
import { ConflictError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { Jobs } from '../platform/jobs.ts';
import type { Logger } from '../platform/logger.ts';
import type { Outbound, OutboundAnswer } from '../platform/outbound.ts';
import { signatureHeader } from './signing.ts';
import { type EndpointRow, endpointOf, type MessageRow, messageOf, type WebhookStore } from './store.ts';
import { nowSeconds } from '../platform/clock.ts';

export const DELIVER = 'webhook.deliver';
const PRUNE = 'webhook.prune';

export interface DeliveryOptions {
  /** Delays of the attempts, each after the one before (the first is usually 0). */
  retryScheduleMs: number[];
  /** An endpoint failing this long is disabled. */
  disableAfterMs: number;
  /** How long a receiver has to answer. */
  timeoutMs: number;
  /** Attempts one instance makes at once. */
  concurrency?: number;
}

interface DeliverJob {
  messageId: string;
  /** Which attempt of the schedule this is, from 0; absent for a re-send by hand. */
  n?: number;
  /** A re-send by hand of a message that was still pending: its schedule goes on. */
  pending?: boolean;
}

const ATTEMPTS_KEPT = 20;

export class WebhookDelivery {
  readonly #db: Db;
  readonly #jobs: Jobs;
  readonly #outbound: Outbound;
  readonly #store: WebhookStore;
  readonly #options: DeliveryOptions;
  readonly #logger: Logger;

  constructor(
    db: Db,
    jobs: Jobs,
    outbound: Outbound,
    store: WebhookStore,
    options: DeliveryOptions,
    logger: Logger,
  ) {
    this.#db = db;
    this.#jobs = jobs;
    this.#outbound = outbound;
    this.#store = store;
    this.#options = options;
    this.#logger = logger;
  }

  /** Declares the delivery queue (and runs its workers where this instance has any). */
  async start(): Promise<void> {
    const concurrency = this.#options.concurrency ?? 16;
    await this.#jobs.define<DeliverJob>(DELIVER, (job) => this.#attempt(job), {
      concurrency,
      // one endpoint's deliveries take at most three quarters of an instance's workers (counted
      // over all instances): a receiver that hangs until the timeout holds those, and the other
      // endpoints' deliveries go on with the rest
      perGroup: Math.max(1, Math.floor((concurrency * 3) / 4)),
      // an attempt is bounded by the receiver's timeout; one that outlives it by far was lost
      expireInSeconds: Math.ceil(this.#options.timeoutMs / 1000) + 60,
      retryLimit: 5,
    });
    await this.#jobs.define(PRUNE, async () => {
      const pruned = await this.#store.prune();
      if (pruned > 0) this.#logger.info({ pruned }, 'webhook messages past their retention dropped');
    });
    await this.#jobs.schedule(PRUNE, '17 3 * * *');
  }

  /**
   * Records an event for the endpoints of `projectId` subscribed to `type` (or for `endpointId`
   * alone, subscribed or not), each message with its first attempt's job, in `tx` when given.
   */
  async emit(
    projectId: string,
    type: WebhookEventType,
    object: unknown,
    options: { endpointId?: string; tx?: Queryable } = {},
  ): Promise<WebhookMessage[]> {
    const write = async (tx: Queryable) => {
      const endpoints = options.endpointId
        ? await tx.query<EndpointRow>('select * from webhook_endpoints where id = $1 and project_id = $2', [
            options.endpointId,
            projectId,
          ])
        : await tx.query<EndpointRow>(
            `select * from webhook_endpoints where project_id = $1 and enabled and event_types ? $2`,
            [projectId, type],
          );
      const messages: WebhookMessage[] = [];
      const created = nowSeconds();
      for (const endpoint of endpoints) {
        const id = newId('msg');
        const body = JSON.stringify({ id, type, timestamp: new Date().toISOString(), data: { object } });
        const [row] = await tx.query<MessageRow>(
          `insert into webhook_messages (id, endpoint_id, project_id, event_type, body, next_attempt_at, created)
           values ($1, $2, $3, $4, $5, now(), $6) returning *`,
          [id, endpoint.id, projectId, type, body, created],
        );
        const first = this.#options.retryScheduleMs[0] ?? 0;
        await this.#jobs.send<DeliverJob>(
          DELIVER,
          { messageId: id, n: 0 },
          { tx, group: endpoint.id, ...(first > 0 ? { startAfter: new Date(Date.now() + first) } : {}) },
        );
        messages.push(messageOf(row!));
      }
      return messages;
    };
    return options.tx ? write(options.tx) : this.#db.transaction(write);
  }

  /** A `test` event to one endpoint. */
  async test(projectId: string, endpointId: string): Promise<WebhookMessage> {
    const endpoint = await this.#store.row(projectId, endpointId);
    if (!endpoint.enabled) throw this.#disabled(endpointId);
    const [message] = await this.emit(
      projectId,
      'test',
      {
        object: 'webhook_ping',
        endpoint_id: endpointId,
        message: 'This is a test event from the Directory API.',
      },
      { endpointId },
    );
    return message!;
  }

  /** One more attempt of a message now, by hand; a failed message is pending until it is made. */
  async resend(projectId: string, endpointId: string, messageId: string): Promise<WebhookMessage> {
    const endpoint = await this.#store.row(projectId, endpointId);
    if (!endpoint.enabled) throw this.#disabled(endpointId);
    return this.#db.transaction(async (tx) => {
      const before = await this.#store.message(projectId, endpointId, messageId, tx);
      const [row] = await tx.query<MessageRow>(
        `update webhook_messages set status = 'pending', next_attempt_at = coalesce(next_attempt_at, now())
         where id = $1 returning *`,
        [messageId],
      );
      await this.#jobs.send<DeliverJob>(
        DELIVER,
        { messageId, pending: before.status === 'pending' },
        { tx, group: endpointId },
      );
      return messageOf(row!);
    });
  }

  /** After an endpoint is enabled again: its pending messages go out now. */
  async resume(endpointId: string): Promise<void> {
    await this.#db.transaction(async (tx) => {
      const pending = await tx.query<{ id: string }>(
        `update webhook_messages set next_attempt_at = now() where endpoint_id = $1 and status = 'pending' returning id`,
        [endpointId],
      );
      for (const { id } of pending)
        await this.#jobs.send<DeliverJob>(DELIVER, { messageId: id, n: 0 }, { tx, group: endpointId });
    });
  }

  #disabled(endpointId: string): ConflictError {
    return new ConflictError(
      'endpoint_disabled',
      `The webhook endpoint ${endpointId} is disabled; enable it with PATCH /v1/webhook-endpoints/${endpointId} first.`,
    );
  }

  async #attempt(job: DeliverJob): Promise<void> {
    const [message] = await this.#db.query<MessageRow>('select * from webhook_messages where id = $1', [
      job.messageId,
    ]);
    if (!message) return; // its endpoint was deleted
    if (message.status !== 'pending') return; // delivered or failed meanwhile: an attempt ran twice
    const endpoint = await this.#store.rowById(message.endpoint_id);
    if (!endpoint || !endpoint.enabled) return; // waits, pending, until the endpoint is enabled

    const timestamp = nowSeconds();
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Eurus-Webhooks/1.0 (+https://docs.eurus.eu/webhooks)',
      'webhook-id': message.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(
        this.#store.secretsOf(endpoint),
        message.id,
        timestamp,
        message.body,
      ),
    };
    const started = Date.now();
    let answer: OutboundAnswer | undefined;
    let error: string | null = null;
    try {
      answer = await this.#outbound.request(endpoint.url, {
        method: 'POST',
        headers,
        body: message.body,
        timeoutMs: this.#options.timeoutMs,
        maxBodyBytes: 1024,
      });
    } catch (err) {
      error = describe(err, this.#options.timeoutMs);
    }
    const delivered = answer !== undefined && answer.status >= 200 && answer.status < 300;
    const attempt = {
      attempt: message.attempts + 1,
      at: timestamp,
      outcome: delivered ? ('delivered' as const) : ('failed' as const),
      status_code: answer?.status ?? null,
      duration_ms: answer?.durationMs ?? Date.now() - started,
      response: answer ? answer.body.slice(0, 1024) : null,
      error: error?.slice(0, 500) ?? null,
    };
    const log = [...message.attempt_log, attempt].slice(-ATTEMPTS_KEPT);
    await this.#db.transaction(async (tx) => {
      if (delivered) {
        await tx.query(
          `update webhook_messages set status = 'delivered', attempts = $2, next_attempt_at = null, attempt_log = $3 where id = $1`,
          [message.id, attempt.attempt, JSON.stringify(log)],
        );
        await tx.query('update webhook_endpoints set failing = false, failing_since = null where id = $1', [
          endpoint.id,
        ]);
        return;
      }
      const gone = answer?.status === 410;
      const manual = job.n === undefined;
      const delay = manual ? undefined : this.#options.retryScheduleMs[(job.n ?? 0) + 1];
      const retry = !gone && delay !== undefined;
      const next = retry ? new Date(Date.now() + Math.round(delay * (1 + Math.random() * 0.1))) : null;
      // a re-send by hand of a message still on its schedule leaves the schedule as it was
      const waiting = manual && job.pending === true && !gone;
      await tx.query(
        `update webhook_messages set status = $2, attempts = $3,
           next_attempt_at = case when $6::boolean then next_attempt_at else $4 end, attempt_log = $5
         where id = $1`,
        [
          message.id,
          retry || waiting ? 'pending' : 'failed',
          attempt.attempt,
          next,
          JSON.stringify(log),
          waiting,
        ],
      );
      if (retry && next) {
        await this.#jobs.send<DeliverJob>(
          DELIVER,
          { messageId: message.id, n: (job.n ?? 0) + 1 },
          { startAfter: next, tx, group: endpoint.id },
        );
      }
      // failing since its first failed attempt began, up to this one's start: not the clock of a
      // transaction that may wait behind others (a first failure counted as 600 ms of failing)
      const [marked] = await tx.query<EndpointRow>(
        `update webhook_endpoints set failing_since = coalesce(failing_since, $3),
           failing = failing or $2 where id = $1 returning *`,
        [endpoint.id, !retry && !waiting, new Date(started)],
      );
      const failingFor = marked?.failing_since ? started - marked.failing_since.getTime() : 0;
      if (gone || failingFor >= this.#options.disableAfterMs) {
        await this.#disable(tx, endpoint, gone ? 'gone' : 'failing');
      }
    });
  }

  async #disable(tx: Queryable, endpoint: EndpointRow, reason: 'gone' | 'failing'): Promise<void> {
    const [row] = await tx.query<EndpointRow>(
      `update webhook_endpoints set enabled = false, disabled_reason = $2 where id = $1 and enabled returning *`,
      [endpoint.id, reason],
    );
    if (!row) return; // disabled already
    this.#logger.warn({ endpoint_id: endpoint.id, reason }, 'webhook endpoint disabled');
    await this.emit(endpoint.project_id, 'endpoint.disabled', endpointOf(row), { tx });
  }
}

/** What went wrong with an attempt that got no answer, in a few words. */
function describe(err: unknown, timeoutMs: number): string {
  const e = err as {
    name?: string;
    code?: string;
    message?: string;
    cause?: { code?: string; message?: string };
  };
  const code = e.cause?.code ?? e.code;
  if (e.name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return `timeout: no answer within ${timeoutMs} ms`;
  }
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'connection reset';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the host does not resolve';
  if (code === 'private_network_url') return `refused: ${e.cause?.message ?? e.message ?? ''}`;
  return (e.cause?.message ?? e.message ?? String(err)).slice(0, 200);
}
