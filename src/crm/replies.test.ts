// Replies as notes, through the seam Sales' replies plug into (ReplySource and replyStored): a
// sync adds each reply of the list's members once, as a note on the member's company in
// HubSpot (its Prism proxy, as in contract-tests/crm.test.ts), and a reply stored later starts
// a sync of its member alone when the connection has `sync_replies`. The replies here come from
// an in-memory source standing in for Sales' replies table, so the seam is tested alone.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CrmSync } from '../../generated/directory/client/types.gen.ts';
import { type FakeCrm, startFakeCrm } from '../../contract-tests/support/crm-vendors.ts';
import type { Search } from '../directory/search/search.ts';
import type { Db } from '../platform/db.ts';
import { newId } from '../platform/ids.ts';
import { type Jobs, openJobs } from '../platform/jobs.ts';
import { createLogger } from '../platform/logger.ts';
import { type Outbound, outbound } from '../platform/outbound.ts';
import { secretBox } from '../platform/secrets.ts';
import { TargetLists } from '../sales/target-lists.ts';
import { openStorage } from '../storage.ts';
import { WebhookDelivery } from '../webhooks/delivery.ts';
import { WebhookStore } from '../webhooks/store.ts';
import { CrmConnections } from './connections.ts';
import { type CrmReply, CrmSyncs, type ReplySource } from './syncs.ts';

const principal = { accountId: 'acct_test', projectId: 'proj_test' };

