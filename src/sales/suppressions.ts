// The suppression list of an account: addresses that no campaign of the account, in any of its
// projects, writes to again. Unsubscribes and hard bounces are added by themselves and kept for
// good; `manual` entries are the account's own (imports of its opt-out lists) and can be removed.
import type { Suppression, SuppressionReason } from '../../generated/directory/client/types.gen.ts';
import type { Db, Queryable } from '../platform/db.ts';
import { ConflictError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { numericCursor, type Page, pageOf } from '../platform/pagination.ts';
import type { SecretBox } from '../platform/secrets.ts';
import { optOutHashes } from './opt-out-hashes.ts';
import { nowSeconds } from '../platform/clock.ts';

interface SuppressionRow {
  id: string;
  account_id: string;
  email: string;
  reason: SuppressionReason;
  campaign_id: string | null;
  created: number;
}

const suppressionOf = (row: SuppressionRow): Suppression => ({
  id: row.id,
  object: 'suppression',
  email: row.email,
  reason: row.reason,
  campaign_id: row.campaign_id,
  created: Number(row.created),
});

/** Addresses are kept and matched in lower case (RFC 5321 lets the local part differ; no mailbox provider does). */
export const normalEmail = (email: string) => email.trim().toLowerCase();

/**
 * Suppresses an address for an account (in `q`, a transaction of the caller's); an address
 * already suppressed keeps its first entry. Whether the entry is new.
 */
export async function suppress(
  q: Queryable,
  accountId: string,
  email: string,
  reason: SuppressionReason,
  campaignId: string | null,
): Promise<boolean> {
  const rows = await q.query(
    `insert into suppressions (id, account_id, email, reason, campaign_id, created)
     values ($1, $2, $3, $4, $5, $6) on conflict (account_id, email) do nothing returning id`,
    [newId('sup'), accountId, normalEmail(email), reason, campaignId, nowSeconds()],
  );
  return rows.length > 0;
}

/**
 * Whether mail to `email` from `fromAddress` must not go out: the account's suppression list, or
 * an opt-out from that sending domain kept as a hash when an account that used it was erased
 * (keyed with `box`, or the older unkeyed form: src/sales/opt-out-hashes.ts).
 */
export async function isSuppressed(
  q: Queryable,
  box: SecretBox | undefined,
  accountId: string,
  email: string,
  fromAddress: string,
): Promise<boolean> {
  const domain = fromAddress.slice(fromAddress.lastIndexOf('@') + 1).toLowerCase();
  const { keyed, plain } = optOutHashes(box, normalEmail(email));
  const rows = await q.query(
    `select 1 from suppressions where account_id = $1 and email = $2
     union all select 1 from suppression_hashes where domain = $3
       and ((hash_form = 'hmac-sha256' and email_hash = $4) or (hash_form = 'sha256' and email_hash = $5))
     limit 1`,
    [accountId, normalEmail(email), domain, keyed, plain],
  );
  return rows.length > 0;
}

/** Which of `emails` (lower case) are on the account's suppression list. */
export async function suppressedAmong(
  q: Queryable,
  accountId: string,
  emails: string[],
): Promise<Set<string>> {
  const rows = await q.query<{ email: string }>(
    'select email from suppressions where account_id = $1 and email = any($2)',
    [accountId, emails],
  );
  return new Set(rows.map((r) => r.email));
}

export class Suppressions {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async #row(accountId: string, email: string, q: Queryable = this.#db): Promise<SuppressionRow> {
    const [row] = await q.query<SuppressionRow>(
      'select * from suppressions where account_id = $1 and email = $2',
      [accountId, normalEmail(email)],
    );
    if (!row) {
      throw new NotFoundError('suppression_not_found', `The address ${email} is not suppressed.`, {
        param: 'email',
      });
    }
    return row;
  }

  async get(accountId: string, email: string): Promise<Suppression> {
    return suppressionOf(await this.#row(accountId, email));
  }

  /** Adds a `manual` entry; the entry and whether it is new. */
  async add(accountId: string, email: string): Promise<{ created: boolean; suppression: Suppression }> {
    const created = await suppress(this.#db, accountId, email, 'manual', null);
    return { created, suppression: await this.get(accountId, email) };
  }

  async remove(accountId: string, email: string): Promise<string> {
    return this.#db.transaction(async (tx) => {
      const row = await this.#row(accountId, email, tx);
      if (row.reason !== 'manual') {
        throw new ConflictError(
          'suppression_not_removable',
          `The address ${row.email} is suppressed because of ${row.reason === 'unsubscribed' ? 'an unsubscribe' : 'a hard bounce'}; such entries are kept for good.`,
          { param: 'email' },
        );
      }
      await tx.query('delete from suppressions where id = $1', [row.id]);
      return row.id;
    });
  }

  async list(
    accountId: string,
    query: { limit: number; cursor: string | undefined; reason: SuppressionReason | undefined },
  ): Promise<Page<Suppression>> {
    const after = numericCursor(query.cursor);
    const rows = await this.#db.query<SuppressionRow>(
      `select * from suppressions where account_id = $1 and ($2::text is null or reason = $2)
         and ($3::bigint is null or (created, id) < ($3::bigint, $4::text))
       order by created desc, id desc limit $5`,
      [accountId, query.reason ?? null, after?.k ?? null, after?.id ?? '', query.limit + 1],
    );
    return pageOf(rows, query.limit, suppressionOf, (r) => ({ k: Number(r.created), id: r.id }));
  }
}
