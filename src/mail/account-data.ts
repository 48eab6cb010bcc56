// The mail part of an account's data (src/platform/account-data.ts): sending domains with their
// DNS records, never the sealed DKIM private key.
import { type AccountDataPart, type AccountScope, rowsWithout } from '../platform/account-data.ts';
import type { Queryable } from '../platform/db.ts';

/** The account's sending domain names (erasure keeps opt-outs per sending domain, hashed). */
export async function sendingDomainNamesOf(q: Queryable, accountId: string): Promise<string[]> {
  const rows = await q.query<{ domain: string }>(
    'select distinct domain from sending_domains where account_id = $1',
    [accountId],
  );
  return rows.map((r) => r.domain);
}

export const mailData: AccountDataPart = {
  name: 'mail',
  async export({ accountId }: AccountScope, q: Queryable) {
    return {
      sending_domains: await rowsWithout(
        q,
        'select * from sending_domains where account_id = $1 order by created, id',
        [accountId],
        ['dkim_private_key_sealed'],
      ),
    };
  },
  async erase({ accountId }: AccountScope, q: Queryable) {
    await q.query('delete from sending_domains where account_id = $1', [accountId]);
    return [];
  },
};
