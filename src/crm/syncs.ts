// CRM syncs: a target list's members, then the replies to them, pushed to a connection's CRM by
// a durable job. Members go in the CRM's own batch sizes, each batch's records written in one
// transaction with the sync's counts and the position reached, so an attempt that starts again
// (a worker killed, a retry after the CRM kept failing) resumes after the last recorded batch
// and the upserts make a batch sent twice harmless. Rejected credentials stop the sync at once:
// the batch in flight is not recorded, the sync fails with the CRM's reason and the connection
// becomes `disconnected`. `crm.sync.completed` is emitted with the final state, either way.
import type {
  CreateCrmSyncRequest,
  CrmSync,
  CrmSyncError,
  CrmSyncRecord,
  Listing,
} from '../../generated/directory/client/types.gen.ts';
import { nowSeconds } from '../platform/clock.ts';
import type { Db, Queryable } from '../platform/db.ts';
import { ConflictError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { JobContext, Jobs } from '../platform/jobs.ts';
import type { Logger } from '../platform/logger.ts';
import { numericCursor, type Page, pageOf } from '../platform/pagination.ts';
import type { ReplyForCrm } from '../sales/replies.ts';
import type { TargetLists } from '../sales/target-lists.ts';
import type { WebhookDelivery } from '../webhooks/delivery.ts';
import { clientFor, type ConnectionRow, type CrmConnections } from './connections.ts';
import { CrmError, type CrmHttpOptions } from './http.ts';
import type { CrmClient, MemberInput, MemberOutcome, NoteInput, NoteOutcome } from './providers.ts';

export const SYNC = 'crm.sync';
const SYNC_RETRIES = 3;

/** A reply to a campaign message, as a sync needs it: Sales' own shape of it. */
export type CrmReply = ReplyForCrm;

/**
 * Where replies come from (src/sales owns them): the human replies of a target list's members,
 * oldest first by id, after `afterId`; and the mark that a reply is in a CRM (`crm_synced`).
 */
export interface ReplySource {
  replies(
    targetListId: string,
    options: { listingId: string | null; afterId: string | null; limit: number },
  ): Promise<CrmReply[]>;
  markSynced(tx: Queryable, replyIds: string[]): Promise<void>;
}

interface SyncRow {
  id: string;
  connection_id: string;
  project_id: string;
  target_list_id: string;
  trigger: CrmSync['trigger'];
  listing_id: string | null;
  include_replies: boolean;
  status: CrmSync['status'];
  total: number;
  created_count: number;
  updated_count: number;
  failed_count: number;
  member_cursor: number;
  error_code: CrmSyncError['code'] | null;
  error_message: string | null;
  queued_at: number;
  started_at: number | null;
  completed_at: number | null;
  created: number;
}

interface RecordRow {
  id: string;
  sync_id: string;
  seq: number;
  kind: CrmSyncRecord['kind'];
  listing_id: string;
  reply_id: string | null;
  result: CrmSyncRecord['result'];
  crm_object: CrmSyncRecord['crm_object'];
  crm_id: string | null;
  contact: CrmSyncRecord['contact'];
  error: string | null;
  created: number;
}

interface MemberRow {
  listing_id: string;
  position: number;
  email: string;
  listing: Listing;
}

export function syncOf(row: SyncRow): CrmSync {
  return {
    id: row.id,
    object: 'crm_sync',
    connection_id: row.connection_id,
    target_list_id: row.target_list_id,
    trigger: row.trigger,
    status: row.status,
    counts: {
      total: row.total,
      created: row.created_count,
      updated: row.updated_count,
      failed: row.failed_count,
    },
    error: row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? '' },
    queued_at: Number(row.queued_at),
    started_at: row.started_at === null ? null : Number(row.started_at),
    completed_at: row.completed_at === null ? null : Number(row.completed_at),
    created: Number(row.created),
  };
}

