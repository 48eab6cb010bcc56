// `background: true` survives the instance: responses queued by an instance that only serves HTTP
// (JOB_WORKERS=0) and then dies by SIGKILL are run by the next instance on the same database
// (PGlite on disk); one cancelled while queued stays cancelled and is never run or billed; one
// killed in the middle of a tool call is claimed again once its heartbeat lapses and runs again.

/** An MCP server (the official SDK's) whose `forecast` tool answers after `delayMs`. */
async function slowWeather(
  delayMs: number,
): Promise<{ url: string; calls: () => number; close(): Promise<void> }> {
  let calls = 0;
  const http: HttpServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const server = new Server({ name: 'weather', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: [
          {
            name: 'forecast',
            description: 'Weather forecast for a city.',
            inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        ],
      }));
      server.setRequestHandler(CallToolRequestSchema, async (request) => {
        calls++;
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        const city = typeof request.params.arguments?.city === 'string' ? request.params.arguments.city : '?';
        return { content: [{ type: 'text', text: `${city}: 21 C` }] };
      });
      const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
      res.on('close', () => void server.close());
      void server
        .connect(transport)
        .then(() =>
          transport.handleRequest(
            req,
            res,
            chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined,
          ),
        );
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    calls: () => calls,
    close: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from './support/client.ts';
import { type Instance, startInstance } from './support/instances.ts';
import { ended } from './support/responses.ts';

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
    const done = await ended(openai, kept.id, 30_000);
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

  it('a run killed in the middle of a tool call runs again on the next instance', async () => {
    const weather = await slowWeather(4000);
    const env = {
      DATA_DIR: dir,
      BOOTSTRAP_ADMIN_KEY: key,
      MCP_REMOTE_PRIVATE_ADDRESSES: 'true',
      MCP_CALL_TIMEOUT_MS: '20000',
    };
    try {
      await instance?.stop(); // one process on a PGlite directory at a time
      instance = await startInstance(env);
      let openai = new OpenAI({ baseURL: `${instance.model}/v1`, apiKey: key, maxRetries: 0 });
      const queued = await openai.responses.create({
        model: 'agents',
        input: 'What is the weather forecast for Lyon?',
        tools: [{ type: 'mcp', server_label: 'wx', server_url: weather.url, require_approval: 'never' }],
        tool_choice: { type: 'mcp', server_label: 'wx', name: 'forecast' },
        background: true,
      });
      await until('the tool called', () => weather.calls() > 0, 10_000, 50);
      expect(weather.calls()).toBe(1);
      expect((await openai.responses.retrieve(queued.id)).status).toBe('in_progress');
      process.kill(instance.pid, 'SIGKILL');
      await instance.exited;

      instance = await startInstance(env);
      openai = new OpenAI({ baseURL: `${instance.model}/v1`, apiKey: key, maxRetries: 0 });
      const done = await ended(openai, queued.id, 90_000);
      expect(done.status).toBe('completed');
      expect(weather.calls()).toBe(2); // the lost run's call, and the new run's
      expect(done.output.find((o) => o.type === 'mcp_call')).toMatchObject({ name: 'forecast', error: null });
    } finally {
      await weather.close();
    }
  }, 180_000);
});
