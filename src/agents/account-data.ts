// The agents part of an account's data (src/platform/account-data.ts): stored responses with
// their items (never the sealed request or the principal of a background run), dropped after
// RETENTION_STORED_RESPONSES, and conversations with their items.
import { type AccountDataPart, type AccountScope, rowsWithout } from '../platform/account-data.ts';
import type { Queryable } from '../platform/db.ts';

export const agentsData: AccountDataPart = {
  name: 'responses',
  async export({ accountId }: AccountScope, q: Queryable) {
    return {
      stored_responses: await rowsWithout(
        q,
        'select * from responses where account_id = $1 order by created, id',
        [accountId],
        ['sealed_request', 'principal'],
      ),
      response_items: await q.query(
        'select * from response_items where account_id = $1 order by created, id',
        [accountId],
      ),
      conversations: await q.query('select * from conversations where account_id = $1 order by created, id', [
        accountId,
      ]),
      conversation_items: await q.query(
        'select * from conversation_items where account_id = $1 order by seq',
        [accountId],
      ),
    };
  },
  async erase({ accountId }: AccountScope, q: Queryable) {
    await q.query(
      'delete from response_events where response_id in (select id from responses where account_id = $1)',
      [accountId],
    );
    // response_items and conversation_items go with their parents (on delete cascade)
    await q.query('delete from responses where account_id = $1', [accountId]);
    await q.query('delete from conversation_items where account_id = $1', [accountId]);
    await q.query('delete from conversations where account_id = $1', [accountId]);
    return [];
  },
  async prune({ storedResponses }, q: Queryable) {
    // a background response still running is not past anything yet
    const done = `updated < $1 and status not in ('queued', 'in_progress')`;
    await q.query(
      `delete from response_events where response_id in (select id from responses where ${done})`,
      [storedResponses],
    );
    const rows = await q.query(`delete from responses where ${done} returning id`, [storedResponses]);
    return { stored_responses: rows.length };
  },
};
