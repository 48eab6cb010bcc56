// Contacting: a request for a quote to each shortlisted provider, over the Sales mail path, from
// the brief's verified sending domain, with a Reply-To address of its own (`q-<token>@`, the
// domain's reply host) and a one-click opt-out. Each request is claimed before it is sent and
// settled right after, so a retried stage sends no request twice and a cancel stops the rest.
import type { VerifiedDomain } from '../../mail/domains.ts';
import { MailSendError } from '../../mail/transport.ts';
import { isoSeconds, nowSeconds } from '../../platform/clock.ts';
import { AgentFailed } from '../agent.ts';
import { describeNeed } from '../need.ts';
import { requestForQuote } from '../rfq.ts';
import type { ContactRow, WorkflowRow } from '../store.ts';
import { step } from '../view.ts';
import type { Stage, StageRun } from './stage.ts';

export const contact: Stage = async (row, run) => {
  if (row.sending_domain_id === null || row.from_address === null)
    throw new AgentFailed('mail_unavailable', 'No sending domain.');
  const sender = { ...row, from_address: row.from_address };
  const domain = await run.mail.verifiedDomain(row.project_id, row.sending_domain_id);
  for (const c of await run.store.unsent(row.id)) {
    const claimed = await run.store.claim(c.id);
    if (claimed) await write(sender, domain, claimed, run);
  }
  if ((await run.store.sentCount(row.id)) === 0)
    throw new AgentFailed('no_provider_contacted', 'No shortlisted provider could be written to.', 400);
  return {
    to: 'awaiting_replies',
    steps: [step('contacting', 'note', `Waiting for answers until ${isoSeconds(Number(row.respond_by))}.`)],
    startAfter: new Date(Number(row.respond_by ?? nowSeconds()) * 1000),
  };
};

/** One request for a quote, sent and settled (or not sent, and why). */
async function write(
  row: WorkflowRow & { from_address: string },
  domain: VerifiedDomain,
  contact: ContactRow,
  run: StageRun,
): Promise<void> {
  const { store, mail } = run;
  if (await mail.suppressed(row.account_id, contact.email, row.from_address)) {
    await store.settle(row.id, contact.id, { status: 'suppressed' }, [
      step(
        'contacting',
        'not_contacted',
        `Did not write to ${contact.name}: ${contact.email} is on your suppression list.`,
      ),
    ]);
    return;
  }
  const u = row.understanding;
  const messageId = `<${contact.id}.0@${domain.domain}>`;
  const address = `q-${contact.token}@${domain.replyDomain}`;
  const unsubscribeUrl = mail.unsubscribeUrl(contact);
  const { subject, text } = requestForQuote({
    language: u?.language ?? 'en',
    providerName: contact.name,
    fromName: row.from_name ?? row.from_address,
    need: u?.description ?? (u ? describeNeed(row.brief, u) : row.brief),
    place: u?.place?.name.split(',')[0] ?? null,
    country: u?.place?.country ?? null,
    when: u?.when ?? (u?.deadline ? { kind: 'by', from: null, to: u.deadline, text: null } : null),
    respondBy: new Date(Number(row.respond_by ?? nowSeconds()) * 1000),
    unsubscribeUrl,
  });
  try {
    await mail.send({
      from: { name: row.from_name ?? undefined, address: row.from_address },
      to: { name: contact.name, address: contact.email },
      subject,
      text,
      messageId,
      envelopeFrom: address,
      replyTo: address,
      listUnsubscribe: { url: unsubscribeUrl },
      dkim: domain.dkim,
    });
  } catch (err) {
    if (!(err instanceof MailSendError && err.permanent)) throw err;
    await store.settle(row.id, contact.id, { status: 'failed', failure: err.message }, [
      step(
        'contacting',
        'not_contacted',
        `The mail server refused the request to ${contact.name} (${contact.email}): ${err.message}`,
      ),
    ]);
    return;
  }
  await store.settle(row.id, contact.id, { status: 'sent', message_id: messageId, sent_at: nowSeconds() }, [
    step('contacting', 'contacted', `Asked ${contact.name} (${contact.email}) for a quote.`),
  ]);
}
