// Campaigns end to end on the real service, both storage paths, through the generated SDK: a
// sending domain verified against a real DNS server on loopback, a target list of plumbers in
// Berlin, a two-step campaign sent over a real SMTP conversation to a sink (smtp-server), each
// message's DKIM signature and DMARC alignment checked by mailauth (not our code) against that
// DNS server, its headers (Reply-To token, List-Unsubscribe one-click, Message-ID) and its
// opt-out; replies, an auto-reply and a DSN bounce sent to our inbound listener over SMTP; the
// reply listed with its campaign, member and listing, the member `replied`, 0.50 EUR in
// GET /v1/usage once per message answered, `reply.received` and `campaign.completed` delivered
// to a webhook endpoint and verified with `standardwebhooks`; one-click unsubscribe and the page
// for people; suppression; hard bounces at RCPT; pause, resume, cancel, schedule; the send
// window and the hourly cap. Follow-up delays are shortened with CAMPAIGN_DAY_SECONDS.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../generated/directory/client/client/index.ts';
import {
  addTargetListMember,
  cancelCampaign,
  createCampaign,
  createSuppression,
  deleteSendingDomain,
  deleteTargetList,
  getCampaign,
  getReply,
  launchCampaign,
  listCampaignRecipients,
  listReplies,
  listSuppressions,
  listTargetListMembers,
  pauseCampaign,
  resumeCampaign,
  scheduleCampaign,
} from '../generated/directory/client/sdk.gen.ts';
import type {
  Campaign,
  CampaignRecipient,
  CreateCampaignRequest,
  SendingDomain,
  TargetList,
} from '../generated/directory/client/types.gen.ts';
import { demoListing } from '../src/directory/demo.ts';
import { insertListings, type ListingRecord } from '../src/directory/store.ts';
import { startTestDns, type TestDns } from './support/dns.ts';
import { startTestServers, storages, type TestServers } from './support/server.ts';
import { type CapturedMail, sendSmtp, type SmtpSink, startSmtpSink, verifyDkim } from './support/smtp.ts';
import { componentValidator, explain } from './support/spec.ts';
import { campaignBody as draftBody, readyList, salesPlan, verifiedDomain } from './support/campaigns.ts';
import { call, until } from './support/client.ts';

const validCampaign = componentValidator('directory', 'Campaign');
const validRecipient = componentValidator('directory', 'CampaignRecipient');
const validReply = componentValidator('directory', 'Reply');

/** Plumbers in Berlin: `n` listings, those at `without` publishing no email address. */
function berlinPlumbers(seed: string, n: number, without: number[] = []): ListingRecord[] {
  return Array.from({ length: n }, (_, i) => {
    const base = demoListing(seed, i);
    const slug = `${seed}-${i}`.replace(/[^a-z0-9-]/gi, '').toLowerCase();
    return {
      ...base,
      name: `Sanitär Klempnerei zq${seed} ${i}`,
      legal_name: `Sanitär Klempnerei zq${seed} ${i} GmbH`,
      activities: [
        { code: '43.22', name: 'Plumbing, heat and air-conditioning installation', primary: true },
      ],
      description: 'Klempner und Sanitärinstallateur in Berlin: Heizung, Bad, Rohrreinigung.',
      address: {
        street: 'Torstraße',
        house_number: String(10 + i),
        postal_code: '10119',
        city: 'Berlin',
        district: 'Mitte',
        region: 'Berlin',
        country: 'DE',
        formatted: `Torstraße ${10 + i}, 10119 Berlin, Germany`,
      },
      geo: { lat: 52.5291 + i / 1000, lon: 13.4013 },
      email: without.includes(i) ? null : `info@${slug}.test`,
      website: `https://www.${slug}.test`,
    };
  });
}

