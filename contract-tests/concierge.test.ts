// The Concierge on the real service, through the generated SDK, on both storage paths: a brief
// (in English, German, French) run by the agents runtime of the Model API (the hub's search
// through `model: "agents"`), compared on the directory's data and delivered as a signed
// `workflow.completed` event verified with the `standardwebhooks` library, the same result on
// GET; billed once by complexity, only on success; cancelled at every stage with nothing billed
// and one `workflow.cancelled` event; bad input refused with a clear 4xx and nothing created.
// A proxy in front of the Model API holds the agent's call of one stage, so the test acts while
// the workflow is in that stage.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../generated/directory/client/client/index.ts';
import {
  cancelWorkflow,
  createConciergeBrief,
  getWorkflow,
  listWorkflows,
} from '../generated/directory/client/sdk.gen.ts';
import type { CreateConciergeBriefRequest, Workflow } from '../generated/directory/client/types.gen.ts';
import { addProviders, HoldingProxy, VerifyingReceiver } from './support/concierge.ts';
import { type Storage, startTestServers, storages, type TestServers } from './support/server.ts';
import { componentValidator, explain } from './support/spec.ts';
import { send, until } from './support/client.ts';

const validWorkflow = componentValidator('directory', 'Workflow');
const validEvent = componentValidator('directory', 'WorkflowWebhookEvent');

