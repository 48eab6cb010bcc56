// The inbound SMTP listener (INBOUND_SMTP_PORT, 2525 by default): the MX of every verified
// domain's `reply.<domain>` points here. It is an smtp-server that
//
// - accepts RCPT TO only for the reply host of a verified sending domain (`isReplyDomain`);
//   any other recipient is refused with 550 5.1.1, so we are never an open relay;
// - bounds what a client may cost: SIZE advertised, a bigger message refused with 552 (its bytes
//   are read and dropped, never parsed); at most `maxClients` connections (421), `maxClientsPerIp`
//   from one address (421), `messagesPerMinutePerIp` transactions a minute from one address (451
//   4.7.1, retry later), `maxRecipients` per message (452), and an idle timeout;
// - parses each accepted message with mailparser; one without a From address (garbage) is
//   refused with 554 5.6.0 and goes no further;
// - classifies it (classify.ts) and hands an `InboundMail` to `onMail`, answering 250 only once
//   `onMail` resolves (it has stored the reply): a crash before that leaves the sender to retry.
//   `onMail` may refuse a message with an `InboundRejected` (its code goes back); any other error
//   is a 451 (temporary).
//
// In a cluster (WORKERS > 1) the primary listens on the port and hands each connection to the
// next worker, as it does for HTTP (cluster.ts); every worker runs this listener with `accept`.
import { readFileSync } from 'node:fs';
import type { AddressInfo, Socket } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { type BounceReport, classify, type InboundKind } from './classify.ts';

export type { BounceReport, InboundKind } from './classify.ts';

export interface InboundAddress {
  name: string;
  address: string;
}

/** One message accepted by the listener, parsed and classified. */
export interface InboundMail {
  /** MAIL FROM: the envelope sender; `''` for the null sender (`<>`) of bounces. */
  envelopeFrom: string;
  /** RCPT TO: the recipients accepted (each on a verified domain's reply host), lower case. */
  recipients: string[];
  from: InboundAddress;
  to: InboundAddress[];
  subject: string;
  text: string;
  html?: string | undefined;
  /** The Message-ID header, angle brackets included, or null when the message has none. */
  messageId: string | null;
  /** The In-Reply-To header (one Message-ID, brackets included). */
  inReplyTo?: string | undefined;
  /** The References header, oldest first, brackets included; [] when absent. */
  references: string[];
  /** Every header, names in lower case; headers that occur more than once joined by `\n`. */
  headers: Record<string, string>;
  receivedAt: Date;
  kind: InboundKind;
  /** Why it was classified so (`Auto-Submitted: auto-replied`, `DSN 5.1.1`, ...). */
  classifiedBy: string;
  /** Set for `kind: 'bounce'`. */
  bounce?: BounceReport | undefined;
  /** The client's address. */
  remoteAddress: string;
  /** The message as received. */
  raw: Buffer;
}

/** Thrown by `onMail` to refuse a message with an SMTP code of its choosing (e.g. 550 unknown token). */
export class InboundRejected extends Error {
  readonly responseCode: number;
  constructor(responseCode: number, message: string) {
    super(message);
    this.name = 'InboundRejected';
    this.responseCode = responseCode;
  }
}

export interface InboundOptions {
  /** INBOUND_SMTP_PORT; 0 takes any free port. Ignored with `handedOver`. */
  port: number;
  host: string;
  /** Our name in the greeting and EHLO (INBOUND_MAIL_HOST). */
  hostname: string;
  /** Whether `host` (the domain of a RCPT TO) is the reply host of a verified sending domain. */
  isReplyDomain(host: string): Promise<boolean>;
  /** Stores the message; 250 once it resolves. */
  onMail(mail: InboundMail): Promise<void>;
  /** The largest message in bytes (SIZE); 25 MB by default. */
  maxBytes?: number;
  maxClients?: number;
  maxClientsPerIp?: number;
  messagesPerMinutePerIp?: number;
  maxRecipients?: number;
  /** A client silent this long is disconnected; 60 s by default. */
  idleTimeoutMs?: number;
  /** PEM files for STARTTLS (INBOUND_SMTP_TLS_CERT, INBOUND_SMTP_TLS_KEY); no STARTTLS without. */
  tls?: { certFile: string; keyFile: string } | undefined;
  /** Listen on no port; connections come through `accept` (a cluster worker). */
  handedOver?: boolean;
  logger?: { warn(fields: object, message: string): void; info(fields: object, message: string): void };
}

