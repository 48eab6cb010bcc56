// Outgoing mail (campaigns, and anything else that must be signed): one `MailTransport` made from
// the configuration. With SMTP_URL (smtp:// or smtps://, credentials in the URL) messages go to
// that relay or MTA over a bounded pool of connections, each opened to the address the outbound
// guard allows for an operator's host (`addressOf`: link-local such as the cloud metadata service
// refused, unless OUTBOUND_ALLOW_PRIVATE); without it they are written, byte for byte
// as they would have been sent, to the .eml outbox under DATA_DIR (outbox.ts). Either way
// nodemailer composes the message and signs it with the sending domain's DKIM key, which is
// decrypted only inside `send` (DkimKey.privateKey()).
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { dirname } from 'node:path';
import nodemailer from 'nodemailer';
import type { SendMailOptions, Transporter } from 'nodemailer';
import { OutboundRefused } from '../platform/outbound.ts';
import { writeToOutbox } from './outbox.ts';

/** The DKIM signing material of a verified sending domain (domains.ts). */
export interface DkimKey {
  /** The `d=` domain: the sending domain, which the From address must be on (DMARC alignment). */
  domain: string;
  /** The `s=` selector: the DNS record is `<selector>._domainkey.<domain>`. */
  selector: string;
  /** The private key as PKCS#8 PEM, decrypted on each call; never logged, never stored elsewhere. */
  privateKey(): string;
}

export interface MailAddress {
  name?: string | undefined;
  address: string;
}

export interface OutgoingMail {
  from: MailAddress;
  to: string | MailAddress;
  subject: string;
  /** Plain text body (UTF-8). */
  text: string;
  html?: string | undefined;
  /** The Message-ID, with or without angle brackets (`<cmp-...@mail.example.de>`); sent as given. */
  messageId: string;
  /** The envelope sender (MAIL FROM, where bounces go); the From address when unset. */
  envelopeFrom?: string | undefined;
  replyTo?: string | undefined;
  /** The Message-ID answered (`In-Reply-To`). */
  inReplyTo?: string | undefined;
  /** The thread's Message-IDs (`References`), oldest first. */
  references?: string[] | undefined;
  /**
   * RFC 8058 one-click unsubscribe: `List-Unsubscribe: <url>` (and `<mailto:...>` when given)
   * with `List-Unsubscribe-Post: List-Unsubscribe=One-Click`; both are covered by the signature.
   */
  listUnsubscribe?: { url: string; mailto?: string | undefined } | undefined;
  /** Any other header, one line each (a CR or LF in a name or value is refused). */
  headers?: Record<string, string> | undefined;
  /** Signs the message (campaign mail must be signed; console mail is not). */
  dkim?: DkimKey | undefined;
}

export interface SentMail {
  /** The Message-ID sent, in angle brackets. */
  messageId: string;
  via: 'smtp' | 'outbox';
  /** The relay's last answer (`250 2.0.0 Ok: queued as ...`), for SMTP. */
  response?: string;
  /** The .eml file written, for the outbox. */
  file?: string;
}

/**
 * A send that failed. `permanent`: the relay answered 5xx (retrying the same message cannot
 * succeed); otherwise temporary (a 4xx answer, a refused or dropped connection, a timeout):
 * retry later. `recipientRejected`: the relay refused the recipient itself (RCPT TO 5xx is a
 * hard bounce at send time), as opposed to the relay refusing us (authentication) or the message.
 */
export class MailSendError extends Error {
  readonly permanent: boolean;
  readonly recipientRejected: boolean;
  /** The SMTP reply code, when the relay answered (550, 451, ...). */
  readonly responseCode: number | undefined;
  /** The relay's answer, when it gave one. */
  readonly response: string | undefined;
  /** nodemailer's error code (ECONNECTION, ETIMEDOUT, EENVELOPE, EMESSAGE, EAUTH, ...). */
  readonly code: string;
  /** The outbound guard refused the relay's address: nothing was sent, and no retry can change it. */
  readonly guardRefused: boolean;

  constructor(
    message: string,
    details: {
      permanent: boolean;
      recipientRejected?: boolean;
      guardRefused?: boolean;
      responseCode?: number | undefined;
      response?: string | undefined;
      code: string;
      cause?: unknown;
    },
  ) {
    super(message, { cause: details.cause });
    this.name = 'MailSendError';
    this.permanent = details.permanent;
    this.recipientRejected = details.recipientRejected ?? false;
    this.guardRefused = details.guardRefused ?? false;
    this.responseCode = details.responseCode;
    this.response = details.response;
    this.code = details.code;
  }

  get temporary(): boolean {
    return !this.permanent;
  }
}

type SocketCallback = (err: Error | null, socket?: { connection: Socket }) => void;

/** Where a connection to `host` may go (the outbound guard's `address`). */
export type AddressOf = (host: string) => Promise<{ address: string }>;

