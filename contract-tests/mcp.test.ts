// The MCP tool hub at /v1/mcp through the official MCP SDK client (Streamable HTTP), and the
// hub as the `mcp` tool of /v1/responses through the official OpenAI SDK: tools listed and
// called on the caller's key (the directory's scopes and metering apply), the agents loop that
// calls the hub's search and answers from its results, every streamed event valid.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { componentValidator, explain } from './support/spec.ts';
import { startTestServers, storages, type TestServers } from './support/server.ts';

async function connect(url: string, key: string): Promise<Client> {
  const client = new Client({ name: 'contract-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/v1/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

interface SearchResult {
  interpreted: {
    q: string | null;
    place: { name: string; country: string; kind: string; radius_km: number } | null;
    corrections: { from: string; to: string }[];
  } | null;
  near: { resolved: string; lat: number; lon: number } | null;
  results: {
    id: string;
    name: string;
    address: string;
    district: string | null;
    distance_km: number | null;
    activities: string[];
  }[];
}

describe.each(await storages())('the MCP tool hub on %s', (storage) => {
  let servers: TestServers;
  let model: string;
  let directory: string;
  const mint = async (scopes: string[]) => {
    const res = await fetch(`${model}/v1/keys`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${servers.adminKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: `mcp ${scopes.join(' ')}`, scopes }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { secret: string }).secret;
  };

  beforeAll(async () => {
    servers = await startTestServers(storage, { env: { DEMO_LISTINGS: '2000' } });
    model = servers.urls.model ?? '';
    directory = servers.urls.directory ?? '';
  }, 240_000);
  afterAll(async () => servers?.stop());

  it('lists its four tools and calls them with the MCP SDK client, on the current protocol revision', async () => {
    const client = await connect(model, servers.adminKey);
    expect(client.getServerVersion()?.name).toBe('eurus-hub');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'search_directory',
      'get_place_details',
      'geocode',
      'reverse_geocode',
    ]);
    for (const tool of tools) expect(tool.inputSchema.type).toBe('object');

    const geocoded = await client.callTool({ name: 'geocode', arguments: { query: 'München', limit: 1 } });
    expect(geocoded.isError).toBeFalsy();
    const munich = (geocoded.structuredContent as { results: { lat: number; lon: number; name: string }[] })
      .results[0];
    expect(munich?.name).toBe('München');

    const searched = await client.callTool({
      name: 'search_directory',
      arguments: { query: 'bakery', near: 'Marienplatz, Munich', radius_km: 500, limit: 3 },
    });
    expect(searched.isError).toBeFalsy();
    const result = searched.structuredContent as unknown as SearchResult;
    // "Marienplatz, Munich" is not in the gazetteer; its town is
    expect(result.near).toMatchObject({
      resolved: 'München, Bayern, Germany',
      lat: munich?.lat,
      lon: munich?.lon,
    });
    expect(result.results.length).toBeGreaterThan(0);
    expect(result.results.length).toBeLessThanOrEqual(3);
    const text = (searched.content as { type: string; text: string }[])[0]?.text ?? '';
    expect(JSON.parse(text)).toEqual(result);

    const first = result.results[0];
    const details = await client.callTool({ name: 'get_place_details', arguments: { id: first?.id } });
    expect((details.structuredContent as { name: string }).name).toBe(first?.name);
    const reverse = await client.callTool({
      name: 'reverse_geocode',
      arguments: { lat: munich?.lat ?? 0, lon: munich?.lon ?? 0, limit: 2 },
    });
    expect(reverse.isError).toBeFalsy();
    await client.close();
  });

  it('search_directory reads a place out of the query, a city by any name or a district, and says what it understood', async () => {
    const client = await connect(model, servers.adminKey);
    const { tools } = await client.listTools();
    const schema = tools.find((t) => t.name === 'search_directory')!.inputSchema as {
      properties: Record<string, { type: string; description: string }>;
    };
    expect(schema.properties['interpret']?.type).toBe('boolean');
    expect(schema.properties['city']?.description).toMatch(/any of its names.*districts included.*district/s);
    const search = async (args: Record<string, unknown>) => {
      const res = await client.callTool({ name: 'search_directory', arguments: args });
      expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
      return res.structuredContent as unknown as SearchResult;
    };

    // the demo's roofer in Vienna (Steiner Dachdecker, Donaustadt), asked for in Portuguese
    for (const query of ['Dachdecker in Wien', 'roofer Vienna', 'telhados em Viena']) {
      const found = await search({ query, limit: 5 });
      expect(found.interpreted?.place, query).toMatchObject({
        name: 'Wien',
        country: 'AT',
        kind: 'municipality',
      });
      expect(found.interpreted?.q).toBe(query.split(' ')[0]);
      expect(found.results.map((r) => r.name)).toContain('Steiner Dachdecker');
      for (const r of found.results)
        expect(r.distance_km).toBeLessThanOrEqual(found.interpreted!.place!.radius_km);
    }
    // a misspelt trade, corrected and said
    const typo = await search({ query: 'Dachdekcer in Wien', limit: 5 });
    expect(typo.interpreted?.corrections).toEqual([{ from: 'Dachdekcer', to: 'dachdecker' }]);
    expect(typo.results.map((r) => r.name)).toContain('Steiner Dachdecker');
    // interpret: false searches the words as typed, nowhere in particular
    const typed = await search({ query: 'Dachdecker in Wien', interpret: false, limit: 5 });
    expect(typed.interpreted).toBeNull();
    expect(typed.results.every((r) => r.distance_km === null)).toBe(true);

    // city by another language's name takes in the districts; a district is itself
    const vienna = await search({ query: 'Bestattungen', city: 'Vienna', limit: 5 });
    expect(vienna.results.map((r) => [r.name, r.district])).toEqual(
      expect.arrayContaining([
        ['Bestattungen Donaustadt', 'Donaustadt'],
        ['Bestattungen Favoriten', 'Favoriten'],
      ]),
    );
    const donaustadt = await search({ query: 'Bestattungen', city: 'Donaustadt', limit: 5 });
    expect(donaustadt.results.map((r) => r.name)).toContain('Bestattungen Donaustadt');
    expect(donaustadt.results.every((r) => r.district === 'Donaustadt')).toBe(true);

    // an unknown city: the directory's error, with the nearest names
    const unknown = await client.callTool({
      name: 'search_directory',
      arguments: { query: 'bakery', city: 'Wiem' },
    });
    expect(unknown.isError).toBe(true);
    expect((unknown.content as { text: string }[])[0]?.text).toMatch(/400.*Wien.*\(unknown_city\)/);
    await client.close();
  });

  it('fails a call with a clear message: arguments against the schema, an unknown tool, the directory refusing the key', async () => {
    const client = await connect(model, servers.adminKey);
    const bad = await client.callTool({ name: 'search_directory', arguments: { query: 5 } });
    expect(bad.isError).toBe(true);
    expect((bad.content as { text: string }[])[0]?.text).toBe(
      "Invalid arguments for search_directory: 'query' must be string.",
    );
    await expect(client.callTool({ name: 'teleport', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool: teleport') as unknown as string,
    });
    await client.close();

    // the hub needs `agents`; each tool needs the directory's own scope on the same key
    const agentsOnly = await connect(model, await mint(['agents']));
    const refused = await agentsOnly.callTool({ name: 'search_directory', arguments: { query: 'bakery' } });
    expect(refused.isError).toBe(true);
    expect((refused.content as { text: string }[])[0]?.text).toMatch(/403.*lacks the scope 'search'/);
    await agentsOnly.close();
    await expect(connect(model, await mint(['chat', 'search']))).rejects.toThrow(/lacks the scope 'agents'/);
  });

  it('speaks the transport: 405 on GET, JSON for a plain Accept, 202 for a notification, 401 without a key', async () => {
    const headers = { Authorization: `Bearer ${servers.adminKey}`, 'Content-Type': 'application/json' };
    expect((await fetch(`${model}/v1/mcp`, { headers })).status).toBe(405);
    const plain = await fetch(`${model}/v1/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(plain.status).toBe(200);
    expect(((await plain.json()) as { result: { tools: unknown[] } }).result.tools).toHaveLength(4);
    const notification = await fetch(`${model}/v1/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    expect(notification.status).toBe(202);
    const anonymous = await fetch(`${model}/v1/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(anonymous.status).toBe(401);
  });

  it('bills hub calls on the directory, on the caller key', async () => {
    const key = await mint(['agents', 'search', 'places']);
    const client = await connect(model, key);
    for (let i = 0; i < 3; i++)
      await client.callTool({ name: 'search_directory', arguments: { query: 'plumber' } });
    await client.close();
    const today = new Date().toISOString().slice(0, 10);
    const keyId = await fetch(`${model}/v1/keys?limit=100`, {
      headers: { Authorization: `Bearer ${servers.adminKey}` },
    })
      .then((r) => r.json() as Promise<{ data: { id: string; name: string }[] }>)
      .then((page) => page.data.find((k) => k.name === 'mcp agents search places')?.id);
    const report = await fetch(
      `${directory}/v1/usage?from=${today}&to=${today}&group_by=interface&key_id=${keyId}`,
      {
        headers: { Authorization: `Bearer ${servers.adminKey}` },
      },
    ).then((r) => r.json() as Promise<{ data: { results: { interface: string; requests: number }[] }[] }>);
    const search = report.data.flatMap((b) => b.results).find((r) => r.interface === 'search');
    expect(search?.requests).toBe(3);
  });

  it('runs the hub as the mcp tool of an agents response: search, then an answer from its results', async () => {
    const openai = new OpenAI({ baseURL: `${model}/v1`, apiKey: servers.adminKey, maxRetries: 0 });
    const response = await openai.responses.create({
      model: 'agents',
      input: 'Find three bakeries open now near Marienplatz in Munich',
      tools: [{ type: 'mcp', server_label: 'eurus', require_approval: 'never' }],
    });
    expect(response.status).toBe('completed');
    const [listed, call, message] = response.output;
    expect(listed?.type).toBe('mcp_list_tools');
    expect(call).toMatchObject({
      type: 'mcp_call',
      server_label: 'eurus',
      name: 'search_directory',
      error: null,
    });
    const args = JSON.parse(call?.type === 'mcp_call' ? call.arguments : '') as Record<string, unknown>;
    expect(args).toMatchObject({ query: 'bakeries', near: 'Marienplatz, Munich', open_now: true, limit: 3 });
    const output = JSON.parse(call?.type === 'mcp_call' ? (call.output ?? '') : '') as SearchResult;
    expect(message?.type).toBe('message');
    const answer = response.output_text;
    if (output.results.length === 0) expect(answer).toMatch(/search_directory: no results/);
    for (const hit of output.results) expect(answer).toContain(hit.name);
    const steps = (response as unknown as { steps: { tool_calls: { name: string; status: string }[] }[] })
      .steps;
    expect(steps.map((s) => s.tool_calls)).toEqual([
      [
        {
          type: 'mcp',
          name: 'eurus.search_directory',
          status: 'completed',
          duration_ms: expect.any(Number) as number,
        },
      ],
      [],
    ]);
    // two steps: 2 x 0.04 EUR and the tokens
    const usage = response.usage as unknown as { cost_eur: string; steps: number };
    expect(usage.steps).toBe(2);
    expect(Math.round(Number(usage.cost_eur) * 1e9)).toBeGreaterThan(80_000_000);
  });

  it('streams the mcp events in order, each valid against the spec, and the SDK helper takes them', async () => {
    const res = await fetch(`${model}/v1/responses`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${servers.adminKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        model: 'queen',
        stream: true,
        input: 'Find a bakery near München',
        tools: [{ type: 'mcp', server_label: 'eurus', allowed_tools: ['search_directory'] }],
      }),
    });
    const events = (await res.text())
      .split('\n\n')
      .filter((b) => b.startsWith('event:'))
      .map(
        (b) =>
          JSON.parse(/^data: (.+)$/m.exec(b)?.[1] ?? 'null') as { type: string; sequence_number: number },
      );
    const validate = componentValidator('model', 'ResponseStreamEventData');
    for (const event of events) expect(validate(event), `${event.type}: ${explain(validate)}`).toBe(true);
    const types = events.map((e) => e.type).filter((t) => !t.endsWith('.delta'));
    expect(types.slice(0, 12)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.mcp_list_tools.in_progress',
      'response.mcp_list_tools.completed',
      'response.output_item.done',
      'response.output_item.added',
      'response.mcp_call_arguments.done',
      'response.mcp_call.in_progress',
      'response.mcp_call.completed',
      'response.output_item.done',
      'response.output_item.added',
    ]);
    expect(types.at(-1)).toBe('response.completed');

    const openai = new OpenAI({ baseURL: `${model}/v1`, apiKey: servers.adminKey, maxRetries: 0 });
    const stream = openai.responses.stream({
      model: 'queen',
      input: 'Find a bakery near München',
      tools: [{ type: 'mcp', server_label: 'eurus', allowed_tools: ['search_directory'] }],
    });
    const final = await stream.finalResponse();
    const listed = final.output[0];
    expect(listed?.type === 'mcp_list_tools' ? listed.tools.map((t) => t.name) : []).toEqual([
      'search_directory',
    ]);
    expect(final.output.map((o) => o.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
  });

  it('refuses an mcp tool it cannot serve with a clear 4xx', async () => {
    const post = (body: object, key = servers.adminKey) =>
      fetch(`${model}/v1/responses`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (r) => ({
        status: r.status,
        error: ((await r.json()) as { error: { code: string } }).error,
      }));
    expect(
      await post({ model: 'queen', input: 'Hi', tools: [{ type: 'mcp', server_label: 'elsewhere' }] }),
    ).toMatchObject({
      status: 400,
      error: { code: 'unknown_mcp_server' },
    });
    expect(
      await post(
        { model: 'queen', input: 'Hi', tools: [{ type: 'mcp', server_label: 'eurus' }] },
        await mint(['chat']),
      ),
    ).toMatchObject({ status: 403, error: { code: 'insufficient_scope' } });
  });
});

describe('the hub in /v1/responses: bounds and failures', () => {
  let servers: TestServers;
  let model: string;
  let openai: OpenAI;

  beforeAll(async () => {
    // king replays its latency profile (45 tokens/s), so a long answer is still running when the client leaves
    servers = await startTestServers('pglite', {
      env: {
        DEMO_LISTINGS: '500',
        MODEL_ENGINES: JSON.stringify({ king: { type: 'reference', latency: 'p50' } }),
      },
    });
    model = servers.urls.model ?? '';
    openai = new OpenAI({ baseURL: `${model}/v1`, apiKey: servers.adminKey, maxRetries: 0 });
  }, 240_000);
  afterAll(async () => servers?.stop());

  it('max_tool_calls: calls beyond it are dropped and the model answers without tools', async () => {
    const tools: OpenAI.Responses.Tool[] = [
      { type: 'mcp', server_label: 'eurus', require_approval: 'never' },
    ];
    const input = 'Geocode Lyon and search the directory for bakeries in Lyon';
    const free = await openai.responses.create({ model: 'agents', input, tools });
    const calls = (r: OpenAI.Responses.Response) => r.output.filter((o) => o.type === 'mcp_call').length;
    expect(calls(free)).toBeGreaterThan(1);
    const bounded = await openai.responses.create({ model: 'agents', input, tools, max_tool_calls: 1 });
    expect(calls(bounded)).toBe(1);
    expect(bounded.status).toBe('completed');
    expect(bounded.output.at(-1)?.type).toBe('message');
  });

  it('a hub call the directory refuses (no search scope) fails that call, not the response', async () => {
    const key = await fetch(`${model}/v1/keys`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${servers.adminKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'agents only', scopes: ['agents'] }),
    }).then((r) => r.json() as Promise<{ secret: string }>);
    const asAgents = new OpenAI({ baseURL: `${model}/v1`, apiKey: key.secret, maxRetries: 0 });
    const response = await asAgents.responses.create({
      model: 'agents',
      input: 'Find bakeries near München',
      tools: [{ type: 'mcp', server_label: 'eurus', require_approval: 'never' }],
    });
    expect(response.status).toBe('completed');
    const call = response.output.find((o) => o.type === 'mcp_call');
    expect(call).toMatchObject({ status: 'failed', output: null });
    expect(call?.type === 'mcp_call' ? call.error : '').toMatch(/403.*lacks the scope '(search|places)'/);
    // the model read the error and answered
    expect(response.output_text).toMatch(/lacks the scope/);
  });

  it('a client that leaves mid-stream stops the run; the stored response says cancelled and usage bills what ran', async () => {
    const controller = new AbortController();
    const res = await fetch(`${model}/v1/responses`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${servers.adminKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        model: 'king',
        input: 'Explain the history of the Hanseatic League.',
        stream: true,
      }),
      signal: controller.signal,
    });
    const reader = res.body?.getReader();
    let seen = '';
    // leave after a few words of the answer
    while ((seen.match(/^event: response\.output_text\.delta$/gm) ?? []).length < 3) {
      seen += new TextDecoder().decode((await reader?.read())?.value);
    }
    const id = /"id":"(resp_[0-9A-Za-z]{26})"/.exec(seen)?.[1] ?? '';
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stored = await openai.responses.retrieve(id);
    expect(stored.status).toBe('cancelled');
    // billed for what was generated before the client left: some of the answer, not all of it
    const usage = stored.usage;
    expect(usage?.input_tokens).toBeGreaterThan(0);
    expect(usage?.output_tokens).toBeGreaterThan(0);
    expect(usage?.output_tokens).toBeLessThan(60);
    const today = new Date().toISOString().slice(0, 10);
    const report = await fetch(`${model}/v1/usage?from=${today}&to=${today}&group_by=model&model=king`, {
      headers: { Authorization: `Bearer ${servers.adminKey}` },
    }).then((r) => r.json() as Promise<{ totals: { output_tokens: number; requests: number } }>);
    expect(report.totals).toMatchObject({ requests: 1, output_tokens: usage?.output_tokens });
  });
});