export interface InboundSmtp {
  /** The port listened on (0 when handed over). */
  port: number;
  /** Serves a connection accepted elsewhere (the cluster's primary). */
  accept(socket: Socket): void;
  close(): Promise<void>;
}

export const DEFAULT_MAX_BYTES = 25 * 1024 * 1024;

class SmtpError extends Error {
  readonly responseCode: number;
  constructor(responseCode: number, message: string) {
    super(message);
    this.responseCode = responseCode;
  }
}

/** Counts per client address: connections open, and transactions in the last minute. */
class PerIp {
  readonly #open = new Map<string, number>();
  readonly #recent = new Map<string, number[]>();

  opened(ip: string): number {
    const n = (this.#open.get(ip) ?? 0) + 1;
    this.#open.set(ip, n);
    return n;
  }

  closed(ip: string): void {
    const n = (this.#open.get(ip) ?? 1) - 1;
    if (n > 0) this.#open.set(ip, n);
    else this.#open.delete(ip);
  }

  /** Records a transaction; the number in the last 60 s, this one included. */
  transaction(ip: string, now = Date.now()): number {
    const times = (this.#recent.get(ip) ?? []).filter((t) => now - t < 60_000);
    times.push(now);
    this.#recent.set(ip, times);
    if (this.#recent.size > 10_000) {
      for (const [key, list] of this.#recent)
        if (list.every((t) => now - t >= 60_000)) this.#recent.delete(key);
    }
    return times.length;
  }
}

function addressesOf(value: unknown): InboundAddress[] {
  const objects = Array.isArray(value) ? value : value ? [value] : [];
  return objects.flatMap((o: { value?: Array<{ name?: string; address?: string }> }) =>
    (o.value ?? []).flatMap((a) =>
      a.address ? [{ name: a.name ?? '', address: a.address.toLowerCase() }] : [],
    ),
  );
}

function headersOf(lines: ReadonlyArray<{ key: string; line: string }>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { key, line } of lines) {
    const value = line
      .slice(line.indexOf(':') + 1)
      .replace(/\r?\n[ \t]+/g, ' ')
      .trim();
    out[key] = key in out ? `${out[key]}\n${value}` : value;
  }
  return out;
}

/** Parses and classifies a received message; a SmtpError when it is not a message. */
export async function parseInbound(
  raw: Buffer,
  envelope: { from: string; recipients: string[]; remoteAddress: string },
): Promise<InboundMail> {
  let parsed;
  try {
    parsed = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true });
  } catch (err) {
    throw new SmtpError(554, `5.6.0 The message cannot be parsed: ${(err as Error).message}`);
  }
  const from = addressesOf(parsed.from)[0];
  if (!from) throw new SmtpError(554, '5.6.0 The message has no From address: not a mail message');
  const { kind, bounce, why } = classify(parsed, raw, envelope.from);
  const references = parsed.references === undefined ? [] : [parsed.references].flat();
  return {
    envelopeFrom: envelope.from,
    recipients: envelope.recipients,
    from,
    to: addressesOf(parsed.to),
    subject: parsed.subject ?? '',
    text: parsed.text ?? '',
    html: typeof parsed.html === 'string' ? parsed.html : undefined,
    messageId: parsed.messageId ?? null,
    inReplyTo: parsed.inReplyTo,
    references,
    headers: headersOf(parsed.headerLines),
    receivedAt: new Date(),
    kind,
    classifiedBy: why,
    bounce,
    remoteAddress: envelope.remoteAddress,
    raw,
  };
}

/** Reads a DATA stream into memory, or to its end and nothing more once it is over `maxBytes`. */
function readBounded(stream: SMTPServerDataStream, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    stream.once('end', () =>
      resolve(stream.sizeExceeded || size > maxBytes ? undefined : Buffer.concat(chunks)),
    );
    stream.once('error', reject);
  });
}

