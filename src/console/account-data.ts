// The console's part of an account's data (src/platform/account-data.ts): its users (never a
// password hash), their sessions (times only), subscriptions and monthly statements. Erasure
// removes the people and keeps the subscriptions: statements are billing records.
import { accountCreated } from '../accounts/store.ts';
import type { AccountDataPart, AccountScope } from '../platform/account-data.ts';
import type { Db, Queryable } from '../platform/db.ts';
import { PlanStore } from './plans.ts';
import { nowSeconds } from '../platform/clock.ts';

/** Every month from `from` (Unix seconds) to `to`, as `YYYY-MM` in UTC. */
function monthsBetween(from: number, to: number): string[] {
  const months: string[] = [];
  const at = new Date(from * 1000);
  let year = at.getUTCFullYear();
  let month = at.getUTCMonth();
  const end = new Date(to * 1000);
  while (year < end.getUTCFullYear() || (year === end.getUTCFullYear() && month <= end.getUTCMonth())) {
    months.push(`${year}-${String(month + 1).padStart(2, '0')}`);
    month++;
    if (month === 12) [year, month] = [year + 1, 0];
  }
  return months;
}

/** The addresses of the account's console users (erasure mails them its receipt). */
export async function consoleEmailsOf(q: Queryable, accountId: string): Promise<string[]> {
  const rows = await q.query<{ email: string }>('select email from console_users where account_id = $1', [
    accountId,
  ]);
  return rows.map((r) => r.email);
}

/**
 * Ends the console access of the account at once (erasure's first step, with the keys): its
 * sessions and users go, so nobody logs in while the rest is erased. The users' addresses.
 */
export async function endConsoleAccess(q: Queryable, accountId: string): Promise<string[]> {
  const emails = await consoleEmailsOf(q, accountId);
  await q.query('delete from console_sessions where account_id = $1', [accountId]);
  await q.query('delete from console_users where account_id = $1', [accountId]);
  return emails;
}

/** The password hashes of the account's console users (erasure re-authenticates against them). */
export async function consolePasswordsOf(
  q: Queryable,
  accountId: string,
): Promise<Array<{ email: string; password_hash: string }>> {
  return q.query('select email, password_hash from console_users where account_id = $1', [accountId]);
}

export function consoleData(db: Db, vatRate: string): AccountDataPart {
  const plans = new PlanStore(db);
  return {
    name: 'console',
    async export({ accountId }: AccountScope, q: Queryable) {
      const users = await q.query(
        'select id, email, email_verified_at, created from console_users where account_id = $1 order by created',
        [accountId],
      );
      const sessions = await q.query(
        'select created, expires_at from console_sessions where account_id = $1 order by created',
        [accountId],
      );
      const subscriptions = await q.query(
        'select * from subscriptions where account_id = $1 order by created, id',
        [accountId],
      );
      const created = await accountCreated(q, accountId);
      const now = nowSeconds();
      const statements = [];
      // bounded by the account's age: one a month
      for (const month of created === undefined ? [] : monthsBetween(created, now)) {
        statements.push(await plans.statement(accountId, month, vatRate, now));
      }
      return { users, sessions, subscriptions, statements };
    },
    async erase({ accountId }: AccountScope, q: Queryable) {
      // sessions and link tokens go with their user (on delete cascade)
      await q.query('delete from console_sessions where account_id = $1', [accountId]);
      await q.query('delete from console_users where account_id = $1', [accountId]);
      return [
        {
          what: 'subscriptions: plan, start and end times',
          why: 'monthly statements bill them; commercial and tax law makes us keep billing records (GDPR Art. 17(3)(b))',
          until: '10 years after the end of the year of the statement',
        },
      ];
    },
  };
}
