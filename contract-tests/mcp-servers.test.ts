// Remote MCP servers registered for a project (/v1/mcp/servers): a second MCP server started
// here (the official SDK's server over Streamable HTTP) is registered, its tools appear in the
// hub as <label>__<tool> to the MCP SDK client and to /v1/responses, its headers are sent but
// stored sealed and never returned, and a server that is down or slow fails only its calls.
import {
  createServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sent, send } from './support/client.ts';
import { componentValidator, explain } from './support/spec.ts';
import { startTestServers, storages, type TestServers } from './support/server.ts';

const TOOLS = [
  {
    name: 'forecast',
    description: 'Weather forecast for a city.',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
  {
    name: 'whoami',
    description: 'Echoes the Authorization header the server received.',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'slow',
    description: 'Answers after three seconds.',
    inputSchema: { type: 'object', properties: {} },
  },
  { name: 'hidden', description: 'Not in the allow-list.', inputSchema: { type: 'object', properties: {} } },
];

/** A real MCP server (the SDK's), stateless over Streamable HTTP, on a free loopback port. */
async function startWeatherServer(): Promise<{ url: string; close(): Promise<void> }> {
  const http: HttpServer = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const server = new Server({ name: 'weather', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
      server.setRequestHandler(CallToolRequestSchema, async (request) => {
        const { name, arguments: args } = request.params;
        if (name === 'slow') await new Promise((resolve) => setTimeout(resolve, 3000));
        if (name === 'whoami')
          return { content: [{ type: 'text', text: req.headers.authorization ?? 'none' }] };
        const city = typeof args?.city === 'string' ? args.city : 'nowhere';
        return {
          content: [{ type: 'text', text: `${city}: 21 C` }],
          structuredContent: { city, temperature_c: 21 },
        };
      });
      const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
      res.on('close', () => void server.close());
      void server
        .connect(transport)
        .then(() =>
          transport.handleRequest(
            req,
            res,
            chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString()) : undefined,
          ),
        );
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}

describe.each(await storages())('registered MCP servers on %s', (storage) => {
  let servers: TestServers;
  let weather: { url: string; close(): Promise<void> };
  let model: string;
  let registered: Sent;
  const call = (method: string, path: string, body?: object, key = servers.adminKey) =>
    send(model, key, method, path, body);

  beforeAll(async () => {
    weather = await startWeatherServer();
    servers = await startTestServers(storage, {
      env: {
        MCP_REMOTE_PRIVATE_ADDRESSES: 'true',
        MCP_CALL_TIMEOUT_MS: '1000',
        SECRETS_ENCRYPTION_KEY: 'ab'.repeat(32),
      },
    });
    model = servers.urls.model ?? '';
    registered = await call('POST', '/v1/mcp/servers', {
      label: 'weather',
      url: weather.url,
      headers: { Authorization: 'Bearer wx_secret_value_42' },
      allowed_tools: ['forecast', 'whoami', 'slow'],
    });
  }, 240_000);
  afterAll(async () => {
    await servers?.stop();
    await weather?.close();
  });

  it('registers a server and answers with it, without its header values', () => {
    expect(registered.status).toBe(201);
    const validate = componentValidator('model', 'McpServer');
    expect(validate(registered.body), explain(validate)).toBe(true);
    expect(registered.body).toMatchObject({
      label: 'weather',
      header_names: ['Authorization'],
      allowed_tools: ['forecast', 'whoami', 'slow'],
    });
    expect(JSON.stringify(registered.body)).not.toContain('wx_secret_value_42');
  });

  it("stores a server's header values sealed", async () => {
    const [row] = await servers.platform.db.query<{ headers: string }>(
      'select headers from mcp_servers where id = $1',
      [registered.body.id],
    );
    expect(row?.headers).toMatch(/^v1\./);
    expect(row?.headers).not.toContain('wx_secret_value_42');
  });

  it('lists a registered server without its header values', async () => {
    const list = await call('GET', '/v1/mcp/servers');
    expect((list.body.data as { id: string }[]).map((s) => s.id)).toContain(registered.body.id);
    expect(JSON.stringify(list.body)).not.toContain('wx_secret_value_42');
  });

  it('gets a registered server by its id', async () => {
    const got = await call('GET', `/v1/mcp/servers/${String(registered.body.id)}`);
    expect(got.status).toBe(200);
    expect(got.body.id).toBe(registered.body.id);
  });

  it('refuses a second server with a label in use (409)', async () => {
    expect((await call('POST', '/v1/mcp/servers', { label: 'weather', url: weather.url })).status).toBe(409);
  });

  it('refuses the label of the built-in tools, eurus (400)', async () => {
    expect((await call('POST', '/v1/mcp/servers', { label: 'eurus', url: weather.url })).status).toBe(400);
  });

  it('deletes a server once: then it is not found', async () => {
    const other = await call('POST', '/v1/mcp/servers', { label: 'gone', url: weather.url });
    const gone = String(other.body.id);
    expect((await call('DELETE', `/v1/mcp/servers/${gone}`)).status).toBe(204);
    expect((await call('GET', `/v1/mcp/servers/${gone}`)).status).toBe(404);
    expect((await call('DELETE', `/v1/mcp/servers/${gone}`)).status).toBe(404);
  });

  it('offers the server’s allowed tools in the hub as <label>__<tool>, callable with the stored headers', async () => {
    const client = new Client({ name: 'contract-tests', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${model}/v1/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${servers.adminKey}` } },
      }),
    );
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual([
      'search_directory',
      'get_place_details',
      'geocode',
      'reverse_geocode',
      'weather__forecast',
      'weather__whoami',
      'weather__slow',
    ]);
    const forecast = await client.callTool({ name: 'weather__forecast', arguments: { city: 'Lyon' } });
    expect(forecast.isError).toBeFalsy();
    expect(JSON.parse((forecast.content as { text: string }[])[0]?.text ?? '')).toEqual({
      city: 'Lyon',
      temperature_c: 21,
    });
    const whoami = await client.callTool({ name: 'weather__whoami', arguments: {} });
    expect((whoami.content as { text: string }[])[0]?.text).toBe('Bearer wx_secret_value_42');
    await expect(client.callTool({ name: 'weather__hidden', arguments: {} })).rejects.toMatchObject({
      code: -32602,
    });

    // slow: that call fails, clearly, within the timeout; the hub goes on
    const started = Date.now();
    const slow = await client.callTool({ name: 'weather__slow', arguments: {} });
    expect(slow.isError).toBe(true);
    expect((slow.content as { text: string }[])[0]?.text).toBe(
      "The MCP server 'weather' failed on slow: no answer within 1000 ms",
    );
    expect(Date.now() - started).toBeLessThan(2500);
    expect(
      (await client.callTool({ name: 'weather__forecast', arguments: { city: 'Nice' } })).isError,
    ).toBeFalsy();
    await client.close();
  });

  it('a server that is down leaves the listing and fails only its own calls', async () => {
    const down = await startWeatherServer();
    await down.close();
    expect((await call('POST', '/v1/mcp/servers', { label: 'down', url: down.url })).status).toBe(201);
    const client = new Client({ name: 'contract-tests', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${model}/v1/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${servers.adminKey}` } },
      }),
    );
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('weather__forecast');
    expect(names.some((n) => n.startsWith('down__'))).toBe(false);
    const failed = await client.callTool({ name: 'down__forecast', arguments: { city: 'Lyon' } });
    expect(failed.isError).toBe(true);
    expect((failed.content as { text: string }[])[0]?.text).toMatch(
      /^The MCP server 'down' failed on forecast: /,
    );
    await client.close();
  });

  it('an agents response with the hub calls the registered server’s tool', async () => {
    const openai = new OpenAI({ baseURL: `${model}/v1`, apiKey: servers.adminKey, maxRetries: 0 });
    const response = await openai.responses.create({
      model: 'agents',
      input: 'What is the weather forecast for Lyon?',
      tools: [{ type: 'mcp', server_label: 'eurus', allowed_tools: ['weather__forecast'] }],
    });
    const callItem = response.output.find((o) => o.type === 'mcp_call');
    expect(callItem).toMatchObject({
      type: 'mcp_call',
      server_label: 'eurus',
      name: 'weather__forecast',
      error: null,
    });
    expect(JSON.parse(callItem?.type === 'mcp_call' ? callItem.arguments : '')).toEqual({ city: 'Lyon' });
    expect(response.output_text).toMatch(/temperature c 21/);
  });

  it('an mcp tool with a server_url runs on that server, with the tool’s headers', async () => {
    const openai = new OpenAI({ baseURL: `${model}/v1`, apiKey: servers.adminKey, maxRetries: 0 });
    const response = await openai.responses.create({
      model: 'queen',
      input: 'What is the weather forecast for Lyon?',
      tools: [
        {
          type: 'mcp',
          server_label: 'wx',
          server_url: weather.url,
          headers: { Authorization: 'Bearer inline_9' },
          allowed_tools: ['forecast', 'whoami'],
        },
      ],
      tool_choice: { type: 'mcp', server_label: 'wx', name: 'whoami' },
    });
    const listed = response.output[0];
    expect(listed?.type === 'mcp_list_tools' ? listed.tools.map((t) => t.name) : []).toEqual([
      'forecast',
      'whoami',
    ]);
    const callItem = response.output.find((o) => o.type === 'mcp_call');
    expect(callItem).toMatchObject({
      server_label: 'wx',
      name: 'whoami',
      output: 'Bearer inline_9',
      error: null,
    });
    // the headers are not shown back, nor stored
    expect(JSON.stringify(response)).not.toContain('inline_9"}');
    expect(JSON.stringify(response.tools)).not.toContain('inline_9');
    const res = await call('POST', '/v1/responses', {
      model: 'queen',
      input: 'Hi',
      tools: [{ type: 'mcp', server_label: 'eurus', server_url: weather.url }],
    });
    expect(res.status).toBe(400);
  });
});