const ipOf = (session: SMTPServerSession) => session.remoteAddress || 'unknown';

export async function startInboundSmtp(options: InboundOptions): Promise<InboundSmtp> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxClientsPerIp = options.maxClientsPerIp ?? 20;
  const perMinute = options.messagesPerMinutePerIp ?? 600;
  const maxRecipients = options.maxRecipients ?? 50;
  const perIp = new PerIp();
  const counted = new WeakSet<object>();
  const tls = options.tls
    ? { key: readFileSync(options.tls.keyFile), cert: readFileSync(options.tls.certFile) }
    : undefined;

  const server = new SMTPServer({
    name: options.hostname,
    banner: 'Eurus inbound mail (replies to campaigns)',
    logger: false,
    size: maxBytes,
    rejectOversized: true,
    maxClients: options.maxClients ?? 200,
    socketTimeout: options.idleTimeoutMs ?? 60_000,
    closeTimeout: 5_000,
    authOptional: true,
    disabledCommands: tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(tls ?? {}),
    disableReverseLookup: true,
    hideENHANCEDSTATUSCODES: false,
    onConnect(session, callback) {
      const ip = ipOf(session);
      counted.add(session);
      if (perIp.opened(ip) > maxClientsPerIp) {
        return callback(new SmtpError(421, '4.7.0 Too many connections from your address, try again later'));
      }
      callback();
    },
    onClose(session) {
      if (counted.has(session)) perIp.closed(ipOf(session));
    },
    onMailFrom(_address, session, callback) {
      if (perIp.transaction(ipOf(session)) > perMinute) {
        return callback(new SmtpError(451, '4.7.1 Too many messages from your address, try again later'));
      }
      callback();
    },
    onRcptTo(address, session, callback) {
      if (session.envelope.rcptTo.length >= maxRecipients) {
        return callback(new SmtpError(452, '4.5.3 Too many recipients'));
      }
      const at = address.address.lastIndexOf('@');
      const host = at < 0 ? '' : address.address.slice(at + 1);
      options.isReplyDomain(host).then(
        (ok) =>
          callback(ok ? undefined : new SmtpError(550, `5.1.1 <${address.address}>: no such mailbox here`)),
        () => callback(new SmtpError(451, '4.3.0 Temporary failure, try again later')),
      );
    },
    onData(stream, session, callback) {
      readBounded(stream, maxBytes)
        .then(async (raw) => {
          // over the size: smtp-server answers 552 itself; nothing is parsed or stored
          if (raw === undefined) return callback(null);
          const mail = await parseInbound(raw, {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address.toLowerCase() : '',
            recipients: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            remoteAddress: ipOf(session),
          });
          await options.onMail(mail);
          callback(null, '2.0.0 Message accepted');
        })
        .catch((err: unknown) => {
          if (err instanceof SmtpError || err instanceof InboundRejected) return callback(err);
          options.logger?.warn({ err }, 'an inbound message could not be handed over');
          callback(new SmtpError(451, '4.3.0 Temporary failure, try again later'));
        });
    },
  });
  server.on('error', (err) => options.logger?.warn({ err }, 'inbound SMTP connection error'));

  let port = 0;
  if (!options.handedOver) {
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.server.off('error', reject);
        resolve();
      });
    });
    port = (server.server.address() as AddressInfo).port;
  }
  return {
    port,
    accept(socket) {
      // the primary accepted it: what the server would learn from its own listener
      server.connect(socket, {
        remoteAddress: socket.remoteAddress,
        remotePort: socket.remotePort,
        localAddress: socket.localAddress,
        localPort: socket.localPort,
      } as never);
      socket.resume();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
