// The inbound SMTP listener end to end, on both storage paths: mail is sent over real SMTP
// conversations (nodemailer as the other side) to a listener that asks the running directory
// service which hosts are reply hosts, for a reply subdomain whose sending domain was verified
// through the loopback DNS server. It refuses what it must (another domain: 550; 30 MB: 552;
// garbage: 554) at no cost to the handler, and hands each accepted message, parsed and classified
// (human with its thread headers, auto-reply, DSN bounce with its recipient), to its handler (the
// service's own, the mail routing, is proven by the campaigns' and the concierge's replies). Floods
// of connections and messages get SMTP errors (a listener of its own with low limits).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InboundMail, InboundRejected, startInboundSmtp } from '../src/mail/inbound.ts';
import { call } from './support/client.ts';
import { startTestDns, type TestDns } from './support/dns.ts';
import { startTestServers, storages, type TestServers } from './support/server.ts';
import { sendSmtp } from './support/smtp.ts';

const DOMAIN = 'mail.keller-haustechnik.test';
const REPLY = `reply.${DOMAIN}`;

/** A reply of a person: Re: subject, quoted text, the thread headers of the message answered. */
const humanReply = (to: string) => ({
  from: 'Marco Rossi <m.rossi@idraulica-rossi.test>',
  to,
  subject: 'Re: Neue Bäder für Ihre Kunden',
  text: 'Guten Tag Frau Keller,\n\ngerne, rufen Sie mich an.\n\n> wir bauen Bäder in Berlin.',
  messageId: '<reply-1@idraulica-rossi.test>',
  inReplyTo: '<cmp-1.m-2@mail.keller-haustechnik.test>',
  references: ['<cmp-1.m-1@mail.keller-haustechnik.test>', '<cmp-1.m-2@mail.keller-haustechnik.test>'],
});

/** A delivery status notification (RFC 3464) as Postfix writes one, to the null sender. */
function dsn(to: string): string {
  return [
    'From: MAILER-DAEMON@mx.idraulica-rossi.test (Mail Delivery System)',
    `To: ${to}`,
    'Subject: Undelivered Mail Returned to Sender',
    'Date: Wed, 25 Nov 2026 10:00:00 +0100',
    'Message-ID: <20261125090000.ABC@mx.idraulica-rossi.test>',
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="B1"',
    '',
    '--B1',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'I am sorry to have to inform you that your message could not be delivered.',
    '',
    '--B1',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.idraulica-rossi.test',
    'Arrival-Date: Wed, 25 Nov 2026 09:59:59 +0100',
    '',
    'Final-Recipient: rfc822; gone@idraulica-rossi.test',
    'Original-Recipient: rfc822;gone@idraulica-rossi.test',
    'Action: failed',
    'Status: 5.1.1',
    'Remote-MTA: dns; mailstore.idraulica-rossi.test',
    'Diagnostic-Code: smtp; 550 5.1.1 <gone@idraulica-rossi.test>: Recipient address',
    '    rejected: User unknown',
    '',
    '--B1',
    'Content-Type: text/rfc822-headers',
    '',
    'From: Anna Keller <anna@mail.keller-haustechnik.test>',
    'To: gone@idraulica-rossi.test',
    'Subject: Neue Bäder',
    'Message-ID: <cmp-1.m-3@mail.keller-haustechnik.test>',
    '',
    '--B1--',
    '',
  ].join('\r\n');
}

