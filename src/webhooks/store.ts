// Webhook endpoints and their messages in the shared database, one project's at a time. The
// signing secret is sealed at rest (platform/secrets.ts) and shown once, when it is made.
import type {
  CreateWebhookEndpointData,
  UpdateWebhookEndpointData,
  WebhookAttempt,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookEventType,
  WebhookMessage,
} from '../../generated/directory/client/types.gen.ts';
import type { Db, Queryable } from '../platform/db.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { Outbound } from '../platform/outbound.ts';
import { OutboundRefused } from '../platform/outbound.ts';
import { decodeCursor, type Page, pageOf } from '../platform/pagination.ts';
import type { SecretBox } from '../platform/secrets.ts';
import { newWebhookSecret } from './signing.ts';
import { nowSeconds } from '../platform/clock.ts';

export const EVENT_TYPES: WebhookEventType[] = [
  'workflow.completed',
  'workflow.failed',
  'workflow.cancelled',
  'reply.received',
  'campaign.completed',
  'crm.sync.completed',
  'endpoint.disabled',
  'test',
];

/** How long messages and their attempts are kept by default (RETENTION_WEBHOOK_MESSAGES). */
export const MESSAGE_RETENTION_S = 90 * 86_400;

export interface EndpointRow {
  id: string;
  project_id: string;
  url: string;
  description: string | null;
  event_types: WebhookEventType[];
  enabled: boolean;
  disabled_reason: 'manual' | 'failing' | 'gone' | null;
  failing: boolean;
  failing_since: Date | null;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  metadata: Record<string, string>;
  created: number;
}

export interface MessageRow {
  id: string;
  endpoint_id: string;
  project_id: string;
  event_type: WebhookEventType;
  body: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: Date | null;
  attempt_log: WebhookAttempt[];
  created: number;
}

export function endpointOf(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    url: row.url,
    description: row.description,
    event_types: row.event_types,
    enabled: row.enabled,
    status: !row.enabled ? 'disabled' : row.failing ? 'failing' : 'active',
    disabled_reason: row.enabled ? null : row.disabled_reason,
    metadata: row.metadata,
    created: Number(row.created),
  };
}

export function messageOf(row: MessageRow): WebhookMessage {
  return {
    id: row.id,
    object: 'webhook_message',
    event_type: row.event_type,
    endpoint_id: row.endpoint_id,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.next_attempt_at ? Math.floor(row.next_attempt_at.getTime() / 1000) : null,
    attempt_log: row.attempt_log,
    created: Number(row.created),
  };
}

const now = () => nowSeconds();

export class WebhookStore {
  readonly #db: Db;
  readonly #box: SecretBox | undefined;
  readonly #outbound: Outbound;

  readonly #retentionS: number;

  constructor(db: Db, box: SecretBox | undefined, outbound: Outbound, retentionS = MESSAGE_RETENTION_S) {
    this.#retentionS = retentionS;
    this.#db = db;
    this.#box = box;
    this.#outbound = outbound;
  }

