// /v1/responses through the official OpenAI SDK for JavaScript (unchanged but for baseURL), on
// both storages: buffered, streamed (every raw event validated against the spec and in the
// official order; the SDK's `responses.stream` helper parsing every event), function tools
// round trip, previous_response_id, store, input items, delete, and the 4xx of bad input.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ended } from './support/responses.ts';
import { componentValidator, explain } from './support/spec.ts';
import { startTestServers, storages, type TestServers } from './support/server.ts';

const WEATHER: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather for a city.',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city'],
    additionalProperties: false,
  },
  strict: false,
};

interface RawEvent {
  event: string;
  data: Record<string, unknown> & { type: string; sequence_number: number };
}

/** POSTs a streamed request and parses its server-sent events by hand. */
async function rawStream(base: string, key: string, body: object): Promise<RawEvent[]> {
  const res = await fetch(`${base}/v1/responses`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '' && !block.startsWith(':'))
    .map((block) => {
      const event = /^event: (.+)$/m.exec(block)?.[1] ?? '';
      const data = JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? 'null') as RawEvent['data'];
      return { event, data };
    });
}

async function mintKey(base: string, adminKey: string, scopes: string[]): Promise<string> {
  const res = await fetch(`${base}/v1/keys`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: `responses ${scopes.join(' ')}`, scopes }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { secret: string }).secret;
}

