// Opting out of a campaign, without an API key: the RFC 8058 one-click POST of every message's
// List-Unsubscribe header, and a page for people whose button POSTs the same (a link scanner
// that only fetches the page unsubscribes no one). The token is signed (tokens.ts); what it
// unlocks is this one recipient's opt-out, nothing else. Unsubscribing twice changes nothing.
import type { MailRouting, OptingOut } from '../mail/routing.ts';
import type { Db } from '../platform/db.ts';
import type { SecretBox } from '../platform/secrets.ts';
import { nowSeconds } from '../platform/clock.ts';
import { addCounts } from './campaigns.ts';
import { suppress } from './suppressions.ts';
import { escapeHtml } from './templates.ts';
import { recipientOfToken } from './opt-out-tokens.ts';

const page = (title: string, body: string) =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1a1a1a}
button{font:inherit;padding:.6rem 1.2rem;border:0;border-radius:.4rem;background:#1d4ed8;color:#fff;cursor:pointer}
button:focus{outline:3px solid #93c5fd;outline-offset:2px}
.muted{color:#555;font-size:.9rem}
</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;

export const invalidPage = () =>
  page(
    'Link not valid',
    `<h1>This unsubscribe link is not valid</h1>
<p>It may have been cut off or changed. Use the link in the message exactly as it arrived, or reply to the sender and ask to be removed.</p>`,
  );

export class Unsubscribes {
  readonly #db: Db;
  readonly #box: SecretBox | undefined;
  readonly #routing: MailRouting;

  /** Registers the campaigns' opt-out tokens (`rcp_...`) with the mail routing. */
  constructor(db: Db, box: SecretBox | undefined, routing: MailRouting) {
    this.#db = db;
    this.#box = box;
    this.#routing = routing;
    routing.optOuts('rcp_', (token) => this.#recipient(token));
  }

  /** Who a genuine token of any feature stands for, else null. */
  who(token: string): Promise<OptingOut | null> {
    return this.#routing.optOutOf(token);
  }

  async #recipient(token: string): Promise<OptingOut | null> {
    const recipientId = recipientOfToken(this.#box, token);
    if (recipientId === null) return null;
    const [row] = await this.#db.query<{ email: string; from_name: string; from_email: string }>(
      `select r.email, c.from_name, c.from_email from campaign_recipients r join campaigns c on c.id = r.campaign_id
       where r.id = $1`,
      [recipientId],
    );
    return row
      ? {
          email: row.email,
          fromName: row.from_name,
          fromEmail: row.from_email,
          optOut: () => this.#unsubscribe(recipientId),
        }
      : null;
  }

  askPage(who: OptingOut): string {
    const domain = who.fromEmail.slice(who.fromEmail.lastIndexOf('@') + 1);
    return page(
      'Unsubscribe',
      `<h1>Unsubscribe</h1>
<p>Stop messages from <strong>${escapeHtml(who.fromName)}</strong> (${escapeHtml(domain)}) to <strong>${escapeHtml(who.email)}</strong>?</p>
<form method="post">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<button type="submit">Unsubscribe</button>
</form>
<p class="muted">One click is enough: the address is then removed from every campaign of this sender for good.</p>`,
    );
  }

  donePage(who: OptingOut): string {
    return page(
      'Unsubscribed',
      `<h1>You are unsubscribed</h1>
<p><strong>${escapeHtml(who.email)}</strong> will receive no further messages from <strong>${escapeHtml(who.fromName)}</strong>.</p>`,
    );
  }

  /** Opts a campaign recipient out: suppressed for its account, follow-ups stopped, member and counters marked. */
  async #unsubscribe(recipientId: string): Promise<void> {
    await this.#db.transaction(async (tx) => {
      const [recipient] = await tx.query<{
        id: string;
        campaign_id: string;
        account_id: string;
        member_id: string;
        email: string;
        status: string;
      }>('select * from campaign_recipients where id = $1 for update', [recipientId]);
      if (!recipient) return;
      await suppress(tx, recipient.account_id, recipient.email, 'unsubscribed', recipient.campaign_id);
      if (recipient.status === 'unsubscribed') return;
      const now = nowSeconds();
      await tx.query(
        `update campaign_recipients set status = 'unsubscribed', next_at = null, updated = $2 where id = $1`,
        [recipient.id, now],
      );
      await addCounts(tx, recipient.campaign_id, { unsubscribed: 1 });
      await tx.query(`update target_list_members set status = 'unsubscribed', updated = $2 where id = $1`, [
        recipient.member_id,
        now,
      ]);
    });
  }
}