describe('replies as notes', () => {
  let db: Db;
  let jobs: Jobs;
  let door: Outbound;
  let hubspot: FakeCrm;
  let syncs: CrmSyncs;
  let connections: CrmConnections;
  const listId = newId('tl');
  const listings = [newId('lst'), newId('lst'), newId('lst')];
  const replies: CrmReply[] = [];
  const marked: string[] = [];

  const source: ReplySource = {
    async replies(targetListId, { listingId, afterId, limit }) {
      expect(targetListId).toBe(listId);
      return replies
        .filter(
          (r) => (listingId === null || r.listingId === listingId) && (afterId === null || r.id > afterId),
        )
        .slice(0, limit);
    },
    async markSynced(_tx, ids) {
      marked.push(...ids);
    },
  };

  const reply = (listingId: string, text: string): CrmReply => ({
    id: newId('rpl'),
    listingId,
    subject: 'Re: Wartung',
    text,
    from: 'm.bauer@example.de',
    fromName: 'Michael Bauer',
    receivedAt: 1795168800,
  });

  beforeAll(async () => {
    hubspot = await startFakeCrm('hubspot');
    const logger = createLogger('silent', 'test');
    db = await openStorage({ dataDir: 'memory://' });
    jobs = await openJobs(db, { workers: 2, logger, pollingIntervalSeconds: 0.5 });
    door = outbound({ allowPrivate: true });
    const box = secretBox(randomBytes(32));
    const delivery = new WebhookDelivery(
      db,
      jobs,
      door,
      new WebhookStore(db, box, door),
      { retryScheduleMs: [0], disableAfterMs: 86_400_000, timeoutMs: 1000 },
      logger,
    );
    await delivery.start();
    const targetLists = new TargetLists(db, jobs, { search: {} as Search, baseUrl: '', logger });
    connections = new CrmConnections(db, box, door);
    syncs = new CrmSyncs(
      db,
      jobs,
      { connections, targetLists, webhooks: delivery, replies: source },
      { logger },
    );
    await syncs.start();

    await db.query(
      `insert into target_lists (id, account_id, project_id, name, filters, max_members, status, member_count, created)
       values ($1, $2, $3, 'Replies', '{}', 10, 'ready', 3, 1)`,
      [listId, principal.accountId, principal.projectId],
    );
    for (const [i, id] of listings.entries()) {
      const listing = {
        id,
        name: `Firma ${i}`,
        website: `https://firma${i}.example.de`,
        phone: null,
        email: `info@firma${i}.example.de`,
        address: {
          street: 'Hauptstraße',
          house_number: String(i + 1),
          postal_code: '80331',
          city: 'München',
          region: 'Bayern',
          country: 'DE',
          formatted: '',
        },
      };
      await db.query(
        `insert into target_list_members (id, target_list_id, listing_id, position, email, listing, added, updated)
         values ($1, $2, $3, $4, $5, $6, 1, 1)`,
        [newId('tlm'), listId, id, i, listing.email, JSON.stringify(listing)],
      );
    }
  }, 120_000);

  afterAll(async () => {
    await jobs?.stop();
    await door?.close();
    await db?.close();
    await hubspot?.close();
  });

  async function finished(connectionId: string, syncId: string): Promise<CrmSync> {
    const end = Date.now() + 60_000;
    for (;;) {
      const s = await syncs.get(principal.projectId, connectionId, syncId);
      if (s.status === 'succeeded' || s.status === 'failed') return s;
      if (Date.now() > end) throw new Error('the sync did not end');
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('adds each reply once as a note on its company, and a new reply by itself', async () => {
    const conn = await connections.create(principal, {
      provider: 'hubspot',
      credentials: { access_token: hubspot.token },
      base_url: hubspot.url,
    });
    replies.push(reply(listings[0]!, 'Gerne, rufen Sie an.'), reply(listings[2]!, 'Kein Interesse.'));

    const first = await finished(
      conn.id,
      (await syncs.create(principal, conn.id, { target_list_id: listId })).id,
    );
    expect(first).toMatchObject({
      status: 'succeeded',
      counts: { total: 5, created: 5, updated: 0, failed: 0 },
    });
    const records = (
      await syncs.records(principal.projectId, conn.id, first.id, {
        limit: 100,
        cursor: undefined,
        result: undefined,
      })
    ).data;
    const notes = records.filter((r) => r.kind === 'reply');
    expect(notes.map((r) => r.reply_id)).toEqual(replies.map((r) => r.id));
    for (const n of notes) expect(n).toMatchObject({ result: 'created', crm_object: 'note', error: null });
    expect(hubspot.notes).toHaveLength(2);
    // the note hangs on the member's company (HubSpot association type 190) and its contact
    const company = hubspot.companies.get(listings[0]!)!.id;
    const assoc = (
      hubspot.notes[0]!.body as {
        associations: { to: { id: string }; types: { associationTypeId: number }[] }[];
      }
    ).associations;
    expect(assoc).toEqual(
      expect.arrayContaining([
        { to: { id: company }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 190 }] },
      ]),
    );
    expect(marked).toEqual(replies.map((r) => r.id));

    // a reply stored later: with sync_replies, a sync of that member alone, its one new note
    const late = reply(listings[0]!, 'Und noch eine Frage.');
    replies.push(late);
    await db.transaction((tx) =>
      syncs.replyStored(tx, {
        projectId: principal.projectId,
        targetListId: listId,
        listingId: listings[0]!,
      }),
    );
    const auto = (await syncs.list(principal.projectId, conn.id, 10, undefined)).data[0]!;
    expect(auto).toMatchObject({ trigger: 'reply' });
    const second = await finished(conn.id, auto.id);
    expect(second).toMatchObject({
      status: 'succeeded',
      counts: { total: 2, created: 1, updated: 1, failed: 0 },
    });
    expect(hubspot.notes).toHaveLength(3);
    expect(marked.at(-1)).toBe(late.id);

    // a full sync again: every member updated, no reply added twice
    const third = await finished(
      conn.id,
      (await syncs.create(principal, conn.id, { target_list_id: listId })).id,
    );
    expect(third).toMatchObject({
      status: 'succeeded',
      counts: { total: 3, created: 0, updated: 3, failed: 0 },
    });
    expect(hubspot.notes).toHaveLength(3);

    // without sync_replies, a stored reply starts nothing
    await connections.update(principal.projectId, conn.id, { sync_replies: false });
    await db.transaction((tx) =>
      syncs.replyStored(tx, {
        projectId: principal.projectId,
        targetListId: listId,
        listingId: listings[1]!,
      }),
    );
    expect((await syncs.list(principal.projectId, conn.id, 10, undefined)).data[0]!.id).toBe(third.id);
    expect(hubspot.violations()).toEqual([]);
  }, 120_000);
});