function recordOf(row: RecordRow): CrmSyncRecord {
  return {
    id: row.id,
    object: 'crm_sync_record',
    sync_id: row.sync_id,
    kind: row.kind,
    listing_id: row.listing_id,
    reply_id: row.reply_id,
    result: row.result,
    crm_object: row.crm_object,
    crm_id: row.crm_id,
    contact: row.contact,
    error: row.error,
    created: Number(row.created),
  };
}

function memberInput(row: MemberRow, known: MemberInput['known']): MemberInput {
  const l = row.listing;
  const street = l.address.street
    ? [l.address.street, l.address.house_number].filter(Boolean).join(' ')
    : null;
  return {
    listingId: row.listing_id,
    name: l.name,
    email: row.email,
    website: l.website ?? null,
    phone: l.phone ?? null,
    street,
    postalCode: l.address.postal_code || null,
    city: l.address.city || null,
    region: l.address.region || null,
    country: l.address.country || null,
    formattedAddress: l.address.formatted || null,
    known,
  };
}

export interface CrmSyncOptions {
  logger: Logger;
  /** How one sync may wait on a CRM's rate limits in all; 15 minutes by default. */
  maxRateLimitWaitMs?: number;
  /** Overrides of the CRM calls (tests shorten backoffs). */
  http?: Partial<Pick<CrmHttpOptions, 'timeoutMs' | 'retries' | 'backoffMs' | 'maxWaitMs' | 'sleep'>>;
}

/** Thrown inside a sync when its sync or connection was deleted meanwhile. */
class Gone extends Error {}

export class CrmSyncs {
  readonly #db: Db;
  readonly #jobs: Jobs;
  readonly #connections: CrmConnections;
  readonly #targetLists: TargetLists;
  readonly #webhooks: WebhookDelivery;
  readonly #options: CrmSyncOptions;
  readonly #replies: ReplySource;

  constructor(
    db: Db,
    jobs: Jobs,
    parts: {
      connections: CrmConnections;
      targetLists: TargetLists;
      webhooks: WebhookDelivery;
      /** Where the human replies come from (src/sales/replies.ts `crmReplySource`). */
      replies: ReplySource;
    },
    options: CrmSyncOptions,
  ) {
    this.#db = db;
    this.#jobs = jobs;
    this.#connections = parts.connections;
    this.#targetLists = parts.targetLists;
    this.#webhooks = parts.webhooks;
    this.#replies = parts.replies;
    this.#options = options;
  }