/** A receiver of webhook events on loopback, answering 204. */
class Receiver {
  bodies: Array<{ body: string; headers: Record<string, string> }> = [];
  #server: Server | undefined;
  url = '';
  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.bodies.push({
          body: Buffer.concat(chunks).toString('utf8'),
          headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
        });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hooks`;
  }
  async stop(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise((resolve) => this.#server?.close(resolve));
  }
}

describe.each(await storages())('campaigns on %s', (storage) => {
  let servers: TestServers;
  let dns: TestDns;
  let sink: SmtpSink;
  let client: ReturnType<typeof createClient>;
  const receiver = new Receiver();
  let webhookSecret = '';
  let domain: SendingDomain;
  const bouncing = new Set<string>();

  beforeAll(async () => {
    dns = await startTestDns();
    sink = await startSmtpSink({
      refuse: (to) => (bouncing.has(to) ? { code: 550, message: '5.1.1 No such user here' } : undefined),
    });
    await receiver.start();
    servers = await startTestServers(storage, {
      env: {
        DNS_SERVERS: dns.server,
        INBOUND_MAIL_HOST: 'mx.eurus.test',
        MAIL_SPF_INCLUDE: 'spf.eurus.test',
        SMTP_URL: sink.url,
        CAMPAIGN_DAY_SECONDS: '2',
        OUTBOUND_ALLOW_PRIVATE: 'true',
        WEBHOOK_RETRY_SCHEDULE: '0s,300ms,300ms',
        DEMO_LISTINGS: '200',
      },
    });
    client = createClient({ baseUrl: servers.urls.directory!, auth: servers.adminKey });
    const endpoint = await call(servers.urls.directory!, servers.adminKey, 'POST', '/v1/webhook-endpoints', {
      url: receiver.url,
      event_types: ['reply.received', 'campaign.completed'],
    });
    webhookSecret = endpoint.secret as string;

    // the domain, verified against the DNS server on loopback, as the guide shows
    domain = await verifiedDomain(client, dns, {
      domain: `mail-${storage}.keller-haustechnik.test`,
      from_name: 'Keller Haustechnik',
    });
  }, 240_000);
  afterAll(async () => {
    await servers?.stop();
    await sink?.close();
    await dns?.close();
    await receiver.stop();
  });

  async function list(seed: string, n: number, without: number[] = []): Promise<TargetList> {
    await servers.platform.db.transaction((tx) => insertListings(tx, berlinPlumbers(seed, n, without)));
    return readyList(client, {
      name: `Plumbers in Berlin ${seed}`,
      filters: { q: `zq${seed}`, city: 'Berlin', mode: 'keyword' },
    });
  }

  /** The two-step campaign about maintenance contracts, with `extra` over it. */
  const campaignBody = (targetListId: string, extra: Partial<CreateCampaignRequest> = {}) =>
    draftBody(domain, targetListId, {
      subject: 'Wartung für {{company_name}} in {{city}}',
      body_text:
        'Guten Tag,\n\nwir übernehmen Wartungsaufträge für {{company_name}} ({{activity}}).\n\nViele Grüße\n{{sender_name}}',
      follow_ups: [{ delay_days: 1, body_text: 'Guten Tag,\n\nkam meine Nachricht an?\n\n{{sender_name}}' }],
      ...extra,
    });

  async function recipients(id: string): Promise<CampaignRecipient[]> {
    const out: CampaignRecipient[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof listCampaignRecipients>> = await listCampaignRecipients({
        client,
        path: { id },
        query: { limit: 2, ...(cursor ? { cursor } : {}) },
      });
      expect(page.response?.status).toBe(200);
      for (const r of page.data!.data) expect(validRecipient(r), explain(validRecipient)).toBe(true);
      out.push(...page.data!.data);
      cursor = page.data!.next_cursor;
    } while (cursor);
    return out;
  }

  async function campaign(id: string): Promise<Campaign> {
    const got = await getCampaign({ client, path: { id } });
    expect(validCampaign(got.data), explain(validCampaign)).toBe(true);
    return got.data!;
  }

  const mailsTo = (to: string) => sink.messages.filter((m) => m.recipients.includes(to));
  const header = (mail: CapturedMail, name: string) => {
    const text = mail.raw.toString('utf8');
    const head = text.slice(0, text.indexOf('\r\n\r\n')).replace(/\r\n[ \t]+/g, ' ');
    return new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1]?.trim();
  };

  describe('a draft', () => {
    let l: TargetList;
    beforeAll(async () => {
      l = await list('plan', 1);
    });

    it('names an unknown merge field of the body at create', async () => {
      const bad = await createCampaign({
        client,
        body: campaignBody(l.id, { body_text: 'Hallo {{first_name}}' }),
      });
      expect(bad.response?.status).toBe(400);
      expect(bad.error).toMatchObject({ error: { code: 'unknown_merge_field', param: 'body_text' } });
      expect(JSON.stringify(bad.error)).toContain('{{first_name}}');
    });

    it("names an unknown merge field of a follow-up's subject at create", async () => {
      const badFollowUp = await createCampaign({
        client,
        body: campaignBody(l.id, { follow_ups: [{ delay_days: 2, body_text: 'x', subject: 'Re {{ciyt}}' }] }),
      });
      expect(badFollowUp.error).toMatchObject({
        error: { code: 'unknown_merge_field', param: 'follow_ups[0].subject' },
      });
    });

    it('refuses a from address off its sending domain', async () => {
      const offDomain = await createCampaign({
        client,
        body: campaignBody(l.id, { from_email: 'anna@gmail.test' }),
      });
      expect(offDomain.error).toMatchObject({ error: { code: 'from_not_on_domain', param: 'from_email' } });
    });

    it('needs the Sales plan to launch', async () => {
      const draft = await createCampaign({ client, body: campaignBody(l.id) });
      expect(draft.response?.status).toBe(201);
      expect(validCampaign(draft.data), explain(validCampaign)).toBe(true);
      const refused = await launchCampaign({ client, path: { id: draft.data!.id } });
      expect(refused.response?.status).toBe(403);
      expect(refused.error).toMatchObject({
        error: { type: 'permission_error', code: 'subscription_required' },
      });
      // the suites below send: they need the plan
      expect(await salesPlan(servers.urls.model!, servers.adminKey)).toBe(true);
      await cancelCampaign({ client, path: { id: draft.data!.id } });
    });
  });

  it('sends a two-step campaign over SMTP, signed, and bills the first human reply 0.50 EUR once', async () => {
    const l = await list('twostep', 4, [3]);
    expect(l.counts).toEqual({ matched: 4, added: 3, skipped_no_email: 1 });
    const created = await createCampaign({ client, body: campaignBody(l.id) });
    const launched = await launchCampaign({ client, path: { id: created.data!.id } });
    expect(launched.response?.status, JSON.stringify(launched.error)).toBe(200);
    expect(launched.data).toMatchObject({ status: 'sending', stats: { recipients: 3 } });
    const id = created.data!.id;

    const people = await until('step 0 to all three', async () => {
      const r = await recipients(id);
      return r.every((x) => x.messages[0]?.status === 'sent') ? r : undefined;
    });
    for (const person of people) {
      const [mail, ...more] = mailsTo(person.email);
      expect(more).toEqual([]); // not (yet) step 1: the follow-up waits 2 s
      const message = person.messages[0]!;
      expect(message).toMatchObject({ step: 0, via: 'smtp', error: null });
      expect(header(mail!, 'Message-ID')).toBe(message.message_id);
      const auth = await verifyDkim(mail!.raw, dns);
      expect(auth.dkim.results[0]?.status.result).toBe('pass');
      expect(auth.dkim.results[0]?.signingDomain).toBe(domain.domain);
      expect(auth.dmarc && typeof auth.dmarc === 'object' ? auth.dmarc.status.result : 'none').toBe('pass');
      const replyTo = header(mail!, 'Reply-To')!;
      expect(replyTo).toMatch(new RegExp(`^r-[a-z2-7]{20}@reply\\.${domain.domain.replace(/\./g, '\\.')}$`));
      expect(mail!.envelopeFrom).toBe(replyTo);
      expect(header(mail!, 'List-Unsubscribe')).toMatch(
        /^<http:\/\/[^>]+\/v1\/unsubscribe\/rcp_[0-9A-Za-z]{26}\.[A-Za-z0-9_-]{22}>$/,
      );
      expect(header(mail!, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
      expect(auth.dkim.results[0]?.signingHeaders?.keys).toMatch(/list-unsubscribe-post/i);
      const parsed = await simpleParser(mail!.raw);
      expect(parsed.from?.value[0]).toMatchObject({ name: 'Anna Keller', address: `anna@${domain.domain}` });
      expect(parsed.subject).toBe(`Wartung für ${person.name} in Berlin`);
      expect(parsed.text).toContain(
        `wir übernehmen Wartungsaufträge für ${person.name} (Plumbing, heat and air-conditioning installation)`,
      );
      expect(parsed.text).toContain('Anna Keller <anna@');
      expect(parsed.text).toContain('/v1/unsubscribe/rcp_');
    }

    // a person answers the first message from a mail client, over SMTP to our listener
    const first = people[0]!;
    const sent = mailsTo(first.email)[0]!;
    const replyTo = header(sent, 'Reply-To')!;
    await sendSmtp(servers.smtpPort!, {
      from: { name: 'Michael Bauer', address: first.email },
      to: replyTo,
      subject: `Re: Wartung für ${first.name} in Berlin`,
      text: 'Hallo Frau Keller,\n\ngerne, rufen Sie mich Donnerstag an.\n\nGruß\nMichael Bauer',
      inReplyTo: first.messages[0]!.message_id,
      references: [first.messages[0]!.message_id],
      messageId: `<answer-1-${storage}@bauer.test>`,
    });
    const replies = await until('the reply listed', async () => {
      const page = await listReplies({ client, query: { campaign_id: id } });
      return page.data!.data.length === 1 ? page.data!.data : undefined;
    });
    const reply = replies[0]!;
    expect(validReply(reply), explain(validReply)).toBe(true);
    expect(reply).toMatchObject({
      kind: 'human',
      campaign_id: id,
      recipient_id: first.id,
      member_id: first.member_id,
      listing_id: first.listing_id,
      target_list_id: l.id,
      step: 0,
      in_reply_to: first.messages[0]!.message_id,
      matched_by: 'token',
      from: first.email,
      from_name: 'Michael Bauer',
      billed: true,
      cost: '0.500000000',
      currency: 'EUR',
    });
    expect((await getReply({ client, path: { id: reply.id } })).data).toEqual(reply);
    const members = (
      await listTargetListMembers({ client, path: { id: l.id }, query: { status: 'replied' } })
    ).data!;
    expect(members.data.map((m) => m.id)).toEqual([first.member_id]);

    // the same message answered again by the person, an out-of-office, and the sender retrying
    // the first answer (our 250 lost): listed or ignored, never billed again
    await sendSmtp(servers.smtpPort!, {
      from: first.email,
      to: replyTo,
      subject: 'Re: Wartung',
      text: 'Noch etwas: bitte vormittags.',
      inReplyTo: first.messages[0]!.message_id,
      messageId: `<answer-2-${storage}@bauer.test>`,
    });
    await sendSmtp(servers.smtpPort!, {
      from: first.email,
      to: replyTo,
      subject: `Re: Wartung für ${first.name} in Berlin`,
      text: 'Hallo Frau Keller,\n\ngerne, rufen Sie mich Donnerstag an.\n\nGruß\nMichael Bauer',
      inReplyTo: first.messages[0]!.message_id,
      messageId: `<answer-1-${storage}@bauer.test>`,
    });
    const second = people[1]!;
    await sendSmtp(servers.smtpPort!, {
      from: second.email,
      to: header(mailsTo(second.email)[0]!, 'Reply-To')!,
      subject: 'Abwesenheitsnotiz: Re: Wartung',
      text: 'Ich bin bis zum 3. Dezember nicht im Büro.',
      headers: { 'Auto-Submitted': 'auto-replied' },
      inReplyTo: second.messages[0]!.message_id,
    });
    const all = await until('three answers', async () => {
      const page = await listReplies({ client, query: { campaign_id: id, limit: 100 } });
      return page.data!.data.length === 3 ? page.data!.data : undefined;
    });
    expect(all.map((r) => [r.kind, r.billed]).sort()).toEqual([
      ['auto_reply', false],
      ['human', false],
      ['human', true],
    ]);
    const usage = await fetch(
      `${servers.urls.directory}/v1/usage?from=${new Date().toISOString().slice(0, 10)}&to=${new Date().toISOString().slice(0, 10)}&interface=sales`,
      { headers: { Authorization: `Bearer ${servers.adminKey}` } },
    ).then((r) => r.json() as Promise<{ totals: { cost: string; requests: number } }>);
    expect(usage.totals).toMatchObject({ cost: '0.500000000', requests: 1 });

    // the follow-up goes to those who did not reply, in the thread of the first message
    const done = await until(
      'the campaign completed',
      async () => {
        const c = await campaign(id);
        return c.status === 'completed' ? c : undefined;
      },
      90_000,
    );
    expect(done.stats).toEqual({
      recipients: 3,
      suppressed: 0,
      contacted: 3,
      messages_sent: 5,
      messages_failed: 0,
      replied: 1,
      bounced: 0,
      unsubscribed: 0,
    });
    expect(mailsTo(first.email)).toHaveLength(1);
    for (const person of people.slice(1)) {
      const [step0, step1, ...more] = mailsTo(person.email);
      expect(more).toEqual([]);
      const followUp = await simpleParser(step1!.raw);
      expect(followUp.subject).toBe(`Re: Wartung für ${person.name} in Berlin`);
      expect(followUp.inReplyTo).toBe(header(step0!, 'Message-ID'));
      expect((await verifyDkim(step1!.raw, dns)).dkim.results[0]?.status.result).toBe('pass');
    }

    // reply.received (the billed one, the other human one) and campaign.completed, signed
    const events = await until('the events', async () => {
      const parsed = receiver.bodies.map(
        (b) =>
          new Webhook(webhookSecret).verify(b.body, b.headers) as {
            type: string;
            data: { object: { id: string; campaign_id?: string } };
          },
      );
      const mine = parsed.filter((e) => e.data.object.id === id || e.data.object.campaign_id === id);
      return mine.some((e) => e.type === 'campaign.completed') &&
        mine.filter((e) => e.type === 'reply.received').length === 2
        ? mine
        : undefined;
    });
    expect(events.find((e) => e.type === 'campaign.completed')?.data.object).toMatchObject({
      id,
      status: 'completed',
    });
    expect(events.find((e) => e.type === 'reply.received')?.data.object).toMatchObject({ id: reply.id });
  }, 180_000);

  it('unsubscribes with one click (RFC 8058) and through the page, and suppresses the address for good', async () => {
    const l = await list('optout', 2);
    const created = await createCampaign({
      client,
      body: campaignBody(l.id, { follow_ups: [{ delay_days: 5, body_text: 'x' }] }),
    });
    await launchCampaign({ client, path: { id: created.data!.id } });
    const people = await until('both sent', async () => {
      const r = await recipients(created.data!.id);
      return r.every((x) => x.messages[0]?.status === 'sent') ? r : undefined;
    });
    const urlOf = (email: string) => {
      const url = /^<(.*)>$/.exec(header(mailsTo(email)[0]!, 'List-Unsubscribe')!)![1]!;
      return `${servers.urls.directory}${new URL(url).pathname}`;
    };
    // a mailbox provider's one-click POST
    const oneClick = await fetch(urlOf(people[0]!.email), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(oneClick.status).toBe(200);
    expect(await oneClick.text()).toContain('You are unsubscribed');
    // a person: the page only asks; its form posts
    const pageUrl = urlOf(people[1]!.email);
    const page = await fetch(pageUrl, { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('<form method="post">');
    expect(html).toContain(people[1]!.email);
    expect((await recipients(created.data!.id)).find((r) => r.id === people[1]!.id)?.status).toBe(
      'contacted',
    );
    const form = new FormData();
    form.set('List-Unsubscribe', 'One-Click');
    expect((await fetch(pageUrl, { method: 'POST', body: form })).status).toBe(200);
    // twice is once
    expect((await fetch(pageUrl, { method: 'POST' })).status).toBe(200);

    // a changed token is refused (HTML for people, the envelope otherwise)
    const dot = pageUrl.lastIndexOf('.') + 1;
    const forged = pageUrl.slice(0, dot) + (pageUrl[dot] === 'A' ? 'B' : 'A') + pageUrl.slice(dot + 1);
    const refusedPage = await fetch(forged, { headers: { Accept: 'text/html' } });
    expect(refusedPage.status).toBe(404);
    expect(await refusedPage.text()).toContain('not valid');
    const refused = await fetch(forged, { method: 'POST', headers: { Accept: 'application/json' } });
    expect(refused.status).toBe(404);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
      'unsubscribe_link_invalid',
    );

    const after = await recipients(created.data!.id);
    expect(after.map((r) => [r.status, r.next_step_at])).toEqual([
      ['unsubscribed', null],
      ['unsubscribed', null],
    ]);
    expect((await campaign(created.data!.id)).stats.unsubscribed).toBe(2);
    const suppressed = (await listSuppressions({ client, query: { reason: 'unsubscribed', limit: 100 } }))
      .data!;
    expect(suppressed.data.map((s) => s.email)).toEqual(expect.arrayContaining(people.map((p) => p.email)));
    expect(suppressed.data.find((s) => s.email === people[0]!.email)?.campaign_id).toBe(created.data!.id);

    // a later campaign to the same list skips them
    const later = await createCampaign({ client, body: campaignBody(l.id, { follow_ups: [] }) });
    const launched = await launchCampaign({ client, path: { id: later.data!.id } });
    expect(launched.data?.stats).toMatchObject({ recipients: 2, suppressed: 2 });
    await until(
      'the later campaign completed',
      async () => (await campaign(later.data!.id)).status === 'completed',
    );
    expect(mailsTo(people[0]!.email)).toHaveLength(1);
    await cancelCampaign({ client, path: { id: created.data!.id } });
  }, 120_000);

  it('marks hard bounces (refused at RCPT, or a DSN over SMTP) and suppresses them', async () => {
    const l = await list('bounce', 3);
    const members = (await listTargetListMembers({ client, path: { id: l.id } })).data!.data;
    bouncing.add(members[0]!.email);
    const manual = await createSuppression({ client, body: { email: members[2]!.email.toUpperCase() } });
    expect(manual.response?.status).toBe(201);
    const created = await createCampaign({
      client,
      body: campaignBody(l.id, { follow_ups: [{ delay_days: 30, body_text: 'x' }] }),
    });
    const launched = await launchCampaign({ client, path: { id: created.data!.id } });
    expect(launched.data?.stats).toMatchObject({ recipients: 3, suppressed: 1 });
    const people = await until('the two sends settled', async () => {
      const r = await recipients(created.data!.id);
      return r.filter((x) => x.messages[0]?.status === 'sent' || x.messages[0]?.status === 'failed')
        .length === 2
        ? r
        : undefined;
    });
    const [refused, delivered, skipped] = people;
    expect(refused).toMatchObject({ status: 'bounced', next_step_at: null });
    expect(refused!.messages[0]).toMatchObject({ status: 'failed' });
    expect(refused!.messages[0]!.error).toMatch(/550/);
    expect(skipped).toMatchObject({ status: 'suppressed', messages: [] });
    expect(mailsTo(members[2]!.email)).toEqual([]);

    // the receiving server bounces the delivered one later, with a DSN to our envelope sender
    const sent = mailsTo(delivered!.email)[0]!;
    const dsn = [
      'From: Mail Delivery System <MAILER-DAEMON@mx.receiver.test>',
      `To: ${sent.envelopeFrom}`,
      'Subject: Undelivered Mail Returned to Sender',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain',
      '',
      'The mail could not be delivered.',
      '--b1',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.receiver.test',
      '',
      `Final-Recipient: rfc822; ${delivered!.email}`,
      'Action: failed',
      'Status: 5.1.1',
      'Diagnostic-Code: smtp; 550 5.1.1 mailbox unknown',
      '--b1',
      'Content-Type: text/rfc822-headers',
      '',
      `Message-ID: ${delivered!.messages[0]!.message_id}`,
      '--b1--',
      '',
    ].join('\r\n');
    await sendSmtp(servers.smtpPort!, { raw: dsn, envelope: { from: '', to: [sent.envelopeFrom] } });
    await until(
      'the DSN bounce',
      async () =>
        (await recipients(created.data!.id)).find((r) => r.id === delivered!.id)?.status === 'bounced',
    );
    const bounces = (await listReplies({ client, query: { campaign_id: created.data!.id, kind: 'bounce' } }))
      .data!;
    expect(bounces.data).toMatchObject([{ kind: 'bounce', billed: false, cost: '0.000000000' }]);
    const hard = (await listSuppressions({ client, query: { reason: 'hard_bounce', limit: 100 } })).data!
      .data;
    expect(hard.map((s) => s.email)).toEqual(expect.arrayContaining([members[0]!.email, delivered!.email]));
    expect((await campaign(created.data!.id)).stats).toMatchObject({
      bounced: 2,
      suppressed: 1,
      messages_failed: 0,
    });

    // mail that matches nothing of ours is refused with 550
    await expect(
      sendSmtp(servers.smtpPort!, {
        from: 'someone@else.test',
        to: `r-aaaaaaaaaaaaaaaaaaaa@${domain.reply_domain}`,
        subject: 'hello',
        text: 'hi',
      }),
    ).rejects.toMatchObject({ responseCode: 550 });
    await cancelCampaign({ client, path: { id: created.data!.id } });
  }, 120_000);

  it('pauses, resumes, cancels, schedules, and keeps its list while it runs', async () => {
    const l = await list('states', 2);
    const created = await createCampaign({
      client,
      body: campaignBody(l.id, { follow_ups: [{ delay_days: 1, body_text: 'x' }] }),
    });
    const id = created.data!.id;
    const at = Math.floor(Date.now() / 1000) + 3600;
    const scheduled = await scheduleCampaign({ client, path: { id }, body: { send_at: at } });
    expect(scheduled.data).toMatchObject({ status: 'scheduled', schedule_at: at });
    const past = await scheduleCampaign({ client, path: { id }, body: { send_at: 1000 } });
    expect(past.error).toMatchObject({ error: { code: 'send_at_in_past', param: 'send_at' } });
    expect((await deleteTargetList({ client, path: { id: l.id } })).error).toMatchObject({
      error: { code: 'target_list_in_use' },
    });
    // the campaign's domain stays while the campaign may send from it
    expect((await deleteSendingDomain({ client, path: { id: domain.id } })).error).toMatchObject({
      error: { code: 'sending_domain_in_use' },
    });
    expect((await pauseCampaign({ client, path: { id } })).data).toMatchObject({
      status: 'paused',
      paused_reason: 'requested',
    });
    expect((await resumeCampaign({ client, path: { id } })).data).toMatchObject({
      status: 'scheduled',
      paused_reason: null,
    });
    const launched = await launchCampaign({ client, path: { id } });
    expect(launched.data).toMatchObject({ status: 'sending', stats: { recipients: 2 } });
    await until('step 0 sent', async () =>
      (await recipients(id)).every((r) => r.messages[0]?.status === 'sent'),
    );
    const paused = await pauseCampaign({ client, path: { id } });
    expect(paused.data?.status).toBe('paused');
    await new Promise((r) => setTimeout(r, 3500)); // the follow-up comes due while paused
    expect((await recipients(id)).every((r) => r.messages.length === 1)).toBe(true);
    expect((await resumeCampaign({ client, path: { id } })).data?.status).toBe('sending');
    await until('completed', async () => (await campaign(id)).status === 'completed');
    expect((await recipients(id)).every((r) => r.messages.length === 2)).toBe(true);
    expect((await cancelCampaign({ client, path: { id } })).error).toMatchObject({
      error: { code: 'campaign_finished' },
    });
    expect((await resumeCampaign({ client, path: { id } })).error).toMatchObject({
      error: { code: 'campaign_not_paused' },
    });

    // cancelled mid-way: nothing more goes out
    const other = await createCampaign({
      client,
      body: campaignBody(l.id, { follow_ups: [{ delay_days: 1, body_text: 'x' }] }),
    });
    await launchCampaign({ client, path: { id: other.data!.id } });
    await until('step 0 sent', async () =>
      (await recipients(other.data!.id)).every((r) => r.messages[0]?.status === 'sent'),
    );
    expect((await cancelCampaign({ client, path: { id: other.data!.id } })).data?.status).toBe('cancelled');
    await new Promise((r) => setTimeout(r, 3500));
    expect((await recipients(other.data!.id)).every((r) => r.messages.length === 1)).toBe(true);
    expect((await deleteTargetList({ client, path: { id: l.id } })).response?.status).toBe(200);
  }, 120_000);

  it('keeps to the send window and the hourly cap of the domain', async () => {
    const l = await list('capped', 3);
    // a window that is closed now: nothing goes out, the first step waits for the opening
    const now = new Date();
    const closedDay = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'][(now.getUTCDay() + 3) % 7] as 'mon';
    const windowed = await createCampaign({
      client,
      body: campaignBody(l.id, {
        send_window: { time_zone: 'UTC', days: [closedDay], start: '09:00', end: '10:00' },
      }),
    });
    await launchCampaign({ client, path: { id: windowed.data!.id } });
    await new Promise((r) => setTimeout(r, 2000));
    const waiting = await recipients(windowed.data!.id);
    expect(waiting.every((r) => r.messages.length === 0 && r.status === 'pending')).toBe(true);
    await pauseCampaign({ client, path: { id: windowed.data!.id } });
    const invalid = await createCampaign({
      client,
      body: campaignBody(l.id, {
        send_window: { time_zone: 'Mars/Olympus', days: ['mon'], start: '09:00', end: '10:00' },
      }),
    });
    expect(invalid.error).toMatchObject({ error: { code: 'invalid_time_zone' } });

    // the cap counts every campaign on the domain in the last hour
    const [{ n }] = (await servers.platform.db.query<{ n: number }>(
      `select count(*)::int as n from campaign_messages where sending_domain_id = $1 and queued_at > now() - interval '1 hour'`,
      [domain.id],
    )) as [{ n: number }];
    const capped = await createCampaign({
      client,
      body: campaignBody(l.id, { hourly_cap: n + 2, follow_ups: [] }),
    });
    await launchCampaign({ client, path: { id: capped.data!.id } });
    await until(
      'two sent',
      async () =>
        (await recipients(capped.data!.id)).filter((r) => r.messages[0]?.status === 'sent').length === 2,
    );
    await new Promise((r) => setTimeout(r, 2000));
    const third = (await recipients(capped.data!.id)).filter((r) => r.messages.length === 0);
    expect(third).toHaveLength(1);
    expect(third[0]!.status).toBe('pending');
    expect((await campaign(capped.data!.id)).status).toBe('sending');
    await cancelCampaign({ client, path: { id: capped.data!.id } });
    await cancelCampaign({ client, path: { id: windowed.data!.id } });
  }, 120_000);

  it('adds a member by hand that a later launch takes', async () => {
    const l = await list('byhand', 1);
    const [extra] = berlinPlumbers('byhand-extra', 1);
    await servers.platform.db.transaction((tx) => insertListings(tx, [extra!]));
    await addTargetListMember({ client, path: { id: l.id }, body: { listing_id: extra!.id } });
    const created = await createCampaign({ client, body: campaignBody(l.id, { follow_ups: [] }) });
    const launched = await launchCampaign({ client, path: { id: created.data!.id } });
    expect(launched.data?.stats.recipients).toBe(2);
    await until('completed', async () => (await campaign(created.data!.id)).status === 'completed');
    expect(mailsTo(extra!.email!)).toHaveLength(1);
  }, 60_000);
});
