// The "Done when", as one flow on the real service, following docs/sales.md as a new user
// does: the request bodies are the guide's own (taken from the page), the DNS server is the
// guide's `npm run dns:local` fed the domain as the API returned it, the relay is the guide's
// `npm run mail:sink`, both started as processes. A domain is added, its records served,
// verified; the Sales plan subscribed; a target list of plumbers in Berlin built; a two-step
// campaign launched; its messages land in the sink DKIM-signed (checked by mailauth against the
// same DNS server); one plumber answers from a mail client over SMTP to our inbound listener; the
// reply is listed, the member is `replied`, 0.50 EUR is in GET /v1/usage, the follow-up goes to
// the others only, and the reply reaches the project's CRM as a note (a HubSpot connection with
// `sync_replies`, HubSpot played by Prism on its published description). Both storage paths.
import { type ChildProcess, spawn } from 'node:child_process';
import { Resolver } from 'node:dns/promises';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { authenticate } from 'mailauth';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoListing } from '../src/directory/demo.ts';
import { insertListings, type ListingRecord } from '../src/directory/store.ts';
import { type FakeCrm, startFakeCrm } from './support/crm-vendors.ts';
import { until as poll, send } from './support/client.ts';
import { freePort, outputOf, printed, stop } from './support/processes.ts';
import { startTestServers, storages, type TestServers } from './support/server.ts';
import { sendSmtp } from './support/smtp.ts';

const GUIDE = readFileSync('docs/sales.md', 'utf8');
const DOMAIN = 'mail.example.test';

/** The JSON body of the guide's `curl ... <path>` call (its `-d '...'` or its heredoc). */
function guideBody(path: string): Record<string, unknown> {
  const at = GUIDE.indexOf(`http://localhost:8081${path} `);
  if (at < 0) throw new Error(`docs/sales.md has no call to ${path}`);
  const end = GUIDE.indexOf('\n```', at);
  const call = GUIDE.slice(at, end);
  const heredoc = /<<'?JSON'?\n([\s\S]*?)\nJSON/.exec(call);
  const inline = /-d '(\{[\s\S]*?\})'/.exec(call);
  const json = heredoc?.[1] ?? inline?.[1];
  if (json === undefined) throw new Error(`no JSON body in the guide's call to ${path}`);
  return JSON.parse(json) as Record<string, unknown>;
}

/** Plumbers in Berlin, as the directory holds them (the demo directory has none in Berlin). */
function berlinPlumbers(seed: string, n: number): ListingRecord[] {
  return Array.from({ length: n }, (_, i) => {
    const base = demoListing(seed, i);
    return {
      ...base,
      name: `Klempnerei ${['Bauer', 'Schulz', 'Wagner', 'Krüger'][i % 4]} ${seed} ${i}`,
      legal_name: null,
      activities: [
        { code: '43.22', name: 'Plumbing, heat and air-conditioning installation', primary: true },
      ],
      description: 'Plumber in Berlin: bathrooms, heating, pipe cleaning. Klempner und Sanitärinstallateur.',
      address: {
        street: 'Kastanienallee',
        house_number: String(20 + i),
        postal_code: '10435',
        city: 'Berlin',
        district: 'Prenzlauer Berg',
        region: 'Berlin',
        country: 'DE',
        formatted: `Kastanienallee ${20 + i}, 10435 Berlin, Germany`,
      },
      geo: { lat: 52.538 + i / 1000, lon: 13.41 },
      email: `kontakt@klempnerei-${seed}-${i}.test`,
      website: null,
    };
  });
}