describe.each(await storages())('the concierge on %s', (storage: Storage) => {
  let servers: TestServers;
  let client: ReturnType<typeof createClient>;
  const proxy = new HoldingProxy();
  const receiver = new VerifyingReceiver();
  const town = { name: 'Leoben', lat: 0, lon: 0, country: 'AT' };
  let providers: string[] = [];

  const directory = (method: string, path: string, body?: object | string, key = servers.adminKey) =>
    send(servers.urls.directory!, key, method, path, body);

  async function post(body: CreateConciergeBriefRequest, key?: string): Promise<Workflow> {
    const res = await createConciergeBrief({
      client,
      body,
      headers: { 'Idempotency-Key': key ?? randomBytes(8).toString('hex') },
    });
    expect(res.response?.status, JSON.stringify(res.error)).toBe(202);
    expect(res.response?.headers.get('location')).toBe(`/v1/concierge/workflows/${res.data!.id}`);
    expect(validWorkflow(res.data), explain(validWorkflow)).toBe(true);
    return res.data!;
  }
  const get = async (id: string) => (await getWorkflow({ client, path: { id } })).data!;
  const finished = (id: string) =>
    until(`${id} to finish`, async () => {
      const wf = await get(id);
      return ['succeeded', 'failed', 'cancelled'].includes(wf.status) ? wf : undefined;
    });
  const conciergeUsage = async () => {
    const today = new Date().toISOString().slice(0, 10);
    const report = await directory('GET', `/v1/usage?from=${today}&to=${today}&group_by=interface`);
    const results = (
      report.body.data as { results: { interface: string; requests: number; cost: string }[] }[]
    )
      .flatMap((b) => b.results)
      .filter((r) => r.interface === 'concierge');
    return {
      requests: results.reduce((n, r) => n + r.requests, 0),
      cost: results.reduce((n, r) => n + Number(r.cost), 0),
    };
  };

  beforeAll(async () => {
    await proxy.start();
    await receiver.start();
    servers = await startTestServers(storage, {
      env: {
        MODEL_API_URL: proxy.url,
        OUTBOUND_ALLOW_PRIVATE: 'true',
        WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s',
      },
    });
    proxy.target = servers.urls.model!;
    client = createClient({ baseUrl: servers.urls.directory!, auth: servers.adminKey });
    const subscribed = await send(servers.urls.model!, servers.adminKey, 'POST', '/v1/subscriptions', {
      plan: 'concierge',
    });
    expect(subscribed.status).toBe(201);
    const endpoint = await directory('POST', '/v1/webhook-endpoints', {
      url: receiver.url,
      event_types: ['workflow.completed', 'workflow.failed', 'workflow.cancelled'],
    });
    expect(endpoint.status).toBe(201);
    receiver.secret = endpoint.body.secret as string;
    const geocoded = await directory('GET', '/v1/places/geocode?q=Leoben&country=AT&limit=1');
    const place = (geocoded.body.data as { lat: number; lon: number }[])[0]!;
    Object.assign(town, { lat: place.lat, lon: place.lon });
    // three plumbers in Leoben: the best rated is the one to recommend on the directory's data
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
      { name: 'Haustechnik Gruber', email: 'info@gruber.providers.test', rating: 3.1, reviews: 9, east: 3 },
    ]);
  }, 240_000);
  afterAll(async () => {
    await servers?.stop();
    await proxy.stop();
    await receiver.stop();
  });

  it('compares on the directory data alone, delivers the signed comparison, bills 0.50 EUR once', async () => {
    const before = await conciergeUsage();
    const key = randomBytes(8).toString('hex');
    const brief = {
      brief: 'Find three plumbers in Leoben who can fix a leaking pipe in a kitchen, and compare them.',
      contact: false,
      metadata: { order_ref: 'T-1' },
    };
    const accepted = await post(brief, key);
    expect(accepted).toMatchObject({
      status: 'queued',
      complexity: 'simple',
      price: '0.500000000',
      contact: false,
    });
    expect(accepted.steps.map((s) => s.kind)).toEqual(['accepted']);
    // the same Idempotency-Key and body: the first answer again, nothing new
    const replay = await createConciergeBrief({ client, body: brief, headers: { 'Idempotency-Key': key } });
    expect(replay.response?.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.data?.id).toBe(accepted.id);

    const done = await finished(accepted.id);
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    expect(validWorkflow(done), explain(validWorkflow)).toBe(true);
    expect(done.understanding).toMatchObject({
      language: 'en',
      trade: { activity: '43.22', term: 'plumbers' },
      place: { query: 'Leoben', country: 'AT' },
      max_providers: 3,
    });
    expect(done.steps.map((s) => s.kind)).toEqual([
      'accepted',
      'planned',
      'searched',
      'shortlisted',
      'compared',
      'billed',
    ]);
    expect(done.billed).toBe('0.500000000');
    for (const s of done.steps.filter((x) => ['planned', 'searched', 'compared'].includes(x.kind)))
      expect(s.agent_response_id).toMatch(/^resp_/);
    // what the agent searched is shown as it called the hub's tool
    expect(done.steps.find((s) => s.kind === 'searched')?.message).toMatch(
      /query: "plumbers", near: "Leoben"/,
    );
    expect(new Set(done.shortlist.map((s) => s.listing_id))).toEqual(new Set(providers));
    for (const entry of done.shortlist)
      expect(entry.reasons[0]).toBe('Plumbing, heat and air-conditioning installation');
    const result = done.result!;
    expect(result.providers.map((p) => p.name)).toEqual([
      'Wärmetechnik Novak',
      'Installateur Brandl',
      'Haustechnik Gruber',
    ]);
    expect(result.recommendation).toBe(providers[1]);
    expect(result.providers[0]?.pros).toContain('Rated 4.9 from 212 reviews');
    expect(result.providers[2]?.cons).toContain('Rated only 3.1 from 9 reviews');
    expect(result.summary).toMatch(
      /^Compared 3 providers on the directory's data\. Recommended: Wärmetechnik Novak/,
    );
    expect(result.no_answer).toEqual([]);

    const events = await until('the completion event', () =>
      receiver.of(done.id).length > 0 ? receiver.of(done.id) : undefined,
    );
    expect(receiver.refused).toEqual([]);
    expect(events.map((e) => e.type)).toEqual(['workflow.completed']);
    expect(validEvent(events[0]), explain(validEvent)).toBe(true);
    expect(events[0]?.data.object).toEqual(done);

    const after = await conciergeUsage();
    expect(after.requests - before.requests).toBe(1);
    expect(Math.round((after.cost - before.cost) * 100)).toBe(50);
    // the runtime's steps are the platform's own cost: nothing on the customer's model usage
    const today = new Date().toISOString().slice(0, 10);
    const model = await send(
      servers.urls.model!,
      servers.adminKey,
      'GET',
      `/v1/usage?from=${today}&to=${today}&group_by=model`,
    );
    const agents = (model.body.data as { results: { model: string }[] }[])
      .flatMap((b) => b.results)
      .filter((r) => r.model === 'agents');
    expect(agents).toEqual([]);
  });

  it('reads briefs in German and French, and writes the summary in their language', async () => {
    const de = await finished(
      (
        await post({
          brief:
            'Wir suchen zwei Installateure in Leoben für ein undichtes Rohr in der Küche. Bitte vergleichen.',
          contact: false,
        })
      ).id,
    );
    expect(de.status).toBe('succeeded');
    expect(de.understanding).toMatchObject({
      language: 'de',
      trade: { activity: '43.22' },
      place: { name: expect.stringMatching(/^Leoben/) as string },
      max_providers: 2,
    });
    expect(de.result?.summary).toMatch(/^2 Anbieter anhand der Verzeichnisdaten verglichen\. Empfehlung: /);
    const fr = await finished(
      (
        await post({
          brief:
            'Nous cherchons trois plombiers à Leoben pour une fuite dans la salle de bains, merci de comparer.',
          contact: false,
        })
      ).id,
    );
    expect(fr.understanding).toMatchObject({
      language: 'fr',
      trade: { activity: '43.22' },
      max_providers: 3,
    });
    expect(fr.result?.summary).toMatch(
      /^3 prestataires comparés sur les données de l'annuaire\. Recommandation : |^3 prestataires comparés sur les données de l'annuaire\. Recommandation: /,
    );
    expect(fr.result?.recommendation).toBe(providers[1]);
  });

  it("sends a workflow's events to the one endpoint it names, subscribed or not", async () => {
    const own = new VerifyingReceiver();
    await own.start();
    try {
      const endpoint = await directory('POST', '/v1/webhook-endpoints', {
        url: own.url,
        event_types: ['test'],
      });
      own.secret = endpoint.body.secret as string;
      const wf = await post({
        brief: 'Find two plumbers in Leoben and compare them.',
        contact: false,
        webhook_endpoint_id: endpoint.body.id as string,
      });
      expect(wf.webhook_endpoint_id).toBe(endpoint.body.id);
      const events = await until('the event at its endpoint', () =>
        own.of(wf.id).length > 0 ? own.of(wf.id) : undefined,
      );
      expect(events.map((e) => e.type)).toEqual(['workflow.completed']);
      await new Promise((r) => setTimeout(r, 1000));
      expect(receiver.of(wf.id)).toEqual([]);
      expect(own.refused).toEqual([]);
    } finally {
      await own.stop();
    }
  });

  it('fails a brief nothing in the directory fits: the error on GET and in workflow.failed, not billed', async () => {
    const before = await conciergeUsage();
    const wf = await post({
      brief: 'Find two undertakers in Leoben and compare them.',
      activity: '96.03',
      contact: false,
    });
    const done = await finished(wf.id);
    expect(done.status).toBe('failed');
    expect(validWorkflow(done), explain(validWorkflow)).toBe(true);
    expect(done.error).toMatchObject({ type: 'invalid_request_error', code: 'no_providers_found' });
    expect(done.error?.message).toMatch(
      /^No provider in the directory fits the brief\. The agent searched the directory/,
    );
    expect(done.steps.at(-1)).toMatchObject({ kind: 'failed', stage: 'searching' });
    const events = await until('the failed event', () =>
      receiver.of(wf.id).length > 0 ? receiver.of(wf.id) : undefined,
    );
    expect(events.map((e) => e.type)).toEqual(['workflow.failed']);
    expect(events[0]?.data.object).toEqual(done);
    expect(await conciergeUsage()).toEqual(before);
  });

  it('refuses bad input with a clear 4xx and creates nothing', async () => {
    const count = async () => (await listWorkflows({ client, query: { limit: 100 } })).data!.data.length;
    const before = await count();
    const past = new Date(Date.now() - 3600_000).toISOString();
    const cases: [object | string, number, string][] = [
      [{ brief: '' }, 400, 'validation_failed'],
      [{ brief: '           ' }, 400, 'brief_too_short'],
      [{ brief: '            .  ' }, 400, 'brief_too_short'],
      [{ brief: 'x'.repeat(100_000) }, 400, 'validation_failed'],
      [
        { brief: 'Find three plumbers in Leoben.', location: 'Leoben', near: '47.38,15.09' },
        400,
        'location_and_near',
      ],
      [{ brief: 'Find three plumbers in Leoben.', radius_km: 5 }, 400, 'radius_without_place'],
      [
        { brief: 'Find three plumbers in Leoben.', location: 'Xqzzyvillebergstadt' },
        400,
        'location_not_found',
      ],
      [{ brief: 'Find three plumbers in Leoben.', contact: true }, 400, 'sending_domain_required'],
      [
        { brief: 'Find three plumbers in Leoben.', contact: false, respond_by: past },
        400,
        'respond_by_without_contact',
      ],
      [
        { brief: 'Find three plumbers in Leoben.', webhook_endpoint_id: 'whep_01JD1RNJ47E65GH2BH8VGS9ZM5' },
        404,
        'webhook_endpoint_not_found',
      ],
      [{ brief: 'Find three plumbers in Leoben.', unknown: 1 }, 400, 'validation_failed'],
      ['{"brief": ', 400, 'invalid_json'],
    ];
    for (const [body, status, code] of cases) {
      const res = await directory('POST', '/v1/concierge/briefs', body);
      expect(
        [res.status, (res.body.error as { code: string }).code],
        JSON.stringify(body).slice(0, 80),
      ).toEqual([status, code]);
      expect(res.body.error).toMatchObject({
        type: 'invalid_request_error',
        request_id: res.headers.get('x-request-id'),
      });
    }
    expect(await count()).toBe(before);
  });

  it('needs the Concierge plan, and keeps each project to its own workflows', async () => {
    const { accountId } = await servers.platform.accounts.createAccount('no plan');
    const other = await servers.platform.accounts.createKey(accountId, { name: 'c', scopes: ['concierge'] });
    const refused = await directory(
      'POST',
      '/v1/concierge/briefs',
      { brief: 'Find three plumbers in Leoben.', contact: false },
      other.secret,
    );
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ type: 'permission_error', code: 'subscription_required' });
    const mine = (await listWorkflows({ client, query: { limit: 1 } })).data!.data[0]!;
    expect(
      (await directory('GET', `/v1/concierge/workflows/${mine.id}`, undefined, other.secret)).status,
    ).toBe(404);
    expect(
      (await directory('POST', `/v1/concierge/workflows/${mine.id}/cancel`, undefined, other.secret)).status,
    ).toBe(404);
    expect((await directory('GET', '/v1/concierge/workflows', undefined, other.secret)).body.data).toEqual(
      [],
    );
    const searchOnly = await servers.platform.accounts.createKey(accountId, {
      name: 's',
      scopes: ['search'],
    });
    const scope = await directory('GET', '/v1/concierge/workflows', undefined, searchOnly.secret);
    expect(scope.status).toBe(403);
    expect(scope.body.error).toMatchObject({ code: 'insufficient_scope' });
  });

  it('cancels at every stage: the agent stops, nothing is billed, one workflow.cancelled event', async () => {
    const before = await conciergeUsage();
    for (const stage of ['planning', 'searching', 'comparing'] as const) {
      proxy.held.add(stage);
      const wf = await post({ brief: 'Find three plumbers in Leoben and compare them.', contact: false });
      await until(`${stage} to be held`, () => proxy.waiting.has(stage));
      const running = await get(wf.id);
      expect([running.status, running.stage]).toEqual(['running', stage]);
      const cancelled = await cancelWorkflow({ client, path: { id: wf.id } });
      expect(cancelled.response?.status).toBe(200);
      expect(cancelled.data).toMatchObject({ status: 'cancelled', stage: null, result: null });
      expect(cancelled.data?.steps.at(-1)).toMatchObject({
        kind: 'cancelled',
        message: `Cancelled while ${stage}; not billed.`,
      });
      proxy.release();
      // the held call ends; the stage finds the workflow cancelled and goes no further
      await until(`${stage}'s call to end`, () => !proxy.waiting.has(stage));
      await new Promise((r) => setTimeout(r, 1500));
      const after = await get(wf.id);
      expect(after).toEqual(cancelled.data);
      const again = await cancelWorkflow({ client, path: { id: wf.id } });
      expect(again.response?.status).toBe(409);
      expect((again.error as { error: { code: string } }).error.code).toBe('workflow_finished');
      const events = await until('the cancelled event', () =>
        receiver.of(wf.id).length > 0 ? receiver.of(wf.id) : undefined,
      );
      await new Promise((r) => setTimeout(r, 500));
      expect(receiver.of(wf.id).map((e) => e.type)).toEqual(['workflow.cancelled']);
      expect(events[0]?.data.object.status).toBe('cancelled');
    }
    // right after the 202, before or as the agent starts
    const early = await post({ brief: 'Find three plumbers in Leoben and compare them.', contact: false });
    expect((await cancelWorkflow({ client, path: { id: early.id } })).data?.status).toBe('cancelled');
    await new Promise((r) => setTimeout(r, 1500));
    expect((await get(early.id)).status).toBe('cancelled');
    expect(await conciergeUsage()).toEqual(before);
  });

  it('lists workflows newest first, by status, in cursor pages', async () => {
    const all: Workflow[] = [];
    let cursor: string | undefined;
    do {
      const page = await listWorkflows({ client, query: { limit: 2, ...(cursor ? { cursor } : {}) } });
      expect(page.response?.status).toBe(200);
      all.push(...page.data!.data);
      cursor = page.data!.next_cursor ?? undefined;
    } while (cursor);
    expect(all.length).toBeGreaterThanOrEqual(7);
    expect(new Set(all.map((w) => w.id)).size).toBe(all.length);
    const created = all.map((w) => w.created);
    expect(created).toEqual([...created].sort((a, b) => b - a));
    const cancelled = (await listWorkflows({ client, query: { status: 'cancelled', limit: 100 } })).data!
      .data;
    expect(cancelled.map((w) => w.id)).toEqual(all.filter((w) => w.status === 'cancelled').map((w) => w.id));
    expect(cancelled.length).toBe(4);
    const bad = await directory('GET', '/v1/concierge/workflows?cursor=nonsense');
    expect(bad.status).toBe(400);
  });
});
