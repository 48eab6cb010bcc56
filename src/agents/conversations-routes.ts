// /v1/conversations: create, get, update metadata, delete, and the items (list, add, get,
// delete), as the OpenAI SDKs and the Agents SDK's OpenAIConversationsSession call them.
import type { Router } from 'express';
import type {
  ConversationItemList,
  CreateConversationData,
  CreateConversationItemsData,
  CreateConversationItemsResponses,
  CreateConversationResponses,
  DeleteConversationData,
  DeleteConversationItemData,
  DeleteConversationItemResponses,
  DeleteConversationResponses,
  GetConversationData,
  GetConversationItemData,
  GetConversationItemResponses,
  GetConversationResponses,
  ListConversationItemsData,
  ListConversationItemsResponses,
  ResponseItem,
  UpdateConversationData,
  UpdateConversationResponses,
} from '../../generated/model/client/types.gen.ts';
import type { Db } from '../platform/db.ts';
import { encodeCursor, nextLinkOf, numericCursor } from '../platform/pagination.ts';
import { typedRouter } from '../platform/route.ts';
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

export function createConversationsRouter(db: Db): Router {
  const api = typedRouter();
  const conversations = new ConversationStore(db);
  const responses = new ResponseStore(db);
  const stores = { responses, conversations };

  api.post<CreateConversationData, CreateConversationResponses>(
    '/v1/conversations',
    async ({ body, principal }) => {
      const input = body.items ?? [];
      const items = inputItems(input, await resolveReferences(stores, principal(), input, 'items'));
      return { status: 200, body: await conversations.create(principal(), body.metadata, items) };
    },
  );

  api.get<GetConversationData, GetConversationResponses>(
    '/v1/conversations/{conversation_id}',
    async ({ path, principal }) => ({
      status: 200,
      body: await conversations.get(principal(), path.conversation_id),
    }),
  );

  api.post<UpdateConversationData, UpdateConversationResponses>(
    '/v1/conversations/{conversation_id}',
    async ({ path, body, principal }) => ({
      status: 200,
      body: await conversations.update(principal(), path.conversation_id, body.metadata),
    }),
  );

  api.delete<DeleteConversationData, DeleteConversationResponses>(
    '/v1/conversations/{conversation_id}',
    async ({ path, principal }) => {
      await conversations.delete(principal(), path.conversation_id);
      return {
        status: 200,
        body: { id: path.conversation_id, object: 'conversation.deleted', deleted: true },
      };
    },
  );

  api.get<ListConversationItemsData, ListConversationItemsResponses>(
    '/v1/conversations/{conversation_id}/items',
    async ({ path, query, req, principal }) => {
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
    },
  );

  api.post<CreateConversationItemsData, CreateConversationItemsResponses>(
    '/v1/conversations/{conversation_id}/items',
    async ({ path, body, principal }) => {
      const items = inputItems(body.items, await resolveReferences(stores, principal(), body.items, 'items'));
      const kept = await conversations.append(principal(), path.conversation_id, items);
      return { status: 200, body: listOf(kept, false, null) };
    },
  );

  api.get<GetConversationItemData, GetConversationItemResponses>(
    '/v1/conversations/{conversation_id}/items/{item_id}',
    async ({ path, principal }) => ({
      status: 200,
      body: await conversations.item(principal(), path.conversation_id, path.item_id),
    }),
  );

  api.delete<DeleteConversationItemData, DeleteConversationItemResponses>(
    '/v1/conversations/{conversation_id}/items/{item_id}',
    async ({ path, principal }) => ({
      status: 200,
      body: await conversations.deleteItem(principal(), path.conversation_id, path.item_id),
    }),
  );

  return api.router;
}