describe.each(await storages())('inbound SMTP on %s', (storage) => {
  let servers: TestServers;
  let dns: TestDns;
  let listener: Awaited<ReturnType<typeof startInboundSmtp>>;
  let port: number;
  const received: InboundMail[] = [];
  let handler: (mail: InboundMail) => Promise<void> = async (mail) => void received.push(mail);

  beforeAll(async () => {
    dns = await startTestDns();
    servers = await startTestServers(storage, {
      which: ['directory'],
      env: { DNS_SERVERS: dns.server, INBOUND_MAIL_HOST: 'mx.eurus.test', INBOUND_SMTP_PORT: 'off' },
    });
    const mail = servers.mail!;
    listener = await startInboundSmtp({
      port: 0,
      host: '127.0.0.1',
      hostname: 'mx.eurus.test',
      isReplyDomain: (host) => mail.isReplyDomain(host),
      onMail: (message) => handler(message),
    });
    port = listener.port;
    // a verified sending domain, as a customer makes one
    const post = async (path: string, body?: object) =>
      (await call(servers.urls.directory!, servers.adminKey, 'POST', path, body ?? {})) as {
        id: string;
        status: string;
        dns_records: Array<Record<string, string>>;
      };
    const domain = await post('/v1/sending-domains', { domain: DOMAIN });
    for (const r of domain.dns_records) dns.publish(r.name!, r.type as 'TXT' | 'MX', r.value!);
    expect((await post(`/v1/sending-domains/${domain.id}/verify`)).status).toBe('verified');
  });
  afterAll(async () => {
    await listener?.close();
    await servers?.stop();
    await dns?.close();
  });

  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('the listener accepted it');
      },
      (err: { responseCode?: number; response?: string; command?: string }) => err,
    );

  it('a person answers: human, with From, subject, text and In-Reply-To/References parsed', async () => {
    const before = received.length;
    const sent = await sendSmtp(port, {
      ...humanReply(`r-tok123@${REPLY}`),
      envelope: { from: 'm.rossi@idraulica-rossi.test', to: [`R-Tok123@${REPLY.toUpperCase()}`] },
    });
    expect(sent.response).toMatch(/^250 /);
    const mail = received[before]!;
    expect(mail).toMatchObject({
      kind: 'human',
      envelopeFrom: 'm.rossi@idraulica-rossi.test',
      recipients: [`r-tok123@${REPLY}`],
      from: { name: 'Marco Rossi', address: 'm.rossi@idraulica-rossi.test' },
      to: [{ address: `r-tok123@${REPLY}` }],
      subject: 'Re: Neue Bäder für Ihre Kunden',
      messageId: '<reply-1@idraulica-rossi.test>',
      inReplyTo: '<cmp-1.m-2@mail.keller-haustechnik.test>',
      references: ['<cmp-1.m-1@mail.keller-haustechnik.test>', '<cmp-1.m-2@mail.keller-haustechnik.test>'],
    });
    expect(mail.text).toContain('gerne, rufen Sie mich an.');
    expect(mail.bounce).toBeUndefined();
    expect(mail.raw.toString('utf8')).toContain('Message-ID: <reply-1@idraulica-rossi.test>');
  });

  it('refuses a recipient on a domain that is not a verified sending domain with 550', async () => {
    const before = received.length;
    for (const to of ['someone@example.test', `r-x@reply.unverified.test`, `r-x@${DOMAIN}`]) {
      const err = await refusal(
        sendSmtp(port, { ...humanReply(to), envelope: { from: 'a@b.test', to: [to] } }),
      );
      expect(err.responseCode, `${to}: ${err.response}`).toBe(550);
      expect(err.command).toMatch(/RCPT/);
    }
    expect(received.length).toBe(before);
  });

  it('refuses a 30 MB message with 552 and never hands it over', async () => {
    const before = received.length;
    const big = Buffer.alloc(30 * 1024 * 1024, 'a');
    const raw = Buffer.concat([
      Buffer.from(`From: a@idraulica-rossi.test\r\nTo: r-t@${REPLY}\r\nSubject: big\r\n\r\n`),
      Buffer.from(big.toString('base64').replace(/.{76}/g, '$&\r\n')),
    ]);
    const err = await refusal(
      sendSmtp(port, { raw, envelope: { from: 'a@idraulica-rossi.test', to: [`r-t@${REPLY}`] } }),
    );
    expect(err.responseCode).toBe(552);
    expect(received.length).toBe(before);
  }, 60_000);

  it('refuses garbage with 554 5.6.0 and never hands it over', async () => {
    const before = received.length;
    const garbage = Buffer.concat([randomBytes(2048), Buffer.from('\r\n\r\n'), randomBytes(1024)]);
    const err = await refusal(
      sendSmtp(port, { raw: garbage, envelope: { from: 'x@spam.test', to: [`r-t@${REPLY}`] } }),
    );
    expect(err.responseCode).toBe(554);
    expect(err.response).toMatch(/5\.6\.0/);
    expect(received.length).toBe(before);
  });

  it('classifies a DSN as a bounce with its recipient, status, action and original Message-ID', async () => {
    const before = received.length;
    await sendSmtp(port, { raw: dsn(`b-tok9@${REPLY}`), envelope: { from: '', to: [`b-tok9@${REPLY}`] } });
    const mail = received[before]!;
    expect(mail.kind).toBe('bounce');
    expect(mail.envelopeFrom).toBe('');
    expect(mail.bounce).toEqual({
      recipient: 'gone@idraulica-rossi.test',
      status: '5.1.1',
      action: 'failed',
      permanent: true,
      diagnostic: '550 5.1.1 <gone@idraulica-rossi.test>: Recipient address rejected: User unknown',
      originalMessageId: '<cmp-1.m-3@mail.keller-haustechnik.test>',
    });
  });

  it('classifies automatic replies: Auto-Submitted, X-Autoreply, Precedence and out-of-office subjects', async () => {
    const cases: Array<[string, Record<string, string>, string]> = [
      ['Re: Neue Bäder', { 'Auto-Submitted': 'auto-replied' }, 'Auto-Submitted'],
      ['Re: Neue Bäder', { 'X-Autoreply': 'yes' }, 'x-autoreply'],
      ['Re: Neue Bäder', { Precedence: 'auto_reply' }, 'Precedence'],
      ['Abwesenheitsnotiz: Neue Bäder', {}, 'subject'],
      ['Automatic reply: Neue Bäder', {}, 'subject'],
      ['AW: Out of Office bis 3.12.', {}, 'subject'],
    ];
    for (const [subject, headers, why] of cases) {
      const before = received.length;
      await sendSmtp(port, {
        ...humanReply(`r-tok123@${REPLY}`),
        subject,
        headers,
        envelope: { from: 'm.rossi@idraulica-rossi.test', to: [`r-tok123@${REPLY}`] },
      });
      expect(received[before], subject).toMatchObject({ kind: 'auto_reply' });
      expect(received[before]!.classifiedBy).toContain(why);
    }
    // `Auto-Submitted: no` is a person's own mail
    const before = received.length;
    await sendSmtp(port, {
      ...humanReply(`r-tok123@${REPLY}`),
      headers: { 'Auto-Submitted': 'no' },
      envelope: { from: 'm.rossi@idraulica-rossi.test', to: [`r-tok123@${REPLY}`] },
    });
    expect(received[before]?.kind).toBe('human');
  });

  it("answers the handler's refusal with its code, and a handler failure with 451 (the sender retries)", async () => {
    const envelope = { from: 'm.rossi@idraulica-rossi.test', to: [`r-unknown@${REPLY}`] };
    handler = async () => {
      throw new InboundRejected(550, '5.1.1 No such reply address');
    };
    expect(await refusal(sendSmtp(port, { ...humanReply(envelope.to[0]!), envelope }))).toMatchObject({
      responseCode: 550,
      response: expect.stringContaining('No such reply address') as unknown,
    });
    handler = async () => {
      throw new Error('database unavailable');
    };
    expect((await refusal(sendSmtp(port, { ...humanReply(envelope.to[0]!), envelope }))).responseCode).toBe(
      451,
    );
    handler = async (mail) => void received.push(mail);
  });
});

