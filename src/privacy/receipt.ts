// The erasure's receipt as a mail to the account's former console users: what was erased, what
// was kept and why. Sent once the erasure is done, to addresses held in memory only.
import type { Mailer } from '../mail/outbox.ts';
import type { Receipt } from './service.ts';

export async function mailErasureReceipt(mailer: Mailer, to: string[], receipt: Receipt): Promise<void> {
  const text = [
    'Your Eurus account has been erased, as you asked.',
    '',
    'Erased:',
    ...receipt.erased.map((what) => `- ${what}`),
    '',
    'Kept, and why:',
    ...(receipt.kept.length === 0
      ? ['- nothing']
      : receipt.kept.map(
          (k) => `- ${k.what}\n  why: ${k.why}\n  until: ${k.until ?? 'as long as the reason holds'}`,
        )),
    '',
    'Your address was erased with the rest: this is the last mail we send you.',
  ].join('\n');
  for (const address of to) await mailer.send({ to: address, subject: 'Your Eurus account is erased', text });
}
