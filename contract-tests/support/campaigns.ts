// How the campaign suites begin a campaign, in parts they compose: the Sales plan, a sending
// domain verified against the test DNS server, a target list once it is ready, a campaign's body;
// and `draftCampaign`, all of them over three listings of the suite's own (named for its tag).
import { expect } from 'vitest';
import { createClient } from '../../generated/directory/client/client/index.ts';
import {
  createCampaign,
  createSendingDomain,
  createTargetList,
  getTargetList,
  verifySendingDomain,
} from '../../generated/directory/client/sdk.gen.ts';
import type {
  CreateCampaignRequest,
  CreateSendingDomainRequest,
  CreateTargetListRequest,
  SendingDomain,
  TargetList,
} from '../../generated/directory/client/types.gen.ts';
import { demoListing } from '../../src/directory/demo.ts';
import { insertListings } from '../../src/directory/store.ts';
import { send, until } from './client.ts';
import type { TestDns } from './dns.ts';
import type { TestServers } from './server.ts';

type Client = ReturnType<typeof createClient>;

/** Subscribes the key's account to the Sales plan; true if it was not subscribed yet. */
export async function salesPlan(model: string, key: string): Promise<boolean> {
  const sub = await send(model, key, 'POST', '/v1/subscriptions', { plan: 'sales' });
  if (sub.status !== 201 && sub.status !== 409) throw new Error(`the Sales plan: ${sub.status}`);
  return sub.status === 201;
}

/** A sending domain, its records published on the test DNS server, verified. */
export async function verifiedDomain(
  client: Client,
  dns: TestDns,
  body: CreateSendingDomainRequest,
): Promise<SendingDomain> {
  const created = await createSendingDomain({ client, body });
  expect(created.response?.status, JSON.stringify(created.error)).toBe(201);
  for (const record of created.data!.dns_records) dns.publish(record.name, record.type, record.value);
  const verified = await verifySendingDomain({ client, path: { id: created.data!.id } });
  expect(verified.data?.status, JSON.stringify(verified.data ?? verified.error)).toBe('verified');
  return verified.data!;
}

/** A target list, once it is ready. */
export async function readyList(
  client: Client,
  body: CreateTargetListRequest,
  ms?: number,
): Promise<TargetList> {
  const created = await createTargetList({ client, body });
  expect(created.response?.status, JSON.stringify(created.error)).toBe(201);
  return until(
    `the list ${body.name}`,
    async () => {
      const list = (await getTargetList({ client, path: { id: created.data!.id } })).data!;
      return list.status === 'ready' ? list : undefined;
    },
    ms,
  );
}

/** A campaign of one step from anna@ the domain to the list, with `extra` over it. */
export function campaignBody(
  domain: SendingDomain,
  targetListId: string,
  extra: Partial<CreateCampaignRequest> = {},
): CreateCampaignRequest {
  return {
    name: 'Wartungsverträge',
    target_list_id: targetListId,
    sending_domain_id: domain.id,
    from_email: `anna@${domain.domain}`,
    from_name: 'Anna Keller',
    subject: 'Hallo {{company_name}}',
    body_text: 'Guten Tag aus {{city}}.\n\n{{sender_name}}',
    ...extra,
  };
}

/** A draft campaign, ready to launch, to three listings of its own. */
export async function draftCampaign(servers: TestServers, dns: TestDns, tag: string, storage: string) {
  const client = createClient({ baseUrl: servers.urls.directory!, auth: servers.adminKey });
  expect(await salesPlan(servers.urls.model!, servers.adminKey)).toBe(true);
  const domain = await verifiedDomain(client, dns, { domain: `${tag}-${storage}.keller.test` });
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
  const list = await readyList(client, { name: tag, filters: { q: `zq${tag}`, mode: 'keyword' } });
  const campaign = await createCampaign({ client, body: campaignBody(domain, list.id, { name: tag }) });
  expect(campaign.response?.status, JSON.stringify(campaign.error)).toBe(201);
  return { client, domain, id: campaign.data!.id };
}
