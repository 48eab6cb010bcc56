// Sending domains end to end, on both storage paths: a domain is added through the generated
// SDK, its records are published in a real DNS server on loopback (support/dns.ts) and verified
// through it (DNS_SERVERS), record by record (verified, mismatch, missing; re-verification; a
// failing resolver). Mail signed with the domain's key goes over a real SMTP conversation to a
// sink (SMTP_URL) or to the .eml outbox, and mailauth (not our code) verifies the DKIM signature
// and DMARC alignment against the same DNS server.
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../generated/directory/client/client/index.ts';
import {
  createSendingDomain,
  deleteSendingDomain,
  getSendingDomain,
  listSendingDomains,
  verifySendingDomain,
} from '../generated/directory/client/sdk.gen.ts';
import type { SendingDomain } from '../generated/directory/client/types.gen.ts';
import { checkRecords, dnsLookup } from '../src/mail/dns.ts';
import type { VerifiedDomain } from '../src/mail/domains.ts';
import { createMailTransport, MailSendError, type OutgoingMail } from '../src/mail/transport.ts';
import { outbound } from '../src/platform/outbound.ts';
import { send } from './support/client.ts';
import { startTestDns, type TestDns } from './support/dns.ts';
import { startTestServers, storages, type TestServers } from './support/server.ts';
import { startSmtpSink, verifyDkim } from './support/smtp.ts';
import { componentValidator, explain } from './support/spec.ts';

const INBOUND = 'mx.eurus.test';
const SPF = 'spf.eurus.test';
const validDomain = componentValidator('directory', 'SendingDomain');

/** Publishes every record of `domain` as the API gave it (MX as `priority host`). */
function publishAll(dns: TestDns, domain: SendingDomain): void {
  for (const record of domain.dns_records) dns.publish(record.name, record.type, record.value);
}

const stateOf = (domain: SendingDomain) =>
  Object.fromEntries(domain.dns_records.map((r) => [r.purpose, r.status]));

