// The Concierge that contacts providers, end to end on the real service, on both storage paths: a
// brief with a verified sending domain (records in a real DNS server on loopback), three demo
// providers asked for a quote over real SMTP (to a sink; DKIM checked by mailauth, Reply-To
// tokens, one-click List-Unsubscribe), two of them answering by mail to the inbound SMTP
// listener with prices, each answer read for price and availability by the agent, and, at
// `respond_by`, a comparison that ranks the cheaper, better-rated answer first with reasons,
// delivered as `workflow.completed` and verified by the webhook receiver with `standardwebhooks`;
// billed 2.00 EUR once. Suppressed addresses are never written to; a cancel while contacting or
// while waiting sends no further mail and bills nothing.
import { randomBytes } from 'node:crypto';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../generated/directory/client/client/index.ts';
import { cancelWorkflow, createConciergeBrief, getWorkflow } from '../generated/directory/client/sdk.gen.ts';
import type { CreateConciergeBriefRequest, Workflow } from '../generated/directory/client/types.gen.ts';
import { Workflows } from '../src/concierge/workflows.ts';
import { MailRouting } from '../src/mail/routing.ts';
import { addProviders, HoldingProxy, VerifyingReceiver } from './support/concierge.ts';
import { startTestDns, type TestDns } from './support/dns.ts';
import { startTestServers, storages, type TestServers } from './support/server.ts';
import { type SmtpSink, sendSmtp, startSmtpSink, verifyDkim } from './support/smtp.ts';
import { componentValidator, explain } from './support/spec.ts';
import { until } from './support/client.ts';

const DOMAIN = 'keller-haustechnik.test';
const validWorkflow = componentValidator('directory', 'Workflow');

