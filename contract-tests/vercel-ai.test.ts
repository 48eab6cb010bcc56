// The Vercel AI SDK (`ai` 7 with `@ai-sdk/openai` 4, pinned devDependencies) drives its multi-turn
// loop on `openai.responses(...)` against the model API, on both storages: the hub at /v1/mcp in
// the loop (its tools listed and called through the MCP SDK's client, as an app wires an MCP
// server into the AI SDK), a function tool it runs itself, and later turns that send the earlier
// ones back as it does with `store` on: as `item_reference`s.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, type ModelMessage, stepCountIs, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServers, storages, type TestServers } from './support/server.ts';

describe.each(await storages())('the Vercel AI SDK on openai.responses() on %s', (storage) => {
  let servers: TestServers;
  let key: string;

  beforeAll(async () => {
    servers = await startTestServers(storage);
    const [admin] = await servers.platform.db.query<{ account_id: string }>(
      'select account_id from api_keys limit 1',
    );
    key = (
      await servers.platform.accounts.createKey(admin!.account_id, {
        name: 'vercel ai',
        scopes: ['chat', 'agents', 'search', 'places'],
      })
    ).secret;
  }, 300_000);
  afterAll(async () => servers?.stop());

  it('runs a multi-turn loop with the hub and a function tool; earlier turns go back by reference', async () => {
    const sent: { input: { type?: string; role?: string }[] }[] = [];
    const openai = createOpenAI({
      baseURL: `${servers.urls.model}/v1`,
      apiKey: key,
      fetch: async (url, init) => {
        if (typeof init?.body === 'string') sent.push(JSON.parse(init.body) as (typeof sent)[number]);
        return fetch(url, init);
      },
    });
    const hub = new Client({ name: 'vercel-ai-test', version: '1.0.0' });
    await hub.connect(
      new StreamableHTTPClientTransport(new URL(`${servers.urls.model}/v1/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }),
    );
    const listed = (await hub.listTools()).tools;
    const hubTools = Object.fromEntries(
      listed.map((t) => [
        t.name,
        tool({
          description: t.description ?? t.name,
          inputSchema: jsonSchema<Record<string, unknown>>(t.inputSchema as never),
          execute: async (args) =>
            (await hub.callTool({ name: t.name, arguments: args })).structuredContent ?? {},
        }),
      ]),
    );
    const tools = {
      ...hubTools,
      get_weather: tool({
        description: 'Current weather for a city.',
        inputSchema: jsonSchema<{ city: string }>({
          type: 'object',
          properties: { city: { type: 'string' } },
          required: ['city'],
          additionalProperties: false,
        }),
        execute: ({ city }) => Promise.resolve({ city, temperature_c: 19, conditions: 'sunny' }),
      }),
    };
    const model = openai.responses('queen');
    const messages: ModelMessage[] = [];
    const turn = async (text: string) => {
      messages.push({ role: 'user', content: text });
      const result = await generateText({ model, messages, tools, stopWhen: stepCountIs(5) });
      messages.push(...result.response.messages);
      return result;
    };

    const first = await turn('Search the directory for a bakery in Berlin.');
    expect(first.steps.flatMap((s) => s.toolCalls).map((c) => c.toolName)).toContain('search_directory');
    expect(first.text).not.toBe('');
    const second = await turn('What is the weather in Berlin?');
    expect(second.steps.flatMap((s) => s.toolCalls).map((c) => c.toolName)).toContain('get_weather');
    expect(second.text).toMatch(/19/);
    const third = await turn('Thanks, and in Hamburg?');
    expect(third.text).not.toBe('');

    // the later requests carried the earlier turns as item_reference (ids this server stored)
    const references = sent
      .slice(1)
      .flatMap((body) => body.input.filter((item) => item.type === 'item_reference'));
    expect(references.length).toBeGreaterThan(0);
    await hub.close();
  }, 120_000);
});
