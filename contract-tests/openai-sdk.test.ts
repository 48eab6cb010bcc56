// The official OpenAI SDK for JavaScript, unchanged but for baseURL, against the real model API.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServers, type TestServers } from './support/server.ts';

let servers: TestServers;
let openai: OpenAI;

beforeAll(async () => {
  servers = await startTestServers('pglite', { which: ['model'] });
  openai = new OpenAI({ baseURL: `${servers.urls.model}/v1`, apiKey: servers.adminKey, maxRetries: 0 });
});
afterAll(async () => servers?.stop());

describe('the official openai npm SDK', () => {
  it('lists and retrieves models', async () => {
    const ids: string[] = [];
    for await (const model of openai.models.list()) ids.push(model.id);
    expect(ids).toEqual(['king', 'queen', 'prince', 'voice', 'imagine', 'agents', 'mcp']);
    const queen = await openai.models.retrieve('queen');
    expect(queen).toMatchObject({ id: 'queen', object: 'model', owned_by: 'eurus' });
  });

  it('chats buffered', async () => {
    const completion = await openai.chat.completions.create({
      model: 'queen',
      messages: [
        { role: 'system', content: 'You answer briefly.' },
        { role: 'user', content: 'Which trains cross the Brenner pass?' },
      ],
      seed: 5,
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]?.message.content).toMatch(/\w+/);
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('chats streamed, with include_usage', async () => {
    const stream = await openai.chat.completions.create({
      model: 'prince',
      messages: [{ role: 'user', content: 'Summarise the rules of pétanque.' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(20);
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('returns tool calls whose arguments fit the tool schema', async () => {
    const completion = await openai.chat.completions.create({
      model: 'queen',
      messages: [{ role: 'user', content: 'What is the weather in Lyon tomorrow?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_forecast',
            description: 'Weather forecast for a city',
            parameters: {
              type: 'object',
              properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 7 } },
              required: ['city', 'days'],
              additionalProperties: false,
            },
          },
        },
      ],
      tool_choice: 'required',
    });
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type).toBe('function');
    const args = JSON.parse(call?.type === 'function' ? call.function.arguments : '{}') as {
      city: string;
      days: number;
    };
    expect(typeof args.city).toBe('string');
    expect(Number.isInteger(args.days) && args.days >= 1 && args.days <= 7).toBe(true);
  });

  it('embeds texts as floats, one unit vector per input, in order', async () => {
    const result = await openai.embeddings.create({
      model: 'prince',
      input: ['Bakeries in Lyon', 'Bicycle repair near Ghent'],
      encoding_format: 'float',
    });
    expect(result).toMatchObject({ object: 'list', model: 'prince' });
    expect(result.data.map((d) => [d.object, d.index, d.embedding.length])).toEqual([
      ['embedding', 0, 384],
      ['embedding', 1, 384],
    ]);
    for (const d of result.data) expect(Math.hypot(...d.embedding)).toBeCloseTo(1, 3);
    expect(result.data[0]?.embedding).not.toEqual(result.data[1]?.embedding);
    expect(result.usage.prompt_tokens).toBeGreaterThan(0);
    expect(result.usage.total_tokens).toBe(result.usage.prompt_tokens);
  });

  it('embeds in base64 by default, which the SDK decodes to the same floats', async () => {
    const input = 'Opening hours of the Musée des Confluences';
    const decoded = (await openai.embeddings.create({ model: 'prince', input })).data[0]!.embedding;
    const floats = (await openai.embeddings.create({ model: 'prince', input, encoding_format: 'float' }))
      .data[0]!.embedding;
    expect(decoded).toHaveLength(384);
    decoded.forEach((x, i) => expect(x).toBeCloseTo(floats[i]!, 6));
    const short = (await openai.embeddings.create({ model: 'prince', input, dimensions: 64 })).data[0]!
      .embedding;
    expect(short).toHaveLength(64);
    expect(Math.hypot(...short)).toBeCloseTo(1, 3);
  });

  it('raises its error classes for 401, 403, 404 and 429', async () => {
    const bad = new OpenAI({ baseURL: `${servers.urls.model}/v1`, apiKey: 'sk_wrong', maxRetries: 0 });
    await expect(bad.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);

    const admin = await servers.platform.db.query<{ account_id: string }>(
      'select account_id from api_keys limit 1',
    );
    const reader = await servers.platform.accounts.createKey(admin[0]!.account_id, {
      name: 'models only',
      scopes: ['search'],
    });
    const limited = new OpenAI({ baseURL: `${servers.urls.model}/v1`, apiKey: reader.secret, maxRetries: 0 });
    const denied = await limited.chat.completions
      .create({ model: 'queen', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((denied as InstanceType<typeof OpenAI.APIError>).code).toBe('insufficient_scope');

    await expect(openai.models.retrieve('emperor')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    // an unknown model on every operation that takes one: 404 model_not_found, as OpenAI answers
    // each call made when awaited: a rejection made before its catch is attached is unhandled
    const unknown = [
      () => openai.chat.completions.create({ model: 'emperor', messages: [{ role: 'user', content: 'hi' }] }),
      () => openai.embeddings.create({ model: 'emperor', input: 'hi' }),
      () => openai.images.generate({ model: 'emperor', prompt: 'a lighthouse' }),
      () => openai.audio.speech.create({ model: 'emperor', voice: 'alloy', input: 'hi' }),
      () => openai.responses.create({ model: 'emperor', input: 'hi' }),
    ];
    for (const call of unknown) {
      const error = await call()
        .then(() => undefined)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('model_not_found');
      expect((error as InstanceType<typeof OpenAI.APIError>).param).toBe('model');
    }

    // 1,000,000 tokens a minute: reserving 190,000 completion tokens a call runs out on the sixth.
    let limitedError: unknown;
    for (let i = 0; i < 8 && !limitedError; i++) {
      limitedError = await openai.chat.completions
        .create({
          model: 'king',
          messages: [{ role: 'user', content: 'hi' }],
          max_completion_tokens: 190_000,
        })
        .then(() => undefined)
        .catch((e: unknown) => e);
    }
    expect(limitedError).toBeInstanceOf(OpenAI.RateLimitError);
    const headers = (limitedError as InstanceType<typeof OpenAI.RateLimitError>).headers;
    expect(Number(headers?.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(headers?.get('retry-after-ms'))).toBeGreaterThan(0);
  });
});
