// CRM connections and syncs on the real service, through the generated SDK, on both storage
// paths, against the three CRMs as their own published API descriptions say they behave:
// each CRM is `prism proxy --errors` on the vendor's description (contract-tests/vendor-specs)
// in front of a small stateful store (support/crm-vendors.ts), so every request the sync sends
// and every answer it reads is checked against the vendor's contract, and a second sync meets
// what the first created. HubSpot and Pipedrive's descriptions are subsets of the documents
// they publish; Salesforce publishes none for the sObject REST API, so its description was
// written from the examples of Salesforce's REST API Developer Guide (README there).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../generated/directory/client/client/index.ts';
import {
  createCrmConnection,
  createTargetList,
  createWebhookEndpoint,
  deleteCrmConnection,
  getCrmConnection,
  getCrmSync,
  getTargetList,
  listCrmConnections,
  listCrmSyncRecords,
  listCrmSyncs,
  listTargetListMembers,
  syncCrmConnection,
  updateCrmConnection,
} from '../generated/directory/client/sdk.gen.ts';
import type { CrmSync, CrmSyncRecord, TargetList } from '../generated/directory/client/types.gen.ts';
import { type FakeCrm, startFakeCrm } from './support/crm-vendors.ts';
import { freePort } from './support/processes.ts';
import { type Storage, startTestServers, storages, type TestServers } from './support/server.ts';
import { componentValidator, explain } from './support/spec.ts';
import { until } from './support/client.ts';

const validConnection = componentValidator('directory', 'CrmConnection');
const validSync = componentValidator('directory', 'CrmSync');
const validRecord = componentValidator('directory', 'CrmSyncRecord');

interface Received {
  headers: Record<string, string>;
  body: string;
}