  async start(): Promise<void> {
    await this.#jobs.define<{ id: string }>(SYNC, (job, ctx) => this.#run(job.id, ctx), {
      concurrency: 2,
      // one sync of a connection at a time, over every instance: the CRM's limits are per account
      perGroup: 1,
      retryLimit: SYNC_RETRIES,
      retryDelaySeconds: 5,
      expireInSeconds: 3600,
    });
  }

  async create(
    principal: { accountId: string; projectId: string },
    connectionId: string,
    input: CreateCrmSyncRequest,
  ): Promise<CrmSync> {
    return this.#db.transaction(async (tx) => {
      const connection = await this.#connections.row(principal.projectId, connectionId, tx, true);
      if (connection.status === 'disconnected') {
        throw new ConflictError(
          'crm_connection_disconnected',
          `The CRM rejected the credentials of ${connectionId}; make a new connection with fresh ones.`,
        );
      }
      const list = await this.#targetLists
        .row(principal.projectId, input.target_list_id, tx)
        .catch((err: unknown) => {
          if (err instanceof NotFoundError) {
            throw new NotFoundError(err.code, err.message, { param: 'target_list_id' });
          }
          throw err;
        });
      if (list.status !== 'ready') {
        throw new ConflictError(
          'target_list_not_ready',
          `The target list ${list.id} is ${list.status}; it can be synced once it is ready.`,
          { param: 'target_list_id' },
        );
      }
      const [open] = await tx.query<SyncRow>(
        `select * from crm_syncs where connection_id = $1 and target_list_id = $2 and trigger = 'manual'
           and status in ('queued', 'running') order by created desc limit 1`,
        [connectionId, list.id],
      );
      if (open) return syncOf(open);
      return syncOf(
        await this.#enqueue(tx, connection, {
          targetListId: list.id,
          trigger: 'manual',
          listingId: null,
          includeReplies: input.include_replies ?? true,
        }),
      );
    });
  }

  async #enqueue(
    tx: Queryable,
    connection: ConnectionRow,
    what: {
      targetListId: string;
      trigger: CrmSync['trigger'];
      listingId: string | null;
      includeReplies: boolean;
    },
  ): Promise<SyncRow> {
    const id = newId('crms');
    const now = nowSeconds();
    const [row] = await tx.query<SyncRow>(
      `insert into crm_syncs (id, connection_id, project_id, target_list_id, trigger, listing_id, include_replies,
         queued_at, created)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $8) returning *`,
      [
        id,
        connection.id,
        connection.project_id,
        what.targetListId,
        what.trigger,
        what.listingId,
        what.includeReplies,
        now,
      ],
    );
    await tx.query('update crm_connections set last_sync_id = $2 where id = $1', [connection.id, id]);
    await this.#jobs.send(SYNC, { id }, { tx, group: connection.id });
    return row!;
  }

  /**
   * The seam for replies (called by the reply handler, inside the transaction that stores the
   * reply): every connection of the project that syncs replies gets a sync of that member.
   */
  async replyStored(
    tx: Queryable,
    reply: { projectId: string; targetListId: string; listingId: string },
  ): Promise<void> {
    const connections = await tx.query<ConnectionRow>(
      `select * from crm_connections where project_id = $1 and sync_replies and status <> 'disconnected'`,
      [reply.projectId],
    );
    for (const connection of connections) {
      const [open] = await tx.query<{ id: string }>(
        `select id from crm_syncs where connection_id = $1 and target_list_id = $2 and listing_id = $3
           and status = 'queued'`,
        [connection.id, reply.targetListId, reply.listingId],
      );
      if (open) continue; // the queued one will push this reply too
      await this.#enqueue(tx, connection, {
        targetListId: reply.targetListId,
        trigger: 'reply',
        listingId: reply.listingId,
        includeReplies: true,
      });
    }
  }

  async #row(projectId: string, connectionId: string, syncId: string): Promise<SyncRow> {
    const [row] = await this.#db.query<SyncRow>(
      'select * from crm_syncs where id = $1 and connection_id = $2 and project_id = $3',
      [syncId, connectionId, projectId],
    );
    if (!row)
      throw new NotFoundError(
        'crm_sync_not_found',
        `No sync ${syncId} of the CRM connection ${connectionId}.`,
      );
    return row;
  }

  async get(projectId: string, connectionId: string, syncId: string): Promise<CrmSync> {
    await this.#connections.row(projectId, connectionId);
    return syncOf(await this.#row(projectId, connectionId, syncId));
  }

  async list(
    projectId: string,
    connectionId: string,
    limit: number,
    cursor: string | undefined,
  ): Promise<Page<CrmSync>> {
    await this.#connections.row(projectId, connectionId);
    const after = numericCursor(cursor);
    const rows = await this.#db.query<SyncRow>(
      `select * from crm_syncs where connection_id = $1
         and ($2::bigint is null or (created, id) < ($2::bigint, $3::text))
       order by created desc, id desc limit $4`,
      [connectionId, after?.k ?? null, after?.id ?? '', limit + 1],
    );
    return pageOf(rows, limit, syncOf, (r) => ({ k: Number(r.created), id: r.id }));
  }

  async records(
    projectId: string,
    connectionId: string,
    syncId: string,
    options: { limit: number; cursor: string | undefined; result: CrmSyncRecord['result'] | undefined },
  ): Promise<Page<CrmSyncRecord>> {
    await this.#connections.row(projectId, connectionId);
    await this.#row(projectId, connectionId, syncId);
    const after = numericCursor(options.cursor);
    const rows = await this.#db.query<RecordRow>(
      `select * from crm_sync_records where sync_id = $1 and ($2::text is null or result = $2)
         and ($3::int is null or seq > $3)
       order by seq limit $4`,
      [syncId, options.result ?? null, after?.k ?? null, options.limit + 1],
    );
    return pageOf(rows, options.limit, recordOf, (r) => ({ k: r.seq, id: r.id }));
  }

  // ---------------------------------------------------------------------------------------
  // The job

  async #run(syncId: string, ctx: JobContext): Promise<void> {
    const [sync] = await this.#db.query<SyncRow>('select * from crm_syncs where id = $1', [syncId]);
    if (!sync || sync.status === 'succeeded' || sync.status === 'failed') return;
    const [connection] = await this.#db.query<ConnectionRow>('select * from crm_connections where id = $1', [
      sync.connection_id,
    ]);
    if (!connection) return; // deleted: its syncs went with it
    if (connection.status === 'disconnected') {
      await this.#finish(sync.id, {
        code: 'crm_unauthorized',
        message: connection.last_error ?? 'The CRM rejected the credentials of this connection.',
      });
      return;
    }
    await this.#db.query(
      `update crm_syncs set status = 'running', started_at = coalesce(started_at, $2) where id = $1`,
      [syncId, nowSeconds()],
    );
    const client = clientFor(connection.provider, {
      outbound: this.#connections.outbound,
      credentials: this.#connections.credentials(connection),
      baseUrl: connection.base_url,
      settings: connection.settings,
      http: {
        ...this.#options.http,
        signal: ctx.signal,
        budget: { waitMs: this.#options.maxRateLimitWaitMs ?? 15 * 60_000 },
      },
    });
    try {
      if (sync.started_at === null) await this.#countMembers(sync);
      await this.#pushMembers(sync, client);
      if (sync.include_replies) await this.#pushReplies(sync, client, this.#replies);
      await this.#finish(sync.id, null);
    } catch (err) {
      if (err instanceof Gone) return;
      if (ctx.signal.aborted) throw err; // the instance stops: another attempt resumes
      const crm = err instanceof CrmError ? err : undefined;
      if (crm?.code === 'crm_unauthorized') {
        await this.#finish(sync.id, { code: 'crm_unauthorized', message: crm.message }, 'disconnected');
        return;
      }
      if (err instanceof ListGone) {
        await this.#finish(sync.id, { code: 'target_list_not_found', message: err.message });
        return;
      }
      if (crm?.code === 'crm_setup_required') {
        await this.#finish(sync.id, { code: 'crm_setup_required', message: crm.message });
        return;
      }
      if (ctx.retryCount < SYNC_RETRIES) {
        this.#options.logger.warn(
          { err, sync_id: syncId, attempt: ctx.retryCount },
          'CRM sync attempt failed; retrying',
        );
        throw err;
      }
      const code = crm?.code === 'crm_rate_limited' ? 'crm_rate_limited' : 'crm_unavailable';
      await this.#finish(sync.id, {
        code,
        message: crm?.message ?? `The sync failed: ${(err as Error).message}`,
      });
    }
  }

  async #countMembers(sync: SyncRow): Promise<void> {
    const total = await this.#targetLists.memberCount(sync.target_list_id, sync.listing_id);
    await this.#db.query('update crm_syncs set total = $2 where id = $1', [sync.id, total]);
  }

  async #links(
    connectionId: string,
    kind: 'company' | 'contact' | 'note',
    ids: string[],
  ): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await this.#db.query<{ local_id: string; crm_id: string }>(
      'select local_id, crm_id from crm_links where connection_id = $1 and kind = $2 and local_id = any($3::text[])',
      [connectionId, kind, ids],
    );
    return new Map(rows.map((r) => [r.local_id, r.crm_id]));
  }

  async #pushMembers(sync: SyncRow, client: CrmClient): Promise<void> {
    if (!(await this.#targetLists.exists(sync.target_list_id)))
      throw new ListGone(`The target list ${sync.target_list_id} was deleted.`);
    let cursor = sync.member_cursor;
    for (;;) {
      const batch: MemberRow[] = await this.#targetLists.membersAfter(
        sync.target_list_id,
        cursor,
        sync.listing_id,
        client.batchSize,
      );
      if (batch.length === 0) return;
      const ids = batch.map((m) => m.listing_id);
      const companies = await this.#links(sync.connection_id, 'company', ids);
      const contacts = await this.#links(sync.connection_id, 'contact', ids);
      const inputs = batch.map((m) => {
        const company = companies.get(m.listing_id);
        const contact = contacts.get(m.listing_id);
        return memberInput(m, { ...(company ? { company } : {}), ...(contact ? { contact } : {}) });
      });
      const outcomes = await client.upsertMembers(inputs);
      cursor = batch[batch.length - 1]!.position;
      await this.#recordMembers(sync, client, batch, outcomes, cursor);
    }
  }

  async #recordMembers(
    sync: SyncRow,
    client: CrmClient,
    batch: MemberRow[],
    outcomes: MemberOutcome[],
    cursor: number,
  ): Promise<void> {
    await this.#db.transaction(async (tx) => {
      const { count, now, record } = await recorderOf(tx, sync.id);
      for (const [i, m] of batch.entries()) {
        const o = outcomes[i] ?? { result: 'failed', crmId: null, error: 'no answer', contact: null };
        await record({
          kind: 'member',
          listingId: m.listing_id,
          replyId: null,
          result: o.result,
          crmObject: client.objects.company,
          crmId: o.crmId,
          contact:
            o.contact === null
              ? null
              : JSON.stringify({
                  result: o.contact.result,
                  crm_object: client.objects.contact,
                  crm_id: o.contact.crmId,
                  error: o.contact.error,
                }),
          error: o.error,
        });
        if (o.crmId) await link(tx, sync.connection_id, 'company', m.listing_id, o.crmId, now);
        if (o.contact?.crmId)
          await link(tx, sync.connection_id, 'contact', m.listing_id, o.contact.crmId, now);
      }
      await tx.query(
        `update crm_syncs set created_count = created_count + $2, updated_count = updated_count + $3,
           failed_count = failed_count + $4, member_cursor = $5 where id = $1`,
        [sync.id, count.created, count.updated, count.failed, cursor],
      );
    });
  }

  async #pushReplies(sync: SyncRow, client: CrmClient, source: ReplySource): Promise<void> {
    let afterId: string | null = null;
    for (;;) {
      const page = await source.replies(sync.target_list_id, {
        listingId: sync.listing_id,
        afterId,
        limit: client.batchSize,
      });
      if (page.length === 0) return;
      afterId = page[page.length - 1]!.id;
      const done = await this.#links(
        sync.connection_id,
        'note',
        page.map((r) => r.id),
      );
      const todo = page.filter((r) => !done.has(r.id));
      if (todo.length === 0) continue;
      const listingIds = [...new Set(todo.map((r) => r.listingId))];
      const companies = await this.#links(sync.connection_id, 'company', listingIds);
      const contacts = await this.#links(sync.connection_id, 'contact', listingIds);
      const ready: NoteInput[] = [];
      for (const r of todo) {
        const company = companies.get(r.listingId);
        if (company) {
          ready.push({
            replyId: r.id,
            listingId: r.listingId,
            companyId: company,
            contactId: contacts.get(r.listingId) ?? null,
            subject: r.subject,
            text: r.text,
            from: r.from,
            fromName: r.fromName,
            receivedAt: r.receivedAt,
          });
        }
      }
      const outcomes = ready.length ? await client.addNotes(ready) : [];
      const byReply = new Map<string, NoteOutcome>(ready.map((n, i) => [n.replyId, outcomes[i]!]));
      await this.#db.transaction(async (tx) => {
        const { count, now, record } = await recorderOf(tx, sync.id);
        const synced: string[] = [];
        for (const r of todo) {
          const o: NoteOutcome = byReply.get(r.id) ?? {
            result: 'failed',
            crmId: null,
            error: `The member ${r.listingId} is not in the CRM yet (its company failed or was never synced); sync its target list first.`,
          };
          await record({
            kind: 'reply',
            listingId: r.listingId,
            replyId: r.id,
            result: o.result,
            crmObject: client.objects.note,
            crmId: o.crmId,
            contact: null,
            error: o.error,
          });
          if (o.crmId) {
            await link(tx, sync.connection_id, 'note', r.id, o.crmId, now);
            synced.push(r.id);
          }
        }
        await tx.query(
          `update crm_syncs set total = total + $5, created_count = created_count + $2, updated_count = updated_count + $3,
             failed_count = failed_count + $4 where id = $1`,
          [sync.id, count.created, count.updated, count.failed, todo.length],
        );
        if (synced.length) await source.markSynced(tx, synced);
      });
    }
  }

  /** Ends a sync (succeeded when `error` is null), updates its connection, emits the event. */
  async #finish(
    syncId: string,
    error: CrmSyncError | null,
    connectionStatus?: 'disconnected',
  ): Promise<void> {
    await this.#db.transaction(async (tx) => {
      const now = nowSeconds();
      const [row] = await tx.query<SyncRow>(
        `update crm_syncs set status = $2, error_code = $3, error_message = $4, completed_at = $5,
           started_at = coalesce(started_at, $5)
         where id = $1 and status in ('queued', 'running') returning *`,
        [syncId, error ? 'failed' : 'succeeded', error?.code ?? null, error?.message ?? null, now],
      );
      if (!row) return;
      if (error === null) {
        await tx.query(
          `update crm_connections set status = 'active', last_synced_at = $2, last_error = null where id = $1`,
          [row.connection_id, now],
        );
      } else {
        await tx.query(
          `update crm_connections set status = case when $3::text = 'disconnected' or status = 'disconnected'
             then 'disconnected' else 'error' end, last_error = $2 where id = $1`,
          [row.connection_id, error.message, connectionStatus ?? null],
        );
      }
      await this.#webhooks.emit(row.project_id, 'crm.sync.completed', syncOf(row), { tx });
    });
  }
}

