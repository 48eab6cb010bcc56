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

const SUMS = `sum(input_tokens), sum(output_tokens), sum(audio_seconds), sum(images), sum(steps), sum(units),
  sum(cost_nano), sum(requests)`;

/**
 * Rolls usage records created before `cutoff` (and not rolled to `level` yet) into one row per
 * group: sums and the day kept, everything else of the calls gone. Reports and statements sum the
 * rows, so their figures do not change.
 */
async function rollUp(q: Queryable, cutoff: number, level: 'day' | 'account'): Promise<number> {
  const [project, key] = level === 'day' ? ['project_id', 'key_id'] : [`''`, `''`];
  const groups =
    level === 'day'
      ? 'service, account_id, project_id, key_id, model, day'
      : 'service, account_id, model, day';
  const done =
    level === 'day' ? `endpoint in ('rollup:day', 'rollup:account')` : `endpoint = 'rollup:account'`;
  const rows = await q.query(
    `with gone as (delete from usage_records where created < $1 and not (${done}) returning *)
     insert into usage_records (id, service, account_id, project_id, key_id, model, endpoint, input_tokens,
       output_tokens, audio_seconds, images, steps, units, cost_nano, requests, status, latency_ms, created, day)
     select 'usg_' || substr(md5(random()::text || clock_timestamp()::text || account_id), 1, 26), service,
       account_id, ${project}, ${key}, model, 'rollup:${level}', ${SUMS}, 0, 0, min(created), day
     from gone group by ${groups}
     returning id`,
    [cutoff],
  );
  return rows.length;
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
      usage_records: await q.query('select * from usage_records where account_id = $1 order by created, id', [
        accountId,
      ]),
    };
  },
  async erase({ accountId }: AccountScope, q: Queryable) {
    await deleted(q, 'delete from idempotency_keys where account_id = $1 returning key', [accountId]);
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
      usage_rolled_to_days: await rollUp(q, requestLogs, 'day'),
      usage_rolled_to_accounts: await rollUp(q, usageDetail, 'account'),
    };
  },
};