describe.each(await storages())('/v1/responses on %s', (storage) => {
  let servers: TestServers;
  let openai: OpenAI;
  let base: string;

  beforeAll(async () => {
    servers = await startTestServers(storage, { which: ['model'] });
    base = servers.urls.model ?? '';
    openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: servers.adminKey, maxRetries: 0 });
  });
  afterAll(async () => servers?.stop());

  it('answers buffered with a Response the spec describes, stored and readable', async () => {
    const response = await openai.responses.create({
      model: 'queen',
      instructions: 'You are a concise assistant for a travel agency.',
      input: 'What are the best months to visit the Azores for whale watching?',
      metadata: { ticket: 'T-1' },
    });
    // the SDK adds output_text, which the wire does not carry
    const wire: Partial<typeof response> = { ...response };
    delete wire.output_text;
    const validate = componentValidator('model', 'Response');
    expect(validate(wire), explain(validate)).toBe(true);
    expect(response.status).toBe('completed');
    expect(response.output_text).toMatch(/Azores/);
    expect(response.usage?.total_tokens).toBe(
      (response.usage?.input_tokens ?? 0) + (response.usage?.output_tokens ?? 0),
    );
    const again = await openai.responses.retrieve(response.id);
    expect(again.output).toEqual(response.output);
    const items = await openai.responses.inputItems.list(response.id);
    expect(items.data).toHaveLength(1);
    expect(items.data[0]).toMatchObject({
      type: 'message',
      role: 'user',
      content: [
        { type: 'input_text', text: 'What are the best months to visit the Azores for whale watching?' },
      ],
    });
  });

  it('streams the response.* events in the official order, each valid against the spec', async () => {
    const events = await rawStream(base, servers.adminKey, {
      model: 'prince',
      input: 'Say hello in French.',
    });
    const validate = componentValidator('model', 'ResponseStreamEventData');
    for (const [i, { event, data }] of events.entries()) {
      expect(validate(data), `${data.type}: ${explain(validate)}`).toBe(true);
      expect(event).toBe(data.type);
      expect(data.sequence_number).toBe(i);
    }
    const types = events.map((e) => e.data.type);
    const deltas = types.filter((t) => t === 'response.output_text.delta').length;
    expect(deltas).toBeGreaterThan(2);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...Array<string>(deltas).fill('response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const done = events.find((e) => e.data.type === 'response.output_text.done')?.data.text;
    const joined = events
      .filter((e) => e.data.type === 'response.output_text.delta')
      .map((e) => e.data.delta)
      .join('');
    expect(joined).toBe(done);
    const completed = events.at(-1)?.data.response as OpenAI.Responses.Response;
    expect(completed.status).toBe('completed');
    // the stored response replays its events: every one valid, the same output, from a sequence number
    const stored = completed.id;
    const replay = await fetch(`${base}/v1/responses/${stored}?stream=true`, {
      headers: { Authorization: `Bearer ${servers.adminKey}` },
    });
    expect(replay.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const again = (await replay.text())
      .split('\n\n')
      .filter((b) => b.startsWith('event:'))
      .map((b) => JSON.parse(/^data: (.+)$/m.exec(b)?.[1] ?? 'null') as RawEvent['data']);
    for (const event of again) expect(validate(event), `${event.type}: ${explain(validate)}`).toBe(true);
    expect(again.at(-1)?.type).toBe('response.completed');
    expect((again.at(-1)?.response as OpenAI.Responses.Response).output).toEqual(completed.output);
    const sdk = await openai.responses.retrieve(stored, { stream: true, starting_after: 3 });
    const numbers: number[] = [];
    for await (const event of sdk) numbers.push(event.sequence_number);
    expect(numbers[0]).toBe(4);
    expect(numbers.at(-1)).toBe(again.length - 1);
  });

  it('the SDK stream helper parses every event, for text and for function calls', async () => {
    const stream = openai.responses.stream({ model: 'queen', input: 'Describe the harbour of Porto.' });
    const seen: string[] = [];
    let text = '';
    stream.on('response.output_text.delta', (event) => {
      text += event.delta;
    });
    for await (const event of stream) seen.push(event.type);
    const final = await stream.finalResponse();
    expect(seen[0]).toBe('response.created');
    expect(seen.at(-1)).toBe('response.completed');
    expect(final.output_text).toBe(text);

    const calls = openai.responses.stream({
      model: 'queen',
      input: 'What is the weather in Lisbon right now?',
      tools: [WEATHER],
    });
    let args = '';
    calls.on('response.function_call_arguments.delta', (event) => {
      args += event.delta;
    });
    const withCall = await calls.finalResponse();
    const call = withCall.output.find((o) => o.type === 'function_call');
    expect(call?.type === 'function_call' ? call.arguments : '').toBe(args);
    expect(JSON.parse(args)).toMatchObject({ city: 'Lisbon' });
  });

  it('round-trips a function tool with previous_response_id, and with the whole conversation as input', async () => {
    const first = await openai.responses.create({
      model: 'queen',
      input: 'What is the weather in Lisbon right now?',
      tools: [WEATHER],
      // our extension, as extra_body would send it
      ...({ seed: 11 } as object),
    });
    const call = first.output.find(
      (o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call',
    );
    expect(call?.name).toBe('get_weather');
    expect(JSON.parse(call?.arguments ?? '')).toEqual({ city: 'Lisbon' });
    const output = {
      type: 'function_call_output' as const,
      call_id: call?.call_id ?? '',
      output: '{"temperature_c":19,"conditions":"sunny"}',
    };
    const second = await openai.responses.create({
      model: 'queen',
      previous_response_id: first.id,
      tools: [WEATHER],
      input: [output],
    });
    expect(second.output_text).toMatch(/get_weather: temperature c 19 and conditions sunny/);
    const whole = await openai.responses.create({
      model: 'queen',
      store: false,
      tools: [WEATHER],
      input: [
        { role: 'user', content: 'What is the weather in Lisbon right now?' },
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        output,
      ],
    });
    expect(whole.output_text).toMatch(/conditions sunny/);
    // not stored: nothing to read or continue
    await expect(openai.responses.retrieve(whole.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      openai.responses.create({ model: 'queen', previous_response_id: whole.id, input: 'And tomorrow?' }),
    ).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found' });
  });

  it('pages input items with after and with cursor, both orders', async () => {
    const input = ['one', 'two', 'three', 'four', 'five'].map((w) => ({
      role: 'user' as const,
      content: `Word ${w}.`,
    }));
    const response = await openai.responses.create({ model: 'prince', input });
    const asc: string[] = [];
    for await (const item of openai.responses.inputItems.list(response.id, { order: 'asc', limit: 2 })) {
      asc.push(item.type === 'message' ? (item.content[0] as { text: string }).text : '');
    }
    expect(asc).toEqual(input.map((i) => i.content));
    const res = await fetch(`${base}/v1/responses/${response.id}/input_items?limit=3`, {
      headers: { Authorization: `Bearer ${servers.adminKey}` },
    });
    const page = (await res.json()) as { data: { id: string }[]; next_cursor: string; has_more: boolean };
    expect(page.has_more).toBe(true);
    expect(res.headers.get('link')).toContain(`cursor=${page.next_cursor}`);
    const next = await fetch(
      `${base}/v1/responses/${response.id}/input_items?limit=3&cursor=${page.next_cursor}`,
      {
        headers: { Authorization: `Bearer ${servers.adminKey}` },
      },
    );
    const rest = (await next.json()) as { data: { id: string }[]; has_more: boolean };
    expect(rest.has_more).toBe(false);
    expect(rest.data).toHaveLength(2);
  });

  it('deletes a stored response: then 404 everywhere', async () => {
    const response = await openai.responses.create({ model: 'prince', input: 'Hello there.' });
    expect(await openai.responses.delete(response.id)).toBeDefined();
    await expect(openai.responses.retrieve(response.id)).rejects.toMatchObject({ status: 404 });
    await expect(openai.responses.inputItems.list(response.id)).rejects.toMatchObject({ status: 404 });
    await expect(openai.responses.delete(response.id)).rejects.toMatchObject({ status: 404 });
  });

  it('refuses bad input with a clear 4xx', async () => {
    const bad = async (body: object) => {
      const res = await fetch(`${base}/v1/responses`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${servers.adminKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      return {
        status: res.status,
        error: ((await res.json()) as { error: { code: string; param: string } }).error,
      };
    };
    expect(
      await bad({
        model: 'queen',
        input: [{ type: 'function_call_output', call_id: 'call_x', output: '1' }],
      }),
    ).toMatchObject({
      status: 400,
      error: { code: 'unknown_call_id' },
    });
    expect(
      await bad({
        model: 'queen',
        input: 'Hi',
        tools: [WEATHER],
        tool_choice: { type: 'function', name: 'nope' },
      }),
    ).toMatchObject({
      status: 400,
      error: { param: 'tool_choice' },
    });
    expect(await bad({ model: 'queen', input: 'Hi', tools: [WEATHER, WEATHER] })).toMatchObject({
      status: 400,
      error: { code: 'duplicate_tool' },
    });
    expect(await bad({ model: 'queen', input: 'Hi', tool_choice: 'required' })).toMatchObject({
      status: 400,
    });
    expect(await bad({ model: 'prince', input: 'word '.repeat(17_000) })).toMatchObject({
      status: 400,
      error: { code: 'context_length_exceeded' },
    });
    expect(await bad({ model: 'queen' })).toMatchObject({ status: 400, error: { param: 'input' } });
    expect(await bad({ model: 'voice', input: 'Hi' })).toMatchObject({ status: 400 });
    expect(await bad({ model: 'queen', input: 'Hi', background: true, stream: true })).toMatchObject({
      status: 400,
      error: { param: 'stream' },
    });
    expect(await bad({ model: 'queen', input: 'Hi', background: true, store: false })).toMatchObject({
      status: 400,
    });
  });

  it('runs background: true as a job: queued at once, polled, streamed after a sequence number', async () => {
    const queued = await openai.responses.create({
      model: 'queen',
      input: 'What are the best months to visit the Azores for whale watching?',
      background: true,
    });
    expect(queued).toMatchObject({ status: 'queued', background: true, output: [] });
    const done = await ended(openai, queued.id, 20_000);
    expect(done.status).toBe('completed');
    expect(done.output_text.length).toBeGreaterThan(0);
    const wire: Partial<typeof done> = { ...done };
    delete wire.output_text;
    const validate = componentValidator('model', 'Response');
    expect(validate(wire), explain(validate)).toBe(true);
    // its events, replayed from the stored response, after a sequence number
    const events: Array<{ type: string; sequence_number: number }> = [];
    for await (const event of await openai.responses.retrieve(queued.id, {
      stream: true,
      starting_after: 1,
    })) {
      events.push(event);
    }
    expect(events[0]?.sequence_number).toBe(2);
    expect(events.at(-1)?.type).toBe('response.completed');
    // a stream opened while it runs waits for it
    const again = await openai.responses.create({ model: 'queen', input: 'Name a river.', background: true });
    const streamed: string[] = [];
    for await (const event of await openai.responses.retrieve(again.id, { stream: true })) {
      streamed.push(event.type);
    }
    expect(streamed[0]).toBe('response.created');
    expect(streamed.at(-1)).toBe('response.completed');
    // a finished background response is not cancelled: it answers as it is
    expect((await openai.responses.cancel(queued.id)).status).toBe('completed');
  });

  it('needs scope chat for text models and agents for the agents runtime', async () => {
    const chatKey = await mintKey(base, servers.adminKey, ['chat']);
    const agentsKey = await mintKey(base, servers.adminKey, ['agents']);
    const asChat = new OpenAI({ baseURL: `${base}/v1`, apiKey: chatKey, maxRetries: 0 });
    const asAgents = new OpenAI({ baseURL: `${base}/v1`, apiKey: agentsKey, maxRetries: 0 });
    const mine = await asChat.responses.create({ model: 'prince', input: 'Hello.' });
    await expect(asChat.responses.create({ model: 'agents', input: 'Hello.' })).rejects.toMatchObject({
      status: 403,
      code: 'insufficient_scope',
    });
    await expect(asAgents.responses.create({ model: 'prince', input: 'Hello.' })).rejects.toMatchObject({
      status: 403,
    });
    // another project's response is not found; the same project's is, with either scope
    expect((await asAgents.responses.retrieve(mine.id)).id).toBe(mine.id);
    const other = await fetch(`${base}/v1/projects`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${servers.adminKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'elsewhere' }),
    }).then((r) => r.json() as Promise<{ id: string }>);
    const foreign = await fetch(`${base}/v1/keys`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${servers.adminKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'foreign', scopes: ['chat'], project_id: other.id }),
    }).then((r) => r.json() as Promise<{ secret: string }>);
    const asForeign = new OpenAI({ baseURL: `${base}/v1`, apiKey: foreign.secret, maxRetries: 0 });
    await expect(asForeign.responses.retrieve(mine.id)).rejects.toMatchObject({ status: 404 });
  });
});

