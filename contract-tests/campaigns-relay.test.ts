// A relay whose address the outbound guard refuses (SMTP_URL on the cloud metadata address) is
// the operator's to fix, like a relay that refuses our credentials: the campaign pauses
// (`relay_refused`) at its first send, no recipient is failed for it, nothing is retried and no
// connection is made. Beside it, a real SMTP peer on loopback, which the send must never reach.
// Both storage paths.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  getCampaign,
  launchCampaign,
  listCampaignRecipients,
} from '../generated/directory/client/sdk.gen.ts';
import { draftCampaign } from './support/campaigns.ts';
import { until } from './support/client.ts';
import { startTestDns, type TestDns } from './support/dns.ts';
import { startTestServers, storages, type TestServers } from './support/server.ts';
import { type SmtpSink, startSmtpSink } from './support/smtp.ts';

describe.each(await storages())('a campaign whose relay address the guard refuses, on %s', (storage) => {
  let servers: TestServers;
  let dns: TestDns;
  let sink: SmtpSink;
  beforeAll(async () => {
    dns = await startTestDns();
    sink = await startSmtpSink();
    // the relay's name resolves, for the guard's resolver, to the metadata address
    dns.publish('relay.metadata.test', 'A', '169.254.169.254');
    servers = await startTestServers(storage, {
      env: {
        DNS_SERVERS: dns.server,
        OUTBOUND_DNS_SERVERS: dns.server,
        OUTBOUND_ALLOW_PRIVATE: 'false',
        INBOUND_MAIL_HOST: 'mx.eurus.test',
        MAIL_SPF_INCLUDE: 'spf.eurus.test',
        SMTP_URL: `smtp://relay.metadata.test:${sink.port}`,
        DEMO_LISTINGS: '50',
      },
    });
  }, 240_000);
  afterAll(async () => {
    await servers?.stop();
    await sink?.close();
    await dns?.close();
  });

  it('pauses as relay_refused, fails no recipient and connects nowhere', async () => {
    const { client, id } = await draftCampaign(servers, dns, 'relay', storage);
    expect((await launchCampaign({ client, path: { id } })).data?.stats.recipients).toBe(3);

    const paused = await until('paused', async () => {
      const c = (await getCampaign({ client, path: { id } })).data;
      return c?.status === 'paused' ? c : undefined;
    });
    expect(paused).toMatchObject({ status: 'paused', paused_reason: 'relay_refused' });
    expect(paused.stats).toMatchObject({ messages_sent: 0, messages_failed: 0 });
    // a while later: still paused, nothing failed, nothing retried, the peer never dialled
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const recipients = (await listCampaignRecipients({ client, path: { id } })).data!.data;
    expect(recipients).toHaveLength(3);
    for (const r of recipients) {
      expect(r.status).toBe('pending');
      expect(r.messages.filter((m) => m.status === 'failed')).toEqual([]);
    }
    expect((await getCampaign({ client, path: { id } })).data).toMatchObject({
      status: 'paused',
      stats: { messages_sent: 0, messages_failed: 0 },
    });
    expect(sink.connections).toBe(0);
  }, 180_000);
});
