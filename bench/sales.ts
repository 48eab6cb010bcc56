// Sales end to end, through the real services: `npm run bench:sales -- [--recipients 500]
// [--storage pglite|postgres]`. Two figures, the other side each time in a process of its own:
//   - campaign sending: a campaign of `--recipients` members launched through the API until it is
//     `completed`: the scheduling and send jobs, each message composed, DKIM-signed (RSA 2048)
//     and handed over SMTP to a local sink (smtp-server in a child process), each claimed and
//     recorded in the database: messages per second of one instance;
//   - replies ingested: one human reply to each message, sent over SMTP by nodemailer from a child
//     process (5 connections, 20 in flight) to our inbound listener, parsed, classified, matched
//     by token, stored, the member marked, billed 0.50 EUR and `reply.received` raised, until the
//     database holds them all: replies per second.
// The sending domain is verified against a DNS server on loopback (dns2). The result is printed
// and written to bench/results/sales-<date>.json.
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import nodemailer from 'nodemailer';
import { startTestDns } from '../contract-tests/support/dns.ts';
import { createTestDatabase, type TestDatabase } from '../contract-tests/support/server.ts';
import { loadConfig } from '../src/config.ts';
import { demoListing } from '../src/directory/demo.ts';
import { insertListings } from '../src/directory/store.ts';
import { startServices } from '../src/services/server.ts';
import { call as callWith, until } from '../contract-tests/support/client.ts';
import { forkRole, nextMessage, smtpSink, writeResult } from './lib.ts';

const { values } = parseArgs({
  options: {
    role: { type: 'string' },
    port: { type: 'string' },
    recipients: { type: 'string', default: '500' },
    storage: { type: 'string', default: 'pglite' },
  },
});
const RECIPIENTS = Math.max(10, Math.min(Number(values.recipients), 10_000));

// ---- child roles ------------------------------------------------------------------------------

interface ReplyJob {
  to: string;
  from: string;
  inReplyTo: string;
}

/** The mail clients: one reply per job, 20 in flight over 5 connections. */
function replier(port: number): void {
  process.once('message', async (jobs: ReplyJob[]) => {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port,
      pool: true,
      maxConnections: 5,
      ignoreTLS: true,
    });
    let next = 0;
    let failed = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < jobs.length) {
          const job = jobs[next++]!;
          await transport
            .sendMail({
              from: job.from,
              to: job.to,
              subject: 'Re: Wartung',
              text: 'Guten Tag,\n\ngerne, rufen Sie mich am Donnerstag an.\n\nGruß',
              inReplyTo: job.inReplyTo,
              references: [job.inReplyTo],
            })
            .catch(() => failed++);
        }
      }),
    );
    transport.close();
    process.send?.({ failed });
  });
  process.send?.({ ready: true });
}

// ---- the parent ------------------------------------------------------------------------------

const child = (role: string, port?: number) => forkRole(role, port ? ['--port', String(port)] : []);

