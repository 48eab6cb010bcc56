// Conversations, per project: items kept in order across responses. A key never reads another
// project's conversation (404); an item_reference finds their items within the account.
import type { Conversation, Response, ResponseItem } from '../../generated/model/client/types.gen.ts';
import { asInputItem } from './convert.ts';
import type { Db } from '../platform/db.ts';
import { NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { Principal } from '../platform/principal.ts';
import { nowSeconds } from '../platform/clock.ts';

/** The most items a response reads from its conversation (the context window bounds it sooner). */
export const MAX_CONVERSATION_ITEMS = 10_000;

const PREFIX: Record<string, string> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  reasoning: 'rs',
  mcp_call: 'mcp',
  mcp_list_tools: 'mcpl',
};

interface Row {
  id: string;
  created: string | number;
  metadata: Record<string, string> | null;
}

function asConversation(row: Row): Conversation {
  return {
    id: row.id,
    object: 'conversation',
    created_at: Number(row.created),
    metadata: row.metadata ?? {},
  };
}

export interface ItemPage {
  items: ResponseItem[];
  /** The seq of the last item, for the cursor. */
  lastSeq: number | undefined;
  hasMore: boolean;
}

export class ConversationStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async create(
    principal: Principal,
    metadata: Record<string, string> | null | undefined,
    items: readonly ResponseItem[],
  ): Promise<Conversation> {
    const id = newId('conv');
    const created = nowSeconds();
    await this.#db.query(
      `insert into conversations (id, account_id, project_id, created, metadata) values ($1, $2, $3, $4, $5::jsonb)`,
      [id, principal.accountId, principal.projectId, created, JSON.stringify(metadata ?? {})],
    );
    if (items.length > 0) await this.append(principal, id, items);
    return { id, object: 'conversation', created_at: created, metadata: metadata ?? {} };
  }

  async get(principal: Principal, id: string): Promise<Conversation> {
    const [row] = await this.#db.query<Row>(
      `select id, created, metadata from conversations where id = $1 and project_id = $2`,
      [id, principal.projectId],
    );
    if (row === undefined) throw notFound(id);
    return asConversation(row);
  }

  async update(
    principal: Principal,
    id: string,
    metadata: Record<string, string> | null,
  ): Promise<Conversation> {
    const [row] = await this.#db.query<Row>(
      `update conversations set metadata = $3::jsonb where id = $1 and project_id = $2 returning id, created, metadata`,
      [id, principal.projectId, JSON.stringify(metadata ?? {})],
    );
    if (row === undefined) throw notFound(id);
    return asConversation(row);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const rows = await this.#db.query(
      `delete from conversations where id = $1 and project_id = $2 returning id`,
      [id, principal.projectId],
    );
    if (rows.length === 0) throw notFound(id);
  }

  /**
   * Adds `items` at the end, in order, and returns them as kept: an item whose id the
   * conversation already holds (or repeats) gets a new id.
   */
  async append(principal: Principal, id: string, items: readonly ResponseItem[]): Promise<ResponseItem[]> {
    await this.get(principal, id);
    if (items.length === 0) return [];
    const held = new Set(
      (
        await this.#db.query<{ id: string }>(
          `select id from conversation_items where conversation_id = $1 and id = any($2::text[])`,
          [id, items.map((item) => item.id)],
        )
      ).map((r) => r.id),
    );
    const kept = items.map((item) => {
      if (!held.has(item.id)) {
        held.add(item.id);
        return item;
      }
      const fresh = { ...item, id: newId(PREFIX[item.type] ?? 'item') } as ResponseItem;
      held.add(fresh.id);
      return fresh;
    });
    await this.#db.query(
      `insert into conversation_items (conversation_id, id, account_id, created, item)
       select $1, e.value->>'id', $2, $3, e.value from jsonb_array_elements($4::jsonb) with ordinality as e(value, n)
       order by e.n`,
      [id, principal.accountId, nowSeconds(), JSON.stringify(kept)],
    );
    return kept;
  }

  /** Every item, oldest first (at most MAX_CONVERSATION_ITEMS), for a response that continues it. */
  async history(principal: Principal, id: string): Promise<ResponseItem[]> {
    await this.get(principal, id);
    const rows = await this.#db.query<{ item: ResponseItem }>(
      `select item from conversation_items where conversation_id = $1 order by seq desc limit $2`,
      [id, MAX_CONVERSATION_ITEMS],
    );
    return rows.map((r) => r.item).reverse();
  }

  /** A page of items after `afterSeq` (or after the item `afterId`) in `order`. */
  async page(
    principal: Principal,
    id: string,
    options: { order: 'asc' | 'desc'; limit: number; afterSeq?: number; afterId?: string },
  ): Promise<ItemPage> {
    await this.get(principal, id);
    let after = options.afterSeq;
    if (after === undefined && options.afterId !== undefined) {
      const [row] = await this.#db.query<{ seq: string | number }>(
        `select seq from conversation_items where conversation_id = $1 and id = $2`,
        [id, options.afterId],
      );
      if (row === undefined) throw itemNotFound(options.afterId, 'after');
      after = Number(row.seq);
    }
    const asc = options.order === 'asc';
    const rows = await this.#db.query<{ seq: string | number; item: ResponseItem }>(
      `select seq, item from conversation_items where conversation_id = $1
       ${after === undefined ? '' : asc ? 'and seq > $3' : 'and seq < $3'}
       order by seq ${asc ? 'asc' : 'desc'} limit $2`,
      after === undefined ? [id, options.limit + 1] : [id, options.limit + 1, after],
    );
    const hasMore = rows.length > options.limit;
    const served = rows.slice(0, options.limit);
    const last = served.at(-1);
    return {
      items: served.map((r) => r.item),
      lastSeq: last === undefined ? undefined : Number(last.seq),
      hasMore,
    };
  }

  async item(principal: Principal, id: string, itemId: string): Promise<ResponseItem> {
    await this.get(principal, id);
    const [row] = await this.#db.query<{ item: ResponseItem }>(
      `select item from conversation_items where conversation_id = $1 and id = $2`,
      [id, itemId],
    );
    if (row === undefined) throw itemNotFound(itemId, 'item_id');
    return row.item;
  }

  async deleteItem(principal: Principal, id: string, itemId: string): Promise<Conversation> {
    const conversation = await this.get(principal, id);
    const rows = await this.#db.query(
      `delete from conversation_items where conversation_id = $1 and id = $2 returning id`,
      [id, itemId],
    );
    if (rows.length === 0) throw itemNotFound(itemId, 'item_id');
    return conversation;
  }

  /** An item of any conversation of the account, for `item_reference`. */
  async findItem(principal: Principal, itemId: string): Promise<ResponseItem | undefined> {
    const [row] = await this.#db.query<{ item: ResponseItem }>(
      `select item from conversation_items where account_id = $1 and id = $2 order by seq desc limit 1`,
      [principal.accountId, itemId],
    );
    return row?.item;
  }
}

/**
 * Adds a response's input and output items to the conversation it continues, once it has ended
 * completed or incomplete (a failed or cancelled response leaves the conversation as it was).
 */
export async function extendConversation(
  store: ConversationStore,
  principal: Principal,
  response: Response,
  input: readonly ResponseItem[],
): Promise<void> {
  const id = response.conversation?.id;
  if (id === undefined || (response.status !== 'completed' && response.status !== 'incomplete')) return;
  await store.append(principal, id, [...input, ...response.output.map(asInputItem)]);
}

function notFound(id: string): NotFoundError {
  return new NotFoundError('not_found', `No conversation with id '${id}' exists in this project.`, {
    param: 'conversation_id',
  });
}

function itemNotFound(id: string, param: string): NotFoundError {
  return new NotFoundError('item_not_found', `The conversation holds no item with id '${id}'.`, { param });
}
