import { describe, expect, it } from 'vitest';
import type { CreateChatCompletionRequest } from '../../../generated/model/client/types.gen.ts';
import { newAjv } from '../testing/spec.ts';
import { countTokens, decodeTokens, encodeText, truncateCounted, truncateToTokens } from '../tokens.ts';
import { ChatAssembly } from './assemble.ts';
import { ReferenceEngine, pieces } from './reference.ts';
import type { EngineEvent } from './engine.ts';

const engine = new ReferenceEngine();

async function answer(request: CreateChatCompletionRequest, signal?: AbortSignal) {
  const assembly = new ChatAssembly({
    model: request.model,
    promptTokens: 0,
    fingerprint: 'fp_test',
    n: request.n ?? 1,
  });
  return assembly.collect(engine.chat(request, signal === undefined ? {} : { signal }));
}

async function events(request: CreateChatCompletionRequest): Promise<EngineEvent[]> {
  const out: EngineEvent[] = [];
  for await (const event of engine.chat(request)) out.push(event);
  return out;
}

const QUESTION: CreateChatCompletionRequest = {
  model: 'queen',
  messages: [
    { role: 'system', content: 'You are a concise assistant for a travel agency.' },
    { role: 'user', content: 'What are the best months to visit the Azores for whale watching?' },
  ],
  seed: 42,
};

const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather for a city.',
    parameters: {
      type: 'object',
      properties: {
        city: { type: 'string', minLength: 2 },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        days: { type: 'integer', minimum: 1, maximum: 7 },
      },
      required: ['city', 'unit', 'days'],
      additionalProperties: false,
    },
    strict: true,
  },
};

