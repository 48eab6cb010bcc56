// The Sales part of an account's data (src/platform/account-data.ts): target lists and their
// members, campaigns with recipients and messages, replies, and the suppression list. Erasure
// keeps each suppressed address as a hash per sending domain (suppression_hashes), so an opt-out
// is honoured for good; replies (inbound mail) go after RETENTION_INBOUND_MAIL.
import type { AccountDataPart, AccountScope, KeptRecord } from '../platform/account-data.ts';
import type { Queryable } from '../platform/db.ts';
import type { SecretBox } from '../platform/secrets.ts';
import { keepOptOut } from './opt-out-hashes.ts';
import { nowSeconds } from '../platform/clock.ts';

export const SUPPRESSIONS_KEPT: KeptRecord = {
  what: 'each address of the suppression list (unsubscribes, bounces, your own opt-outs) as a keyed hash (HMAC-SHA256 under a key of the service), with its reason, for each of your sending domains; no address in clear',
  why: 'an objection to direct marketing must be honoured for good (GDPR Art. 21(3)): every send from those domains checks the hash, whoever sends',
  until: 'for good',
};

/**
 * The part; `domainsOf` names the account's sending domains (the mail part's, read before
 * erasure); `box` keys the opt-outs' hashes.
 */
export function salesData(
  domainsOf: (q: Queryable, accountId: string) => Promise<string[]>,
  box: SecretBox | undefined,
): AccountDataPart {
  return {
    name: 'sales',
    async export({ accountId }: AccountScope, q: Queryable) {
      const byAccount = (table: string) =>
        q.query(`select * from ${table} where account_id = $1 order by created, id`, [accountId]);
      return {
        target_lists: await byAccount('target_lists'),
        target_list_members: await q.query(
          `select * from target_list_members where target_list_id in (select id from target_lists where account_id = $1)
           order by target_list_id, position`,
          [accountId],
        ),
        campaigns: await byAccount('campaigns'),
        campaign_recipients: await q.query(
          'select * from campaign_recipients where account_id = $1 order by campaign_id, position',
          [accountId],
        ),
        campaign_messages: await q.query(
          `select * from campaign_messages where campaign_id in (select id from campaigns where account_id = $1)
           order by campaign_id, recipient_id, step`,
          [accountId],
        ),
        replies: await byAccount('replies'),
        suppressions: await byAccount('suppressions'),
      };
    },
    async erase({ accountId }: AccountScope, q: Queryable) {
      const domains = await domainsOf(q, accountId);
      const suppressed = await q.query<{ email: string; reason: string }>(
        'select email, reason from suppressions where account_id = $1',
        [accountId],
      );
      const now = nowSeconds();
      for (const domain of domains) {
        for (const { email, reason } of suppressed) {
          await keepOptOut(q, box, domain, email, reason, now);
        }
      }
      await q.query('delete from replies where account_id = $1', [accountId]);
      await q.query(
        'delete from campaign_messages where campaign_id in (select id from campaigns where account_id = $1)',
        [accountId],
      );
      await q.query('delete from campaign_recipients where account_id = $1', [accountId]);
      await q.query('delete from campaigns where account_id = $1', [accountId]);
      await q.query(
        'delete from target_list_members where target_list_id in (select id from target_lists where account_id = $1)',
        [accountId],
      );
      await q.query('delete from target_lists where account_id = $1', [accountId]);
      await q.query('delete from suppressions where account_id = $1', [accountId]);
      return suppressed.length > 0 && domains.length > 0 ? [SUPPRESSIONS_KEPT] : [];
    },
    async prune({ inboundMail }, q: Queryable) {
      // the reply's words and sender go; the fact of a reply (billed, counted) stays
      const rows = await q.query(
        `update replies set text = '', subject = '', from_name = null, from_address = 'erased'
         where received_at < $1 and from_address <> 'erased' returning id`,
        [inboundMail],
      );
      return { replies: rows.length };
    },
  };
}
