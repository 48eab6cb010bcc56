// The concierge part of an account's data (src/platform/account-data.ts): workflows with every
// step, the providers contacted with their replies, and the runtime key's id (never its sealed
// secret). Replies read from providers' mail go after RETENTION_CONCIERGE_MAIL.
import { type AccountDataPart, type AccountScope, rowsWithout } from '../platform/account-data.ts';
import type { Queryable } from '../platform/db.ts';

export const conciergeData: AccountDataPart = {
  name: 'concierge',
  async export({ accountId }: AccountScope, q: Queryable) {
    return {
      workflows: await q.query(
        'select * from concierge_workflows where account_id = $1 order by created, id',
        [accountId],
      ),
      contacts: await rowsWithout(
        q,
        'select * from concierge_contacts where account_id = $1 order by workflow_id, position',
        [accountId],
        ['token'],
      ),
      runtime_keys: await rowsWithout(
        q,
        'select * from concierge_runtime where account_id = $1',
        [accountId],
        ['secret_sealed'],
      ),
    };
  },
  async erase({ accountId }: AccountScope, q: Queryable) {
    await q.query('delete from concierge_contacts where account_id = $1', [accountId]);
    await q.query('delete from concierge_workflows where account_id = $1', [accountId]);
    await q.query('delete from concierge_runtime where account_id = $1', [accountId]);
    return [];
  },
  async prune({ conciergeMail }, q: Queryable) {
    // the mail read from providers goes; the workflow's result (its comparison) stays with it
    const rows = await q.query(
      `update concierge_contacts set reply = null, reading = null
       where reply is not null and sent_at < $1 returning id`,
      [conciergeMail],
    );
    return { concierge_mail: rows.length };
  },
};