describe('ReferenceEngine', () => {
  it('answers in sentences made of the prompt’s own words', async () => {
    const completion = await answer(QUESTION);
    const text = completion.choices[0]?.message.content ?? '';
    expect(text).toMatch(/Azores/);
    expect(text).toMatch(/whale/);
    expect(text).not.toMatch(/lorem|ipsum/i);
    expect(text.split(/(?<=[.!?])\s+/).length).toBeGreaterThanOrEqual(3);
    expect(completion.choices[0]?.finish_reason).toBe('stop');
  });

  it('answers a caller that wants the whole answer as it streams it, billed the same', async () => {
    const whole = (request: CreateChatCompletionRequest) =>
      new ChatAssembly({
        model: request.model,
        promptTokens: 0,
        fingerprint: 'fp_test',
        n: request.n ?? 1,
      }).collect(engine.chat(request, { whole: true }));
    const cases: CreateChatCompletionRequest[] = [
      QUESTION,
      { ...QUESTION, max_tokens: 7 },
      { ...QUESTION, messages: [{ role: 'user', content: 'Zürich über alles, naïve café.' }], max_tokens: 5 },
      { ...QUESTION, n: 3, stop: ['whale'] },
      { ...QUESTION, tools: [WEATHER_TOOL], tool_choice: 'required' },
      { ...QUESTION, tools: [WEATHER_TOOL], tool_choice: 'required', max_tokens: 6 },
    ];
    for (const request of cases) {
      const [a, b] = [await answer(request), await whole(request)];
      expect({ ...b, id: a.id, created: a.created }).toEqual(a);
      const content = a.choices.map((c) => c.message.content ?? '').join('');
      if (!request.tools && (request.n ?? 1) === 1)
        expect(a.usage.completion_tokens).toBe(countTokens(content));
    }
    const pieces = (await events({ ...QUESTION })).filter((e) => e.type === 'content');
    expect(pieces.length).toBeGreaterThan(1);
    const one: EngineEvent[] = [];
    for await (const event of engine.chat(QUESTION, { whole: true })) one.push(event);
    expect(one.filter((e) => e.type === 'content')).toHaveLength(1);
  });

  it('writes longer answers for king than for prince', async () => {
    const king = await answer({ ...QUESTION, model: 'king' });
    const prince = await answer({ ...QUESTION, model: 'prince' });
    expect(king.usage.completion_tokens).toBeGreaterThan(prince.usage.completion_tokens * 1.5);
  });

  it('is deterministic by seed, and varies with the seed', async () => {
    const a = await answer(QUESTION);
    const b = await answer(QUESTION);
    expect(b.choices).toEqual(a.choices);
    const others = await Promise.all([1, 2, 3, 4].map((seed) => answer({ ...QUESTION, seed })));
    const texts = new Set([a, ...others].map((c) => c.choices[0]?.message.content));
    expect(texts.size).toBeGreaterThan(1);
  });

  it('cuts a text to a budget of tokens and counts the cut as the tokenizer does', () => {
    // the cut as it was made before the count came with it: whole tokens, then re-encoded
    const cutAndRecount = (text: string, max: number) => {
      const tokens = encodeText(text);
      if (tokens.length <= max) return text;
      let keep = max;
      let out = decodeTokens(tokens.slice(0, keep));
      while (keep > 0 && (out.endsWith('\uFFFD') || countTokens(out) > max)) {
        keep--;
        out = decodeTokens(tokens.slice(0, keep));
      }
      return out;
    };
    const texts = [
      'Sure, here is how I would say hello in one short sentence. The key point is brevity.',
      'Zürich über alles, naïve café — déjà vu; 東京タワーは高い。 🐋🐋 whales!',
      'Numbers 1234567 and 3.14159, then   several   spaces,\n\nnew lines\r\n and tabs\t\tend.  ',
      '{"city":"Ponta Delgada","unit":"celsius","days":3,"note":"don\'t, we\'ll, they\'re"}',
      "I'm sure you've seen it: DON'T PANIC. HelloWorld camelCase snake_case x/y/z ...!!!",
    ];
    for (const text of texts) {
      for (let max = 0; max <= encodeText(text).length + 1; max++) {
        const expected = cutAndRecount(text, max);
        expect(truncateCounted(text, max)).toEqual({ text: expected, tokens: countTokens(expected) });
      }
    }
  });

  it('streams in small pieces, a word or so per delta', async () => {
    const all = await events(QUESTION);
    const contents = all.filter((e) => e.type === 'content');
    expect(contents.length).toBeGreaterThan(15);
    for (const e of contents) expect(e.text.trim().split(/\s+/).length).toBe(1);
    expect(pieces(' a  b c ')).toEqual([' a', '  b', ' c ']);
  });

  it('cuts before a stop sequence, with finish_reason stop', async () => {
    const full = (await answer(QUESTION)).choices[0]?.message.content ?? '';
    const stop = full.split(' ').slice(5, 7).join(' ');
    const cut = await answer({ ...QUESTION, stop: ['no such sequence', stop] });
    expect(cut.choices[0]?.message.content).toBe(full.slice(0, full.indexOf(stop)));
    expect(cut.choices[0]?.finish_reason).toBe('stop');
    expect(cut.choices[0]?.message.content).not.toContain(stop);
  });

  it('honours max_completion_tokens and max_tokens, counted with the tokenizer', async () => {
    for (const limit of [1, 7, 20]) {
      const completion = await answer({ ...QUESTION, max_completion_tokens: limit });
      const text = completion.choices[0]?.message.content ?? '';
      expect(completion.choices[0]?.finish_reason).toBe('length');
      expect(countTokens(text)).toBeLessThanOrEqual(limit);
      expect(countTokens(text)).toBeGreaterThanOrEqual(limit - 1);
      expect(completion.usage.completion_tokens).toBe(countTokens(text));
    }
    const old = await answer({ ...QUESTION, max_tokens: 5 });
    expect(old.choices[0]?.finish_reason).toBe('length');
    expect(old.usage.completion_tokens).toBeLessThanOrEqual(5);
    expect(truncateToTokens('Zürich über alles', 2)).not.toContain('\uFFFD');
  });

  it('gives n distinct choices, all billed', async () => {
    const completion = await answer({ ...QUESTION, n: 4 });
    expect(completion.choices.map((c) => c.index)).toEqual([0, 1, 2, 3]);
    expect(new Set(completion.choices.map((c) => c.message.content)).size).toBe(4);
    const sum = completion.choices.reduce((s, c) => s + countTokens(c.message.content ?? ''), 0);
    expect(completion.usage.completion_tokens).toBe(sum);
    const greedy = await answer({ ...QUESTION, n: 3, temperature: 0 });
    expect(new Set(greedy.choices.map((c) => c.message.content)).size).toBe(3);
  });

  it('varies less at temperature 0 than at 2', async () => {
    const distinct = async (temperature: number) => {
      const runs = await Promise.all(
        [1, 2, 3, 4, 5, 6].map((seed) => answer({ ...QUESTION, seed, temperature })),
      );
      return new Set(runs.map((c) => c.choices[0]?.message.content)).size;
    };
    expect(await distinct(0)).toBe(1);
    expect(await distinct(2)).toBeGreaterThan(3);
    const narrow = await Promise.all(
      [1, 2, 3, 4, 5, 6].map((seed) => answer({ ...QUESTION, seed, temperature: 1, top_p: 0.01 })),
    );
    expect(new Set(narrow.map((c) => c.choices[0]?.message.content)).size).toBeLessThanOrEqual(2);
  });

  it('calls a tool when the prompt asks for it, with arguments valid against its schema', async () => {
    const completion = await answer({
      model: 'queen',
      messages: [{ role: 'user', content: 'What is the weather in Lisbon for the next 3 days?' }],
      tools: [
        WEATHER_TOOL,
        { type: 'function', function: { name: 'book_table', description: 'Book a restaurant.' } },
      ],
      seed: 1,
    });
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBeNull();
    expect(choice?.message.tool_calls).toHaveLength(1);
    const call = choice?.message.tool_calls?.[0];
    expect(call?.function.name).toBe('get_weather');
    expect(call?.id).toMatch(/^call_[0-9A-Za-z]{24}$/);
    const args = JSON.parse(call?.function.arguments ?? '') as unknown;
    const validate = newAjv().compile(WEATHER_TOOL.function.parameters);
    expect(validate(args), JSON.stringify(validate.errors)).toBe(true);
    expect(args).toMatchObject({ city: 'Lisbon', days: 3 });
  });

  it('calls tools for required and named tool_choice, never for none, and answers a tool result in text', async () => {
    const base: CreateChatCompletionRequest = {
      model: 'prince',
      messages: [{ role: 'user', content: 'Tell me a joke.' }],
      tools: [WEATHER_TOOL],
      seed: 2,
    };
    expect((await answer(base)).choices[0]?.finish_reason).toBe('stop');
    expect((await answer({ ...base, tool_choice: 'required' })).choices[0]?.finish_reason).toBe('tool_calls');
    const named = await answer({
      ...base,
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    expect(named.choices[0]?.message.tool_calls?.[0]?.function.name).toBe('get_weather');
    const none = await answer({
      ...base,
      messages: [{ role: 'user', content: 'get_weather for Lisbon' }],
      tool_choice: 'none',
    });
    expect(none.choices[0]?.message.tool_calls).toBeUndefined();
    const after = await answer({
      ...base,
      messages: [
        { role: 'user', content: 'What is the weather in Lisbon?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Lisbon"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temperature_c":19,"conditions":"sunny"}' },
      ],
    });
    expect(after.choices[0]?.finish_reason).toBe('stop');
    expect(after.choices[0]?.message.content).toMatch(/get_weather: temperature c 19 and conditions sunny/);
  });

  it('answers json_schema with JSON valid against the schema, filled from the prompt', async () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        city: { type: 'string' },
        postcode: { type: 'string', pattern: '^[0-9]{4}-[0-9]{3}$' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 4, uniqueItems: true },
        founded: { type: 'string', format: 'date' },
        contact: { $ref: '#/$defs/contact' },
        rating: { anyOf: [{ type: 'number', minimum: 1, maximum: 5 }, { type: 'null' }] },
        kind: { enum: ['bakery', 'cafe'] },
        open: { type: 'boolean' },
        staff: { type: 'integer', exclusiveMinimum: 0, maximum: 50, multipleOf: 5 },
      },
      required: ['name', 'city', 'tags', 'founded', 'contact', 'rating', 'kind', 'open', 'staff'],
      additionalProperties: false,
      $defs: {
        contact: {
          type: 'object',
          properties: {
            email: { type: 'string', format: 'email' },
            website: { type: 'string', format: 'uri' },
          },
          required: ['email', 'website'],
          additionalProperties: false,
        },
      },
    };
    const completion = await answer({
      model: 'prince',
      messages: [
        { role: 'developer', content: 'Extract the company name and city from the text.' },
        { role: 'user', content: 'Padaria Ribeiro, Rua Augusta 120, 1100-053 Lisboa.' },
      ],
      response_format: { type: 'json_schema', json_schema: { name: 'company', strict: true, schema } },
      seed: 42,
    });
    const value = JSON.parse(completion.choices[0]?.message.content ?? '') as Record<string, unknown>;
    const validate = newAjv().compile(schema);
    expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
    expect(value).toMatchObject({ name: 'Padaria Ribeiro', city: 'Lisboa' });
  });

  it('answers json_object with a JSON object', async () => {
    const completion = await answer({ ...QUESTION, response_format: { type: 'json_object' } });
    const value = JSON.parse(completion.choices[0]?.message.content ?? '') as unknown;
    expect(value).toBeTypeOf('object');
    expect(Array.isArray(value)).toBe(false);
  });

  it('stops generating promptly when aborted', async () => {
    const paced = new ReferenceEngine({ latency: 'p50' });
    const controller = new AbortController();
    const started = Date.now();
    const seen: EngineEvent[] = [];
    const run = (async () => {
      for await (const event of paced.chat({ ...QUESTION, model: 'king' }, { signal: controller.signal })) {
        seen.push(event);
        if (seen.length === 3) controller.abort();
      }
    })();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(1500);

    const before = new AbortController();
    before.abort();
    const iterator = engine.chat(QUESTION, { signal: before.signal })[Symbol.asyncIterator]();
    await expect(iterator.next()).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('replays the p50 latency before the first token', async () => {
    const paced = new ReferenceEngine({ latency: 'p50' });
    const started = Date.now();
    const stream = paced.chat({ ...QUESTION, model: 'prince', max_completion_tokens: 3 });
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    const first = Date.now() - started;
    expect(first).toBeGreaterThanOrEqual(10);
    expect(first).toBeLessThan(400);
    for (let r = await iterator.next(); r.done !== true; r = await iterator.next());
    const unpaced = Date.now();
    for await (const _ of engine.chat({ ...QUESTION, model: 'prince' })) void _;
    expect(Date.now() - unpaced).toBeLessThan(200);
  });

  it('takes tool arguments from the input: the query, the places, a count in words, a named flag; no optional property it does not speak to', async () => {
    const search = {
      type: 'function' as const,
      function: {
        name: 'search_places',
        description: 'Find businesses and places near a location, optionally only those open now.',
        parameters: {
          type: 'object',
          properties: {
            query: { type: 'string', minLength: 1 },
            city: { type: 'string' },
            near: { type: 'string' },
            radius_km: { type: 'number', minimum: 0.1, maximum: 50 },
            open_now: { type: 'boolean' },
            min_rating: { type: 'number', minimum: 1, maximum: 5 },
            limit: { type: 'integer', minimum: 1, maximum: 20 },
            sort: { type: 'string', enum: ['relevance', 'distance', 'rating'] },
          },
          required: ['query'],
          additionalProperties: false,
        },
      },
    };
    const request: CreateChatCompletionRequest = {
      model: 'queen',
      messages: [{ role: 'user', content: 'Find three bakeries open now near Marienplatz in Munich' }],
      tools: [search, WEATHER_TOOL],
      seed: 7,
    };
    const first = await answer(request);
    const calls = first.choices[0]?.message.tool_calls ?? [];
    expect(calls.map((c) => c.function.name)).toEqual(['search_places']);
    const args = JSON.parse(calls[0]?.function.arguments ?? '') as unknown;
    expect(newAjv().compile(search.function.parameters)(args)).toBe(true);
    expect(args).toEqual({
      query: 'bakeries',
      city: 'Munich',
      near: 'Marienplatz, Munich',
      open_now: true,
      limit: 3,
    });
    // deterministic by seed
    expect((await answer(request)).choices[0]?.message.tool_calls?.[0]?.function.arguments).toBe(
      calls[0]?.function.arguments,
    );
    const sorted = await answer({
      ...request,
      messages: [{ role: 'user', content: 'Find bakeries near Marienplatz in Munich by rating' }],
    });
    expect(JSON.parse(sorted.choices[0]?.message.tool_calls?.[0]?.function.arguments ?? '')).toMatchObject({
      sort: 'rating',
    });
  });

  it('answers from every result of parallel tool calls, naming the items a result lists', async () => {
    const after = await answer({
      model: 'queen',
      seed: 3,
      messages: [
        { role: 'user', content: 'Find bakeries in Munich and the weather there' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'search_places', arguments: '{}' } },
            { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
          ],
        },
        {
          role: 'tool',
          tool_call_id: 'call_a',
          content: JSON.stringify({
            object: 'list',
            data: [
              {
                name: 'Bäckerei Rischart',
                address: { street: 'Marienplatz 18', city: 'München' },
                signals: { rating: 4.5, distance_km: 0.1, open_now: true },
              },
              { name: 'Hofpfisterei', city: 'München' },
            ],
          }),
        },
        { role: 'tool', tool_call_id: 'call_b', content: '{"temperature_c":7}' },
      ],
    });
    const text = after.choices[0]?.message.content ?? '';
    expect(after.choices[0]?.finish_reason).toBe('stop');
    expect(text).toContain(
      'According to search_places: 2 results: Bäckerei Rischart (Marienplatz 18, München; 0.1 km away; rating 4.5; open now) and Hofpfisterei (München).',
    );
    expect(text).toContain('According to get_weather: temperature c 7.');
  });
});
