// The accounts part of an account's data (src/platform/account-data.ts): the account, its
// projects, its keys' metadata (never a secret's hash), its usage records and idempotency
// replays. Erasure keeps the usage records and the account's id: statements are built from them.
import {
  type AccountDataPart,
  type AccountScope,
  deleted,
  type KeptRecord,
  rowsWithout,
} from '../platform/account-data.ts';
import type { Queryable } from '../platform/db.ts';
import { forgetIdempotencyKeys } from '../platform/idempotency.ts';
import { rollUpUsage, usageRecordsOf } from '../platform/usage-records.ts';

export { keyIdsOf } from './store.ts';

/** What a statement needs (the law keeps billing records): the usage records and the account's id. */
export const BILLING_RECORDS_KEPT: KeptRecord = {
  what: 'usage records: per call the service, model, counts, cost and day, with the ids of the account, project and key; no content, no names',
  why: 'they are the billing records behind the monthly statements, which commercial and tax law (e.g. § 147 AO, § 257 HGB) makes us keep (GDPR Art. 17(3)(b))',
  until: '10 years after the end of the year of the statement',
};

/** The account's project ids (read before anything is erased: the other parts act by project). */
export async function projectIdsOf(q: Queryable, accountId: string): Promise<string[]> {
  const rows = await q.query<{ id: string }>('select id from projects where account_id = $1', [accountId]);
  return rows.map((r) => r.id);
}

/** Revokes every key of the account still in force (its erasure's first step). */
export async function revokeAllKeys(q: Queryable, accountId: string, at: number): Promise<void> {
  await q.query(
    `update api_keys set status = 'revoked', revoked_at = $2 where account_id = $1 and status <> 'revoked'`,
    [accountId, at],
  );
}

export const accountsData: AccountDataPart = {
  name: 'account',
  async export({ accountId }: AccountScope, q: Queryable) {
    return {
      account:
        (await q.query('select id, name, plan, created from accounts where id = $1', [accountId]))[0] ?? null,
      projects: await q.query('select * from projects where account_id = $1 order by created, id', [
        accountId,
      ]),
      api_keys: await rowsWithout(
        q,
        'select * from api_keys where account_id = $1 order by created, id',
        [accountId],
        ['secret_hash', 'previous_secret_hash'],
      ),
      usage_records: await usageRecordsOf(q, accountId),
    };
  },
  async erase({ accountId }: AccountScope, q: Queryable) {
    await forgetIdempotencyKeys(q, accountId);
    await deleted(q, 'delete from api_keys where account_id = $1 returning id', [accountId]);
    // the account row stays, nameless, for the statements; its projects' names go
    await q.query(`update projects set name = 'erased', metadata = '{}' where account_id = $1`, [accountId]);
    await q.query(`update accounts set name = 'erased' where id = $1`, [accountId]);
    return [
      BILLING_RECORDS_KEPT,
      {
        what: "the account's id, plan and creation time, and its projects' ids, without names",
        why: 'the statements and usage records kept above refer to them',
        until: 'as long as those records',
      },
    ];
  },
  async prune({ requestLogs, usageDetail }, q: Queryable) {
    return {
      usage_rolled_to_days: await rollUpUsage(q, requestLogs, 'day'),
      usage_rolled_to_accounts: await rollUpUsage(q, usageDetail, 'account'),
    };
  },
};
