// Mail of one instance: `npm run bench:mail -- [--messages 2000] [--concurrency 50]
// [--connections 5]`. Two figures, each with the other side in a process of its own (so the
// load generator does not share our process's core):
//   - outgoing: messages per second our transport (src/mail/transport.ts) composes, DKIM-signs
//     with an RSA 2048 key and hands over SMTP to a local sink (smtp-server in a child process,
//     counting what it receives), over a pool of `--connections` connections, `--concurrency`
//     sends in flight; plus the same into the .eml outbox (composed, signed, written to disk);
//   - incoming: messages per second our inbound listener (src/mail/inbound.ts) receives over
//     SMTP, parses with mailparser and classifies, sent by nodemailer from a child process over
//     `--connections` pooled connections; a third each human replies, out-of-office replies and
//     DSN bounces, all for a verified reply domain (the look-up answered from memory: the
//     database is not what is measured).
// The result is printed and written to bench/results/mail-<date>.json.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import nodemailer from 'nodemailer';
import { startInboundSmtp } from '../src/mail/inbound.ts';
import { newDkimKeyPair } from '../src/mail/records.ts';
import { createMailTransport, type MailTransport, type OutgoingMail } from '../src/mail/transport.ts';
import { outbound } from '../src/platform/outbound.ts';
import { forkRole, nextMessage, smtpSink, writeResult } from './lib.ts';

const { values } = parseArgs({
  options: {
    role: { type: 'string' },
    port: { type: 'string' },
    messages: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '50' },
    connections: { type: 'string', default: '5' },
  },
});
const MESSAGES = Math.min(Number(values.messages), 100_000);
const CONCURRENCY = Number(values.concurrency);
const CONNECTIONS = Number(values.connections);
const DOMAIN = 'mail.keller-haustechnik.test';

const BODY = [
  'Guten Tag,',
  '',
  'wir sind ein Sanitärbetrieb in Berlin und bauen barrierefreie Bäder für Ihre Kunden.',
  'Hätten Sie nächste Woche zehn Minuten für ein kurzes Gespräch?',
  '',
  'Mit freundlichen Grüßen',
  'Anna Keller',
  '',
  'Keine weiteren Nachrichten: https://directory.api.eurus.eu/v1/unsubscribe/u_1',
].join('\n');

// ---- child roles ------------------------------------------------------------------------------

/** The sender: `MESSAGES` replies to our listener, `CONCURRENCY` in flight over `CONNECTIONS`. */
async function sender(port: number): Promise<void> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    pool: true,
    maxConnections: CONNECTIONS,
    maxMessages: Infinity,
    ignoreTLS: true,
  });
  const dsn = (i: number) =>
    [
      'From: MAILER-DAEMON@mx.example.test',
      `To: b-${i}@reply.${DOMAIN}`,
      'Subject: Undelivered Mail Returned to Sender',
      `Message-ID: <dsn-${i}@mx.example.test>`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="B"',
      '',
      '--B',
      'Content-Type: text/plain',
      '',
      'Your message could not be delivered.',
      '--B',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.example.test',
      '',
      `Final-Recipient: rfc822; gone${i}@example.test`,
      'Action: failed',
      'Status: 5.1.1',
      '--B',
      'Content-Type: text/rfc822-headers',
      '',
      `Message-ID: <m-${i}@${DOMAIN}>`,
      '--B--',
      '',
    ].join('\r\n');
  const message = (i: number) => {
    const to = `r-${i}@reply.${DOMAIN}`;
    if (i % 3 === 2) return { raw: dsn(i), envelope: { from: '', to: [to] } };
    return {
      from: `Marco Rossi <m${i}@idraulica-rossi.test>`,
      to,
      subject: i % 3 === 1 ? 'Abwesenheitsnotiz: Ihre Nachricht' : 'Re: Barrierefreie Bäder',
      text: `Guten Tag Frau Keller,\n\ngerne, rufen Sie mich an.\n\n> ${BODY.split('\n').join('\n> ')}`,
      inReplyTo: `<m-${i}@${DOMAIN}>`,
      references: [`<m-${i}@${DOMAIN}>`],
      headers: i % 3 === 1 ? { 'Auto-Submitted': 'auto-replied' } : {},
    };
  };
  let next = 0;
  let failed = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < MESSAGES) {
        const i = next++;
        await transport.sendMail(message(i)).catch(() => failed++);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  transport.close();
  process.send?.({ seconds, failed });
}

