// A planning stage run again reads the brief as the first time: the model's first answer is kept
// with the workflow as soon as it is made, and a retried stage checks that answer instead of
// asking again. The stage runs on the real job queue (pg-boss) on both storages; the first
// attempt's agent run fails as a runtime that is down would, so the queue retries the stage. The
// model here answers differently each time it is asked (three providers, then two), as a model may.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, storages, type TestDatabase } from '../../contract-tests/support/server.ts';
import type { Db } from '../platform/db.ts';
import { MailRouting } from '../mail/routing.ts';
import { type Jobs, openJobs } from '../platform/jobs.ts';
import { createLogger } from '../platform/logger.ts';
import { openStorage } from '../storage.ts';
import type { WebhookDelivery } from '../webhooks/delivery.ts';
import { type Agent, type AgentCall, AgentFailed, AgentUnavailable, type StructuredCall } from './agent.ts';
import { WorkflowStore } from './store.ts';
import { Workflows } from './workflows.ts';

const BRIEF = 'Find three electricians in Lyon to rewire a flat, or two if three are busy.';

const answer = (max: number) =>
  JSON.stringify({
    language: 'en',
    activity: '43.21',
    place: 'Lyon',
    country: 'FR',
    max_providers: max,
    when_kind: null,
    when_from: null,
    when_to: null,
    when_text: null,
    requirements: [],
  });

describe.each(await storages())('a retried planning stage on %s', (storage) => {
  let database: TestDatabase | undefined;
  let db: Db;
  let jobs: Jobs;
  const asked: StructuredCall[] = [];
  const runs: AgentCall[] = [];
  const logger = createLogger('silent', 'planning-retry');

  // the model: 3 providers the first time it is asked, 2 after; the runtime: down at the first
  // planning run, and the test ends the workflow at its search
  const agent: Agent = {
    async structured(call) {
      asked.push(call);
      return {
        responseId: `resp_${asked.length}`,
        text: answer(asked.length === 1 ? 3 : 2),
        steps: 1,
        costNano: 0,
      };
    },
    async run(call) {
      runs.push(call);
      if (call.metadata.stage !== 'planning')
        throw new AgentFailed('test_ends_here', 'The test ends at the search.', 400);
      if (runs.length === 1) throw new AgentUnavailable('The agents runtime answered 503.');
      return {
        responseId: 'resp_plan',
        responseIds: ['resp_plan'],
        text: 'read',
        mcpCalls: [],
        functionCalls: [],
        steps: 1,
        costNano: 0,
      };
    },
  };

  beforeAll(async () => {
    if (storage === 'postgres') database = await createTestDatabase();
    db = await openStorage({ databaseUrl: database?.url, dataDir: 'memory://' });
    jobs = await openJobs(db, { workers: 2, logger, pollingIntervalSeconds: 0.5 });
    const workflows = new Workflows(db, jobs, {
      agent,
      // a failed workflow's event: no endpoint in this test to deliver it to
      webhooks: { emit: async () => {} } as unknown as WebhookDelivery,
      endpoints: { row: async () => Promise.reject(new Error('no endpoints here')) },
      mail: {} as never,
      routing: new MailRouting(),
      logger,
      baseUrl: 'http://127.0.0.1',
      runtimeAvailable: true,
      modelReads: true,
    });
    await workflows.start();
  }, 120_000);

  afterAll(async () => {
    await jobs?.stop();
    await db?.close();
    await database?.drop();
  });

  it('asks the model once and plans on its first reading', async () => {
    const store = new WorkflowStore(db, jobs);
    const id = `wf_retry_${storage}`;
    await db.transaction((tx) =>
      store.insert(tx, {
        id,
        accountId: 'acct_retry',
        projectId: 'proj_retry',
        keyId: 'key_retry',
        brief: BRIEF,
        hints: {},
        contact: false,
        sendingDomainId: null,
        from: null,
        respondBy: null,
        complexity: 'simple',
        priceNano: 500_000_000,
        webhookEndpointId: null,
        steps: [],
        metadata: {},
        requestId: 'req_retry',
        created: Math.floor(Date.UTC(2026, 10, 26, 12) / 1000),
      }),
    );
    const end = Date.now() + 60_000;
    let row = await store.load(id);
    while (row?.status !== 'failed' && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 200));
      row = await store.load(id);
    }
    expect(row?.error?.code).toBe('test_ends_here');
    // two planning runs (the first failed), one question to the model
    expect(runs.filter((r) => r.metadata.stage === 'planning')).toHaveLength(2);
    expect(asked).toHaveLength(1);
    expect(row?.brief_reading).toEqual({ text: answer(3), response_id: 'resp_1' });
    expect(row?.understanding).toMatchObject({
      read_by: 'model',
      max_providers: 3,
      trade: { activity: '43.21' },
    });
    expect(row?.steps.map((s) => s.kind)).toEqual(['planned', 'failed']);
  });
});