describe('model "agents"', () => {
  let servers: TestServers;
  let openai: OpenAI;
  let base: string;

  beforeAll(async () => {
    servers = await startTestServers('pglite', { which: ['model'] });
    base = servers.urls.model ?? '';
    openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: servers.adminKey, maxRetries: 0 });
  });
  afterAll(async () => servers?.stop());

  it('records each step and bills 0.04 EUR a step plus the text model tokens, to the nano-EUR in GET /v1/usage', async () => {
    const first = await openai.responses.create({
      model: 'agents',
      input: 'What is the weather in Lisbon right now?',
      tools: [WEATHER],
    });
    type Steps = {
      steps: {
        model: string;
        input_tokens: number;
        output_tokens: number;
        cost: string;
        tool_calls: unknown[];
      }[];
    };
    const steps1 = (first as unknown as Steps).steps;
    expect(steps1).toHaveLength(1);
    expect(steps1[0]).toMatchObject({
      model: 'queen',
      tool_calls: [{ type: 'function', name: 'get_weather', status: 'requested' }],
    });
    const call = first.output.find((o) => o.type === 'function_call');
    const second = await openai.responses.create({
      model: 'agents',
      previous_response_id: first.id,
      tools: [WEATHER],
      input: [
        {
          type: 'function_call_output',
          call_id: call?.type === 'function_call' ? call.call_id : '',
          output: '{"temperature_c":21}',
        },
      ],
      metadata: { agents_model: 'king' },
    });
    expect(second.output_text).toMatch(/temperature c 21/);
    const steps2 = (second as unknown as Steps).steps;
    expect(steps2.map((s) => s.model)).toEqual(['king']);

    // each step: 0.04 EUR + input tokens at the model's input price + output tokens at its output price
    const price = { queen: [500, 2000], king: [3000, 12000] } as Record<string, [number, number]>;
    let expected = 0;
    for (const step of [...steps1, ...steps2]) {
      const [input, output] = price[step.model] ?? [0, 0];
      const nano = 40_000_000 + step.input_tokens * input + step.output_tokens * output;
      expect(Math.round(Number(step.cost) * 1e9)).toBe(nano);
      expected += nano;
    }
    const cost = (r: unknown) =>
      Math.round(Number((r as { usage: { cost_eur: string } }).usage.cost_eur) * 1e9);
    expect(cost(first) + cost(second)).toBe(expected);
    expect((first.usage as unknown as { steps: number }).steps).toBe(1);

    const today = new Date().toISOString().slice(0, 10);
    const res = await fetch(`${base}/v1/usage?from=${today}&to=${today}&group_by=model&model=agents`, {
      headers: { Authorization: `Bearer ${servers.adminKey}` },
    });
    const report = (await res.json()) as { totals: { steps: number; cost: string; requests: number } };
    expect(report.totals.requests).toBe(2);
    expect(report.totals.steps).toBe(2);
    expect(Math.round(Number(report.totals.cost) * 1e9)).toBe(expected);
  });
});
