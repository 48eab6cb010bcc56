// Opting out of the concierge's requests for quotes: the one-click link of each request
// (`/v1/unsubscribe/cq_<id>.<token>`, served by the same pages as the campaigns' links) stands
// for its provider's address, which goes on the account's suppression list.
import { timingSafeEqual } from 'node:crypto';
import type { OptingOut } from '../mail/routing.ts';
import { suppress } from '../sales/suppressions.ts';
import type { WorkflowStore } from './store.ts';

const LINK = /^(cq_[0-9A-Za-z]{26})\.([a-z2-7]{20})$/;

/** Who an opt-out token of a request for a quote stands for, or null for a token that is not genuine. */
export async function optOutOf(store: WorkflowStore, link: string): Promise<OptingOut | null> {
  const match = LINK.exec(link);
  if (!match) return null;
  const row = await store.sender(match[1] ?? '');
  if (!row || row.from_address === null) return null;
  const given = Buffer.from(match[2] ?? '');
  const expected = Buffer.from(row.token);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const { account_id: accountId, email } = row;
  return {
    email,
    fromName: row.from_name ?? row.from_address,
    fromEmail: row.from_address,
    // on the account's suppression list (`unsubscribed`): no later brief or campaign writes to it
    optOut: async () => {
      await suppress(store.db, accountId, email, 'unsubscribed', null);
    },
  };
}