export interface MailTransport {
  readonly via: 'smtp' | 'outbox';
  send(mail: OutgoingMail): Promise<SentMail>;
  /**
   * Whether mail can leave now, without sending any: the relay's greeting (a connection of its
   * own to the address the guard allows, EHLO, STARTTLS and AUTH when the URL asks, QUIT), or
   * the outbox folder writable. Rejects with the reason.
   */
  greet(timeoutMs: number): Promise<void>;
  /** Closes pooled connections. */
  close(): Promise<void>;
}

export interface TransportOptions {
  /** SMTP_URL; the outbox when undefined. */
  smtpUrl?: string | undefined;
  /** MAIL_OUTBOX_DIR. */
  outboxDir: string;
  /** SMTP_MAX_CONNECTIONS: pooled connections to the relay; 5 by default. */
  maxConnections?: number;
  /** SMTP_TIMEOUT_MS: connecting, the greeting, and each command's answer; 30,000 by default. */
  timeoutMs?: number;
  /** Where a connection to the relay may go: the outbound guard's `address` of origin `operator` (required with smtpUrl). */
  addressOf?: AddressOf | undefined;
}

/** The headers signed, besides those nodemailer signs by default: RFC 8058 asks for List-Unsubscribe-Post. */
const SIGNED_HEADERS = [
  'From',
  'Sender',
  'Reply-To',
  'Subject',
  'Date',
  'Message-ID',
  'To',
  'Cc',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'In-Reply-To',
  'References',
  'List-Id',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
].join(':');

const oneLine = (value: string, what: string): string => {
  if (/[\r\n]/.test(value))
    throw new MailSendError(`${what} holds a line break`, { permanent: true, code: 'ECONFIG' });
  return value;
};

const bracketed = (id: string): string => {
  const bare = oneLine(id, 'a Message-ID').trim().replace(/^<|>$/g, '');
  return `<${bare}>`;
};

/** The nodemailer message of `mail`. */
function messageOf(mail: OutgoingMail): SendMailOptions {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(mail.headers ?? {})) {
    if (!/^[!-9;-~]+$/.test(name)) {
      throw new MailSendError(`${JSON.stringify(name)} is not a header name`, {
        permanent: true,
        code: 'ECONFIG',
      });
    }
    headers[name] = oneLine(value, `the header ${name}`);
  }
  if (mail.listUnsubscribe) {
    const targets = [`<${oneLine(mail.listUnsubscribe.url, 'the unsubscribe URL')}>`];
    if (mail.listUnsubscribe.mailto)
      targets.push(`<${oneLine(mail.listUnsubscribe.mailto, 'the unsubscribe address')}>`);
    headers['List-Unsubscribe'] = targets.join(', ');
    headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
  }
  const message: SendMailOptions = {
    from: mail.from.name ? { name: mail.from.name, address: mail.from.address } : mail.from.address,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    messageId: bracketed(mail.messageId),
    envelope: {
      from: mail.envelopeFrom ?? mail.from.address,
      to: typeof mail.to === 'string' ? mail.to : mail.to.address,
    },
    headers,
    disableFileAccess: true,
    disableUrlAccess: true,
  };
  if (mail.html !== undefined) message.html = mail.html;
  if (mail.replyTo !== undefined) message.replyTo = mail.replyTo;
  if (mail.inReplyTo !== undefined) message.inReplyTo = bracketed(mail.inReplyTo);
  if (mail.references?.length) message.references = mail.references.map(bracketed);
  if (mail.dkim) {
    message.dkim = {
      domainName: mail.dkim.domain,
      keySelector: mail.dkim.selector,
      privateKey: mail.dkim.privateKey(),
      headerFieldNames: SIGNED_HEADERS,
    };
  }
  return message;
}

interface NodemailerError extends Error {
  code?: string;
  responseCode?: number;
  response?: string;
  command?: string;
  rejected?: string[];
}

/** The typed error of a failed send. */
export function sendErrorOf(err: unknown): MailSendError {
  if (err instanceof MailSendError) return err;
  const e = err as NodemailerError;
  const responseCode = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  const code = typeof e.code === 'string' ? e.code : 'EUNKNOWN';
  // no answer at all (connection, timeout, DNS, TLS): temporary; a bad key or option: permanent
  const permanent = responseCode !== undefined ? responseCode >= 500 : code === 'ECONFIG';
  return new MailSendError(e.message || String(err), {
    permanent,
    recipientRejected: code === 'EENVELOPE' && responseCode !== undefined && /RCPT/i.test(e.command ?? ''),
    guardRefused: e.cause instanceof OutboundRefused,
    responseCode,
    response: e.response,
    code,
    cause: err,
  });
}

