// The request options of POST /v1/responses that shape a run, through the official openai SDK:
// parallel_tool_calls (several function calls in one step, or one), text.format json_schema (the
// answer parses and fits the schema), max_output_tokens (the answer stops there, `incomplete`),
// and a background response cancelled while it runs (its tool call under way): it stops, says
// `cancelled`, and is billed for what ran.
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 as Ajv } from 'ajv/dist/2020.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from './support/client.ts';
import { componentValidator, explain } from './support/spec.ts';
import { startTestServers, type TestServers } from './support/server.ts';

const tool = (name: string, description: string): OpenAI.Responses.FunctionTool => ({
  type: 'function',
  name,
  description,
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  strict: true,
});
const TOOLS = [
  tool('get_weather', 'Current weather for a city.'),
  tool('get_local_time', 'The local time in a city.'),
];
const ASK = 'What is the weather and the local time in Lisbon?';

/** An MCP server (the official SDK's) whose `forecast` tool answers after `delayMs`. */
async function slowWeather(delayMs: number) {
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
      server.setRequestHandler(CallToolRequestSchema, async () => {
        calls++;
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        return { content: [{ type: 'text', text: '21 C' }] };
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
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

describe('options of /v1/responses', () => {
  let servers: TestServers;
  let openai: OpenAI;
  let base: string;

  beforeAll(async () => {
    servers = await startTestServers('pglite', {
      which: ['model'],
      env: { MCP_REMOTE_PRIVATE_ADDRESSES: 'true', MCP_CALL_TIMEOUT_MS: '30000' },
    });
    base = servers.urls.model ?? '';
    openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: servers.adminKey, maxRetries: 0 });
  });
  afterAll(async () => servers?.stop());

  const calls = (response: OpenAI.Responses.Response) =>
    response.output.filter((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call');

  it('parallel_tool_calls: both tools called in one step, or one when false', async () => {
    for (const model of ['queen', 'agents']) {
      const parallel = await openai.responses.create({ model, input: ASK, tools: TOOLS });
      expect(parallel.parallel_tool_calls).toBe(true);
      expect(
        calls(parallel)
          .map((c) => c.name)
          .sort(),
      ).toEqual(['get_local_time', 'get_weather']);
      for (const call of calls(parallel)) expect(JSON.parse(call.arguments)).toEqual({ city: 'Lisbon' });
      expect(new Set(calls(parallel).map((c) => c.call_id)).size).toBe(2);

      const one = await openai.responses.create({
        model,
        input: ASK,
        tools: TOOLS,
        parallel_tool_calls: false,
      });
      expect(one.parallel_tool_calls).toBe(false);
      expect(calls(one)).toHaveLength(1);
    }
  });

  it('text.format json_schema: the answer parses and fits the schema', async () => {
    const schema = {
      type: 'object',
      properties: {
        city: { type: 'string' },
        months: { type: 'array', items: { type: 'string', enum: ['May', 'June', 'July', 'August'] } },
        whales: { type: 'integer', minimum: 0 },
        sure: { type: 'boolean' },
      },
      required: ['city', 'months', 'whales', 'sure'],
      additionalProperties: false,
    };
    const validate = new Ajv({ strict: false }).compile(schema);
    for (const model of ['queen', 'agents']) {
      const response = await openai.responses.create({
        model,
        input: 'When can I see whales near Ponta Delgada in the Azores?',
        text: { format: { type: 'json_schema', name: 'whale_season', schema, strict: true } },
      });
      expect(response.status).toBe('completed');
      expect(response.text?.format).toMatchObject({ type: 'json_schema', name: 'whale_season' });
      const answer: unknown = JSON.parse(response.output_text);
      expect(validate(answer), JSON.stringify(validate.errors)).toBe(true);
    }
    // the SDK's parse helper reads it the same way
    const parsed = await openai.responses.parse({
      model: 'queen',
      input: 'When can I see whales near Ponta Delgada in the Azores?',
      text: { format: { type: 'json_schema', name: 'whale_season', schema, strict: true } },
    });
    expect(validate(parsed.output_parsed)).toBe(true);
    // a schema that is not one is a 400, not a 500
    await expect(
      openai.responses.create({
        model: 'queen',
        input: 'Hi',
        text: { format: { type: 'json_schema', name: 'bad', schema: { type: 'no such type' } } },
      }),
    ).rejects.toMatchObject({ status: 400, code: 'invalid_json_schema', param: 'text.format.schema' });
    // and so are a function's parameters, here and in chat completions
    await expect(
      openai.responses.create({
        model: 'queen',
        input: 'Hi',
        tools: [{ ...TOOLS[0]!, parameters: { type: 'object', required: 'city' } }],
      }),
    ).rejects.toMatchObject({ status: 400, code: 'invalid_json_schema', param: 'tools[0].parameters' });
    await expect(
      openai.chat.completions.create({
        model: 'queen',
        messages: [{ role: 'user', content: 'Hi' }],
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'bad', schema: { type: 'no such type' } },
        },
      }),
    ).rejects.toMatchObject({ status: 400, code: 'invalid_json_schema' });
  });

  it('max_output_tokens: the answer stops there and the response is incomplete', async () => {
    for (const model of ['queen', 'agents']) {
      const response = await openai.responses.create({
        model,
        input: 'Describe the harbour of Porto, its bridges, its wine lodges and its history, at length.',
        max_output_tokens: 16,
      });
      expect(response.status).toBe('incomplete');
      expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
      expect(response.max_output_tokens).toBe(16);
      expect(response.usage?.output_tokens).toBeLessThanOrEqual(16);
      expect(response.output_text.length).toBeGreaterThan(0);
      const wire: Partial<typeof response> = { ...response };
      delete wire.output_text;
      const valid = componentValidator('model', 'Response');
      expect(valid(wire), explain(valid)).toBe(true);
    }
  });

  it('a background response streams live while it runs, and resumes after the last sequence number seen', async () => {
    const weather = await slowWeather(3000);
    try {
      const queued = await openai.responses.create({
        model: 'agents',
        input: 'What is the weather forecast for Lyon?',
        tools: [{ type: 'mcp', server_label: 'wx', server_url: weather.url, require_approval: 'never' }],
        tool_choice: { type: 'mcp', server_label: 'wx', name: 'forecast' },
        background: true,
      });
      // a raw stream, read until the tool call is under way, then dropped
      const res = await fetch(`${base}/v1/responses/${queued.id}?stream=true`, {
        headers: { Authorization: `Bearer ${servers.adminKey}` },
      });
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reader = res.body!.getReader();
      const seen: Array<{ type: string; sequence_number: number }> = [];
      let text = '';
      while (!seen.some((e) => e.type === 'response.mcp_call.in_progress')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
        const blocks = text.split('\n\n');
        text = blocks.pop() ?? '';
        for (const block of blocks) {
          const data = /^data: (.+)$/m.exec(block)?.[1];
          if (data) seen.push(JSON.parse(data) as { type: string; sequence_number: number });
        }
      }
      await reader.cancel();
      // live: the events came while the run waits on the tool
      expect((await openai.responses.retrieve(queued.id)).status).toBe('in_progress');
      expect(weather.calls()).toBe(1);
      expect(seen.map((e) => e.type).slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
      expect(seen.map((e) => e.sequence_number)).toEqual(seen.map((_e, i) => i));
      // resumed after the last one seen: the rest, in order, to the end
      const last = seen.at(-1)!.sequence_number;
      const rest: Array<{ type: string; sequence_number: number }> = [];
      for await (const event of await openai.responses.retrieve(queued.id, {
        stream: true,
        starting_after: last,
      })) {
        rest.push(event);
      }
      expect(rest.map((e) => e.sequence_number)).toEqual(rest.map((_e, i) => last + 1 + i));
      expect(rest.map((e) => e.type)).toContain('response.mcp_call.completed');
      expect(rest.at(-1)?.type).toBe('response.completed');
      // the same events as a replay of the finished response
      const replayed: string[] = [];
      for await (const event of await openai.responses.retrieve(queued.id, { stream: true })) {
        replayed.push(event.type);
      }
      expect(replayed).toEqual([...seen, ...rest].map((e) => e.type));
    } finally {
      await weather.close();
    }
  });

  it('a background response cancelled while its tool call runs stops and says cancelled', async () => {
    const weather = await slowWeather(3000);
    try {
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
      const cancelled = await openai.responses.cancel(queued.id);
      expect(cancelled.status).toBe('cancelled');
      // the run notices within a second or so, and keeps what it did
      const after = await until(
        'what the run did, kept',
        async () => {
          const r = await openai.responses.retrieve(queued.id);
          return r.output.length > 0 && r.usage ? r : undefined;
        },
        10_000,
      );
      expect(after.status).toBe('cancelled');
      expect(after.output_text).toBe('');
      await new Promise((r) => setTimeout(r, 3000)); // the tool call's answer comes and is dropped
      expect((await openai.responses.retrieve(queued.id)).status).toBe('cancelled');
      expect(weather.calls()).toBe(1); // no step after the cancel
      // its stream from a sequence number ends with the cancelled response
      const events: Array<{ type: string; sequence_number: number }> = [];
      for await (const event of await openai.responses.retrieve(queued.id, {
        stream: true,
        starting_after: 0,
      })) {
        events.push(event);
      }
      expect(events[0]?.sequence_number).toBe(1);
      expect((events.at(-1) as unknown as { response: { status: string } }).response.status).toBe(
        'cancelled',
      );
    } finally {
      await weather.close();
    }
  });
});