/** A command of the guide (`npm run ...`'s script), as a process; its output kept. */
function run(script: string, args: string[], options: { cwd?: string; stdin?: string } = {}) {
  const child = spawn(process.execPath, [resolve(script), ...args], {
    cwd: options.cwd ?? process.cwd(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const output = outputOf(child);
  child.stdin.end(options.stdin ?? '');
  return { child, output };
}

// the guide's steps, each given 90 s on a busy machine, polled every 200 ms
const until = <T>(what: string, check: () => Promise<T | undefined | false>, ms = 90_000) =>
  poll(what, check, ms, 200);

describe.each(await storages())('the first campaign of docs/sales.md on %s', (storage) => {
  let servers: TestServers;
  let hubspot: FakeCrm;
  const processes: ChildProcess[] = [];
  const sinkDir = mkdtempSync(join(tmpdir(), 'sales-sink-'));
  let sinkPort = 0;
  let dnsPort = 0;

  beforeAll(async () => {
    [sinkPort, dnsPort, hubspot] = await Promise.all([freePort(), freePort(), startFakeCrm('hubspot')]);
    // `npm run mail:sink`: the relay, keeping each message as a .eml file
    const sink = run('scripts/smtp-sink.ts', ['--port', String(sinkPort)], { cwd: sinkDir });
    processes.push(sink.child);
    await printed('the sink', sink.output, /SMTP sink on/, 30_000);
    servers = await startTestServers(storage, {
      env: {
        DNS_SERVERS: `127.0.0.1:${dnsPort}`,
        SMTP_URL: `smtp://127.0.0.1:${sinkPort}`,
        INBOUND_MAIL_HOST: 'mx.eurus.test',
        MAIL_SPF_INCLUDE: 'spf.eurus.test',
        // the guide's follow-up waits 3 days; a day lasts a second here
        CAMPAIGN_DAY_SECONDS: '1',
        OUTBOUND_ALLOW_PRIVATE: 'true',
        DEMO_LISTINGS: '300',
      },
    });
  }, 240_000);
  afterAll(async () => {
    await servers?.stop();
    for (const child of processes) await stop(child);
    await hubspot?.close();
    rmSync(sinkDir, { recursive: true, force: true });
  });

  // the guide's answers read as loosely as its readers' shell does
  const api = async (base: string, method: string, path: string, body?: object) => {
    const res = await send(base, servers.adminKey, method, path, body);
    return { status: res.status, json: res.body as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  const directory = (method: string, path: string, body?: object) =>
    api(servers.urls.directory!, method, path, body);
  const model = (method: string, path: string, body?: object) => api(servers.urls.model!, method, path, body);

  const sunk = async () =>
    Promise.all(
      readdirSync(join(sinkDir, 'data', 'sink'))
        .sort()
        .map(async (file) => {
          const raw = readFileSync(join(sinkDir, 'data', 'sink', file));
          return { raw, parsed: await simpleParser(raw) };
        }),
    );

  it('domain verified, plumbers in Berlin, a two-step campaign, a reply over SMTP, billed 0.50 EUR', async () => {
    // 1. add the domain, serve its records with `npm run dns:local`, verify
    const added = await directory('POST', '/v1/sending-domains', {
      ...guideBody('/v1/sending-domains'),
      domain: DOMAIN,
    });
    expect(added.status, JSON.stringify(added.json)).toBe(201);
    const dns = run('scripts/local-dns.ts', ['--port', String(dnsPort)], {
      stdin: JSON.stringify(added.json),
    });
    processes.push(dns.child);
    await printed('the DNS server', dns.output, /serving/, 30_000);
    const verified = await directory('POST', `/v1/sending-domains/${added.json.id}/verify`);
    expect(verified.json.status, JSON.stringify(verified.json)).toBe('verified');

    // 2. the Sales plan (sending needs it), on the Model API
    const plan = await model('POST', '/v1/subscriptions', { plan: 'sales' });
    expect(plan.status, JSON.stringify(plan.json)).toBe(201);

    // 3. a target list of plumbers in Berlin, with the guide's filters
    await servers.platform.db.transaction((tx) => insertListings(tx, berlinPlumbers(storage, 3)));
    const created = await directory('POST', '/v1/target-lists', guideBody('/v1/target-lists'));
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const list = await until('the list built', async () => {
      const got = await directory('GET', `/v1/target-lists/${created.json.id}`);
      return got.json.status === 'ready' ? got.json : undefined;
    });
    const members = (await directory('GET', `/v1/target-lists/${list.id}/members?limit=100`)).json
      .data as Array<{
      id: string;
      listing_id: string;
      email: string;
      listing: { address: { city: string }; activities: Array<{ code: string }> };
    }>;
    expect(members.length).toBeGreaterThanOrEqual(3);
    for (const m of members) {
      expect(m.listing.address.city).toBe('Berlin');
      expect(m.listing.activities.map((a) => a.code)).toContain('43.22');
    }

    // the project's CRM, which pushes replies as notes; the list's members synced first
    const crm = await directory('POST', '/v1/crm-connections', {
      provider: 'hubspot',
      credentials: { access_token: hubspot.token },
      base_url: hubspot.url,
      sync_replies: true,
    });
    expect(crm.status, JSON.stringify(crm.json)).toBe(201);
    const sync = await directory('POST', `/v1/crm-connections/${crm.json.id}/syncs`, {
      target_list_id: list.id,
    });
    expect(sync.status, JSON.stringify(sync.json)).toBe(202);
    await until('the members in HubSpot', async () => {
      const got = await directory('GET', `/v1/crm-connections/${crm.json.id}/syncs/${sync.json.id}`);
      return got.json.status === 'succeeded' || (got.json.status === 'failed' && expect(got.json).toBe(null));
    });

    // 4. the guide's two-step campaign (without its Mon-Fri office-hours window: a test runs any time)
    const body = guideBody('/v1/campaigns');
    delete body.send_window;
    const campaign = await directory('POST', '/v1/campaigns', {
      ...body,
      target_list_id: list.id,
      sending_domain_id: added.json.id,
      // the guide's sender, on the domain this test verified
      from_email: String(body.from_email).replace(/@.*$/, `@${DOMAIN}`),
    });
    expect(campaign.status, JSON.stringify(campaign.json)).toBe(201);
    expect(campaign.json.follow_ups).toHaveLength(1);
    const launched = await directory('POST', `/v1/campaigns/${campaign.json.id}/launch`);
    expect(launched.json, JSON.stringify(launched.json)).toMatchObject({
      status: 'sending',
      stats: { recipients: members.length },
    });

    // 5. the first messages arrive at the relay, signed for the domain
    const first = await until('a message to every member', async () => {
      const mails = await sunk();
      return mails.length >= members.length ? mails : undefined;
    });
    const resolver = new Resolver();
    resolver.setServers([`127.0.0.1:${dnsPort}`]);
    for (const mail of first) {
      const auth = await authenticate(mail.raw, {
        resolver: ((name: string, type: string) => resolver.resolve(name, type)) as never,
        sender: '',
        ip: '127.0.0.1',
        helo: 'localhost',
        mta: 'receiver.test',
        disableArc: true,
        disableBimi: true,
      });
      expect(auth.dkim.results[0]?.status.result).toBe('pass');
      expect(auth.dkim.results[0]?.signingDomain).toBe(DOMAIN);
      expect(mail.parsed.from?.value[0]?.address).toBe(`anna@${DOMAIN}`);
      expect(mail.raw.toString('utf8')).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r$/m);
    }

    // 6. one plumber answers from a mail client, over SMTP to the reply subdomain's listener
    const answered = first[0]!;
    const plumber =
      answered.parsed.to && 'value' in answered.parsed.to ? answered.parsed.to.value[0]!.address! : '';
    const member = members.find((m) => m.email === plumber)!;
    expect(member).toBeDefined();
    await sendSmtp(servers.smtpPort!, {
      from: { name: 'Jonas Bauer', address: plumber },
      to: answered.parsed.replyTo!.value[0]!.address!,
      subject: `Re: ${answered.parsed.subject}`,
      text: 'Hello Ms Keller,\n\nyes, call me on Thursday morning.\n\nJonas Bauer',
      inReplyTo: answered.parsed.messageId!,
      references: [answered.parsed.messageId!],
    });

    // 7. the reply, the member's status, and 0.50 EUR in usage
    const replies = await until('the reply', async () => {
      const got = await directory('GET', `/v1/replies?campaign_id=${campaign.json.id}`);
      return got.json.data.length === 1 ? got.json.data : undefined;
    });
    expect(replies[0]).toMatchObject({
      kind: 'human',
      listing_id: member.listing_id,
      member_id: member.id,
      from: plumber,
      billed: true,
      cost: '0.500000000',
    });
    const replied = await directory('GET', `/v1/target-lists/${list.id}/members?status=replied`);
    expect(replied.json.data.map((m: { id: string }) => m.id)).toEqual([member.id]);
    const today = new Date().toISOString().slice(0, 10);
    const usage = await directory('GET', `/v1/usage?from=${today}&to=${today}&interface=sales`);
    expect(usage.json.totals).toMatchObject({ cost: '0.500000000', requests: 1 });

    // the follow-up goes to the others only, in the thread; then the campaign is completed
    const done = await until('the campaign completed', async () => {
      const got = await directory('GET', `/v1/campaigns/${campaign.json.id}`);
      return got.json.status === 'completed' ? got.json : undefined;
    });
    expect(done.stats).toMatchObject({ messages_sent: members.length * 2 - 1, replied: 1 });
    const all = await sunk();
    expect(all.filter((m) => m.raw.includes(plumber))).toHaveLength(1);
    const followUps = all.slice(first.length);
    expect(followUps).toHaveLength(members.length - 1);
    for (const f of followUps)
      expect(f.parsed.inReplyTo).toMatch(/^<rcp_[0-9A-Za-z]{26}\.0@mail\.example\.test>$/);

    // the reply reached the CRM as a note on the plumber's company
    const note = await until('the note in HubSpot', async () =>
      hubspot.notes.find((n) => JSON.stringify(n.body).includes('call me on Thursday morning')),
    );
    expect(JSON.stringify(note.body)).toContain(plumber);
    // marked once HubSpot took the note: the mark may land a moment after the note does
    const stored = await until('the reply marked synced', async () => {
      const reply = await directory('GET', `/v1/replies/${replies[0].id}`);
      return reply.json.crm_synced === true ? reply : undefined;
    });
    expect(stored.json.crm_synced).toBe(true);
  }, 300_000);
});