describe.each(await storages())('the concierge contacting providers on %s', (storage) => {
  let servers: TestServers;
  let client: ReturnType<typeof createClient>;
  let dns: TestDns;
  let sink: SmtpSink;
  let domainId = '';
  /** Holds the n-th recipient the relay sees from now on, whoever the concierge contacts in that turn. */
  let holdNth: { n: number; seen: number; gate: Promise<void> } | undefined;
  const proxy = new HoldingProxy();
  const receiver = new VerifyingReceiver();
  const town = { name: 'Bruck an der Mur', lat: 0, lon: 0, country: 'AT' };
  let providers: string[] = [];

  const directory = async (method: string, path: string, body?: object) => {
    const res = await fetch(`${servers.urls.directory}${path}`, {
      method,
      headers: { Authorization: `Bearer ${servers.adminKey}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const post = async (body: CreateConciergeBriefRequest): Promise<Workflow> => {
    const res = await createConciergeBrief({
      client,
      body,
      headers: { 'Idempotency-Key': randomBytes(8).toString('hex') },
    });
    expect(res.response?.status, JSON.stringify(res.error)).toBe(202);
    return res.data!;
  };
  const get = async (id: string) => (await getWorkflow({ client, path: { id } })).data!;
  const usage = async () => {
    const today = new Date().toISOString().slice(0, 10);
    const report = await directory('GET', `/v1/usage?from=${today}&to=${today}&group_by=interface`);
    return (report.body.data as { results: { interface: string; cost: string }[] }[])
      .flatMap((b) => b.results)
      .filter((r) => r.interface === 'concierge')
      .reduce((n, r) => n + Number(r.cost), 0);
  };
  const brief = (extra: Partial<CreateConciergeBriefRequest> = {}): CreateConciergeBriefRequest => ({
    brief:
      'Wir suchen drei Installateure in Bruck an der Mur, die ein undichtes Rohr in der Küche bis zum 15. Dezember reparieren. Bitte Festpreis anfragen und vergleichen.',
    sending_domain_id: domainId,
    from_local_part: 'anna',
    from_name: 'Anna Keller',
    respond_by: new Date(Date.now() + 20_000).toISOString(),
    ...extra,
  });

  beforeAll(async () => {
    dns = await startTestDns();
    sink = await startSmtpSink({
      hold: () => (holdNth && ++holdNth.seen === holdNth.n ? holdNth.gate : undefined),
    });
    await proxy.start();
    await receiver.start();
    servers = await startTestServers(storage, {
      env: {
        DNS_SERVERS: dns.server,
        INBOUND_MAIL_HOST: 'mx.eurus.test',
        SMTP_URL: sink.url,
        MODEL_API_URL: proxy.url,
        OUTBOUND_ALLOW_PRIVATE: 'true',
        WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s',
      },
    });
    proxy.target = servers.urls.model!;
    client = createClient({ baseUrl: servers.urls.directory!, auth: servers.adminKey });
    const subscribed = await fetch(`${servers.urls.model}/v1/subscriptions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${servers.adminKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ plan: 'concierge' }),
    });
    expect(subscribed.status).toBe(201);
    const endpoint = await directory('POST', '/v1/webhook-endpoints', {
      url: receiver.url,
      event_types: ['workflow.completed', 'workflow.failed', 'workflow.cancelled'],
    });
    receiver.secret = endpoint.body.secret as string;
    const domain = await directory('POST', '/v1/sending-domains', {
      domain: DOMAIN,
      from_name: 'Keller Haustechnik',
    });
    domainId = domain.body.id as string;
    // a brief from an unverified domain is a 409, nothing made
    const early = await directory('POST', '/v1/concierge/briefs', brief());
    expect([early.status, (early.body.error as { code: string }).code]).toEqual([
      409,
      'sending_domain_not_verified',
    ]);
    for (const r of domain.body.dns_records as { name: string; type: 'TXT' | 'MX'; value: string }[])
      dns.publish(r.name, r.type, r.value);
    expect((await directory('POST', `/v1/sending-domains/${domainId}/verify`)).body.status).toBe('verified');
    const place = (
      (await directory('GET', '/v1/places/geocode?q=Bruck%20an%20der%20Mur&country=AT&limit=1')).body
        .data as { lat: number; lon: number }[]
    )[0]!;
    Object.assign(town, place);
    providers = await addProviders(servers.platform.db, '43.22', town, [
      {
        name: 'Installateur Brandl',
        email: 'office@brandl.providers.test',
        rating: 4.2,
        reviews: 40,
        east: 0.5,
      },
      {
        name: 'Wärmetechnik Novak',
        email: 'service@novak.providers.test',
        rating: 4.9,
        reviews: 212,
        east: 1.5,
      },
      { name: 'Haustechnik Gruber', email: 'info@gruber.providers.test', rating: 4.5, reviews: 60, east: 3 },
    ]);
  }, 240_000);
  afterAll(async () => {
    await servers?.stop();
    await proxy.stop();
    await receiver.stop();
    await sink?.close();
    await dns?.close();
  });

  /** The opt-out link of the first request for a quote, and its provider's address. */
  let optOutPath = '';
  let optOutEmail = '';

  it('asks three providers over DKIM-signed SMTP, reads two answers, ranks them on their totals with VAT and fees', async () => {
    const before = await usage();
    const sentBefore = sink.messages.length;
    // respond_by leaves room for the mail round trips on a busy machine: the answers must be read
    // while the workflow still waits (stage awaiting_replies), before the comparison
    const accepted = await post(brief({ respond_by: new Date(Date.now() + 45_000).toISOString() }));
    expect(accepted).toMatchObject({
      status: 'queued',
      complexity: 'standard',
      price: '2.000000000',
      contact: true,
      sender: { sending_domain_id: domainId, address: `anna@${DOMAIN}`, name: 'Anna Keller' },
    });
    const mails = (await sink.waitFor(sentBefore + 3, 30_000)).slice(sentBefore);
    const parsed = await Promise.all(mails.map((m) => simpleParser(m.raw)));
    expect(new Set(mails.flatMap((m) => m.recipients))).toEqual(
      new Set(['office@brandl.providers.test', 'service@novak.providers.test', 'info@gruber.providers.test']),
    );
    for (const [i, mail] of parsed.entries()) {
      const auth = await verifyDkim(mails[i]!.raw, dns);
      expect(auth.dkim.results[0]?.status.result).toBe('pass');
      expect(auth.dkim.results[0]?.signingDomain).toBe(DOMAIN);
      expect(mail.from?.value[0]).toMatchObject({ address: `anna@${DOMAIN}`, name: 'Anna Keller' });
      expect(mail.subject).toBe('Anfrage: Angebot in Bruck an der Mur');
      expect(mail.text).toContain('Anna Keller sucht einen Anbieter und bittet Sie um ein Angebot:');
      // a letter in the brief's language: dates as German writes them, what the quote should state
      // the job described, never the brief's instructions to us
      expect(mail.text).toContain('  Arbeiten: Ein undichtes Rohr in der Küche reparieren\n');
      expect(mail.text).toMatch(/ {2}Zeitraum: bis zum 15\. Dezember \d{4}\n/);
      expect(mail.text).toContain('  Hinweise: ein Festpreis ist gewünscht\n');
      expect(mail.text).not.toMatch(/Wir suchen|vergleichen|drei Installateure/);
      expect(mail.text).toMatch(
        /Bitte antworten Sie auf diese E-Mail bis \d{1,2}\. \p{L}+ \d{4} um \d{2}:\d{2} ME/u,
      );
      expect(mail.text).toContain('- Gesamtpreis, und ob er die MwSt. enthält (zu welchem Satz)\n');
      expect(mail.text).toContain('Mit freundlichen Grüßen\nAnna Keller\n');
      expect(mail.text).not.toMatch(/\d{4}-\d{2}-\d{2}|Concierge|UTC/);
      const replyTo = mail.replyTo?.value[0]?.address ?? '';
      expect(replyTo).toMatch(new RegExp(`^q-[a-z2-7]{20}@reply\\.${DOMAIN.replace('.', '\\.')}$`));
      expect(mails[i]!.envelopeFrom).toBe(replyTo);
      expect(mail.messageId).toMatch(new RegExp(`^<cq_[0-9A-Za-z]{26}\\.0@${DOMAIN.replace('.', '\\.')}>$`));
      const raw = mails[i]!.raw.toString('utf8');
      expect(raw).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r$/m);
      expect(raw).toMatch(
        /^List-Unsubscribe:\s+<http:\/\/[^>]+\/v1\/unsubscribe\/cq_[0-9A-Za-z]{26}\.[a-z2-7]{20}>\r$/m,
      );
    }
    optOutPath = new URL(/^List-Unsubscribe:\s+<([^>]+)>\r$/m.exec(mails[0]!.raw.toString('utf8'))![1]!)
      .pathname;
    optOutEmail = mails[0]!.recipients[0]!;
    const to = (email: string) => parsed[mails.findIndex((m) => m.recipients.includes(email))]!;
    // two answer from their mail clients: to the Reply-To, in the thread of the request
    const answer = async (email: string, text: string) => {
      const request = to(email);
      const sent = await sendSmtp(servers.smtpPort!, {
        from: email,
        to: request.replyTo!.value[0]!.address!,
        subject: `Re: ${request.subject}`,
        text: `${text}\n\nAm ${new Date().toUTCString()} schrieb Anna Keller:\n> ${request.text?.split('\n').join('\n> ')}`,
        inReplyTo: request.messageId!,
        references: [request.messageId!],
      });
      expect(sent.response).toMatch(/^250 /);
    };
    await answer(
      'service@novak.providers.test',
      'Guten Tag Frau Keller,\n\nwir können am 2. Dezember kommen. Festpreis 6.480,00 EUR inkl. 20 % MwSt.\n\nMit freundlichen Grüßen\nNovak',
    );
    await answer(
      'office@brandl.providers.test',
      // the lower price, before VAT and with a call-out fee on top: 6828.00 EUR in all
      'Sehr geehrte Frau Keller, unser Angebot: 5.600 € zzgl. MwSt., Anfahrt 90 € extra, frühestens ab 5. Dezember. Garantie 5 Jahre auf die Arbeit.',
    );
    const waiting = await until('both answers read', async () => {
      const wf = await get(accepted.id);
      return wf.contacts.filter((c) => c.reply?.reading).length === 2 ? wf : undefined;
    });
    expect([waiting.status, waiting.stage]).toEqual(['running', 'awaiting_replies']);
    const novak = waiting.contacts.find((c) => c.email === 'service@novak.providers.test')!;
    expect(novak).toMatchObject({
      status: 'replied',
      reply: {
        from: 'service@novak.providers.test',
        reading: {
          amount: '6480.00',
          currency: 'EUR',
          declined: false,
          vat: { basis: 'gross', rate: '20', quote: 'inkl. 20 % MwSt.', rate_quote: '20 % MwSt.' },
          conditions: ['inkl. 20 % MwSt.'],
        },
      },
    });
    expect(novak.reply?.reading?.available_from).toMatch(/^\d{4}-12-02$/);
    expect(waiting.steps.filter((s) => s.kind === 'reply_read').map((s) => s.agent_response_id)).toEqual([
      expect.stringMatching(/^resp_/),
      expect.stringMatching(/^resp_/),
    ]);

    // at respond_by the comparison is written and delivered
    const done = await until(
      'the comparison',
      async () => {
        const wf = await get(accepted.id);
        return wf.status === 'succeeded' || wf.status === 'failed' ? wf : undefined;
      },
      60_000,
    );
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    expect(validWorkflow(done), explain(validWorkflow)).toBe(true);
    // two quotes compared from three contacted: billed as accepted, and the step says why
    expect(done.billed).toBe('2.000000000');
    expect(done.steps.find((s) => s.kind === 'billed')?.message).toBe(
      'Billed 2.00 EUR (standard): 2 quotes compared from 3 providers contacted.',
    );
    const events = await until('the signed event', () =>
      receiver.of(done.id).length > 0 ? receiver.of(done.id) : undefined,
    );
    expect(receiver.refused).toEqual([]);
    expect(events.map((e) => e.type)).toEqual(['workflow.completed']);
    const result = (events[0]!.data.object as unknown as Workflow).result!;
    expect(result).toEqual(done.result);
    expect(
      result.providers.map((p) => [p.name, p.quote?.amount ?? null, p.quote?.total ?? null, p.answered]),
    ).toEqual([
      ['Wärmetechnik Novak', '6480.00', '6480.00', true],
      ['Installateur Brandl', '5600.00', '6828.00', true],
      ['Haustechnik Gruber', null, null, false],
    ]);
    expect(result.providers[1]?.quote).toMatchObject({
      vat_basis: 'net',
      vat_rate: '20',
      breakdown: [
        { kind: 'price', amount: '5600.00', quote: 'Angebot: 5.600 € zzgl. MwSt.' },
        { kind: 'fee', label: 'Anfahrt', amount: '90.00', quote: 'Anfahrt 90 € extra' },
        { kind: 'vat', label: 'MwSt. 20\u00a0%', amount: '1138.00', quote: null },
      ],
    });
    // a German brief: pros, cons and assumptions in German, money as German writes it
    expect(result.providers[1]?.quote?.assumptions).toEqual([
      'Anfahrt wie der Preis als Nettobetrag (zzgl. MwSt.) gerechnet',
      'MwSt. 20\u00a0% hinzugerechnet (Regelsatz Österreich): die Antwort nennt „zzgl. MwSt.“ ohne Steuersatz',
    ]);
    expect(result.recommendation).toBe(providers[1]);
    expect(result.providers[0]?.pros).toEqual(
      expect.arrayContaining([
        'Günstigster Gesamtpreis: 6.480,00\u00a0€ inkl. MwSt.',
        'Bewertung 4,9 aus 212 Bewertungen',
      ]),
    );
    expect(result.providers[0]?.evidence.reply_excerpt).toContain('Festpreis 6.480,00 EUR');
    expect(result.providers[1]?.cons).toContain(
      '348,00\u00a0€ teurer als der günstigste Gesamtpreis (6.828,00\u00a0€ gegenüber 6.480,00\u00a0€ inkl. MwSt.)',
    );
    expect(result.providers[1]?.pros.join(' ')).not.toMatch(/MwSt|VAT/);
    expect(result.providers[2]?.cons.at(-1)).toMatch(
      /^Keine Antwort bis \d{1,2}\. \p{L}+ \d{4} um \d{2}:\d{2} MES?Z$/u,
    );
    const said = result.providers.flatMap((p) => [...p.pros, ...p.cons, ...(p.quote?.assumptions ?? [])]);
    expect(said.join(' | ')).not.toMatch(
      /\b(?:VAT|Lowest|dearer|Rated|reviews|added|reply|Available|answer)\b/,
    );
    expect(result.no_answer).toEqual([{ listing_id: providers[2], name: 'Haustechnik Gruber' }]);
    expect(result.summary).toMatch(
      /^2 von 3 Anbietern haben ein Angebot geschickt\. Empfehlung: Wärmetechnik Novak \(Gesamtpreis 6\.480,00\u00a0€ inkl\. MwSt\./,
    );
    expect(Math.round(((await usage()) - before) * 100)).toBe(200);
    // nothing more went out
    expect(sink.messages.length).toBe(sentBefore + 3);
  });

  it("opts a provider out by its request's List-Unsubscribe token, for the account's later briefs", async () => {
    // the unsubscribe pages are Sales' (/v1/unsubscribe/{token}); they ask the mail routing, where
    // the concierge registers its cq_ tokens, who a token stands for: that lookup and suppression,
    // on the real data
    const routing = new MailRouting();
    new Workflows(servers.platform.db, servers.platform.jobs, { routing } as never);
    const raw = sink.messages
      .find((m) => m.recipients.includes('office@brandl.providers.test'))!
      .raw.toString('utf8');
    const link = /\/v1\/unsubscribe\/(cq_[0-9A-Za-z]{26}\.[a-z2-7]{20})>/.exec(raw)![1]!;
    expect(await routing.optOutOf(`${link.slice(0, -1)}${link.endsWith('a') ? 'b' : 'a'}`)).toBeNull();
    expect(await routing.optOutOf('rcp_01JD8XE6SZAEAVSNTCPM5Q1NXW.aaaaaaaaaaaaaaaaaaaa')).toBeNull();
    const who = (await routing.optOutOf(link))!;
    expect(who).toMatchObject({
      email: 'office@brandl.providers.test',
      fromEmail: `anna@${DOMAIN}`,
      fromName: 'Anna Keller',
    });
    await who.optOut();
    const entry = await directory('GET', '/v1/suppressions/office@brandl.providers.test');
    expect(entry.body).toMatchObject({ reason: 'unsubscribed', campaign_id: null });
    await servers.platform.db.query('delete from suppressions where email = $1', [
      'office@brandl.providers.test',
    ]);
  });

  it('never writes to an address on the suppression list', async () => {
    const suppressed = await directory('POST', '/v1/suppressions', { email: 'info@gruber.providers.test' });
    expect(suppressed.status).toBe(201);
    const sentBefore = sink.messages.length;
    const wf = await post(brief({ respond_by: new Date(Date.now() + 5000).toISOString() }));
    await sink.waitFor(sentBefore + 2, 30_000);
    const done = await until(
      'the end',
      async () => {
        const w = await get(wf.id);
        return ['succeeded', 'failed'].includes(w.status) ? w : undefined;
      },
      60_000,
    );
    expect(done.steps.find((s) => s.kind === 'searched')?.message).toMatch(
      /left out: 1 on your suppression list/,
    );
    expect(done.contacts.map((c) => c.email).sort()).toEqual([
      'office@brandl.providers.test',
      'service@novak.providers.test',
    ]);
    expect(sink.messages.slice(sentBefore).flatMap((m) => m.recipients)).not.toContain(
      'info@gruber.providers.test',
    );
    await directory('DELETE', '/v1/suppressions/info@gruber.providers.test');
  });

  it('cancelled while contacting or while waiting: no further mail, nothing billed', async () => {
    const before = await usage();
    // while contacting: the relay holds the second request; the cancel lands meanwhile
    let release = () => {};
    holdNth = { n: 2, seen: 0, gate: new Promise<void>((resolve) => (release = resolve)) };
    const sentBefore = sink.messages.length;
    const a = await post(brief());
    await until(
      'the second request to be in flight',
      async () => (await get(a.id)).contacts.filter((c) => c.status === 'sent').length === 1,
    );
    const cancelled = (await cancelWorkflow({ client, path: { id: a.id } })).data!;
    expect(cancelled.status).toBe('cancelled');
    release();
    holdNth = undefined;
    await new Promise((r) => setTimeout(r, 2000));
    const after = await get(a.id);
    // the request in flight when the cancel came went out; the third never did
    expect(after.contacts.map((c) => c.status).sort()).toEqual(['cancelled', 'sent', 'sent']);
    expect(sink.messages.length - sentBefore).toBe(2);
    expect(sink.messages.slice(sentBefore).flatMap((m) => m.recipients)).not.toContain(
      after.contacts.find((c) => c.status === 'cancelled')?.email,
    );

    // while waiting: then respond_by passes, and nothing is compared or billed
    const b = await post(brief({ respond_by: new Date(Date.now() + 6000).toISOString() }));
    await until('waiting', async () => (await get(b.id)).stage === 'awaiting_replies');
    const mailed = sink.messages.length;
    expect((await cancelWorkflow({ client, path: { id: b.id } })).data?.status).toBe('cancelled');
    await new Promise((r) => setTimeout(r, 8000));
    const end = await get(b.id);
    expect([end.status, end.result]).toEqual(['cancelled', null]);
    expect(sink.messages.length).toBe(mailed);
    expect(receiver.of(b.id).map((e) => e.type)).toEqual(['workflow.cancelled']);
    expect(await usage()).toBe(before);
  });

  it("opts a provider out through the request's one-click link (Sales' opt-out pages)", async () => {
    expect(optOutPath).toMatch(/^\/v1\/unsubscribe\/cq_/);
    const page = await fetch(`${servers.urls.directory}${optOutPath}`, { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(optOutEmail);
    const forged = `${optOutPath.slice(0, -1)}${optOutPath.endsWith('a') ? 'b' : 'a'}`;
    expect((await fetch(`${servers.urls.directory}${forged}`, { method: 'POST' })).status).toBe(404);
    const done = await fetch(`${servers.urls.directory}${optOutPath}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(done.status).toBe(200);
    const entry = await directory('GET', `/v1/suppressions/${optOutEmail}`);
    expect(entry.body).toMatchObject({ email: optOutEmail, reason: 'unsubscribed' });
  });
});
