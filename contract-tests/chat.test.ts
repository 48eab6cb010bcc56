// Chat completions against the real model API: buffered and streamed through the generated
// SDKs, every chunk checked against the chunk schema (the validator does not check streams),
// billing identical both ways, and a client that leaves mid-stream billed for what it got.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../generated/model/client/client/index.ts';
import { createChatCompletion } from '../generated/model/client/sdk.gen.ts';
import { createChatCompletion as streamChatCompletion } from '../generated/model/stream/sdk.gen.ts';
import { createClient as createStreamClient } from '../generated/model/stream/client/index.ts';
import { type Storage, startTestServers, storages, type TestServers } from './support/server.ts';
import { componentValidator, explain, operations, responseValidator } from './support/spec.ts';
import { resetText } from '../src/limits/middleware.ts';
import { flushUsage } from '../src/platform/metering.ts';

const STORAGES = await storages();
const chatOp = operations('model').find((o) => o.operationId === 'createChatCompletion')!;
const question = 'How do I descale an espresso machine at home without damaging the boiler?';

async function rawStream(base: string, key: string, body: object) {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json',
    },
    body: JSON.stringify({ ...body, stream: true }),
  });
  return { res, text: await res.text() };
}

function events(text: string): string[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice(6));
}

describe.each(STORAGES)('chat completions on %s', (storage: Storage) => {
  let servers: TestServers;
  let base: string;
  beforeAll(async () => {
    servers = await startTestServers(storage, { which: ['model'] });
    base = servers.urls.model!;
  });
  afterAll(async () => servers?.stop());

  it('answers buffered JSON that matches the spec, from the prompt’s own words', async () => {
    const client = createClient({ baseUrl: base, auth: servers.adminKey });
    const res = await createChatCompletion({
      client,
      body: { model: 'queen', messages: [{ role: 'user', content: question }], seed: 7 },
    });
    expect(res.response?.status).toBe(200);
    const validate = responseValidator(chatOp, '200');
    expect(validate(res.data), explain(validate)).toBe(true);
    const text = res.data!.choices[0]!.message.content ?? '';
    expect(text.toLowerCase()).toMatch(/espresso|descal|boiler/);
    expect(res.data!.usage.prompt_tokens).toBeGreaterThan(10);
    // the key's requests a minute, then the model's tokens a minute the call reserved
    expect(res.response?.headers.get('ratelimit-policy')).toMatch(
      /^"requests";q=\d+;w=60, "tokens";q=\d+;w=60$/,
    );
    expect(res.response?.headers.get('ratelimit')).toMatch(/^"requests";r=\d+;t=\d+, "tokens";r=\d+;t=\d+$/);
    // the same numbers under OpenAI's names, which clients and routers written against it read
    const h = res.response!.headers;
    const [, rpm, tpm] = /"requests";q=(\d+);w=60, "tokens";q=(\d+)/.exec(h.get('ratelimit-policy')!)!;
    const [, requestsLeft, requestsReset, tokensLeft, tokensReset] =
      /"requests";r=(\d+);t=(\d+), "tokens";r=(\d+);t=(\d+)/.exec(h.get('ratelimit')!)!;
    expect({
      limitRequests: h.get('x-ratelimit-limit-requests'),
      remainingRequests: h.get('x-ratelimit-remaining-requests'),
      resetRequests: h.get('x-ratelimit-reset-requests'),
      limitTokens: h.get('x-ratelimit-limit-tokens'),
      remainingTokens: h.get('x-ratelimit-remaining-tokens'),
      resetTokens: h.get('x-ratelimit-reset-tokens'),
    }).toEqual({
      limitRequests: rpm,
      remainingRequests: requestsLeft,
      resetRequests: resetText(Number(requestsReset)),
      limitTokens: tpm,
      remainingTokens: tokensLeft,
      resetTokens: resetText(Number(tokensReset)),
    });
  });

  it('streams SSE chunks that match the chunk schema, ends with [DONE], and bills as buffered does', async () => {
    const body = {
      model: 'prince',
      messages: [{ role: 'user', content: question }],
      seed: 42,
      stream_options: { include_usage: true },
    };
    const { res, text } = await rawStream(base, servers.adminKey, body);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const data = events(text);
    expect(data.at(-1)).toBe('[DONE]');
    const validate = componentValidator('model', 'ChatCompletionChunk');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as Record<string, unknown>);
    for (const chunk of chunks) expect(validate(chunk), explain(validate)).toBe(true);
    const last = chunks.at(-1) as {
      choices: unknown[];
      usage: { prompt_tokens: number; completion_tokens: number };
    };
    expect(last.choices).toEqual([]);
    const client = createClient({ baseUrl: base, auth: servers.adminKey });
    const buffered = await createChatCompletion({
      client,
      body: { model: 'prince', messages: body.messages as never, seed: 42 },
    });
    expect(buffered.data!.usage.prompt_tokens).toBe(last.usage.prompt_tokens);
    expect(buffered.data!.usage.completion_tokens).toBe(last.usage.completion_tokens);
    const streamedText = chunks
      .flatMap((c) =>
        (c.choices as Array<{ delta: { content?: string } }>).map((ch) => ch.delta.content ?? ''),
      )
      .join('');
    expect(streamedText).toBe(buffered.data!.choices[0]!.message.content);
  });

  it('yields typed chunks through the generated streaming SDK', async () => {
    const client = createStreamClient({ baseUrl: base, auth: servers.adminKey });
    const { stream } = await streamChatCompletion({
      client,
      body: {
        model: 'queen',
        messages: [{ role: 'user', content: 'Name three Alpine passes.' }],
        stream: true,
      },
      sseMaxRetryAttempts: 0,
    });
    const received: unknown[] = [];
    for await (const event of stream) received.push(event);
    expect(received.at(-1)).toBe('[DONE]');
    expect(received.length).toBeGreaterThan(3);
  });

  it("takes a tool message with the tool's name, as LangChain sends its loop's second call", async () => {
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${servers.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'queen',
        messages: [
          { role: 'user', content: 'What is the weather in Lisbon?' },
          {
            role: 'assistant',
            content: '',
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Lisbon"}' },
              },
            ],
          },
          { role: 'tool', name: 'get_weather', tool_call_id: 'call_1', content: '21 °C and sunny' },
        ],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              parameters: { type: 'object', properties: { city: { type: 'string' } } },
            },
          },
        ],
      }),
    });
    const body = (await res.json()) as { usage?: { prompt_tokens: number } };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(responseValidator(chatOp, '200')(body)).toBe(true);
  });

  it('streams structured output in pieces, each a prefix of the JSON that ends schema-valid', async () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, plumbers: { type: 'integer' }, open: { type: 'boolean' } },
      required: ['city', 'plumbers', 'open'],
      additionalProperties: false,
    };
    const { res, text } = await rawStream(base, servers.adminKey, {
      model: 'queen',
      messages: [{ role: 'user', content: 'How many plumbers are there in Lisbon, and are they open?' }],
      response_format: { type: 'json_schema', json_schema: { name: 'count', schema, strict: true } },
    });
    expect(res.status).toBe(200);
    const deltas = events(text)
      .filter((e) => e !== '[DONE]')
      .map((e) => (JSON.parse(e) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content)
      .filter((c): c is string => typeof c === 'string' && c !== '');
    expect(deltas.length).toBeGreaterThan(2);
    const whole = deltas.join('');
    let sofar = '';
    for (const d of deltas) expect(whole.startsWith((sofar += d))).toBe(true);
    const parsed = JSON.parse(whole) as Record<string, unknown>;
    expect(Object.keys(parsed).sort()).toEqual(['city', 'open', 'plumbers']);
    expect(typeof parsed.city).toBe('string');
    expect(Number.isInteger(parsed.plumbers)).toBe(true);
  });

  it('answers 400 context_length_exceeded with both counts, before dispatch', async () => {
    const client = createClient({ baseUrl: base, auth: servers.adminKey });
    const res = await createChatCompletion({
      client,
      body: {
        model: 'prince',
        messages: [{ role: 'user', content: 'word '.repeat(17_000) }],
      },
    });
    expect(res.response?.status).toBe(400);
    expect(res.error).toMatchObject({ error: { code: 'context_length_exceeded', param: 'messages' } });
    expect((res.error as { error: { message: string } }).error.message).toMatch(/16000.*\d{5}|\d{5}.*16000/);
  });

  it('honours max_completion_tokens and stop', async () => {
    const client = createClient({ baseUrl: base, auth: servers.adminKey });
    const short = await createChatCompletion({
      client,
      body: {
        model: 'king',
        messages: [{ role: 'user', content: question }],
        max_completion_tokens: 5,
        seed: 1,
      },
    });
    expect(short.data!.choices[0]!.finish_reason).toBe('length');
    expect(short.data!.usage.completion_tokens).toBeLessThanOrEqual(5);
    const full = await createChatCompletion({
      client,
      body: { model: 'queen', messages: [{ role: 'user', content: question }], seed: 3 },
    });
    const word = (full.data!.choices[0]!.message.content ?? '').split(' ')[3]!;
    const stopped = await createChatCompletion({
      client,
      body: { model: 'queen', messages: [{ role: 'user', content: question }], seed: 3, stop: [word] },
    });
    expect(stopped.data!.choices[0]!.message.content).not.toContain(word);
    expect(stopped.data!.choices[0]!.finish_reason).toBe('stop');
  });

  it('bills a client that leaves mid-stream for what was generated, and records that it left', async () => {
    const controller = new AbortController();
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${servers.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'king',
        messages: [{ role: 'user', content: `Write a long essay. ${question}` }],
        stream: true,
        seed: 9,
      }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await new Promise((r) => setTimeout(r, 500));
    await flushUsage(servers.platform.db); // the record waits in the journal up to 50 ms
    const [row] = await servers.platform.db.query<{
      disconnected: boolean;
      streamed: boolean;
      output_tokens: number;
      cost_nano: number;
    }>(
      `select disconnected, streamed, output_tokens, cost_nano from usage_records where model = 'king' and disconnected`,
    );
    expect(row).toBeDefined();
    expect(row!.streamed).toBe(true);
    expect(row!.cost_nano).toBeGreaterThan(0);
    const full = await createChatCompletion({
      client: createClient({ baseUrl: base, auth: servers.adminKey }),
      body: {
        model: 'king',
        messages: [{ role: 'user', content: `Write a long essay. ${question}` }],
        seed: 9,
      },
    });
    expect(row!.output_tokens).toBeLessThan(full.data!.usage.completion_tokens);
  });
});
