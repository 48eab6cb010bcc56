// The CRM part of an account's data (src/platform/account-data.ts): connections (never their
// sealed credentials), syncs with their records, and the links to CRM objects.
import { type AccountDataPart, type AccountScope, rowsWithout } from '../platform/account-data.ts';
import type { Queryable } from '../platform/db.ts';

export const crmData: AccountDataPart = {
  name: 'crm',
  async export({ accountId, projectIds }: AccountScope, q: Queryable) {
    return {
      connections: await rowsWithout(
        q,
        'select * from crm_connections where account_id = $1 order by created, id',
        [accountId],
        ['credentials_sealed'],
      ),
      syncs: await q.query(
        'select * from crm_syncs where project_id = any($1::text[]) order by created, id',
        [projectIds],
      ),
      sync_records: await q.query(
        `select * from crm_sync_records where sync_id in (select id from crm_syncs where project_id = any($1::text[]))
         order by sync_id, seq`,
        [projectIds],
      ),
      links: await q.query(
        'select * from crm_links where connection_id in (select id from crm_connections where account_id = $1)',
        [accountId],
      ),
    };
  },
  async erase({ accountId, projectIds }: AccountScope, q: Queryable) {
    await q.query(
      'delete from crm_sync_records where sync_id in (select id from crm_syncs where project_id = any($1::text[]))',
      [projectIds],
    );
    await q.query('delete from crm_syncs where project_id = any($1::text[])', [projectIds]);
    await q.query(
      'delete from crm_links where connection_id in (select id from crm_connections where account_id = $1)',
      [accountId],
    );
    await q.query('delete from crm_connections where account_id = $1', [accountId]);
    return [];
  },
};
