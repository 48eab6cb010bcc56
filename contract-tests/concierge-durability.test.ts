// Concierge workflows are durable jobs: an instance killed with SIGKILL while a workflow waits for
// answers (`awaiting_replies`, the wait being a job due at `respond_by`) or while the agent
// compares (`comparing`) finishes the workflow after a restart, with exactly one completion event
// (one webhook-id) and one charge. Real processes on PGlite on disk and on PostgreSQL, started as
// an operator starts them; the providers are listings of the demo directory.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HoldingProxy, VerifyingReceiver } from './support/concierge.ts';
import { startTestDns, type TestDns } from './support/dns.ts';
import { type Instance, startInstance, waitReady } from './support/instances.ts';
import { freePort } from './support/processes.ts';
import { createTestDatabase, storages, type TestDatabase } from './support/server.ts';
import { type SmtpSink, sendSmtp, startSmtpSink } from './support/smtp.ts';
import { call, until } from './support/client.ts';

interface Hit {
  listing: {
    id: string;
    email: string | null;
    address: { city: string; country: string };
    activities: { code: string }[];
  };
}

describe.each(await storages())('concierge workflows killed with SIGKILL (%s)', (storage) => {
  let database: TestDatabase | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'concierge-kill-'));
  const key = `sk_test_admin_${randomBytes(16).toString('hex')}`;
  const proxy = new HoldingProxy();
  const receiver = new VerifyingReceiver();
  let dns: TestDns;
  let sink: SmtpSink;
  let instance: Instance | undefined;
  let env: Record<string, string> = {};
  let provider: Hit['listing'];

  const workflow = async (id: string) =>
    (await call(instance!.directory, key, 'GET', `/v1/concierge/workflows/${id}`)) as {
      status: string;
      stage: string | null;
      result: { providers: { quote: { amount: string } | null }[] } | null;
      contacts: { status: string }[];
    };
  const restart = async () => {
    process.kill(instance!.pid, 'SIGKILL');
    expect(await instance!.exited).toBe(null);
    instance = await startInstance(env);
    await waitReady(instance.directory);
    proxy.target = instance.model;
  };
  const charges = async () => {
    const today = new Date().toISOString().slice(0, 10);
    const report = await call(
      instance!.directory,
      key,
      'GET',
      `/v1/usage?from=${today}&to=${today}&group_by=interface`,
    );
    return (report.data as { results: { interface: string; requests: number }[] }[])
      .flatMap((b) => b.results)
      .filter((r) => r.interface === 'concierge')
      .reduce((n, r) => n + r.requests, 0);
  };

  beforeAll(async () => {
    dns = await startTestDns();
    sink = await startSmtpSink();
    await proxy.start();
    await receiver.start();
    if (storage === 'postgres') database = await createTestDatabase();
    env = {
      ...(database ? { DATABASE_URL: database.url, SECRETS_ENCRYPTION_KEY: '5e'.repeat(32) } : {}),
      DATA_DIR: dir,
      BOOTSTRAP_ADMIN_KEY: key,
      MODEL_API_URL: proxy.url,
      OUTBOUND_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s,1s',
      SMTP_URL: sink.url,
      DNS_SERVERS: dns.server,
      INBOUND_MAIL_HOST: 'mx.eurus.test',
      INBOUND_SMTP_PORT: String(await freePort()),
    };
    instance = await startInstance(env);
    await waitReady(instance.directory);
    proxy.target = instance.model;
    await call(instance.model, key, 'POST', '/v1/subscriptions', { plan: 'concierge' });
    const endpoint = await call(instance.directory, key, 'POST', '/v1/webhook-endpoints', {
      url: receiver.url,
      event_types: ['workflow.completed', 'workflow.failed', 'workflow.cancelled'],
    });
    receiver.secret = endpoint.secret as string;
    // a provider of the demo directory that publishes an address
    const page = await call(instance.directory, key, 'GET', '/v1/search?q=repair&limit=100');
    provider = (page.data as Hit[]).map((h) => h.listing).find((l) => l.email !== null)!;
    expect(provider).toBeDefined();
  }, 240_000);
  afterAll(async () => {
    await instance?.stop();
    await proxy.stop();
    await receiver.stop();
    await sink?.close();
    await dns?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const hints = () => ({
    activity: provider.activities[0]!.code,
    location: provider.address.city,
    country: provider.address.country as 'DE',
    max_providers: 1,
  });

  it('killed while comparing: compares after the restart, one event, one charge', async () => {
    const charged = await charges();
    proxy.held.add('comparing');
    const wf = await call(instance!.directory, key, 'POST', '/v1/concierge/briefs', {
      brief: `Find one provider in ${provider.address.city} and compare.`,
      contact: false,
      ...hints(),
    });
    const id = wf.id as string;
    await until('the comparison to be held', () => proxy.waiting.has('comparing'));
    expect((await workflow(id)).stage).toBe('comparing');
    await restart();
    proxy.release();
    const done = await until(
      'the workflow to succeed',
      async () => {
        const w = await workflow(id);
        return w.status === 'succeeded' || w.status === 'failed' ? w : undefined;
      },
      120_000,
    );
    expect(done.status).toBe('succeeded');
    await until('the event', () => receiver.of(id).length > 0);
    await new Promise((r) => setTimeout(r, 3000));
    expect(receiver.of(id).map((e) => e.type)).toEqual(['workflow.completed']);
    expect(new Set(receiver.of(id).map((e) => e.id)).size).toBe(1);
    expect(await charges()).toBe(charged + 1);
  }, 240_000);

  it('killed while awaiting replies: the wait is a job, the answer after the restart is read and compared', async () => {
    const domain = await call(instance!.directory, key, 'POST', '/v1/sending-domains', {
      domain: 'keller-haustechnik.test',
    });
    for (const r of domain.dns_records as { name: string; type: 'TXT' | 'MX'; value: string }[])
      dns.publish(r.name, r.type, r.value);
    await call(instance!.directory, key, 'POST', `/v1/sending-domains/${domain.id as string}/verify`);
    const charged = await charges();
    const before = sink.messages.length;
    const wf = await call(instance!.directory, key, 'POST', '/v1/concierge/briefs', {
      brief: `Find one provider in ${provider.address.city}, ask for a price and compare.`,
      sending_domain_id: domain.id,
      respond_by: new Date(Date.now() + 30_000).toISOString(),
      ...hints(),
    });
    const id = wf.id as string;
    const [request] = (await sink.waitFor(before + 1, 30_000)).slice(before);
    await until('waiting', async () => (await workflow(id)).stage === 'awaiting_replies');
    await restart();
    const parsed = await simpleParser(request!.raw);
    const sent = await sendSmtp(Number(env.INBOUND_SMTP_PORT), {
      from: provider.email!,
      to: parsed.replyTo!.value[0]!.address!,
      subject: `Re: ${parsed.subject}`,
      text: 'Hello, our price is 1,250.00 EUR including VAT; we can start from December 9.',
      inReplyTo: parsed.messageId!,
    });
    expect(sent.response).toMatch(/^250 /);
    const done = await until(
      'the workflow to succeed',
      async () => {
        const w = await workflow(id);
        return w.status === 'succeeded' || w.status === 'failed' ? w : undefined;
      },
      120_000,
    );
    expect(done.status).toBe('succeeded');
    expect(done.result?.providers[0]?.quote?.amount).toBe('1250.00');
    await until('the event', () => receiver.of(id).length > 0);
    await new Promise((r) => setTimeout(r, 3000));
    expect(receiver.of(id).map((e) => e.type)).toEqual(['workflow.completed']);
    expect(await charges()).toBe(charged + 1);
    // the request went out once, before the kill
    expect(sink.messages.length).toBe(before + 1);
  }, 240_000);
});