describe.each(await storages())('sending domains on %s', (storage) => {
  let servers: TestServers;
  let dns: TestDns;
  let client: ReturnType<typeof createClient>;

  beforeAll(async () => {
    dns = await startTestDns();
    servers = await startTestServers(storage, {
      env: { DNS_SERVERS: dns.server, INBOUND_MAIL_HOST: INBOUND, MAIL_SPF_INCLUDE: SPF },
    });
    client = createClient({ baseUrl: servers.urls.directory!, auth: servers.adminKey });
  });
  afterAll(async () => {
    await servers?.stop();
    await dns?.close();
  });

  /** A key of a new project of the admin's account, with `scopes`. */
  async function projectKey(scopes: string[]): Promise<string> {
    const post = async (path: string, body: object) => {
      const res = await send(servers.urls.model!, servers.adminKey, 'POST', path, body);
      expect(res.status).toBe(201);
      return res.body as { id: string; secret: string };
    };
    const project = await post('/v1/projects', { name: `other ${Math.random()}` });
    return (await post('/v1/keys', { name: 'sales', scopes, project_id: project.id })).secret;
  }

  async function addDomain(domain: string): Promise<SendingDomain> {
    const res = await createSendingDomain({ client, body: { domain, from_name: 'Keller Haustechnik' } });
    expect(res.response?.status, JSON.stringify(res.error)).toBe(201);
    expect(validDomain(res.data), explain(validDomain)).toBe(true);
    return res.data!;
  }

  async function verify(id: string): Promise<SendingDomain> {
    const res = await verifySendingDomain({ client, path: { id } });
    expect(res.response?.status, JSON.stringify(res.error)).toBe(200);
    expect(validDomain(res.data), explain(validDomain)).toBe(true);
    return res.data!;
  }

  it('adds a domain with an RSA 2048 DKIM key and the four records to publish, private key never shown', async () => {
    const domain = await addDomain('mail.keller-haustechnik.test');
    expect(domain).toMatchObject({ status: 'pending', reply_domain: 'reply.mail.keller-haustechnik.test' });
    const byPurpose = Object.fromEntries(domain.dns_records.map((r) => [r.purpose, r]));
    expect(byPurpose.dkim).toMatchObject({
      type: 'TXT',
      name: `${domain.dkim_selector}._domainkey.mail.keller-haustechnik.test`,
      status: 'pending',
      found: null,
    });
    const key = /p=([A-Za-z0-9+/=]+)/.exec(byPurpose.dkim!.value)?.[1] ?? '';
    const { createPublicKey } = await import('node:crypto');
    const publicKey = createPublicKey({ key: Buffer.from(key, 'base64'), format: 'der', type: 'spki' });
    expect(publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(byPurpose.spf).toMatchObject({
      type: 'TXT',
      name: 'reply.mail.keller-haustechnik.test',
      value: `v=spf1 include:${SPF} ~all`,
    });
    expect(byPurpose.return_path).toMatchObject({
      type: 'MX',
      name: 'reply.mail.keller-haustechnik.test',
      value: `10 ${INBOUND}`,
    });
    expect(byPurpose.dmarc).toMatchObject({ type: 'TXT', name: '_dmarc.mail.keller-haustechnik.test' });
    // the key pair is stored sealed: neither the API nor the row holds the PEM
    const text = JSON.stringify((await getSendingDomain({ client, path: { id: domain.id } })).data);
    expect(text).not.toMatch(/PRIVATE KEY/);
    const [row] = await servers.platform.db.query<Record<string, unknown>>(
      'select * from sending_domains where id = $1',
      [domain.id],
    );
    expect(JSON.stringify(row)).not.toMatch(/PRIVATE KEY|MII[A-Za-z0-9+/]{40}.*-----END/);
    expect(String(row?.dkim_private_key_sealed)).toMatch(/^v1\./);
    // a second add of the same domain in the project: 409
    const again = await createSendingDomain({ client, body: { domain: 'mail.keller-haustechnik.test' } });
    expect(again.response?.status).toBe(409);
    expect(again.error).toMatchObject({ error: { code: 'domain_exists', param: 'domain' } });
  });

  it('verifies through the loopback DNS server: missing, then verified record by record', async () => {
    const domain = await addDomain('news.schmidt-bau.test');
    const before = await verify(domain.id);
    expect(before.status).toBe('pending');
    expect(stateOf(before)).toEqual({
      dkim: 'missing',
      spf: 'missing',
      return_path: 'missing',
      dmarc: 'missing',
    });
    expect(before.last_checked_at).toBeGreaterThan(0);
    expect(before.verified_at).toBeNull();
    expect(dns.queries).toContain(`TXT ${domain.dkim_selector}._domainkey.news.schmidt-bau.test`);

    publishAll(dns, domain);
    const after = await verify(domain.id);
    expect(after.status).toBe('verified');
    expect(stateOf(after)).toEqual({
      dkim: 'verified',
      spf: 'verified',
      return_path: 'verified',
      dmarc: 'verified',
    });
    for (const record of after.dns_records) expect(record.found).toBe(record.value);
    expect(after.verified_at).toBeGreaterThan(0);
  });

  it('cannot send from a domain another account verified without proving control itself', async () => {
    const domain = await addDomain('mail.owned-by-one.test');
    publishAll(dns, domain);
    expect((await verify(domain.id)).status).toBe('verified');
    // another account adds the same name: its own DKIM selector and key, the record that proves it
    const other = await servers.platform.accounts.createAccount('a second account');
    const key = await servers.platform.accounts.createKey(other.accountId, {
      name: 'sales',
      scopes: ['sales'],
    });
    const theirs = createClient({ baseUrl: servers.urls.directory!, auth: key.secret });
    const added = await createSendingDomain({ client: theirs, body: { domain: 'mail.owned-by-one.test' } });
    expect(added.response?.status, JSON.stringify(added.error)).toBe(201);
    expect(added.data!.dkim_selector).not.toBe(domain.dkim_selector);
    const dkimOf = (d: SendingDomain) => d.dns_records.find((r) => r.purpose === 'dkim')!;
    expect(dkimOf(added.data!).name).not.toBe(dkimOf(domain).name);
    expect(dkimOf(added.data!).value).not.toBe(dkimOf(domain).value);
    // the first account's records, all published, do not verify the second's
    const checked = await verifySendingDomain({ client: theirs, path: { id: added.data!.id } });
    expect(checked.data!.status).toBe('pending');
    expect(stateOf(checked.data!)).toMatchObject({ dkim: 'missing' });
    await expect(signingOf(servers, added.data!.id)).rejects.toMatchObject({
      status: 409,
      code: 'sending_domain_not_verified',
    });
    // the first account's domain is untouched
    expect((await getSendingDomain({ client, path: { id: domain.id } })).data!.status).toBe('verified');
  });

  it('reports a mismatched and a missing record with what was found, and re-verifies', async () => {
    const domain = await addDomain('outreach.weber-elektro.test');
    publishAll(dns, domain);
    expect((await verify(domain.id)).status).toBe('verified');

    // SPF names another sender, the MX record is gone, DMARC moves to the parent domain
    dns.unpublish('reply.outreach.weber-elektro.test');
    dns.publish('reply.outreach.weber-elektro.test', 'TXT', 'v=spf1 include:_spf.google.com ~all');
    dns.unpublish('_dmarc.outreach.weber-elektro.test');
    dns.publish(
      '_dmarc.weber-elektro.test',
      'TXT',
      'v=DMARC1; p=quarantine; rua=mailto:d@weber-elektro.test',
    );
    const broken = await verify(domain.id);
    expect(broken.status).toBe('failed');
    const spf = broken.dns_records.find((r) => r.purpose === 'spf')!;
    expect(spf).toMatchObject({ status: 'mismatch', found: 'v=spf1 include:_spf.google.com ~all' });
    expect(broken.dns_records.find((r) => r.purpose === 'return_path')).toMatchObject({
      status: 'missing',
      found: null,
    });
    expect(broken.dns_records.find((r) => r.purpose === 'dmarc')).toMatchObject({
      status: 'verified',
      found: '_dmarc.weber-elektro.test: v=DMARC1; p=quarantine; rua=mailto:d@weber-elektro.test',
    });
    // a failed domain cannot send
    await expect(signingOf(servers, domain.id)).rejects.toMatchObject({
      status: 409,
      code: 'sending_domain_not_verified',
    });

    // a DKIM record with another key is a mismatch too
    const dkim = domain.dns_records.find((r) => r.purpose === 'dkim')!;
    dns.unpublish(dkim.name);
    dns.publish(dkim.name, 'TXT', 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwrong');
    expect((await verify(domain.id)).dns_records.find((r) => r.purpose === 'dkim')?.status).toBe('mismatch');

    // fixed: verified again, verified_at kept from the first time
    dns.unpublish(dkim.name);
    dns.unpublish('reply.outreach.weber-elektro.test');
    publishAll(dns, domain);
    const fixed = await verify(domain.id);
    expect(fixed.status).toBe('verified');
    expect(fixed.verified_at).toBeLessThanOrEqual(fixed.last_checked_at!);
  });

  it("verifies through the guide's local DNS server (npm run dns:local, docs/sales.md)", async () => {
    const domain = await addDomain('mail.guide-example.test');
    const port = await freeUdpPort();
    const child = spawn(process.execPath, ['scripts/local-dns.ts', '--port', String(port)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    try {
      child.stdin.end(JSON.stringify(domain));
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('serving 4 records')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`dns:local exited ${code}: ${out}`)));
      });
      const lookup = dnsLookup({ servers: [`127.0.0.1:${port}`] });
      const checked = await checkRecords(lookup, domain.dns_records);
      expect(checked.map((r) => r.status)).toEqual(['verified', 'verified', 'verified', 'verified']);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('a resolver that fails is a 502 and leaves the domain as it was', async () => {
    const domain = await addDomain('mail.broken-resolver.test');
    dns.fail('_dmarc.mail.broken-resolver.test');
    const res = await verifySendingDomain({ client, path: { id: domain.id } });
    expect(res.response?.status).toBe(502);
    expect(res.error).toMatchObject({ error: { type: 'upstream_error', code: 'dns_lookup_failed' } });
    const unchanged = await getSendingDomain({ client, path: { id: domain.id } });
    expect(unchanged.data?.last_checked_at).toBeNull();
  });

  it('lists by cursor pages, keeps projects apart, checks the scope and deletes', async () => {
    const other = createClient({ baseUrl: servers.urls.directory!, auth: await projectKey(['sales']) });
    const made: string[] = [];
    for (const name of ['a.page-test.test', 'b.page-test.test', 'c.page-test.test']) {
      const res = await createSendingDomain({ client: other, body: { domain: name } });
      expect(res.response?.status).toBe(201);
      made.push(res.data!.id);
    }
    const first = await listSendingDomains({ client: other, query: { limit: 2 } });
    expect(first.data?.data.map((d) => d.id)).toEqual([made[2], made[1]]);
    expect(first.data?.has_more).toBe(true);
    expect(first.response?.headers.get('link')).toMatch(/rel="next"/);
    const second = await listSendingDomains({
      client: other,
      query: { limit: 2, cursor: first.data!.next_cursor! },
    });
    expect(second.data).toMatchObject({ has_more: false, next_cursor: null });
    expect(second.data?.data.map((d) => d.id)).toEqual([made[0]]);

    // the admin's project sees none of them, and cannot read them
    const mine = await listSendingDomains({ client, query: { limit: 100 } });
    expect(mine.data?.data.some((d) => made.includes(d.id))).toBe(false);
    expect((await getSendingDomain({ client, path: { id: made[0]! } })).response?.status).toBe(404);
    // the same domain may be added in another project
    expect(
      (await createSendingDomain({ client, body: { domain: 'a.page-test.test' } })).response?.status,
    ).toBe(201);

    const searchOnly = createClient({ baseUrl: servers.urls.directory!, auth: await projectKey(['search']) });
    const refused = await listSendingDomains({ client: searchOnly });
    expect(refused.response?.status).toBe(403);
    expect(refused.error).toMatchObject({ error: { code: 'insufficient_scope' } });

    const deleted = await deleteSendingDomain({ client: other, path: { id: made[0]! } });
    expect(deleted.data).toEqual({ id: made[0], object: 'sending_domain', deleted: true });
    expect((await getSendingDomain({ client: other, path: { id: made[0]! } })).response?.status).toBe(404);
    expect((await deleteSendingDomain({ client: other, path: { id: made[0]! } })).response?.status).toBe(404);
  });

  describe('signed mail', () => {
    // the relay is the operator's: reached through the outbound guard as the service reaches it
    const door = outbound({ allowPrivate: false });
    const addressOf = (host: string) => door.address(host, 'operator');
    afterAll(() => door.close());
    let domain: SendingDomain;
    const message = (to: string, id: string): Omit<OutgoingMail, 'dkim'> => ({
      from: { name: 'Anna Keller', address: 'anna@send.keller-haustechnik.test' },
      to,
      subject: 'Neue Bäder für Ihre Kunden',
      text: 'Guten Tag,\n\nwir bauen Bäder in Berlin.\n\nAbmelden: https://directory.test/u/tok',
      messageId: `${id}@send.keller-haustechnik.test`,
      envelopeFrom: `b-${id}@reply.send.keller-haustechnik.test`,
      replyTo: `r-${id}@reply.send.keller-haustechnik.test`,
      inReplyTo: '<first@send.keller-haustechnik.test>',
      references: ['<first@send.keller-haustechnik.test>'],
      listUnsubscribe: { url: `https://directory.test/v1/unsubscribe/${id}` },
      headers: { 'X-Campaign-Id': 'cmp_01JDS3C4DWA7N36096Q14DR9GP' },
    });

    beforeAll(async () => {
      domain = await addDomain('send.keller-haustechnik.test');
      publishAll(dns, domain);
      expect((await verify(domain.id)).status).toBe('verified');
    });

    it('goes to SMTP_URL over a real SMTP conversation, DKIM passes aligned in mailauth, headers present', async () => {
      const sink = await startSmtpSink({ auth: { user: 'relay-user', pass: 's3cret/+' } });
      const signing = await signingOf(servers, domain.id);
      const transport = createMailTransport({ smtpUrl: sink.url, outboxDir: '/nonexistent', addressOf });
      try {
        const sent = await transport.send({
          ...message('info@sanitaer-berlin.test', 'm1'),
          dkim: signing.dkim,
        });
        expect(sent).toMatchObject({ via: 'smtp', messageId: '<m1@send.keller-haustechnik.test>' });
        expect(sent.response).toMatch(/^250 /);
        const [mail] = await sink.waitFor(1);
        expect(mail).toMatchObject({
          envelopeFrom: 'b-m1@reply.send.keller-haustechnik.test',
          recipients: ['info@sanitaer-berlin.test'],
          user: 'relay-user',
        });
        const head = mail!.raw.toString('utf8').split('\r\n\r\n')[0]!;
        expect(head).toMatch(/^Message-ID: <m1@send\.keller-haustechnik\.test>$/m);
        expect(head).toMatch(/^Reply-To: r-m1@reply\.send\.keller-haustechnik\.test$/m);
        expect(head).toMatch(/^List-Unsubscribe: <https:\/\/directory\.test\/v1\/unsubscribe\/m1>$/m);
        expect(head).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
        expect(head).toMatch(/^In-Reply-To: <first@send\.keller-haustechnik\.test>$/m);
        expect(head).toMatch(/^References: <first@send\.keller-haustechnik\.test>$/m);
        expect(head).toMatch(/^X-Campaign-Id: cmp_01JDS3C4DWA7N36096Q14DR9GP$/im);

        const auth = await verifyDkim(mail!.raw, dns, mail!.envelopeFrom);
        const [signature] = auth.dkim.results;
        expect(signature?.status.result).toBe('pass');
        expect(signature?.signingDomain).toBe('send.keller-haustechnik.test');
        expect(signature?.selector).toBe(domain.dkim_selector);
        expect(signature?.status.aligned).toBe('send.keller-haustechnik.test');
        const signed = signature?.signingHeaders?.keys.toLowerCase().split(': ').join(':').split(':') ?? [];
        for (const name of [
          'from',
          'to',
          'subject',
          'message-id',
          'reply-to',
          'list-unsubscribe',
          'list-unsubscribe-post',
        ]) {
          expect(signed).toContain(name);
        }
        expect(auth.dmarc && auth.dmarc.status.result).toBe('pass');
      } finally {
        await transport.close();
        await sink.close();
      }
    });

    it('tells a refused recipient (permanent) from greylisting and a dead relay (temporary)', async () => {
      const sink = await startSmtpSink({
        refuse: (to) =>
          to.startsWith('gone@')
            ? { code: 550, message: '5.1.1 no such user' }
            : to.startsWith('later@')
              ? { code: 451, message: '4.7.1 greylisted, try again' }
              : undefined,
      });
      const signing = await signingOf(servers, domain.id);
      const transport = createMailTransport({
        smtpUrl: sink.url,
        outboxDir: '/nonexistent',
        addressOf,
        timeoutMs: 2000,
      });
      try {
        const gone = await transport
          .send({ ...message('gone@sanitaer-berlin.test', 'm2'), dkim: signing.dkim })
          .catch((err: unknown) => err);
        expect(gone).toBeInstanceOf(MailSendError);
        expect(gone).toMatchObject({ permanent: true, recipientRejected: true, responseCode: 550 });
        const later = await transport
          .send({ ...message('later@sanitaer-berlin.test', 'm3'), dkim: signing.dkim })
          .catch((err: unknown) => err);
        expect(later).toMatchObject({ permanent: false, temporary: true, responseCode: 451 });
      } finally {
        await transport.close();
        await sink.close();
      }
      const dead = createMailTransport({
        smtpUrl: sink.url,
        outboxDir: '/nonexistent',
        timeoutMs: 2000,
        addressOf,
      });
      try {
        const refused = await dead
          .send({ ...message('info@sanitaer-berlin.test', 'm4'), dkim: signing.dkim })
          .catch((err: unknown) => err);
        expect(refused).toMatchObject({ permanent: false, temporary: true, responseCode: undefined });
      } finally {
        await dead.close();
      }
    });

    it('bounds the pool: 20 messages at once over at most SMTP_MAX_CONNECTIONS connections', async () => {
      const sink = await startSmtpSink();
      const signing = await signingOf(servers, domain.id);
      const transport = createMailTransport({
        smtpUrl: sink.url,
        outboxDir: '/nonexistent',
        addressOf,
        maxConnections: 2,
      });
      try {
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            transport.send({ ...message(`p${i}@sanitaer-berlin.test`, `pool${i}`), dkim: signing.dkim }),
          ),
        );
        expect(sink.messages).toHaveLength(20);
        expect(sink.connections).toBeLessThanOrEqual(2);
      } finally {
        await transport.close();
        await sink.close();
      }
    });

    it('without SMTP_URL writes the signed message to the outbox, where it verifies too', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'outbox-signed-'));
      const signing = await signingOf(servers, domain.id);
      const transport = createMailTransport({ outboxDir: dir });
      try {
        const sent = await transport.send({
          ...message('info@sanitaer-berlin.test', 'm5'),
          dkim: signing.dkim,
        });
        expect(sent.via).toBe('outbox');
        expect(sent.file).toMatch(/\.eml$/);
        const raw = readFileSync(sent.file!);
        expect(raw.toString('utf8')).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed;/);
        const auth = await verifyDkim(raw, dns);
        expect(auth.dkim.results[0]?.status.result).toBe('pass');
        expect(auth.dkim.results[0]?.status.aligned).toBe('send.keller-haustechnik.test');
      } finally {
        await transport.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});

/** The signing material of a domain, as campaigns get it from the service's store. */
async function signingOf(servers: TestServers, id: string): Promise<VerifiedDomain> {
  const [row] = await servers.platform.db.query<{ project_id: string }>(
    'select project_id from sending_domains where id = $1',
    [id],
  );
  return servers.mail!.domains.verifiedDomain(row!.project_id, id);
}

/** A free UDP port of 127.0.0.1. */
async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}