describe('inbound SMTP limits', () => {
  it('floods get SMTP errors: 421 past the connections from one address, 451 past the messages a minute', async () => {
    const accepted: InboundMail[] = [];
    const listener = await startInboundSmtp({
      port: 0,
      host: '127.0.0.1',
      hostname: 'mx.eurus.test',
      isReplyDomain: async (host) => host === 'reply.flood.test',
      onMail: async (mail) => void accepted.push(mail),
      maxClientsPerIp: 3,
      messagesPerMinutePerIp: 4,
    });
    try {
      const envelope = { from: 'a@sender.test', to: ['r-1@reply.flood.test'] };
      const message = {
        from: 'a@sender.test',
        to: 'r-1@reply.flood.test',
        subject: 'hi',
        text: 'hi',
        envelope,
      };
      const results = [];
      for (let i = 0; i < 6; i++) {
        results.push(
          await sendSmtp(listener.port, message).then(
            () => 250,
            (err: { responseCode?: number }) => err.responseCode,
          ),
        );
      }
      expect(results).toEqual([250, 250, 250, 250, 451, 451]);
      expect(accepted).toHaveLength(4);

      // four connections held open from one address: the fourth is told 421 and closed
      const greetings = await Promise.all(
        Array.from({ length: 4 }, () => {
          const socket = connect(listener.port, '127.0.0.1');
          return new Promise<{ line: string; socket: typeof socket }>((resolve) => {
            socket.once('data', (data: Buffer) => resolve({ line: data.toString('utf8'), socket }));
          });
        }),
      );
      const codes = greetings.map((g) => g.line.slice(0, 3)).sort();
      expect(codes).toEqual(['220', '220', '220', '421']);
      for (const g of greetings) g.socket.destroy();
    } finally {
      await listener.close();
    }
  });

  it('holds at most INBOUND_SMTP_MAX_CONNECTIONS connections: the next is told 421', async () => {
    const listener = await startInboundSmtp({
      port: 0,
      host: '127.0.0.1',
      hostname: 'mx.eurus.test',
      isReplyDomain: async () => true,
      onMail: async () => undefined,
      maxClients: 2,
    });
    try {
      const sockets = Array.from({ length: 3 }, () => connect(listener.port, '127.0.0.1'));
      const lines = await Promise.all(
        sockets.map(
          (socket) =>
            new Promise<string>((resolve) => socket.once('data', (d: Buffer) => resolve(d.toString()))),
        ),
      );
      expect(lines.map((line) => line.slice(0, 3)).sort()).toEqual(['220', '220', '421']);
      for (const socket of sockets) socket.destroy();
    } finally {
      await listener.close();
    }
  });

  it('offers STARTTLS with INBOUND_SMTP_TLS_CERT and _KEY, and only then', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inbound-tls-'));
    const certFile = join(dir, 'cert.pem');
    const keyFile = join(dir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=mx.eurus.test',
        '-keyout',
        keyFile,
        '-out',
        certFile,
      ],
      { stdio: 'ignore' },
    );
    const received: InboundMail[] = [];
    const start = (tls?: { certFile: string; keyFile: string }) =>
      startInboundSmtp({
        port: 0,
        host: '127.0.0.1',
        hostname: 'mx.eurus.test',
        isReplyDomain: async () => true,
        onMail: async (mail) => void received.push(mail),
        tls,
      });
    const send = (port: number) =>
      nodemailer
        .createTransport({ host: '127.0.0.1', port, requireTLS: true, tls: { rejectUnauthorized: false } })
        .sendMail({ from: 'a@sender.test', to: 'r-1@reply.tls.test', subject: 'hi', text: 'over TLS' });
    const secure = await start({ certFile, keyFile });
    const plain = await start();
    try {
      expect((await send(secure.port)).response).toMatch(/^250 /);
      expect(received[0]?.text.trim()).toBe('over TLS');
      await expect(send(plain.port)).rejects.toMatchObject({ code: 'ETLS' });
    } finally {
      await secure.close();
      await plain.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
