import { describe, expect, it } from 'vitest';
import type {
  ChatCompletionChunk,
  CreateChatCompletionRequest,
} from '../../../generated/model/client/types.gen.ts';
import { ApiError } from '../../platform/errors.ts';
import { costNano } from '../catalogue.ts';
import { specErrors } from '../testing/spec.ts';
import { countPromptTokens, countTokens } from '../tokens.ts';
import { ChatAssembly, newCompletionId, normalizeToolCallId } from './assemble.ts';
import { ReferenceEngine } from './reference.ts';
import type { EngineEvent } from './engine.ts';

async function* replay(events: EngineEvent[]): AsyncGenerator<EngineEvent> {
  for (const event of events) yield event;
}

async function chunksOf(
  assembly: ChatAssembly,
  events: AsyncIterable<EngineEvent>,
): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const chunk of assembly.stream(events)) out.push(chunk);
  return out;
}

const engine = new ReferenceEngine();
const REQUESTS: Record<string, CreateChatCompletionRequest> = {
  text: {
    model: 'queen',
    messages: [{ role: 'user', content: 'What is the capital of Portugal?' }],
    seed: 7,
    n: 2,
  },
  tools: {
    model: 'queen',
    messages: [{ role: 'user', content: 'What is the weather in Lisbon right now?' }],
    tools: [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Current weather for a city.',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    ],
    seed: 7,
  },
  length: {
    model: 'king',
    messages: [{ role: 'user', content: 'Explain how tides work.' }],
    max_tokens: 9,
    seed: 1,
  },
};

describe('ChatAssembly', () => {
  it('makes ids of the spec shape', () => {
    expect(newCompletionId()).toMatch(/^chatcmpl-[0-9A-Za-z]{26}$/);
    expect(normalizeToolCallId(undefined)).toMatch(/^call_[0-9A-Za-z]{24}$/);
    expect(normalizeToolCallId('call_7Qm2Xv9KpL4tR8wZ3nB6yD1s')).toBe('call_7Qm2Xv9KpL4tR8wZ3nB6yD1s');
    const mapped = normalizeToolCallId('chatcmpl-tool-4f2a9c');
    expect(mapped).toMatch(/^call_[0-9A-Za-z]{24}$/);
    expect(normalizeToolCallId('chatcmpl-tool-4f2a9c')).toBe(mapped);
  });

  it.each(Object.keys(REQUESTS))(
    'builds a ChatCompletion and a chunk sequence valid against the spec, billed the same (%s)',
    async (name) => {
      const request = REQUESTS[name] as CreateChatCompletionRequest;
      const promptTokens = countPromptTokens(request);
      const options = {
        model: request.model,
        promptTokens,
        fingerprint: engine.fingerprint(request.model),
        n: request.n ?? 1,
      };

      const buffered = new ChatAssembly(options);
      const completion = await buffered.collect(engine.chat(request, { promptTokens }));
      expect(specErrors('ChatCompletion', completion)).toBe('');

      const streamed = new ChatAssembly({ ...options, includeUsage: true, requestId: 'req_1' });
      const chunks = await chunksOf(streamed, engine.chat(request, { promptTokens }));
      for (const chunk of chunks) expect(specErrors('ChatCompletionChunk', chunk)).toBe('');
      expect(chunks.length).toBeGreaterThan(4);
      expect(new Set(chunks.map((c) => c.id))).toEqual(new Set([streamed.id]));

      // the last chunk is the usage chunk; every other carries usage: null
      const last = chunks[chunks.length - 1] as ChatCompletionChunk;
      expect(last.choices).toEqual([]);
      expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
      expect(last.usage).toEqual(completion.usage);
      expect(buffered.billing()).toEqual(streamed.billing());
      expect(buffered.billing().complete).toBe(true);
      expect(completion.usage.cost_eur).toBe(
        (costNano(request.model, promptTokens, completion.usage.completion_tokens) / 1e9).toFixed(9),
      );

      // the chunks add up to the buffered answer, choice by choice
      for (const choice of completion.choices) {
        const mine = chunks.flatMap((c) => c.choices.filter((x) => x.index === choice.index));
        expect(mine[0]?.delta.role).toBe('assistant');
        expect(mine.map((x) => x.delta.content ?? '').join('')).toBe(choice.message.content ?? '');
        expect(mine[mine.length - 1]?.finish_reason).toBe(choice.finish_reason);
        const args = mine.flatMap((x) => x.delta.tool_calls ?? []).map((t) => t.function?.arguments ?? '');
        expect(args.join('')).toBe(choice.message.tool_calls?.[0]?.function.arguments ?? '');
      }
    },
  );

  it('counts tokens with the tokenizer when the engine reports none', async () => {
    const events: EngineEvent[] = [
      { type: 'content', choice: 0, text: 'Hello,' },
      { type: 'content', choice: 0, text: ' world!' },
      { type: 'finish', choice: 0, reason: 'stop' },
    ];
    const assembly = new ChatAssembly({ model: 'king', promptTokens: 10, fingerprint: 'fp_test' });
    const completion = await assembly.collect(replay(events));
    expect(completion.usage).toEqual({
      prompt_tokens: 10,
      completion_tokens: 4,
      total_tokens: 14,
      cost_eur: '0.000078000',
      currency: 'EUR',
    });
    expect(assembly.billing().reportedByEngine).toBe(false);
  });

  it('prefers the counts the engine reports', async () => {
    const assembly = new ChatAssembly({ model: 'prince', promptTokens: 10, fingerprint: 'fp_test' });
    await assembly.collect(
      replay([
        { type: 'content', choice: 0, text: 'Hi' },
        { type: 'finish', choice: 0, reason: 'stop' },
        { type: 'usage', promptTokens: 12, completionTokens: 3 },
      ]),
    );
    expect(assembly.billing()).toMatchObject({
      promptTokens: 12,
      completionTokens: 3,
      reportedByEngine: true,
    });
  });

  it('turns a failure after the first chunk into an error chunk with finish_reason error', async () => {
    const assembly = new ChatAssembly({
      model: 'queen',
      promptTokens: 5,
      fingerprint: 'fp_test',
      requestId: 'req_9',
    });
    const chunks = await chunksOf(
      assembly,
      replay([
        { type: 'content', choice: 0, text: 'Partial' },
        { type: 'error', error: new ApiError(502, 'upstream_failed', 'The upstream broke off.') },
      ]),
    );
    const last = chunks[chunks.length - 1] as ChatCompletionChunk;
    expect(specErrors('ChatCompletionChunk', last)).toBe('');
    expect(last.choices).toEqual([{ index: 0, delta: {}, finish_reason: 'error', logprobs: null }]);
    expect(last.error).toEqual({
      type: 'upstream_error',
      code: 'upstream_failed',
      message: 'The upstream broke off.',
      param: null,
      request_id: 'req_9',
    });
    expect(assembly.billing()).toMatchObject({ completionTokens: countTokens('Partial'), complete: false });
  });

  it('throws a failure before the first chunk, so the route answers with a JSON error', async () => {
    const failing = async function* (): AsyncGenerator<EngineEvent> {
      yield* [];
      throw new ApiError(504, 'upstream_timeout', 'slow');
    };
    const assembly = new ChatAssembly({ model: 'queen', promptTokens: 5, fingerprint: 'fp_test' });
    await expect(chunksOf(assembly, failing())).rejects.toMatchObject({
      status: 504,
      code: 'upstream_timeout',
    });
    const buffered = new ChatAssembly({ model: 'queen', promptTokens: 5, fingerprint: 'fp_test' });
    await expect(
      buffered.collect(replay([{ type: 'error', error: new ApiError(502, 'upstream_failed', 'x') }])),
    ).rejects.toMatchObject({ status: 502 });
  });

  it('bills only what was produced when the client leaves mid-stream', async () => {
    const request: CreateChatCompletionRequest = {
      model: 'king',
      messages: [{ role: 'user', content: 'Explain the history of the Roman aqueducts in detail.' }],
      seed: 3,
    };
    const controller = new AbortController();
    const assembly = new ChatAssembly({
      model: 'king',
      promptTokens: countPromptTokens(request),
      fingerprint: 'fp_t',
    });
    let received = '';
    const consume = async (): Promise<void> => {
      for await (const chunk of assembly.stream(engine.chat(request, { signal: controller.signal }))) {
        received += chunk.choices[0]?.delta.content ?? '';
        if (received.length > 40) controller.abort();
      }
    };
    await expect(consume()).rejects.toMatchObject({ name: 'AbortError' });
    const billing = assembly.billing();
    expect(billing.complete).toBe(false);
    expect(billing.completionTokens).toBe(countTokens(received));
    const full = await new ChatAssembly({ model: 'king', promptTokens: 0, fingerprint: 'fp_t' }).collect(
      engine.chat(request),
    );
    expect(billing.completionTokens).toBeLessThan(full.usage.completion_tokens);
  });
});
