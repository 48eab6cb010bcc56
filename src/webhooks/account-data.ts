// The webhooks part of an account's data (src/platform/account-data.ts): endpoints (never their
// signing secrets) and the messages sent to them with every attempt. Retention of messages is
// the feature's own scheduled prune (RETENTION_WEBHOOK_MESSAGES).
import { type AccountDataPart, type AccountScope, rowsWithout } from '../platform/account-data.ts';
import type { Queryable } from '../platform/db.ts';

export const webhooksData: AccountDataPart = {
  name: 'webhooks',
  async export({ projectIds }: AccountScope, q: Queryable) {
    return {
      endpoints: await rowsWithout(
        q,
        'select * from webhook_endpoints where project_id = any($1::text[]) order by created, id',
        [projectIds],
        ['secret_sealed', 'previous_secret_sealed'],
      ),
      messages: await q.query(
        'select * from webhook_messages where project_id = any($1::text[]) order by created, id',
        [projectIds],
      ),
    };
  },
  async erase({ projectIds }: AccountScope, q: Queryable) {
    await q.query('delete from webhook_messages where project_id = any($1::text[])', [projectIds]);
    await q.query('delete from webhook_endpoints where project_id = any($1::text[])', [projectIds]);
    return [];
  },
};