async function main(): Promise<void> {
  const sinkProc = child('sink');
  const { port: sinkPort } = await nextMessage<{ port: number }>(sinkProc);
  const dns = await startTestDns();
  let database: TestDatabase | undefined;
  if (values.storage === 'postgres') database = await createTestDatabase();
  const key = `sk_bench_${randomBytes(16).toString('hex')}`;
  const config = {
    ...loadConfig({
      DATA_DIR: 'memory://',
      DEMO_LISTINGS: '0',
      SECRETS_ENCRYPTION_KEY: '5e'.repeat(32),
      INBOUND_SMTP_PORT: '0',
      SMTP_URL: `smtp://127.0.0.1:${sinkPort}`,
      DNS_SERVERS: dns.server,
      INBOUND_MAIL_HOST: 'mx.eurus.test',
      MAIL_SPF_INCLUDE: 'spf.eurus.test',
      DIRECTORY_RATE_LIMIT_RPS: '100000',
      LOG_LEVEL: 'warn',
    }),
    host: '127.0.0.1',
    modelPort: 0,
    directoryPort: 0,
    logLevel: 'warn',
    dataDir: 'memory://',
    databaseUrl: database?.url,
    bootstrapAdminKey: key,
  };
  const running = await startServices(config, undefined, { drainMs: 1000 });
  await running.ready;
  const directory = running.urls.directory!;
  const call = (base: string, method: string, path: string, body?: object) =>
    callWith(base, key, method, path, body);

  // the listings, a verified domain, the list, the plan
  const listings = Array.from({ length: RECIPIENTS }, (_, i) => ({
    ...demoListing('bench-sales', i),
    name: `Benchklempner ${i}`,
    email: `info@bench-${i}.test`,
  }));
  for (let i = 0; i < listings.length; i += 500) {
    await running.platform.db.transaction((tx) => insertListings(tx, listings.slice(i, i + 500)));
  }
  await call(running.urls.model!, 'POST', '/v1/subscriptions', { plan: 'sales' });
  const domain = await call(directory, 'POST', '/v1/sending-domains', { domain: 'mail.bench.test' });
  for (const r of domain.dns_records as Array<{ name: string; type: 'TXT' | 'MX'; value: string }>) {
    dns.publish(r.name, r.type, r.value);
  }
  await call(directory, 'POST', `/v1/sending-domains/${String(domain.id)}/verify`);
  const list = await call(directory, 'POST', '/v1/target-lists', {
    name: 'bench',
    filters: { q: 'benchklempner', mode: 'keyword' },
    max_members: RECIPIENTS,
  });
  await until(
    'the list',
    async () => (await call(directory, 'GET', `/v1/target-lists/${String(list.id)}`)).status === 'ready',
    120_000,
  );
  const campaign = await call(directory, 'POST', '/v1/campaigns', {
    name: 'bench',
    target_list_id: list.id,
    sending_domain_id: domain.id,
    from_email: 'anna@mail.bench.test',
    from_name: 'Anna Keller',
    subject: 'Wartung für {{company_name}} in {{city}}',
    body_text:
      'Guten Tag,\n\nwir übernehmen Wartungsaufträge für {{company_name}}.\n\nViele Grüße\n{{sender_name}}',
    hourly_cap: 10_000,
  });
  const id = String(campaign.id);

  // 1. sending
  const sendStart = performance.now();
  const launched = await call(directory, 'POST', `/v1/campaigns/${id}/launch`);
  const recipients = (launched.stats as { recipients: number }).recipients;
  await until(
    'the campaign completed',
    async () => (await call(directory, 'GET', `/v1/campaigns/${id}`)).status === 'completed',
    600_000,
    50,
  );
  const sendSeconds = (performance.now() - sendStart) / 1000;
  sinkProc.send('count');
  const { count: received } = await nextMessage<{ count: number }>(sinkProc);

  // 2. replies, one per message, to its Reply-To token address
  const rows = await running.platform.db.query<{ reply_token: string; email: string; message_id: string }>(
    `select r.reply_token, r.email, m.message_id from campaign_recipients r
     join campaign_messages m on m.recipient_id = r.id where r.campaign_id = $1`,
    [id],
  );
  const jobs: ReplyJob[] = rows.map((r) => ({
    to: `r-${r.reply_token}@reply.mail.bench.test`,
    from: r.email,
    inReplyTo: r.message_id,
  }));
  const replierProc = child('replier', running.smtpPort);
  await nextMessage(replierProc);
  const replyStart = performance.now();
  replierProc.send(jobs);
  const { failed } = await nextMessage<{ failed: number }>(replierProc);
  const count = async () =>
    (
      await running.platform.db.query<{ n: number }>(
        'select count(*)::int as n from replies where campaign_id = $1',
        [id],
      )
    )[0]!.n;
  await until('every reply stored', async () => (await count()) + failed >= jobs.length, 120_000, 50);
  const replySeconds = (performance.now() - replyStart) / 1000;
  const stored = await count();
  const [billed] = await running.platform.db.query<{ n: number; cost: number }>(
    `select count(*)::int as n, coalesce(sum(cost_nano), 0)::bigint as cost from usage_records where model = 'sales'`,
  );

  const result = {
    date: new Date().toISOString(),
    storage: values.storage,
    cores: cpus().length,
    load_before: loadavg()[0],
    campaign: {
      recipients,
      sink_received: received,
      seconds: Math.round(sendSeconds * 100) / 100,
      messages_per_second: Math.round((received / sendSeconds) * 10) / 10,
    },
    replies: {
      sent: jobs.length,
      refused: failed,
      stored,
      billed: billed?.n,
      billed_eur: Number(billed?.cost ?? 0) / 1e9,
      seconds: Math.round(replySeconds * 100) / 100,
      replies_per_second: Math.round((stored / replySeconds) * 10) / 10,
    },
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult('bench/results', `sales-${result.date.slice(0, 10)}-${values.storage}.json`, result);

  replierProc.kill();
  sinkProc.kill();
  await running.close();
  await dns.close();
  await database?.drop();
}

if (values.role === 'sink') smtpSink();
else if (values.role === 'replier') replier(Number(values.port));
else await main();
