// /v1/conversations: create, get, update metadata, delete, and the items (list, add, get,
// delete), as the OpenAI SDKs and the Agents SDK's OpenAIConversationsSession call them.
import type { ConversationItemList, ResponseItem } from '../../generated/model/client/types.gen.ts';
import type { Db } from '../platform/db.ts';
import { encodeCursor, nextLinkOf, numericCursor } from '../platform/pagination.ts';
import { operationRouter, type OperationRouter } from '../platform/route.ts';
import { ConversationStore } from './conversations.ts';
import { inputItems } from './convert.ts';
import { resolveReferences } from './references.ts';
import { ResponseStore } from './store.ts';

function listOf(items: ResponseItem[], hasMore: boolean, cursor: string | null): ConversationItemList {
  return {
    object: 'list',
    data: items,
    has_more: hasMore,
    next_cursor: cursor,
    first_id: items[0]?.id ?? null,
    last_id: items.at(-1)?.id ?? null,
  };
}

export function createConversationsRouter(db: Db) {
  const api: OperationRouter = operationRouter();
  const conversations = new ConversationStore(db);
  const responses = new ResponseStore(db);
  const stores = { responses, conversations };

  api.on('createConversation', async ({ body, principal }) => {
    const input = body.items ?? [];
    const items = inputItems(input, await resolveReferences(stores, principal(), input, 'items'));
    return { status: 200, body: await conversations.create(principal(), body.metadata, items) };
  });

  api.on('getConversation', async ({ path, principal }) => ({
    status: 200,
    body: await conversations.get(principal(), path.conversation_id),
  }));

  api.on('updateConversation', async ({ path, body, principal }) => ({
    status: 200,
    body: await conversations.update(principal(), path.conversation_id, body.metadata),
  }));

  api.on('deleteConversation', async ({ path, principal }) => {
    await conversations.delete(principal(), path.conversation_id);
    return {
      status: 200,
      body: { id: path.conversation_id, object: 'conversation.deleted', deleted: true },
    };
  });

  api.on('listConversationItems', async ({ path, query, req, principal }) => {
    const order = query?.order ?? 'desc';
    const limit = query?.limit ?? 20;
    const cursor = numericCursor(query?.cursor);
    const page = await conversations.page(principal(), path.conversation_id, {
      order,
      limit,
      ...(cursor !== undefined
        ? { afterSeq: cursor.k }
        : query?.after !== undefined
          ? { afterId: query.after }
          : {}),
    });
    const last = page.items.at(-1);
    const next =
      page.hasMore && last !== undefined && page.lastSeq !== undefined
        ? encodeCursor({ k: page.lastSeq, id: last.id })
        : null;
    const body = listOf(page.items, page.hasMore, next);
    return { status: 200, body, headers: nextLinkOf(req, body) };
  });

  api.on('createConversationItems', async ({ path, body, principal }) => {
    const items = inputItems(body.items, await resolveReferences(stores, principal(), body.items, 'items'));
    const kept = await conversations.append(principal(), path.conversation_id, items);
    return { status: 200, body: listOf(kept, false, null) };
  });

  api.on('getConversationItem', async ({ path, principal }) => ({
    status: 200,
    body: await conversations.item(principal(), path.conversation_id, path.item_id),
  }));

  api.on('deleteConversationItem', async ({ path, principal }) => ({
    status: 200,
    body: await conversations.deleteItem(principal(), path.conversation_id, path.item_id),
  }));

  return api;
}
