// What an inbound message is: a person's reply, an automatic one, or a bounce.
//
// - bounce: a delivery status notification (RFC 3464: `multipart/report;
//   report-type=delivery-status`), read for the failed recipient, its `Action`, its `Status`
//   (5.x.x permanent, 4.x.x transient) and the Message-ID of the message that bounced; or, from a
//   mail server that sends no DSN, a message from MAILER-DAEMON or postmaster to the null sender.
// - auto_reply: RFC 3834 `Auto-Submitted` other than `no`; `X-Autoreply`, `X-Autorespond`;
//   `Precedence: bulk, junk, list, auto_reply`; a read receipt (`report-type=
//   disposition-notification`); or an out-of-office subject in one of the EU's main languages.
// - human: everything else.
import type { ParsedMail } from 'mailparser';

export type InboundKind = 'human' | 'auto_reply' | 'bounce';

export interface BounceReport {
  /** The address that could not be reached (`Final-Recipient`, else `Original-Recipient`), or null. */
  recipient: string | null;
  /** The DSN status code (`5.1.1`), or null. */
  status: string | null;
  /** The DSN action: `failed`, `delayed`, `delivered`, `relayed` or `expanded`, or null. */
  action: string | null;
  /** Whether the failure is final: action `failed` or a 5.x.x status (a hard bounce). */
  permanent: boolean;
  /** The remote server's words (`Diagnostic-Code`), or null. */
  diagnostic: string | null;
  /** The Message-ID of the message that bounced, from the returned headers, or null. */
  originalMessageId: string | null;
}

/** A bounce whose report says nothing more: no recipient, status, action or diagnostic known. */
const unreadBounce = (): BounceReport => ({
  recipient: null,
  status: null,
  action: null,
  permanent: false,
  diagnostic: null,
  originalMessageId: null,
});

/** The header value of `name` (lower case) as text, or undefined. */
function header(mail: ParsedMail, name: string): string | undefined {
  const line = mail.headerLines.find((h) => h.key === name);
  if (!line) return undefined;
  return line.line
    .slice(line.line.indexOf(':') + 1)
    .replace(/\r?\n[ \t]+/g, ' ')
    .trim();
}

/** The fields of a DSN block: `Name: value` lines, folded lines joined, names in lower case. */
function fieldsOf(block: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at > 0) fields.set(line.slice(0, at).trim().toLowerCase(), line.slice(at + 1).trim());
  }
  return fields;
}

/** `rfc822; someone@example.de` -> `someone@example.de`. */
const addressOf = (value: string | undefined): string | null => {
  if (!value) return null;
  const address = value.includes(';') ? value.slice(value.indexOf(';') + 1) : value;
  return address.trim().replace(/^<|>$/g, '').toLowerCase() || null;
};

function contentTypeOf(mail: ParsedMail): { value: string; params: Record<string, string> } {
  const type = mail.headers.get('content-type') as
    { value?: string; params?: Record<string, string> } | undefined;
  return { value: (type?.value ?? '').toLowerCase(), params: type?.params ?? {} };
}

/**
 * The parts of a multipart message's top level, read from the raw bytes: mailparser folds a
 * `message/delivery-status` part into the text, so the report is read here. Base64 and
 * quoted-printable parts are decoded; nested multiparts are not entered.
 */
function topLevelParts(raw: Buffer, boundary: string): Array<{ type: string; body: string }> {
  const text = raw.toString('latin1');
  const delimiter = `--${boundary}`;
  const pieces = text.split(delimiter).slice(1);
  const parts: Array<{ type: string; body: string }> = [];
  for (const piece of pieces) {
    if (piece.startsWith('--')) break; // the closing delimiter
    const split = piece.search(/\r?\n\r?\n/);
    const head = split < 0 ? piece : piece.slice(0, split);
    let body = split < 0 ? '' : piece.slice(split).replace(/^\r?\n\r?\n/, '');
    const fields = fieldsOf(head.replace(/^\r?\n/, ''));
    const type = (fields.get('content-type') ?? 'text/plain').split(';')[0]!.trim().toLowerCase();
    const encoding = (fields.get('content-transfer-encoding') ?? '').trim().toLowerCase();
    let bytes = Buffer.from(body, 'latin1');
    if (encoding === 'base64') bytes = Buffer.from(body.replace(/\s+/g, ''), 'base64');
    else if (encoding === 'quoted-printable') {
      body = body
        .replace(/=\r?\n/g, '')
        .replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
      bytes = Buffer.from(body, 'latin1');
    }
    parts.push({ type, body: bytes.toString('utf8') });
  }
  return parts;
}

