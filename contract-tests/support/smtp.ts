// Real SMTP peers for tests, and the independent DKIM check of what they captured.
//
// - `startSmtpSink()`: an SMTP server (smtp-server, on a free port of 127.0.0.1) standing in for
//   the relay of SMTP_URL. It keeps every message as received (`raw`, the envelope), can require
//   AUTH PLAIN/LOGIN, and can refuse recipients with a code of the test's choosing (550 for a hard
//   bounce, 451 for greylisting). Point the service at it with `SMTP_URL: sink.url`.
// - `sendSmtp(port, message)`: sends a message to an SMTP server (our inbound listener) over a
//   real SMTP conversation with nodemailer, as another mail server or a mail client would. A
//   refusal rejects with nodemailer's error (`responseCode`: 550, 552, 554, 451...).
// - `verifyDkim(raw, dns)`: mailauth (postalsys, not ours) checks the DKIM signature, SPF-free,
//   looking the key up in the loopback DNS server (support/dns.ts) and evaluating DMARC there.
//
//   const sink = await startSmtpSink();
//   ... SMTP_URL: sink.url ...
//   const [mail] = await sink.waitFor(1);
//   const auth = await verifyDkim(mail.raw, dns);
//   expect(auth.dkim.results[0].status.result).toBe('pass');
//   await sink.close();
import type { AddressInfo } from 'node:net';
import { authenticate, type AuthenticateResult } from 'mailauth';
import nodemailer from 'nodemailer';
import type { SendMailOptions } from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import type { TestDns } from './dns.ts';

export interface CapturedMail {
  envelopeFrom: string;
  recipients: string[];
  raw: Buffer;
  /** The AUTH user the client logged in as, if any. */
  user: string | undefined;
}

export interface SmtpSink {
  /** `smtp://[user:pass@]127.0.0.1:<port>` for SMTP_URL. */
  url: string;
  port: number;
  messages: CapturedMail[];
  /** Resolves once `count` messages were captured in all (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<CapturedMail[]>;
  /** Connections opened so far (the pool's bound shows here). */
  connections: number;
  close(): Promise<void>;
}

export interface SinkOptions {
  /** Require AUTH with these credentials (put in the URL). */
  auth?: { user: string; pass: string };
  /** An SMTP refusal for a recipient, or undefined to accept it. */
  refuse?: (recipient: string) => { code: number; message: string } | undefined;
  /** Holds a recipient's RCPT TO until the promise settles (a relay that is slow for one address). */
  hold?: (recipient: string) => Promise<void> | undefined;
}

class Refusal extends Error {
  readonly responseCode: number;
  constructor(code: number, message: string) {
    super(message);
    this.responseCode = code;
  }
}

export async function startSmtpSink(options: SinkOptions = {}): Promise<SmtpSink> {
  const messages: CapturedMail[] = [];
  const waiters: Array<() => void> = [];
  let connections = 0;
  const server = new SMTPServer({
    logger: false,
    disabledCommands: options.auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !options.auth,
    allowInsecureAuth: true,
    disableReverseLookup: true,
    size: 50 * 1024 * 1024,
    onConnect(_session, callback) {
      connections++;
      callback();
    },
    onAuth(auth, _session, callback) {
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass) {
        return callback(null, { user: auth.username });
      }
      callback(new Refusal(535, '5.7.8 Authentication failed'));
    },
    onRcptTo(address, _session, callback) {
      const refusal = options.refuse?.(address.address);
      const answer = () => callback(refusal ? new Refusal(refusal.code, refusal.message) : undefined);
      const held = options.hold?.(address.address);
      if (held) void held.then(answer, answer);
      else answer();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.once('end', () => {
        messages.push({
          envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          recipients: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks),
          user: typeof session.user === 'string' ? session.user : undefined,
        });
        for (const wake of waiters.splice(0)) wake();
        callback(null, '2.0.0 queued as sink');
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  const credentials = options.auth
    ? `${encodeURIComponent(options.auth.user)}:${encodeURIComponent(options.auth.pass)}@`
    : '';
  return {
    url: `smtp://${credentials}127.0.0.1:${port}`,
    port,
    messages,
    get connections() {
      return connections;
    },
    async waitFor(count, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`the SMTP sink got ${messages.length} of ${count} messages`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return messages.slice(0, count);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A message for `sendSmtp`: composed by nodemailer, or raw bytes with an explicit envelope. */
export type OutgoingTestMail =
  | (SendMailOptions & { raw?: undefined })
  | { raw: string | Buffer; envelope: { from: string; to: string[] } };

/**
 * Sends one message over SMTP to `127.0.0.1:<port>` (our inbound listener) and resolves with the
 * server's answer; a refusal rejects with nodemailer's error (`responseCode`, `response`).
 */
export async function sendSmtp(
  port: number,
  message: OutgoingTestMail,
): Promise<{ response: string; accepted: string[] }> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 60_000,
  });
  try {
    const info = (await transport.sendMail(message as SendMailOptions)) as {
      response: string;
      accepted: string[];
    };
    return { response: info.response, accepted: info.accepted };
  } finally {
    transport.close();
  }
}

/**
 * DKIM (and DMARC) of a captured message, checked by mailauth against the loopback DNS server.
 * SPF is left out: it needs the relay's address, which a sink on loopback cannot stand for.
 */
export function verifyDkim(raw: Buffer, dns: TestDns, sender?: string): Promise<AuthenticateResult> {
  return authenticate(raw, {
    resolver: dns.resolve as never,
    sender: sender ?? '',
    ip: '127.0.0.1',
    helo: 'localhost',
    mta: 'test-receiver.local',
    disableArc: true,
    disableBimi: true,
  });
}
