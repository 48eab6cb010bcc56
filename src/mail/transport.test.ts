import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dkimVerify } from 'mailauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDns, type TestDns } from '../../contract-tests/support/dns.ts';
import { type SmtpSink, startSmtpSink } from '../../contract-tests/support/smtp.ts';
import { outbound, OutboundRefused } from '../platform/outbound.ts';
import { newDkimKeyPair, recordsOf } from './records.ts';
import { createMailTransport, MailSendError, sendErrorOf } from './transport.ts';

describe('the mail transport', () => {
  it('writes a DKIM-signed .eml to the outbox without SMTP_URL, headers as given', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'transport-test-'));
    const { privateKey, publicKey } = await newDkimKeyPair();
    const [dkimRecord] = recordsOf('mail.example.de', 'eurus-test', publicKey, {
      inboundHost: 'mx.test',
      spfInclude: 'spf.test',
    });
    const transport = createMailTransport({ outboxDir: dir });
    try {
      const sent = await transport.send({
        from: { name: 'Keller Haustechnik', address: 'anna@mail.example.de' },
        to: 'info@plumber.example',
        subject: 'Grüße aus Berlin',
        text: 'Hallo,\nwir bauen Bäder.',
        messageId: 'cmp-1.abc@mail.example.de',
        replyTo: 'r-tok@reply.mail.example.de',
        inReplyTo: '<earlier@mail.example.de>',
        references: ['<first@mail.example.de>', 'earlier@mail.example.de'],
        listUnsubscribe: { url: 'https://api.test/u/tok' },
        dkim: { domain: 'mail.example.de', selector: 'eurus-test', privateKey: () => privateKey },
      });
      expect(sent).toMatchObject({ via: 'outbox', messageId: '<cmp-1.abc@mail.example.de>' });
      const raw = readFileSync(sent.file!);
      const text = raw.toString('utf8');
      expect(text).toMatch(/^DKIM-Signature: /);
      expect(text).toContain('\r\nList-Unsubscribe: <https://api.test/u/tok>\r\n');
      expect(text).toContain('\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n');
      expect(text).toContain('\r\nReferences: <first@mail.example.de> <earlier@mail.example.de>\r\n');
      const result = await dkimVerify(raw, {
        resolver: async (name: string, type: string) => {
          if (type === 'TXT' && name === dkimRecord!.name) return [[dkimRecord!.value]];
          throw Object.assign(new Error('no record'), { code: 'ENOTFOUND' });
        },
      });
      const [signature] = result.results;
      expect(signature?.status.result).toBe('pass');
      expect(signature?.signingHeaders?.keys.toLowerCase()).toContain('list-unsubscribe-post');
    } finally {
      await transport.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a header value with a line break (no header injection)', async () => {
    const transport = createMailTransport({ outboxDir: join(tmpdir(), 'never-written') });
    await expect(
      transport.send({
        from: { address: 'a@mail.example.de' },
        to: 'b@example.de',
        subject: 'x',
        text: 'x',
        messageId: 'x@mail.example.de',
        headers: { 'X-Campaign': 'a\r\nBcc: victim@example.de' },
      }),
    ).rejects.toBeInstanceOf(MailSendError);
  });

  it('tells temporary failures from permanent ones', () => {
    const rcpt = sendErrorOf(
      Object.assign(new Error('Recipient command failed'), {
        code: 'EENVELOPE',
        responseCode: 550,
        command: 'RCPT TO',
        response: '550 5.1.1 no such user',
      }),
    );
    expect(rcpt).toMatchObject({
      permanent: true,
      temporary: false,
      recipientRejected: true,
      responseCode: 550,
    });
    const greylisted = sendErrorOf(
      Object.assign(new Error('try later'), { code: 'EENVELOPE', responseCode: 451 }),
    );
    expect(greylisted).toMatchObject({ permanent: false, temporary: true });
    const refused = sendErrorOf(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNECTION' }));
    expect(refused).toMatchObject({
      permanent: false,
      code: 'ECONNECTION',
      responseCode: undefined,
      guardRefused: false,
    });
  });
});

describe('campaign mail reaches SMTP_URL only through the outbound guard', () => {
  let dns: TestDns;
  let sink: SmtpSink;
  beforeAll(async () => {
    dns = await startTestDns();
    sink = await startSmtpSink();
    // names only the guard's resolver knows: a socket nodemailer opened itself could not find them
    dns.publish('relay.sending.test', 'A', '127.0.0.1');
    dns.publish('metadata.sending.test', 'A', '169.254.169.254');
  });
  afterAll(async () => {
    await sink.close();
    await dns.close();
  });
  const mail = (id: string) => ({
    from: { address: 'anna@mail.example.de' },
    to: 'info@plumber.example',
    subject: 'Grüße',
    text: 'Hallo',
    messageId: `${id}@mail.example.de`,
  });
  const send = async (smtpUrl: string, allowPrivate: boolean, id: string) => {
    const door = outbound({ allowPrivate, dnsServers: [dns.server] });
    const transport = createMailTransport({
      smtpUrl,
      outboxDir: '/nonexistent',
      timeoutMs: 2000,
      addressOf: (host) => door.address(host, 'operator'),
    });
    try {
      return await transport.send(mail(id));
    } finally {
      await transport.close();
      await door.close();
    }
  };

  it.each([false, true])(
    'sends to the loopback address the guard resolved the relay to (OUTBOUND_ALLOW_PRIVATE=%s)',
    async (allowPrivate) => {
      const id = `loop-${allowPrivate}`;
      const sent = await send(`smtp://relay.sending.test:${sink.port}`, allowPrivate, id);
      expect(sent).toMatchObject({ via: 'smtp', messageId: `<${id}@mail.example.de>` });
      expect(sink.messages.some((m) => m.raw.toString('utf8').includes(`<${id}@mail.example.de>`))).toBe(
        true,
      );
      expect(dns.queries).toContain('A relay.sending.test');
    },
  );

  it.each([
    [
      'a name resolving to',
      'smtp://metadata.sending.test:25',
      /resolves to 169\.254\.169\.254, a linkLocal address/,
    ],
    ['the literal', 'smtp://169.254.169.254:25', /169\.254\.169\.254 is a linkLocal address/],
  ])('refuses %s the cloud metadata address before connecting', async (_what, url, reason) => {
    const before = sink.connections;
    const failed = await send(url, false, 'meta').catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(MailSendError);
    // nothing left: the message may be sent again once the relay is set right
    expect(failed).toMatchObject({
      code: 'ECONNECTION',
      temporary: true,
      responseCode: undefined,
      guardRefused: true,
    });
    expect((failed as Error).message).toMatch(reason);
    expect(((failed as Error).cause as Error).cause).toBeInstanceOf(OutboundRefused);
    expect(sink.connections).toBe(before);
  });
});
