// `background: true` survives the instance: responses queued by an instance that only serves HTTP
// (JOB_WORKERS=0) and then dies by SIGKILL are run by the next instance on the same database
// (PGlite on disk); one cancelled while queued stays cancelled and is never run or billed.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { type Instance, startInstance } from './support/instances.ts';

describe('background responses across a SIGKILL (PGlite on disk)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'responses-kill-'));
  const key = `sk_test_admin_${randomBytes(16).toString('hex')}`;
  let instance: Instance | undefined;
  afterAll(async () => {
    await instance?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('are run by the next instance; a cancelled one is not', async () => {
    const env = { DATA_DIR: dir, BOOTSTRAP_ADMIN_KEY: key };
    instance = await startInstance({ ...env, JOB_WORKERS: '0' });
    let openai = new OpenAI({ baseURL: `${instance.model}/v1`, apiKey: key, maxRetries: 0 });
    const kept = await openai.responses.create({
      model: 'agents',
      input: 'Plan a day in Lisbon with a tram ride and a pastry shop.',
      background: true,
    });
    const dropped = await openai.responses.create({
      model: 'queen',
      input: 'Name a river.',
      background: true,
    });
    expect([kept.status, dropped.status]).toEqual(['queued', 'queued']);
    expect((await openai.responses.cancel(dropped.id)).status).toBe('cancelled');
    await new Promise((r) => setTimeout(r, 500));
    expect((await openai.responses.retrieve(kept.id)).status).toBe('queued'); // nobody runs it here
    process.kill(instance.pid, 'SIGKILL');
    await instance.exited;

    instance = await startInstance(env);
    openai = new OpenAI({ baseURL: `${instance.model}/v1`, apiKey: key, maxRetries: 0 });
    let done = await openai.responses.retrieve(kept.id);
    for (let i = 0; i < 300 && (done.status === 'queued' || done.status === 'in_progress'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      done = await openai.responses.retrieve(kept.id);
    }
    expect(done.status).toBe('completed');
    expect(done.output_text.length).toBeGreaterThan(0);
    expect((await openai.responses.retrieve(dropped.id)).status).toBe('cancelled');

    // billed once, as the agents runtime bills: its steps, on the day's usage
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const usage = (await (
      await fetch(`${instance.model}/v1/usage?from=${today}&to=${tomorrow}&group_by=model`, {
        headers: { Authorization: `Bearer ${key}` },
      })
    ).json()) as {
      data: Array<{ results: Array<{ model: string | null; requests: number; steps: number }> }>;
    };
    const rows = usage.data.flatMap((bucket) => bucket.results);
    const agents = rows.filter((row) => row.model === 'agents');
    expect(agents.reduce((n, row) => n + row.requests, 0)).toBe(1);
    expect(agents.reduce((n, row) => n + row.steps, 0)).toBe(
      (done as unknown as { steps?: unknown[] }).steps?.length ?? -1,
    );
    expect(rows.filter((row) => row.model === 'queen')).toEqual([]);
  }, 180_000);
});