/**
 * nodemailer's `getSocket`: the relay's name resolved by the outbound guard (`addressOf`), and
 * the socket opened to that checked address, never to one nodemailer would look up itself.
 * nodemailer still parses the URL (port, TLS, credentials) and verifies TLS against the relay's
 * name. A refused address fails as a connection that could not be made (ECONNECTION: nothing was
 * sent, the message may be retried), its cause the guard's OutboundRefused.
 */
function guardedSocket(addressOf: AddressOf, timeoutMs: number) {
  return (options: { host?: string; port?: number; secure?: boolean }, done: SocketCallback): void => {
    const host = options.host ?? 'localhost';
    const port = Number(options.port) || (options.secure ? 465 : 587);
    addressOf(host).then(
      ({ address }) => {
        const socket = connect({ host: address, port });
        const timer = setTimeout(
          () => socket.destroy(new Error(`no connection within ${timeoutMs} ms`)),
          timeoutMs,
        );
        const failed = (err: Error) => {
          clearTimeout(timer);
          done(err);
        };
        socket.once('error', failed);
        socket.once('connect', () => {
          clearTimeout(timer);
          socket.off('error', failed);
          done(null, { connection: socket });
        });
      },
      (err: Error) =>
        done(
          err instanceof OutboundRefused
            ? Object.assign(new Error(`the outbound guard refuses ${host}: ${err.message}`, { cause: err }), {
                code: 'ECONNECTION',
              })
            : // the name did not resolve: nodemailer's own code for that, nothing sent either
              Object.assign(new Error(`${host}: ${err.message}`, { cause: err }), { code: 'EDNS' }),
        ),
    );
  };
}

/** Sends over SMTP_URL with a pool of `maxConnections`, each command bounded by `timeoutMs`. */
function smtpTransport(url: string, options: TransportOptions): MailTransport {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const addressOf = options.addressOf;
  if (!addressOf)
    throw new Error('an SMTP transport connects only through the outbound guard: pass addressOf');
  const transporter: Transporter = nodemailer.createTransport({
    url,
    getSocket: guardedSocket(addressOf, timeoutMs),
    pool: true,
    maxConnections: options.maxConnections ?? 5,
    maxMessages: 100,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    disableFileAccess: true,
    disableUrlAccess: true,
  } as Parameters<typeof nodemailer.createTransport>[0]);
  return {
    via: 'smtp',
    async send(mail) {
      const message = messageOf(mail);
      try {
        const info = (await transporter.sendMail(message)) as { messageId: string; response: string };
        return { messageId: info.messageId, via: 'smtp', response: info.response };
      } catch (err) {
        throw sendErrorOf(err);
      }
    },
    async greet(greetTimeoutMs) {
      const target = new URL(url);
      const where = `smtp ${target.host}`;
      const probe: Transporter = nodemailer.createTransport({
        url,
        connectionTimeout: greetTimeoutMs,
        greetingTimeout: greetTimeoutMs,
        socketTimeout: greetTimeoutMs,
        getSocket: guardedSocket(addressOf, greetTimeoutMs),
      } as Parameters<typeof nodemailer.createTransport>[0]);
      try {
        await probe.verify();
      } catch (err) {
        throw new Error(`${where}: ${(err as Error).message}`);
      } finally {
        probe.close();
      }
    },
    async close() {
      transporter.close();
    },
  };
}

/** Composes and signs as SMTP would, and writes the message to the outbox. */
function outboxTransport(options: TransportOptions): MailTransport {
  const composer: Transporter = nodemailer.createTransport({
    streamTransport: true,
    buffer: true,
    newline: 'windows',
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    via: 'outbox',
    async send(mail) {
      const message = messageOf(mail);
      let raw: Buffer;
      let messageId: string;
      try {
        const info = (await composer.sendMail(message)) as { messageId: string; message: Buffer };
        raw = info.message;
        messageId = info.messageId;
      } catch (err) {
        throw sendErrorOf(err);
      }
      try {
        const file = await writeToOutbox(options.outboxDir, raw);
        return { messageId, via: 'outbox', file };
      } catch (err) {
        throw new MailSendError(`cannot write to the outbox: ${(err as Error).message}`, {
          permanent: false,
          code: 'EOUTBOX',
          cause: err,
        });
      }
    },
    async greet() {
      await access(options.outboxDir, constants.W_OK).catch(async (err: NodeJS.ErrnoException) => {
        // not made yet: the first mail makes it where its parent is writable
        if (err.code !== 'ENOENT') throw new Error(`the outbox ${options.outboxDir} is not writable`);
        await access(dirname(options.outboxDir), constants.W_OK);
      });
    },
    async close() {
      composer.close();
    },
  };
}

/** The transport of the configuration: SMTP when SMTP_URL is set, the outbox otherwise. */
export function createMailTransport(options: TransportOptions): MailTransport {
  return options.smtpUrl ? smtpTransport(options.smtpUrl, options) : outboxTransport(options);
}
