// Campaign sending is durable and sends each step to each recipient at most once: an instance
// killed with SIGKILL in the middle of a campaign (PGlite on disk) finishes it after a restart,
// and two instances on one PostgreSQL and one Redis share a campaign, each message going out once,
// the survivor finishing what a killed one left. The SMTP relay is a real SMTP server in this
// process (smtp-server) that takes a few milliseconds per message, so a kill lands mid-send; it
// counts what it received per Message-ID. Instances are real processes started as an operator
// starts them.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDns, type TestDns } from './support/dns.ts';
import { type Instance, redisAvailable, startInstance, waitReady } from './support/instances.ts';
import { createTestDatabase, hasPostgres, type TestDatabase, TEST_REDIS_URL } from './support/server.ts';
import { createClient } from '../generated/directory/client/client/index.ts';
import { createCampaign, launchCampaign as launch } from '../generated/directory/client/sdk.gen.ts';
import { campaignBody, readyList, salesPlan, verifiedDomain } from './support/campaigns.ts';
import { call, until } from './support/client.ts';

/**
 * An SMTP relay that takes `delayMs` per message and counts each Message-ID it accepted, and
 * which AUTH user (an instance's name in its SMTP_URL) handed each over.
 */
class SlowSink {
  received = new Map<string, number>();
  senders = new Map<string, number>();
  #server: SMTPServer | undefined;
  url = '';
  readonly delayMs: number;
  constructor(delayMs: number) {
    this.delayMs = delayMs;
  }
  async start(): Promise<void> {
    this.#server = new SMTPServer({
      logger: false,
      disabledCommands: ['STARTTLS'],
      authOptional: true,
      allowInsecureAuth: true,
      disableReverseLookup: true,
      onAuth: (auth, _session, callback) => callback(null, { user: auth.username }),
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.once('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const id = /^Message-ID: *(<[^>]+>)/im.exec(text)?.[1] ?? 'none';
          setTimeout(() => {
            this.received.set(id, (this.received.get(id) ?? 0) + 1);
            const user = typeof session.user === 'string' ? session.user : 'anonymous';
            this.senders.set(user, (this.senders.get(user) ?? 0) + 1);
            callback(null, '2.0.0 queued');
          }, this.delayMs);
        });
      },
    });
    // a client killed mid-conversation resets its connection: that is the point, not a failure
    this.#server.on('error', () => undefined);
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.url = `smtp://127.0.0.1:${(this.#server.server.address() as AddressInfo).port}`;
  }
  /** SMTP_URL for an instance named `user`. */
  urlFor(user: string): string {
    return this.url.replace('smtp://', `smtp://${user}:secret@`);
  }
  total(): number {
    return [...this.received.values()].reduce((a, b) => a + b, 0);
  }
  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()));
  }
}

interface Recipient {
  id: string;
  messages: Array<{ step: number; message_id: string; status: string }>;
}