/** The bounce report of a DSN (RFC 3464), or undefined when the message is not one. */
export function dsnOf(mail: ParsedMail, raw: Buffer): BounceReport | undefined {
  const type = contentTypeOf(mail);
  if (
    type.value !== 'multipart/report' ||
    (type.params['report-type'] ?? '').toLowerCase() !== 'delivery-status'
  ) {
    return undefined;
  }
  const parts = type.params.boundary ? topLevelParts(raw, type.params.boundary) : [];
  const status = parts.find((p) =>
    ['message/delivery-status', 'message/global-delivery-status'].includes(p.type),
  );
  const returned =
    parts.find((p) =>
      ['message/rfc822', 'text/rfc822-headers', 'message/global', 'message/global-headers'].includes(p.type),
    ) ??
    mail.attachments
      .filter((a) => ['message/rfc822', 'text/rfc822-headers'].includes(a.contentType.toLowerCase()))
      .map((a) => ({ type: a.contentType, body: a.content.toString('utf8') }))[0];
  let report = unreadBounce();
  if (status) {
    // the per-message block, then one block per recipient: the first recipient that failed, else the first
    const blocks = status.body.split(/\r?\n\s*\r?\n/).map(fieldsOf);
    const recipients = blocks.filter((b) => b.has('final-recipient') || b.has('original-recipient'));
    const chosen = recipients.find((b) => b.get('action')?.toLowerCase() === 'failed') ?? recipients[0];
    if (chosen) {
      const action = chosen.get('action')?.toLowerCase() ?? null;
      const code = /\d\.\d{1,3}\.\d{1,3}/.exec(chosen.get('status') ?? '')?.[0] ?? null;
      report = {
        ...report,
        recipient: addressOf(chosen.get('final-recipient') ?? chosen.get('original-recipient')),
        status: code,
        action,
        permanent: action === 'failed' || code?.startsWith('5') === true,
        diagnostic:
          chosen
            .get('diagnostic-code')
            ?.replace(/^smtp;\s*/i, '')
            .replace(/\s+/g, ' ') ?? null,
      };
    }
  }
  if (returned) {
    const head = returned.body.split(/\r?\n\r?\n/)[0] ?? '';
    const id = fieldsOf(head).get('message-id');
    report.originalMessageId = id ? id.trim() : null;
  }
  return report;
}

const AUTO_SUBJECT = new RegExp(
  [
    '^auto(matic)?[ -]?(reply|response|answer)',
    '^out of (the )?office',
    '^ooo\\b',
    "^(i am|i'm) (out|away)",
    '^abwesenheit',
    '^automatische (antwort|r[üu]ckantwort)',
    '^r[ée]ponse automatique',
    '^absence',
    '^respuesta autom[áa]tica',
    '^fuera de la oficina',
    '^risposta automatica',
    '^fuori (sede|ufficio)',
    '^automatisch antwoord',
    '^afwezig',
    '^niet aanwezig',
    '^autosvar',
    '^automatisk svar',
    '^poza biurem',
    '^odpowied[źz] automatyczna',
    '^resposta autom[áa]tica',
    '^automaattinen vastaus',
  ].join('|'),
  'i',
);

/** Why `mail` is an automatic reply, or undefined when nothing says it is. */
export function autoReplySignal(mail: ParsedMail): string | undefined {
  const auto = header(mail, 'auto-submitted');
  if (auto && auto.split(';')[0]!.trim().toLowerCase() !== 'no') return `Auto-Submitted: ${auto}`;
  for (const name of ['x-autoreply', 'x-autorespond', 'x-autoresponder']) {
    const value = header(mail, name);
    if (value !== undefined && !/^(no|false|0)$/i.test(value)) return `${name}: ${value}`;
  }
  const precedence = header(mail, 'precedence')?.toLowerCase();
  if (precedence && ['bulk', 'junk', 'list', 'auto_reply', 'auto-reply'].includes(precedence)) {
    return `Precedence: ${precedence}`;
  }
  const type = contentTypeOf(mail);
  if (
    type.value === 'multipart/report' &&
    (type.params['report-type'] ?? '').toLowerCase() === 'disposition-notification'
  ) {
    return 'a read receipt';
  }
  // "AW: Abwesenheitsnotiz", "Re: Out of office": a reply prefix before the words
  const subject = (mail.subject ?? '').replace(/^((re|aw|wg|fw|fwd|sv|antw|r|rif|tr)\s*:\s*)+/i, '').trim();
  if (AUTO_SUBJECT.test(subject)) return `subject: ${mail.subject ?? ''}`;
  return undefined;
}

/** A bounce of a mail server that sends no DSN: from the mail system, to the null sender. */
function plainBounce(mail: ParsedMail, envelopeFrom: string): BounceReport | undefined {
  const from = mail.from?.value[0]?.address?.toLowerCase() ?? '';
  if (envelopeFrom !== '' || !/^(mailer-daemon|postmaster)@/.test(from)) return undefined;
  return unreadBounce();
}

export function classify(
  mail: ParsedMail,
  raw: Buffer,
  envelopeFrom: string,
): { kind: InboundKind; bounce?: BounceReport; why: string } {
  const dsn = dsnOf(mail, raw) ?? plainBounce(mail, envelopeFrom);
  if (dsn) return { kind: 'bounce', bounce: dsn, why: dsn.status ? `DSN ${dsn.status}` : 'mail system' };
  const auto = autoReplySignal(mail);
  if (auto) return { kind: 'auto_reply', why: auto };
  return { kind: 'human', why: 'no automatic signal' };
}