  #seal(secret: string, id: string): string {
    if (this.#box === undefined) {
      throw new BadRequestError(
        'secrets_unavailable',
        'This deployment has no SECRETS_ENCRYPTION_KEY, so it cannot keep signing secrets; ask its operator to set one.',
      );
    }
    return this.#box.seal(secret, id);
  }

  /** The secrets a delivery is signed with now: the current one, and the previous while it overlaps. */
  secretsOf(row: EndpointRow): string[] {
    if (this.#box === undefined) throw new Error('no secrets key');
    const secrets = [this.#box.open(row.secret_sealed, row.id)];
    if (
      row.previous_secret_sealed &&
      row.previous_secret_expires_at &&
      row.previous_secret_expires_at > new Date()
    ) {
      secrets.push(this.#box.open(row.previous_secret_sealed, `${row.id}.previous`));
    }
    return secrets;
  }

  async #checkUrl(url: string): Promise<void> {
    try {
      await this.#outbound.check(url);
    } catch (err) {
      if (err instanceof OutboundRefused) {
        const code = err.code === 'insecure_url' ? 'insecure_webhook_url' : err.code;
        throw new BadRequestError(code, `The webhook URL is refused: ${err.message}.`, { param: 'url' });
      }
      throw err;
    }
  }

  async create(
    projectId: string,
    input: CreateWebhookEndpointData['body'],
  ): Promise<WebhookEndpointWithSecret> {
    await this.#checkUrl(input.url);
    const id = newId('whep');
    const secret = newWebhookSecret();
    const [row] = await this.#db.query<EndpointRow>(
      `insert into webhook_endpoints (id, project_id, url, description, event_types, secret_sealed, metadata, created)
       values ($1, $2, $3, $4, $5, $6, $7, $8) returning *`,
      [
        id,
        projectId,
        input.url,
        input.description ?? null,
        JSON.stringify(input.event_types ?? EVENT_TYPES),
        this.#seal(secret, id),
        JSON.stringify(input.metadata ?? {}),
        now(),
      ],
    );
    return { ...endpointOf(row!), secret };
  }

  async row(projectId: string, id: string, q: Queryable = this.#db): Promise<EndpointRow> {
    const [row] = await q.query<EndpointRow>(
      'select * from webhook_endpoints where id = $1 and project_id = $2',
      [id, projectId],
    );
    if (!row)
      throw new NotFoundError('webhook_endpoint_not_found', `No webhook endpoint ${id} in this project.`);
    return row;
  }

  /** The row of an endpoint whatever its project (deliveries). */
  async rowById(id: string, q: Queryable = this.#db): Promise<EndpointRow | undefined> {
    const [row] = await q.query<EndpointRow>('select * from webhook_endpoints where id = $1', [id]);
    return row;
  }

  async get(projectId: string, id: string): Promise<WebhookEndpoint> {
    return endpointOf(await this.row(projectId, id));
  }

  async list(projectId: string, limit: number, cursor: string | undefined): Promise<Page<WebhookEndpoint>> {
    const after = decodeCursor(cursor);
    const rows = await this.#db.query<EndpointRow>(
      `select * from webhook_endpoints where project_id = $1
         and ($2::bigint is null or (created, id) < ($2::bigint, $3::text))
       order by created desc, id desc limit $4`,
      [projectId, after?.k ?? null, after?.id ?? '', limit + 1],
    );
    return pageOf(rows, limit, endpointOf, (r) => ({ k: Number(r.created), id: r.id }));
  }

  /** Applies a change; returns the row before and after (enabling re-queues what waited). */
  async update(
    projectId: string,
    id: string,
    patch: UpdateWebhookEndpointData['body'],
  ): Promise<{ before: EndpointRow; after: EndpointRow }> {
    if (patch.url !== undefined) await this.#checkUrl(patch.url);
    const before = await this.row(projectId, id);
    const enabling = patch.enabled === true && !before.enabled;
    const [after] = await this.#db.query<EndpointRow>(
      `update webhook_endpoints set
         url = coalesce($3, url),
         description = case when $4::boolean then $5 else description end,
         event_types = coalesce($6::jsonb, event_types),
         metadata = coalesce($7::jsonb, metadata),
         enabled = coalesce($8, enabled),
         disabled_reason = case when $8 = false and enabled then 'manual'
                                when $8 = true then null else disabled_reason end,
         failing = case when $9::boolean then false else failing end,
         failing_since = case when $9::boolean then null else failing_since end
       where id = $1 and project_id = $2 returning *`,
      [
        id,
        projectId,
        patch.url ?? null,
        patch.description !== undefined,
        patch.description ?? null,
        patch.event_types ? JSON.stringify(patch.event_types) : null,
        patch.metadata ? JSON.stringify(patch.metadata) : null,
        patch.enabled ?? null,
        enabling,
      ],
    );
    return { before, after: after! };
  }

  async delete(projectId: string, id: string): Promise<void> {
    const rows = await this.#db.query(
      'delete from webhook_endpoints where id = $1 and project_id = $2 returning id',
      [id, projectId],
    );
    if (rows.length === 0) {
      throw new NotFoundError('webhook_endpoint_not_found', `No webhook endpoint ${id} in this project.`);
    }
  }

  async rotate(projectId: string, id: string, overlapSeconds: number): Promise<WebhookEndpointWithSecret> {
    const before = await this.row(projectId, id);
    const secret = newWebhookSecret();
    const current = this.#box?.open(before.secret_sealed, id);
    const [row] = await this.#db.query<EndpointRow>(
      `update webhook_endpoints set secret_sealed = $3, previous_secret_sealed = $4,
         previous_secret_expires_at = now() + make_interval(secs => $5)
       where id = $1 and project_id = $2 returning *`,
      [
        id,
        projectId,
        this.#seal(secret, id),
        overlapSeconds > 0 && current ? this.#seal(current, `${id}.previous`) : null,
        overlapSeconds,
      ],
    );
    return { ...endpointOf(row!), secret };
  }

  async messages(
    projectId: string,
    endpointId: string,
    limit: number,
    cursor: string | undefined,
    status: MessageRow['status'] | undefined,
  ): Promise<Page<WebhookMessage>> {
    await this.row(projectId, endpointId);
    const after = decodeCursor(cursor);
    const rows = await this.#db.query<MessageRow>(
      `select * from webhook_messages where endpoint_id = $1 and project_id = $2
         and created > $3 and ($4::text is null or status = $4)
         and ($5::bigint is null or (created, id) < ($5::bigint, $6::text))
       order by created desc, id desc limit $7`,
      [
        endpointId,
        projectId,
        now() - this.#retentionS,
        status ?? null,
        after?.k ?? null,
        after?.id ?? '',
        limit + 1,
      ],
    );
    return pageOf(rows, limit, messageOf, (r) => ({ k: Number(r.created), id: r.id }));
  }

  async message(
    projectId: string,
    endpointId: string,
    messageId: string,
    q: Queryable = this.#db,
  ): Promise<MessageRow> {
    const [row] = await q.query<MessageRow>(
      'select * from webhook_messages where id = $1 and endpoint_id = $2 and project_id = $3 and created > $4',
      [messageId, endpointId, projectId, now() - this.#retentionS],
    );
    if (!row)
      throw new NotFoundError('webhook_message_not_found', `No message ${messageId} to this endpoint.`);
    return row;
  }

  /** Drops the messages (with their attempts) older than the retention. */
  async prune(): Promise<number> {
    const rows = await this.#db.query('delete from webhook_messages where created <= $1 returning id', [
      now() - this.#retentionS,
    ]);
    return rows.length;
  }
}