async function allRecipients(base: string, key: string, id: string): Promise<Recipient[]> {
  const out: Recipient[] = [];
  let cursor: string | null = null;
  do {
    const page = await call(
      base,
      key,
      'GET',
      `/v1/campaigns/${id}/recipients?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
    );
    out.push(...(page.data as Recipient[]));
    cursor = page.next_cursor as string | null;
  } while (cursor);
  return out;
}

/** A verified domain, a list of `members` and a campaign of two steps, launched. */
async function launchCampaign(instance: Instance, key: string, dns: TestDns, name: string, members: number) {
  const client = createClient({ baseUrl: instance.directory, auth: key });
  await salesPlan(instance.model, key);
  const domain = await verifiedDomain(client, dns, { domain: `${name}.keller.test` });
  const list = await readyList(client, { name, filters: { min_rating: 1 }, max_members: members }, 120_000);
  const campaign = await createCampaign({
    client,
    body: campaignBody(domain, list.id, {
      name,
      body_text: 'Guten Tag aus {{city}}.',
      follow_ups: [{ delay_days: 1, body_text: 'Noch einmal: Guten Tag.' }],
      hourly_cap: 10_000,
    }),
  });
  expect(campaign.response?.status, JSON.stringify(campaign.error)).toBe(201);
  const launched = await launch({ client, path: { id: campaign.data!.id } });
  expect(launched.response?.status, JSON.stringify(launched.error)).toBe(200);
  return { id: campaign.data!.id, recipients: launched.data!.stats.recipients };
}

/**
 * No step went to a recipient twice, every step was recorded once: `sent` ones arrived exactly
 * once, `interrupted` ones (the kill fell between the claim and the record) at most once.
 */
function checkOnce(sink: SlowSink, recipients: Recipient[], steps: number) {
  const twice = [...sink.received.entries()].filter(([, n]) => n > 1);
  expect(twice).toEqual([]);
  const interrupted: string[] = [];
  for (const r of recipients) {
    expect(r.messages.map((m) => m.step)).toEqual(Array.from({ length: steps }, (_, i) => i));
    for (const m of r.messages) {
      if (m.status === 'sent') expect(sink.received.get(m.message_id), m.message_id).toBe(1);
      else {
        expect(m.status).toBe('interrupted');
        expect(sink.received.get(m.message_id) ?? 0).toBeLessThanOrEqual(1);
        interrupted.push(m.message_id);
      }
    }
  }
  return interrupted;
}

const ENV = {
  OUTBOUND_ALLOW_PRIVATE: 'true',
  CAMPAIGN_DAY_SECONDS: '1',
  INBOUND_MAIL_HOST: 'mx.eurus.test',
  MAIL_SPF_INCLUDE: 'spf.eurus.test',
  DEMO_LISTINGS: '400',
};

describe('a campaign killed with SIGKILL mid-send (PGlite on disk)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'campaign-kill-'));
  const key = `sk_test_admin_${randomBytes(16).toString('hex')}`;
  const sink = new SlowSink(40);
  let dns: TestDns;
  let instance: Instance | undefined;
  beforeAll(async () => {
    dns = await startTestDns();
    await sink.start();
  });
  afterAll(async () => {
    await instance?.stop();
    await sink.stop();
    await dns?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finishes the campaign after a restart, no step sent to a recipient twice', async () => {
    const env = {
      ...ENV,
      DATA_DIR: dir,
      BOOTSTRAP_ADMIN_KEY: key,
      SMTP_URL: sink.url,
      DNS_SERVERS: dns.server,
    };
    instance = await startInstance(env);
    await waitReady(instance.directory);
    const campaign = await launchCampaign(instance, key, dns, 'kill', 60);
    expect(campaign.recipients).toBeGreaterThan(40);
    await until('a third of the messages out', () => sink.total() >= 20, 120_000);
    process.kill(instance.pid, 'SIGKILL');
    expect(await instance.exited).toBe(null);
    const before = sink.total();
    expect(before).toBeLessThan(campaign.recipients * 2);

    instance = await startInstance(env);
    await until(
      'the campaign completed after the restart',
      async () =>
        (await call(instance!.directory, key, 'GET', `/v1/campaigns/${campaign.id}`)).status === 'completed',
      180_000,
    );
    const recipients = await allRecipients(instance.directory, key, campaign.id);
    expect(recipients).toHaveLength(campaign.recipients);
    const interrupted = checkOnce(sink, recipients, 2);
    console.log(`kill: ${before} messages out before the kill, ${interrupted.length} interrupted`);
    // one send is in flight at a time per worker slot: a kill interrupts a handful at most
    expect(interrupted.length).toBeLessThanOrEqual(8);
    const stats = (await call(instance.directory, key, 'GET', `/v1/campaigns/${campaign.id}`)).stats as {
      messages_sent: number;
      messages_failed: number;
    };
    expect(stats.messages_sent + stats.messages_failed).toBe(campaign.recipients * 2);
    expect(stats.messages_failed).toBe(interrupted.length);
  }, 400_000);
});

const SCALES = (await hasPostgres()) && (await redisAvailable());

describe.runIf(SCALES)('a campaign on two instances on one PostgreSQL and Redis', () => {
  const key = `sk_test_admin_${randomBytes(16).toString('hex')}`;
  const sink = new SlowSink(20);
  let dns: TestDns;
  let database: TestDatabase;
  let a: Instance;
  let b: Instance;
  beforeAll(async () => {
    dns = await startTestDns();
    await sink.start();
    database = await createTestDatabase();
    const env = {
      ...ENV,
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      SECRETS_ENCRYPTION_KEY: '7c'.repeat(32),
      BOOTSTRAP_ADMIN_KEY: key,
      DNS_SERVERS: dns.server,
    };
    a = await startInstance({ ...env, SMTP_URL: sink.urlFor('a') });
    b = await startInstance({ ...env, SMTP_URL: sink.urlFor('b') });
    await Promise.all([waitReady(a.directory), waitReady(b.directory)]);
  }, 180_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await sink.stop();
    await dns?.close();
    await database?.drop();
  });

  it('sends each message once, both instances sending', async () => {
    const campaign = await launchCampaign(a, key, dns, 'shared', 50);
    await until(
      'completed',
      async () =>
        (await call(b.directory, key, 'GET', `/v1/campaigns/${campaign.id}`)).status === 'completed',
      180_000,
    );
    const recipients = await allRecipients(b.directory, key, campaign.id);
    expect(checkOnce(sink, recipients, 2)).toEqual([]);
    expect(sink.total()).toBe(campaign.recipients * 2);
    // the work was shared: both instances handed messages to the relay
    expect(sink.senders.get('a') ?? 0).toBeGreaterThan(0);
    expect(sink.senders.get('b') ?? 0).toBeGreaterThan(0);
  }, 240_000);

  it('the survivor finishes what a killed instance left, each step once', async () => {
    const before = sink.total();
    const campaign = await launchCampaign(a, key, dns, 'survivor', 50);
    await until('some messages out', () => sink.total() >= before + 15, 120_000);
    process.kill(a.pid, 'SIGKILL');
    await a.exited;
    await until(
      'completed by the survivor',
      async () =>
        (await call(b.directory, key, 'GET', `/v1/campaigns/${campaign.id}`)).status === 'completed',
      240_000,
    );
    const recipients = await allRecipients(b.directory, key, campaign.id);
    const interrupted = checkOnce(sink, recipients, 2);
    expect(interrupted.length).toBeLessThanOrEqual(8);
  }, 300_000);
});