describe.each(await storages())('CRM sync on %s', (storage: Storage) => {
  let servers: TestServers;
  let client: ReturnType<typeof createClient>;
  let hubspot: FakeCrm;
  let salesforce: FakeCrm;
  let pipedrive: FakeCrm;
  let big: TargetList;
  let small: TargetList;
  let receiver: Server;
  const received: Received[] = [];
  let webhookSecret: string;

  beforeAll(async () => {
    [hubspot, salesforce, pipedrive] = await Promise.all([
      startFakeCrm('hubspot'),
      startFakeCrm('salesforce'),
      startFakeCrm('pipedrive'),
    ]);
    servers = await startTestServers(storage, {
      which: ['directory'],
      env: {
        DEMO_LISTINGS: '2400',
        OUTBOUND_ALLOW_PRIVATE: 'true',
        WEBHOOK_RETRY_SCHEDULE: '0s,300ms,300ms',
      },
    });
    client = createClient({ baseUrl: servers.urls.directory!, auth: servers.adminKey });

    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        received.push({ headers: req.headers as Record<string, string>, body });
        res.writeHead(204).end();
      });
    });
    const port = await freePort();
    await new Promise<void>((r) => receiver.listen(port, '127.0.0.1', r));
    const endpoint = await createWebhookEndpoint({
      client,
      body: { url: `http://127.0.0.1:${port}/hooks`, event_types: ['crm.sync.completed'] },
    });
    expect(endpoint.response?.status).toBe(201);
    webhookSecret = endpoint.data!.secret!;

    const build = async (name: string, max: number) => {
      const made = await createTargetList({
        client,
        body: { name, filters: { min_rating: 1 }, max_members: max },
      });
      expect(made.response?.status, JSON.stringify(made.error)).toBe(201);
      return until(
        'the list to be built',
        async () => {
          const res = await getTargetList({ client, path: { id: made.data!.id } });
          return res.data!.status === 'building' ? undefined : res.data!;
        },
        120_000,
      );
    };
    [big, small] = await Promise.all([build('CRM big', 1000), build('CRM small', 40)]);
    expect(big).toMatchObject({ status: 'ready', member_count: 1000 });
    expect(small).toMatchObject({ status: 'ready', member_count: 40 });
  }, 400_000);

  afterAll(async () => {
    await servers?.stop();
    await Promise.all([hubspot?.close(), salesforce?.close(), pipedrive?.close()]);
    receiver?.close();
  });

  async function connect(fake: FakeCrm, overrides: { token?: string } = {}) {
    const token = overrides.token ?? fake.token;
    const body =
      fake.vendor === 'hubspot'
        ? { provider: 'hubspot' as const, credentials: { access_token: token }, base_url: fake.url }
        : fake.vendor === 'salesforce'
          ? {
              provider: 'salesforce' as const,
              credentials: {
                access_token: token,
                instance_url: 'https://keller-haustechnik.my.salesforce.com',
              },
              base_url: fake.url,
            }
          : { provider: 'pipedrive' as const, credentials: { api_token: token }, base_url: fake.url };
    return createCrmConnection({ client, body });
  }

  async function finished(connectionId: string, syncId: string): Promise<CrmSync> {
    return until(
      'the sync to end',
      async () => {
        const res = await getCrmSync({ client, path: { id: connectionId, sync_id: syncId } });
        expect(validSync(res.data), explain(validSync)).toBe(true);
        return res.data!.status === 'succeeded' || res.data!.status === 'failed' ? res.data! : undefined;
      },
      300_000,
    );
  }

  async function records(connectionId: string, syncId: string): Promise<CrmSyncRecord[]> {
    const out: CrmSyncRecord[] = [];
    let cursor: string | undefined;
    do {
      const page = await listCrmSyncRecords({
        client,
        path: { id: connectionId, sync_id: syncId },
        query: { limit: 100, ...(cursor ? { cursor } : {}) },
      });
      expect(page.response?.status).toBe(200);
      for (const r of page.data!.data) expect(validRecord(r), explain(validRecord)).toBe(true);
      out.push(...page.data!.data);
      cursor = page.data!.next_cursor ?? undefined;
    } while (cursor);
    return out;
  }

  function eventsFor(syncId: string) {
    return received
      .map(
        (r) =>
          new Webhook(webhookSecret).verify(r.body, r.headers) as { type: string; data: { object: CrmSync } },
      )
      .filter((e) => e.data.object.id === syncId);
  }

  it('refuses credentials the CRM rejects with 400 crm_auth_failed and the CRM reason, for each CRM', async () => {
    for (const fake of [hubspot, salesforce, pipedrive]) {
      const res = await connect(fake, { token: 'wrong-token-1234' });
      expect(res.response?.status, fake.vendor).toBe(400);
      expect(res.error).toMatchObject({
        error: { type: 'invalid_request_error', code: 'crm_auth_failed', param: 'credentials' },
      });
      const reason = {
        hubspot: 'Authentication credentials not found',
        salesforce: 'INVALID_SESSION_ID: Session expired or invalid',
        pipedrive: 'unauthorized access',
      }[fake.vendor];
      expect((res.error as { error: { message: string } }).error.message).toContain(reason);
    }
    const list = await listCrmConnections({ client });
    expect(list.data!.data).toEqual([]);
  });

  it('answers 502 crm_unavailable, never a 500, when a base URL answers in a shape the CRM does not', async () => {
    // 200s whose bodies no CRM's reference gives: an object where a list is, a list where an
    // object is, a string, and an HTML page
    const shapes = [
      '{"data":{"field_name":1},"fields":"x","results":7}',
      '[1,2,3]',
      '"ok"',
      '<html>hi</html>',
    ];
    for (const shape of shapes) {
      const odd = createServer((req, res) => {
        req.resume();
        res
          .writeHead(200, { 'content-type': shape.startsWith('<') ? 'text/html' : 'application/json' })
          .end(shape);
      });
      await new Promise<void>((r) => odd.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
      try {
        for (const fake of [hubspot, salesforce, pipedrive]) {
          const res = await connect({ ...fake, url });
          expect(res.response?.status, `${fake.vendor} answering ${shape}`).toBe(502);
          expect(res.error, `${fake.vendor} answering ${shape}`).toMatchObject({
            error: { type: 'upstream_error', code: 'crm_unavailable' },
          });
        }
      } finally {
        odd.closeAllConnections();
        await new Promise((r) => odd.close(r));
      }
    }
    expect((await listCrmConnections({ client })).data!.data).toEqual([]);
  });

  it('connects each CRM after a check call, never returning the credentials', async () => {
    for (const fake of [hubspot, salesforce, pipedrive]) {
      const res = await connect(fake);
      expect(res.response?.status, JSON.stringify(res.error)).toBe(201);
      expect(validConnection(res.data), explain(validConnection)).toBe(true);
      expect(res.data).toMatchObject({
        provider: fake.vendor,
        status: 'active',
        sync_replies: true,
        base_url: fake.url,
      });
      const got = await getCrmConnection({ client, path: { id: res.data!.id } });
      const list = await listCrmConnections({ client });
      for (const text of [JSON.stringify(res.data), JSON.stringify(got.data), JSON.stringify(list.data)]) {
        expect(text).not.toContain(fake.token);
        expect(text).not.toContain('credentials');
      }
    }
    // the check call prepared the CRMs: HubSpot's unique property, Pipedrive's field
    expect(
      hubspot.calls.some((c) => c.method === 'POST' && c.path === '/crm/properties/2026-09/companies'),
    ).toBe(true);
    expect(pipedrive.calls.some((c) => c.method === 'POST' && c.path === '/api/v2/organizationFields')).toBe(
      true,
    );
    const off = await updateCrmConnection({
      client,
      path: { id: (await listCrmConnections({ client })).data!.data[0]!.id },
      body: { sync_replies: false },
    });
    expect(off.data).toMatchObject({ sync_replies: false });
  });

  it('syncs 1,000 members to HubSpot in batches of 100, waits out a 429, then updates all and creates none', async () => {
    const conn = (await connect(hubspot)).data!;
    hubspot.rateLimitOnce('/crm/objects/2026-09/companies/batch/upsert', 4, 1);
    const before = hubspot.calls.length;
    const started = Date.now();
    const first = await syncCrmConnection({
      client,
      path: { id: conn.id },
      body: { target_list_id: big.id },
    });
    expect(first.response?.status, JSON.stringify(first.error)).toBe(202);
    expect(first.data).toMatchObject({ status: 'queued', trigger: 'manual', target_list_id: big.id });
    // the same list again while it runs: the same sync
    const again = await syncCrmConnection({
      client,
      path: { id: conn.id },
      body: { target_list_id: big.id },
    });
    expect(again.data!.id).toBe(first.data!.id);

    const one = await finished(conn.id, first.data!.id);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000); // the Retry-After was waited out
    expect(one).toMatchObject({
      status: 'succeeded',
      error: null,
      counts: { total: 1000, created: 1000, updated: 0, failed: 0 },
    });
    const calls = hubspot.calls
      .slice(before)
      .filter((c) => c.path === '/crm/objects/2026-09/companies/batch/upsert');
    expect(calls.map((c) => c.status)).toEqual([200, 200, 200, 429, 200, 200, 200, 200, 200, 200, 200]);
    for (const c of calls) expect((c.body as { inputs: unknown[] }).inputs.length).toBeLessThanOrEqual(100);
    expect(hubspot.companies.size).toBe(1000);

    const firstRecords = await records(conn.id, one.id);
    expect(firstRecords).toHaveLength(1000);
    expect(new Set(firstRecords.map((r) => r.listing_id)).size).toBe(1000);
    for (const r of firstRecords) {
      expect(r).toMatchObject({ kind: 'member', result: 'created', crm_object: 'company', error: null });
      expect(r.crm_id).toBe(hubspot.companies.get(r.listing_id)!.id);
      expect(r.contact).toMatchObject({ crm_object: 'contact', error: null });
    }

    const second = await syncCrmConnection({
      client,
      path: { id: conn.id },
      body: { target_list_id: big.id },
    });
    expect(second.data!.id).not.toBe(first.data!.id);
    const two = await finished(conn.id, second.data!.id);
    expect(two).toMatchObject({
      status: 'succeeded',
      counts: { total: 1000, created: 0, updated: 1000, failed: 0 },
    });
    const secondRecords = await records(conn.id, two.id);
    expect(secondRecords.every((r) => r.result === 'updated' && r.contact?.result === 'updated')).toBe(true);
    expect(secondRecords.map((r) => r.crm_id)).toEqual(firstRecords.map((r) => r.crm_id));
    expect(hubspot.companies.size).toBe(1000);

    const byResult = await listCrmSyncRecords({
      client,
      path: { id: conn.id, sync_id: two.id },
      query: { result: 'created' },
    });
    expect(byResult.data!.data).toEqual([]);
    const syncs = await listCrmSyncs({ client, path: { id: conn.id } });
    expect(syncs.data!.data.map((s) => s.id)).toEqual([two.id, one.id]);
    expect((await getCrmConnection({ client, path: { id: conn.id } })).data).toMatchObject({
      status: 'active',
      last_sync_id: two.id,
      last_error: null,
    });

    // crm.sync.completed, signed per Standard Webhooks, for each
    for (const s of [one, two]) {
      const events = await until(
        'the webhook',
        async () => (eventsFor(s.id).length ? eventsFor(s.id) : undefined),
        30_000,
      );
      expect(events[0]).toMatchObject({
        type: 'crm.sync.completed',
        data: { object: { id: s.id, status: 'succeeded' } },
      });
    }
    expect(hubspot.violations()).toEqual([]);
  }, 400_000);

  it('keeps a record the CRM refuses as failed with its reason, and pushes the rest', async () => {
    const conn = (await connect(salesforce)).data!;
    const listingIds = await memberIds(small);
    salesforce.refuse(listingIds[3]!, 'Website must start with https');
    const sync = await syncCrmConnection({
      client,
      path: { id: conn.id },
      body: { target_list_id: small.id },
    });
    const done = await finished(conn.id, sync.data!.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      counts: { total: 40, created: 39, updated: 0, failed: 1 },
    });
    const failed = await listCrmSyncRecords({
      client,
      path: { id: conn.id, sync_id: done.id },
      query: { result: 'failed' },
    });
    expect(failed.data!.data).toHaveLength(1);
    expect(failed.data!.data[0]).toMatchObject({
      listing_id: listingIds[3],
      crm_object: 'account',
      crm_id: null,
      error: 'FIELD_CUSTOM_VALIDATION_EXCEPTION: Website must start with https',
    });
    expect(salesforce.companies.size).toBe(39);
    expect(salesforce.violations()).toEqual([]);
  }, 200_000);

  /** The listing ids of a list's first 100 members, in order. */
  async function memberIds(list: TargetList): Promise<string[]> {
    const res = await listTargetListMembers({ client, path: { id: list.id }, query: { limit: 100 } });
    return res.data!.data.map((m) => m.listing_id);
  }

  it('reads what HubSpot 2026-09 answers: a company refused inside a 200, WORK associations, a phone_number property', async () => {
    // a unique property of another type than text cannot hold listing ids: a setup error, not a crash
    hubspot.existingProperty = { type: 'phone_number', fieldType: 'phonenumber' };
    const wrong = await connect(hubspot);
    hubspot.existingProperty = undefined;
    expect(wrong.response?.status).toBe(400);
    expect(wrong.error).toMatchObject({ error: { code: 'crm_setup_required', param: 'provider' } });
    expect((wrong.error as { error: { message: string } }).error.message).toContain(
      'exists with the type phone_number, which cannot hold listing ids',
    );

    const conn = (await connect(hubspot)).data!;
    const [, , refusedId] = await memberIds(small);
    hubspot.refuse(refusedId!, 'Property values were not valid: domain');
    hubspot.associationCategory = 'WORK';
    const before = hubspot.calls.length;
    const started = await syncCrmConnection({
      client,
      path: { id: conn.id },
      body: { target_list_id: small.id },
    });
    const done = await finished(conn.id, started.data!.id);
    hubspot.accept(refusedId!);
    hubspot.associationCategory = 'HUBSPOT_DEFINED';
    expect(done).toMatchObject({ status: 'succeeded', counts: { total: 40, failed: 1 } });
    const calls = hubspot.calls.slice(before);
    for (const path of [
      '/crm/objects/2026-09/companies/batch/upsert',
      '/crm/objects/2026-09/contacts/batch/upsert',
      '/crm/associations/2026-09/contacts/companies/batch/associate/default',
    ]) {
      expect(calls.filter((c) => c.path === path).map((c) => c.status)).toEqual([200]);
    }
    const recs = await records(conn.id, done.id);
    expect(recs.filter((r) => r.result === 'failed')).toEqual([
      expect.objectContaining({
        listing_id: refusedId,
        crm_id: null,
        error: 'Property values were not valid: domain',
      }),
    ]);
    // every other contact is associated although HubSpot names the association category WORK
    const others = recs.filter((r) => r.listing_id !== refusedId);
    expect(others).toHaveLength(39);
    for (const r of others) expect(r.contact).toMatchObject({ crm_object: 'contact', error: null });
    expect(hubspot.violations()).toEqual([]);
  }, 200_000);

  it('fails a contact whose association HubSpot refused inside a 200 answer (errors[], numErrors)', async () => {
    const conn = (await connect(hubspot)).data!;
    const sync = async () => {
      const started = await syncCrmConnection({
        client,
        path: { id: conn.id },
        body: { target_list_id: small.id },
      });
      return finished(conn.id, started.data!.id);
    };
    await sync();
    const [email] = [...hubspot.contacts.keys()];
    hubspot.refuseAssociation(email!, 'The company has reached its association limit.');
    const before = hubspot.calls.length;
    const done = await sync();
    const assoc = hubspot.calls
      .slice(before)
      .filter((c) => c.path === '/crm/associations/2026-09/contacts/companies/batch/associate/default');
    expect(assoc.map((c) => c.status)).toEqual([200]);
    const refused = (await records(conn.id, done.id)).filter((r) => r.contact?.result === 'failed');
    expect(refused).toHaveLength(1);
    expect(refused[0]!.contact).toMatchObject({
      crm_object: 'contact',
      error:
        'the contact was not associated with the company: The company has reached its association limit.',
    });
    expect(hubspot.violations()).toEqual([]);
  }, 200_000);

  it('stops a sync whose token is revoked midway: failed with the reason, disconnected, nothing half-recorded', async () => {
    const conn = (await connect(salesforce, {})).data!;
    // after the first batch (2 calls: accounts, contacts) of 200, the token dies
    salesforce.revokeAfter(3);
    const sync = await syncCrmConnection({ client, path: { id: conn.id }, body: { target_list_id: big.id } });
    const done = await finished(conn.id, sync.data!.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'crm_unauthorized' });
    expect(done.error!.message).toContain('INVALID_SESSION_ID: Session expired or invalid');
    const recs = await records(conn.id, done.id);
    // one whole batch recorded, the batch in flight not at all
    expect(recs).toHaveLength(200);
    expect(done.counts.created + done.counts.updated + done.counts.failed).toBe(200);
    for (const r of recs) {
      if (r.result !== 'failed') expect(salesforce.companies.get(r.listing_id)?.id).toBe(r.crm_id);
    }
    const after = (await getCrmConnection({ client, path: { id: conn.id } })).data!;
    expect(after).toMatchObject({ status: 'disconnected', last_sync_id: done.id });
    expect(after.last_error).toContain('INVALID_SESSION_ID');
    const refused = await syncCrmConnection({
      client,
      path: { id: conn.id },
      body: { target_list_id: big.id },
    });
    expect(refused.response?.status).toBe(409);
    expect(refused.error).toMatchObject({ error: { code: 'crm_connection_disconnected' } });
    const events = await until(
      'the webhook',
      async () => (eventsFor(done.id).length ? eventsFor(done.id) : undefined),
      30_000,
    );
    expect(events[0]!.data.object).toMatchObject({ status: 'failed', error: { code: 'crm_unauthorized' } });
    expect(salesforce.violations()).toEqual([]);
  }, 300_000);

  it('syncs to Pipedrive by search-then-update: a second connection finds what the first created', async () => {
    const first = (await connect(pipedrive)).data!;
    pipedrive.rateLimitOnce('/api/v2/organizations/search', 5, 1);
    const one = await finished(
      first.id,
      (await syncCrmConnection({ client, path: { id: first.id }, body: { target_list_id: small.id } })).data!
        .id,
    );
    expect(one).toMatchObject({
      status: 'succeeded',
      counts: { total: 40, created: 40, updated: 0, failed: 0 },
    });
    expect(pipedrive.companies.size).toBe(40);
    expect(pipedrive.calls.some((c) => c.status === 429)).toBe(true);

    // a fresh connection knows no ids: it searches by the listing id and updates what it finds
    const second = (await connect(pipedrive)).data!;
    const before = pipedrive.calls.length;
    const two = await finished(
      second.id,
      (await syncCrmConnection({ client, path: { id: second.id }, body: { target_list_id: small.id } })).data!
        .id,
    );
    expect(two).toMatchObject({
      status: 'succeeded',
      counts: { total: 40, created: 0, updated: 40, failed: 0 },
    });
    expect(pipedrive.companies.size).toBe(40);
    const made = pipedrive.calls
      .slice(before)
      .filter((c) => c.method === 'POST' && c.path === '/api/v2/organizations');
    expect(made).toEqual([]);
    const recs = await records(second.id, two.id);
    expect(
      recs.every(
        (r) =>
          r.result === 'updated' && r.crm_object === 'organization' && r.contact?.crm_object === 'person',
      ),
    ).toBe(true);
    expect(pipedrive.violations()).toEqual([]);
  }, 300_000);

  it('answers 404 for another project, a missing list, and deletes a connection with its syncs', async () => {
    const conn = (await connect(hubspot)).data!;
    const missing = await syncCrmConnection({
      client,
      path: { id: conn.id },
      body: { target_list_id: 'tl_01JDNPZX45HY43KWJRP1XPA7Z3' },
    });
    expect(missing.response?.status).toBe(404);
    expect(missing.error).toMatchObject({
      error: { code: 'target_list_not_found', param: 'target_list_id' },
    });
    const gone = await deleteCrmConnection({ client, path: { id: conn.id } });
    expect(gone.data).toEqual({ id: conn.id, object: 'crm_connection', deleted: true });
    const after = await getCrmConnection({ client, path: { id: conn.id } });
    expect(after.response?.status).toBe(404);
    expect(after.error).toMatchObject({ error: { code: 'crm_connection_not_found' } });
  });
});