class ListGone extends Error {}

/** One record of a sync: a member's company (and contact) or a reply's note. */
interface SyncRecord {
  kind: 'member' | 'reply';
  listingId: string;
  replyId: string | null;
  result: 'created' | 'updated' | 'failed';
  crmObject: string;
  crmId: string | null;
  /** The member's contact outcome, as JSON. */
  contact: string | null;
  error: string | null;
}

/**
 * Locks the sync and writes its records in `tx`, numbered on from the last and counted by result
 * (for its counters); throws Gone once the sync is no longer running (cancelled, deleted).
 */
async function recorderOf(
  tx: Queryable,
  syncId: string,
): Promise<{
  count: Record<SyncRecord['result'], number>;
  now: number;
  record: (r: SyncRecord) => Promise<void>;
}> {
  const [row] = await tx.query<SyncRow>('select * from crm_syncs where id = $1 for update', [syncId]);
  if (!row || row.status !== 'running') throw new Gone();
  let seq = row.created_count + row.updated_count + row.failed_count;
  const count = { created: 0, updated: 0, failed: 0 };
  const now = nowSeconds();
  const record = async (r: SyncRecord) => {
    count[r.result]++;
    await tx.query(
      `insert into crm_sync_records
         (id, sync_id, seq, kind, listing_id, reply_id, result, crm_object, crm_id, contact, error, created)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        newId('crmr'),
        syncId,
        seq++,
        r.kind,
        r.listingId,
        r.replyId,
        r.result,
        r.crmObject,
        r.crmId,
        r.contact,
        r.error,
        now,
      ],
    );
  };
  return { count, now, record };
}

async function link(
  tx: Queryable,
  connectionId: string,
  kind: 'company' | 'contact' | 'note',
  localId: string,
  crmId: string,
  now: number,
): Promise<void> {
  await tx.query(
    `insert into crm_links (connection_id, kind, local_id, crm_id, updated) values ($1, $2, $3, $4, $5)
     on conflict (connection_id, kind, local_id) do update set crm_id = excluded.crm_id, updated = excluded.updated`,
    [connectionId, kind, localId, crmId, now],
  );
}
