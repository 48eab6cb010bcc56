// A campaign ready to launch, as the campaign suites begin one: the Sales plan, a sending domain
// verified against the test DNS server, three listings of their own (named for the suite's tag)
// in a ready target list, and a draft campaign to them.
import { expect } from 'vitest';
import { createClient } from '../../generated/directory/client/client/index.ts';
import {
  createCampaign,
  createSendingDomain,
  createTargetList,
  getTargetList,
  verifySendingDomain,
} from '../../generated/directory/client/sdk.gen.ts';
import { demoListing } from '../../src/directory/demo.ts';
import { insertListings } from '../../src/directory/store.ts';
import { until } from './client.ts';
import type { TestDns } from './dns.ts';
import type { TestServers } from './server.ts';

export async function draftCampaign(servers: TestServers, dns: TestDns, tag: string, storage: string) {
  const client = createClient({ baseUrl: servers.urls.directory!, auth: servers.adminKey });
  const sub = await fetch(`${servers.urls.model}/v1/subscriptions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${servers.adminKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ plan: 'sales' }),
  });
  expect(sub.status).toBe(201);
  const created = await createSendingDomain({ client, body: { domain: `${tag}-${storage}.keller.test` } });
  for (const record of created.data!.dns_records) dns.publish(record.name, record.type, record.value);
  const domain = (await verifySendingDomain({ client, path: { id: created.data!.id } })).data!;
  expect(domain.status).toBe('verified');

  await servers.platform.db.transaction((tx) =>
    insertListings(
      tx,
      [0, 1, 2].map((i) => ({
        ...demoListing(tag, i),
        name: `Klempnerei zq${tag} ${i}`,
        email: `info@${tag}-${i}.test`,
      })),
    ),
  );
  const list = await createTargetList({
    client,
    body: { name: tag, filters: { q: `zq${tag}`, mode: 'keyword' } },
  });
  await until(
    'the list',
    async () => (await getTargetList({ client, path: { id: list.data!.id } })).data?.status === 'ready',
  );
  const campaign = await createCampaign({
    client,
    body: {
      name: tag,
      target_list_id: list.data!.id,
      sending_domain_id: domain.id,
      from_email: `anna@${domain.domain}`,
      from_name: 'Anna Keller',
      subject: 'Hallo {{company_name}}',
      body_text: 'Guten Tag aus {{city}}.\n\n{{sender_name}}',
    },
  });
  expect(campaign.response?.status, JSON.stringify(campaign.error)).toBe(201);
  return { client, domain, id: campaign.data!.id };
}