// ---- the parent -------------------------------------------------------------------------------

/** This script in a role, with the run's settings. */
const child = (role: string, port?: number) =>
  forkRole(role, [
    ...['--messages', String(MESSAGES), '--concurrency', String(CONCURRENCY)],
    ...['--connections', String(CONNECTIONS), ...(port ? ['--port', String(port)] : [])],
  ]);

async function sendAll(transport: MailTransport, mail: (i: number) => OutgoingMail): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < MESSAGES) await transport.send(mail(next++));
    }),
  );
  return (performance.now() - started) / 1000;
}

async function main(): Promise<void> {
  const { privateKey } = await newDkimKeyPair();
  const mail = (i: number): OutgoingMail => ({
    from: { name: 'Anna Keller', address: `anna@${DOMAIN}` },
    to: `info${i}@sanitaer-berlin.test`,
    subject: 'Barrierefreie Bäder für Ihre Kunden',
    text: BODY,
    messageId: `m-${i}@${DOMAIN}`,
    envelopeFrom: `b-${i}@reply.${DOMAIN}`,
    replyTo: `r-${i}@reply.${DOMAIN}`,
    listUnsubscribe: { url: `https://directory.api.eurus.eu/v1/unsubscribe/u_${i}` },
    dkim: { domain: DOMAIN, selector: 'eurus-bench', privateKey: () => privateKey },
  });

  // outgoing, to the sink
  const sinkProc = child('sink');
  const { port: sinkPort } = await nextMessage<{ port: number }>(sinkProc);
  const door = outbound({ allowPrivate: false });
  const smtp = createMailTransport({
    smtpUrl: `smtp://127.0.0.1:${sinkPort}`,
    outboxDir: '/nonexistent',
    maxConnections: CONNECTIONS,
    addressOf: (host) => door.address(host, 'operator'),
  });
  await sendAll(smtp, mail); // warm-up: JIT, pooled connections
  const smtpSeconds = await sendAll(smtp, mail);
  await smtp.close();
  await door.close();
  sinkProc.send('count');
  const { count } = await nextMessage<{ count: number }>(sinkProc);
  sinkProc.kill();

  // outgoing, to the outbox
  const dir = mkdtempSync(join(tmpdir(), 'bench-outbox-'));
  const outbox = createMailTransport({ outboxDir: dir });
  const outboxSeconds = await sendAll(outbox, mail);
  await outbox.close();
  rmSync(dir, { recursive: true, force: true });

  // incoming
  const kinds: Record<string, number> = {};
  const listener = await startInboundSmtp({
    port: 0,
    host: '127.0.0.1',
    hostname: 'mx.bench.test',
    isReplyDomain: async (host) => host === `reply.${DOMAIN}`,
    onMail: async (m) => void (kinds[m.kind] = (kinds[m.kind] ?? 0) + 1),
    messagesPerMinutePerIp: 1_000_000,
    maxClientsPerIp: 1000,
  });
  const warm = child('sender', listener.port);
  await nextMessage(warm);
  for (const key of Object.keys(kinds)) delete kinds[key];
  const senderProc = child('sender', listener.port);
  const { seconds: inboundSeconds, failed } = await nextMessage<{ seconds: number; failed: number }>(
    senderProc,
  );
  await listener.close();

  const result = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
    messages: MESSAGES,
    concurrency: CONCURRENCY,
    connections: CONNECTIONS,
    outgoing_smtp: {
      seconds: Number(smtpSeconds.toFixed(2)),
      messages_per_second: Math.round(MESSAGES / smtpSeconds),
      received_by_sink: count,
    },
    outgoing_outbox: {
      seconds: Number(outboxSeconds.toFixed(2)),
      messages_per_second: Math.round(MESSAGES / outboxSeconds),
    },
    incoming: {
      seconds: Number(inboundSeconds.toFixed(2)),
      messages_per_second: Math.round((MESSAGES - failed) / inboundSeconds),
      failed,
      kinds,
    },
  };
  console.log(JSON.stringify(result, null, 2));
  const file = writeResult(
    'bench/results',
    `mail-${result.date.slice(0, 16).replace(/[T:]/g, '-')}.json`,
    result,
  );
  console.log(`written to ${file}`);
}

if (values.role === 'sink') smtpSink();
else if (values.role === 'sender') await sender(Number(values.port));
else await main();
