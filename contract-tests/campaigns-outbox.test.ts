// Without SMTP_URL (the embedded default), a campaign's messages are written as .eml files to the
// outbox (MAIL_OUTBOX_DIR), DKIM-signed as they would have been sent: each recipient's message
// says `via: outbox`, its file carries our Message-ID, Reply-To token address and one-click
// List-Unsubscribe, and its signature is checked by mailauth (not our code) against a DNS server
// on loopback serving the records the domain's verify found. Both storage paths.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  getCampaign,
  launchCampaign,
  listCampaignRecipients,
} from '../generated/directory/client/sdk.gen.ts';
import { startTestDns, type TestDns } from './support/dns.ts';
import { startTestServers, storages, type TestServers } from './support/server.ts';
import { verifyDkim } from './support/smtp.ts';
import { draftCampaign } from './support/campaigns.ts';
import { until } from './support/client.ts';

describe.each(await storages())('a campaign without SMTP_URL, to the outbox, on %s', (storage) => {
  const outbox = mkdtempSync(join(tmpdir(), 'campaign-outbox-'));
  let servers: TestServers;
  let dns: TestDns;
  beforeAll(async () => {
    dns = await startTestDns();
    servers = await startTestServers(storage, {
      env: {
        DNS_SERVERS: dns.server,
        INBOUND_MAIL_HOST: 'mx.eurus.test',
        MAIL_SPF_INCLUDE: 'spf.eurus.test',
        MAIL_OUTBOX_DIR: outbox,
        DEMO_LISTINGS: '50',
      },
    });
  }, 240_000);
  afterAll(async () => {
    await servers?.stop();
    await dns?.close();
    rmSync(outbox, { recursive: true, force: true });
  });

  it('writes each message signed to the outbox, and its status says so', async () => {
    expect(servers.platform.config.mail.smtpUrl).toBeUndefined();
    const { client, domain, id } = await draftCampaign(servers, dns, 'outbox', storage);
    const launched = await launchCampaign({ client, path: { id } });
    expect(launched.data?.stats.recipients).toBe(3);
    await until(
      'completed',
      async () => (await getCampaign({ client, path: { id } })).data?.status === 'completed',
    );

    const recipients = (await listCampaignRecipients({ client, path: { id } })).data!.data;
    expect(recipients).toHaveLength(3);
    const files = readdirSync(outbox, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.eml'))
      .map((f) => readFileSync(join(outbox, f)));
    expect(files).toHaveLength(3);
    for (const r of recipients) {
      expect(r.messages).toHaveLength(1);
      expect(r.messages[0]).toMatchObject({ step: 0, status: 'sent', via: 'outbox', error: null });
      const raw = files.find((f) => f.toString('utf8').includes(r.messages[0]!.message_id));
      expect(raw, r.messages[0]!.message_id).toBeDefined();
      const text = raw!.toString('utf8');
      expect(text).toMatch(new RegExp(`^To: .*${r.email.replace('.', '\\.')}`, 'im'));
      expect(text).toMatch(
        new RegExp(`^Reply-To: r-[a-z2-7]{20}@reply\\.${domain.domain.replace(/\./g, '\\.')}`, 'im'),
      );
      expect(text).toMatch(
        /^List-Unsubscribe:\s*<http[^>]+\/v1\/unsubscribe\/rcp_[0-9A-Za-z]{26}\.[\w-]{22}>/im,
      );
      expect(text).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click/im);
      const auth = await verifyDkim(raw!, dns);
      expect(auth.dkim.results[0]?.status.result).toBe('pass');
      expect(auth.dkim.results[0]?.signingDomain).toBe(domain.domain);
    }
  }, 180_000);
});
