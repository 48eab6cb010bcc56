// CRM connections of a project: made only after the CRM accepted the credentials (the check
// call, which also prepares the CRM for upserts by our listing id), the credentials sealed at
// rest with the connection id as associated data, never returned.
import type {
  CreateCrmConnectionData,
  CrmConnection,
  UpdateCrmConnectionRequest,
} from '../../generated/directory/client/types.gen.ts';
import type { Db, Queryable } from '../platform/db.ts';
import { ApiError, BadRequestError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { type Outbound, OutboundRefused } from '../platform/outbound.ts';
import { decodeCursor, type Page, pageOf } from '../platform/pagination.ts';
import type { SecretBox } from '../platform/secrets.ts';
import { CrmError } from './http.ts';
import { hubspotClient } from './hubspot.ts';
import { pipedriveClient } from './pipedrive.ts';
import type { ClientContext, CrmClient, Credentials, Provider, Settings } from './providers.ts';
import { salesforceClient } from './salesforce.ts';
import { nowSeconds } from '../platform/clock.ts';

export interface ConnectionRow {
  id: string;
  account_id: string;
  project_id: string;
  provider: Provider;
  status: CrmConnection['status'];
  sync_replies: boolean;
  base_url: string | null;
  credentials_sealed: string;
  settings: Settings;
  last_synced_at: number | null;
  last_sync_id: string | null;
  last_error: string | null;
  metadata: Record<string, string>;
  created: number;
}

export function connectionOf(row: ConnectionRow): CrmConnection {
  return {
    id: row.id,
    object: 'crm_connection',
    provider: row.provider,
    status: row.status,
    sync_replies: row.sync_replies,
    base_url: row.base_url,
    last_synced_at: row.last_synced_at === null ? null : Number(row.last_synced_at),
    last_sync_id: row.last_sync_id,
    last_error: row.last_error,
    metadata: row.metadata,
    created: Number(row.created),
  };
}

export function clientFor(provider: Provider, ctx: ClientContext): CrmClient {
  switch (provider) {
    case 'hubspot':
      return hubspotClient(ctx);
    case 'salesforce':
      return salesforceClient(ctx);
    case 'pipedrive':
      return pipedriveClient(ctx);
  }
}

/** The answer of a failed check call, as the API states it. */
export function checkFailure(err: CrmError): ApiError {
  switch (err.code) {
    case 'crm_unauthorized':
      return new BadRequestError('crm_auth_failed', err.message, { param: 'credentials' });
    case 'crm_setup_required':
      return new BadRequestError('crm_setup_required', err.message, { param: 'provider' });
    case 'crm_timeout':
      return new ApiError(504, 'crm_timeout', err.message);
    default:
      return new ApiError(502, 'crm_unavailable', err.message);
  }
}

export interface ConnectionOptions {
  /** The check call's time limit, every call and retry included (CRM_CHECK_TIMEOUT_MS); 10 s. */
  checkTimeoutMs?: number;
}

export class CrmConnections {
  readonly #db: Db;
  readonly #box: SecretBox | undefined;
  readonly #outbound: Outbound;
  readonly #options: ConnectionOptions;

  constructor(db: Db, box: SecretBox | undefined, outbound: Outbound, options: ConnectionOptions = {}) {
    this.#db = db;
    this.#box = box;
    this.#outbound = outbound;
    this.#options = options;
  }

  get outbound(): Outbound {
    return this.#outbound;
  }

  async create(
    principal: { accountId: string; projectId: string },
    input: CreateCrmConnectionData['body'],
  ): Promise<CrmConnection> {
    if (this.#box === undefined) {
      throw new BadRequestError(
        'secrets_unavailable',
        'This deployment has no SECRETS_ENCRYPTION_KEY, so it cannot store CRM credentials.',
        { param: 'credentials' },
      );
    }
    const credentials = input.credentials as Credentials;
    const baseUrl = input.base_url ?? null;
    await this.#checkUrl(baseUrl, 'base_url');
    if (input.provider === 'salesforce' && baseUrl === null) {
      await this.#checkUrl(credentials.instance_url ?? null, 'credentials.instance_url');
    }
    const client = clientFor(input.provider, {
      outbound: this.#outbound,
      credentials,
      baseUrl,
      settings: {},
      // the whole check, every call and retry of it, within 10 seconds
      http: {
        retries: 1,
        maxWaitMs: 5000,
        deadline: Date.now() + (this.#options.checkTimeoutMs ?? 10_000) - 250,
      },
    });
    let settings: Settings;
    try {
      settings = await client.check();
    } catch (err) {
      if (err instanceof CrmError) {
        // a base_url whose host does not resolve is the caller's to fix, as the outbound guard says
        if (baseUrl !== null && /ENOTFOUND|EAI_AGAIN/.test(err.message)) {
          throw new BadRequestError('invalid_url', `The host of ${baseUrl} does not resolve.`, {
            param: 'base_url',
          });
        }
        throw checkFailure(err);
      }
      if (err instanceof OutboundRefused)
        throw new BadRequestError(err.code, err.message, { param: 'base_url' });
      throw err;
    }
    const id = newId('crm');
    const [row] = await this.#db.query<ConnectionRow>(
      `insert into crm_connections (id, account_id, project_id, provider, sync_replies, base_url,
         credentials_sealed, settings, metadata, created)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) returning *`,
      [
        id,
        principal.accountId,
        principal.projectId,
        input.provider,
        input.sync_replies ?? true,
        baseUrl,
        this.#box.seal(JSON.stringify(credentials), id),
        JSON.stringify(settings),
        JSON.stringify(input.metadata ?? {}),
        nowSeconds(),
      ],
    );
    return connectionOf(row!);
  }

  async #checkUrl(url: string | null, param: string): Promise<void> {
    if (url === null) return;
    try {
      await this.#outbound.check(url);
    } catch (err) {
      if (err instanceof OutboundRefused) throw new BadRequestError(err.code, err.message, { param });
      throw err;
    }
  }

  async row(projectId: string, id: string, q: Queryable = this.#db, lock = false): Promise<ConnectionRow> {
    const [row] = await q.query<ConnectionRow>(
      `select * from crm_connections where id = $1 and project_id = $2${lock ? ' for update' : ''}`,
      [id, projectId],
    );
    if (!row) throw new NotFoundError('crm_connection_not_found', `No CRM connection ${id} in this project.`);
    return row;
  }

  async get(projectId: string, id: string): Promise<CrmConnection> {
    return connectionOf(await this.row(projectId, id));
  }

  async list(projectId: string, limit: number, cursor: string | undefined): Promise<Page<CrmConnection>> {
    const after = decodeCursor(cursor);
    if (after !== undefined && typeof after.k !== 'number') {
      throw new BadRequestError('invalid_cursor', 'The cursor was not issued by this endpoint.', {
        param: 'cursor',
      });
    }
    const rows = await this.#db.query<ConnectionRow>(
      `select * from crm_connections where project_id = $1
         and ($2::bigint is null or (created, id) < ($2::bigint, $3::text))
       order by created desc, id desc limit $4`,
      [projectId, after?.k ?? null, after?.id ?? '', limit + 1],
    );
    return pageOf(rows, limit, connectionOf, (r) => ({ k: Number(r.created), id: r.id }));
  }

  async update(projectId: string, id: string, input: UpdateCrmConnectionRequest): Promise<CrmConnection> {
    await this.row(projectId, id);
    const [row] = await this.#db.query<ConnectionRow>(
      `update crm_connections set sync_replies = coalesce($3, sync_replies), metadata = coalesce($4::jsonb, metadata)
       where id = $1 and project_id = $2 returning *`,
      [
        id,
        projectId,
        input.sync_replies ?? null,
        input.metadata === undefined ? null : JSON.stringify(input.metadata),
      ],
    );
    return connectionOf(row!);
  }

  async delete(projectId: string, id: string): Promise<void> {
    await this.row(projectId, id);
    await this.#db.query('delete from crm_connections where id = $1 and project_id = $2', [id, projectId]);
  }

  /** The credentials, opened only for a call to the CRM. */
  credentials(row: ConnectionRow): Credentials {
    if (this.#box === undefined) throw new Error('CRM credentials cannot be opened without a secrets key');
    return JSON.parse(this.#box.open(row.credentials_sealed, row.id)) as Credentials;
  }
}
