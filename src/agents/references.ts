// `item_reference` input items: each stands for a stored item of the caller's account, an input
// or output item of a stored response or an item of a conversation.
import type { CreateResponseRequest } from '../../generated/model/client/types.gen.ts';
import { NotFoundError } from '../platform/errors.ts';
import type { Principal } from '../platform/principal.ts';
import type { ConversationStore } from './conversations.ts';
import { type HistoryItem, referencedItems } from './convert.ts';
import type { ResponseStore } from './store.ts';

/** The stored items the input's references name, by id: a 404 for one the account never stored. */
export async function resolveReferences(
  stores: { responses: ResponseStore; conversations: ConversationStore },
  principal: Principal,
  input: CreateResponseRequest['input'],
  field = 'input',
): Promise<Map<string, HistoryItem>> {
  const found = new Map<string, HistoryItem>();
  for (const { index, id } of referencedItems(input)) {
    if (found.has(id)) continue;
    const item =
      (await stores.responses.findItem(principal, id)) ??
      (await stores.conversations.findItem(principal, id));
    if (item === undefined) {
      throw new NotFoundError(
        'item_not_found',
        `${field}[${index}]: no stored item with id '${id}' exists in this account (an item_reference names an item of a stored response or conversation).`,
        { param: `${field}[${index}].id` },
      );
    }
    found.set(id, item);
  }
  return found;
}
