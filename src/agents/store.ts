// Stored responses, per project: a key never reads another project's responses (404).
import type {
  Response,
  ResponseItem,
  ResponseStreamEventData,
} from '../../generated/model/client/types.gen.ts';
import type { Db, Queryable } from '../platform/db.ts';
import { NotFoundError } from '../platform/errors.ts';
import type { Principal } from '../platform/principal.ts';
import type { HistoryItem } from './convert.ts';
import { nowSeconds } from '../platform/clock.ts';

export interface StoredResponse {
  body: Response;
  inputItems: ResponseItem[];
  /** Every item before the response's output (the chain of previous responses included). */
  context: HistoryItem[];
  background: boolean;
}

interface Row {
  body: Response;
  input_items: ResponseItem[];
  context: HistoryItem[];
  background: boolean;
}

export class ResponseStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async insert(
    principal: Principal,
    stored: StoredResponse,
    background?: { sealedRequest: string; tx: Queryable },
  ): Promise<void> {
    const now = nowSeconds();
    await (background?.tx ?? this.#db).query(
      `insert into responses (id, account_id, project_id, key_id, model, status, background, created, updated, body, input_items, context, sealed_request, principal)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9::jsonb, $10::jsonb, $11::jsonb, $12, $13::jsonb)`,
      [
        stored.body.id,
        principal.accountId,
        principal.projectId,
        principal.keyId,
        stored.body.model,
        stored.body.status,
        stored.background,
        now,
        JSON.stringify(stored.body),
        JSON.stringify(stored.inputItems),
        JSON.stringify(stored.context),
        background?.sealedRequest ?? null,
        background ? JSON.stringify(principal) : null,
      ],
    );
    await this.#indexItems(background?.tx ?? this.#db, principal, stored.body.id, stored.inputItems);
  }

  /** Keeps `items` findable by id for `item_reference` (an item already kept stays as it was). */
  async #indexItems(
    db: Queryable,
    principal: Principal,
    responseId: string,
    items: readonly HistoryItem[],
  ): Promise<void> {
    if (items.length === 0) return;
    await db.query(
      `insert into response_items (response_id, id, account_id, created, item)
       select $1, e->>'id', $2, $3, e from jsonb_array_elements($4::jsonb) as e
       on conflict (response_id, id) do nothing`,
      [responseId, principal.accountId, nowSeconds(), JSON.stringify(items)],
    );
  }

  /** The stored item `id` of the caller's account (an input or output item of a stored response). */
  async findItem(principal: Principal, id: string): Promise<HistoryItem | undefined> {
    const [row] = await this.#db.query<{ item: HistoryItem }>(
      `select item from response_items where account_id = $1 and id = $2 order by created desc limit 1`,
      [principal.accountId, id],
    );
    return row?.item;
  }

  /** A background response as its job reads it, whatever the project. */
  async background(
    id: string,
  ): Promise<(StoredResponse & { sealedRequest: string; principal: Principal }) | undefined> {
    const [row] = await this.#db.query<Row & { sealed_request: string | null; principal: Principal | null }>(
      `select body, input_items, context, background, sealed_request, principal from responses where id = $1 and background`,
      [id],
    );
    if (!row || row.sealed_request === null || row.principal === null) return undefined;
    return {
      body: row.body,
      inputItems: row.input_items,
      context: row.context,
      background: true,
      sealedRequest: row.sealed_request,
      principal: row.principal,
    };
  }

  /** The status as stored now (a cancel from another instance shows here). */
  async status(id: string): Promise<string | undefined> {
    const [row] = await this.#db.query<{ status: string }>('select status from responses where id = $1', [
      id,
    ]);
    return row?.status;
  }

  /** Marks a queued or running background response cancelled; false when it had ended. */
  async cancel(principal: Principal, id: string): Promise<Response | undefined> {
    const [row] = await this.#db.query<{ body: Response }>(
      `update responses set status = 'cancelled', updated = $3,
         body = jsonb_set(jsonb_set(body, '{status}', '"cancelled"'), '{completed_at}', to_jsonb($3::bigint))
       where id = $1 and project_id = $2 and background and status in ('queued', 'in_progress') returning body`,
      [id, principal.projectId, nowSeconds()],
    );
    return row?.body;
  }

  async update(principal: Principal, body: Response): Promise<void> {
    const rows = await this.#db.query(
      `update responses set status = $3, body = $4::jsonb, updated = $5 where id = $1 and project_id = $2 returning id`,
      [body.id, principal.projectId, body.status, JSON.stringify(body), nowSeconds()],
    );
    if (rows.length > 0 && body.status !== 'in_progress' && body.status !== 'queued') {
      await this.#indexItems(this.#db, principal, body.id, body.output);
    }
  }

  /** The stored response `id` of the caller's project, or undefined. */
  async find(principal: Principal, id: string): Promise<StoredResponse | undefined> {
    const [row] = await this.#db.query<Row>(
      `select body, input_items, context, background from responses where id = $1 and project_id = $2`,
      [id, principal.projectId],
    );
    if (row === undefined) return undefined;
    return { body: row.body, inputItems: row.input_items, context: row.context, background: row.background };
  }

  /** As `find`, or a 404 naming the id. */
  async get(principal: Principal, id: string): Promise<StoredResponse> {
    const found = await this.find(principal, id);
    if (found === undefined) throw notFound(id);
    return found;
  }

  /** Appends events a background run emitted (in order, numbered from 0 by the run). */
  async appendEvents(id: string, events: ResponseStreamEventData[]): Promise<void> {
    if (events.length === 0) return;
    await this.#db.query(
      `insert into response_events (response_id, seq, event)
       select $1, (e->>'sequence_number')::int, e from jsonb_array_elements($2::jsonb) as e
       on conflict (response_id, seq) do update set event = excluded.event`,
      [id, JSON.stringify(events)],
    );
  }

  /** Drops the events of a run that is started again from its beginning. */
  async clearEvents(id: string): Promise<void> {
    await this.#db.query('delete from response_events where response_id = $1', [id]);
  }

  /** The stored events of a background response after `after`, in order (at most `limit`). */
  async eventsAfter(id: string, after: number, limit = 500): Promise<ResponseStreamEventData[]> {
    const rows = await this.#db.query<{ event: ResponseStreamEventData }>(
      'select event from response_events where response_id = $1 and seq > $2 order by seq limit $3',
      [id, after, limit],
    );
    return rows.map((r) => r.event);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const rows = await this.#db.query(
      `delete from responses where id = $1 and project_id = $2 returning id`,
      [id, principal.projectId],
    );
    if (rows.length === 0) throw notFound(id);
  }
}

function notFound(id: string): NotFoundError {
  return new NotFoundError('not_found', `No stored response with id '${id}' exists.`, { param: 'id' });
}
