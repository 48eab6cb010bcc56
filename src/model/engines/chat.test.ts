import { describe, expect, it } from 'vitest';
import type {
  ChatCompletionChunk,
  CreateChatCompletionRequest,
} from '../../../generated/model/client/types.gen.ts';
import { ApiError } from '../../platform/errors.ts';
import { specErrors } from '../testing/spec.ts';
import { assertChatRequest, startChat } from './chat.ts';
import { ReferenceEngine } from './reference.ts';

const engine = new ReferenceEngine();
const BASE: CreateChatCompletionRequest = {
  model: 'prince',
  messages: [{ role: 'user', content: 'Classify: great food!' }],
};

function errorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiError) return error;
  }
  throw new Error('expected an ApiError');
}

describe('assertChatRequest', () => {
  it.each([
    [{ max_tokens: 5, max_completion_tokens: 5 }, 'max_tokens'],
    [{ stream_options: { include_usage: true } }, 'stream_options'],
    [{ tool_choice: 'required' as const }, 'tool_choice'],
    [{ tool_choice: { type: 'function' as const, function: { name: 'nope' } } }, 'tool_choice'],
  ])('rejects %j with a 400 on %s', (extra, param) => {
    const error = errorOf(() => assertChatRequest({ ...BASE, ...extra }));
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
  });

  it('accepts a valid request', () => {
    expect(() =>
      assertChatRequest({
        ...BASE,
        max_tokens: 5,
        max_completion_tokens: null,
        stream: true,
        stream_options: {},
      }),
    ).not.toThrow();
  });
});

describe('startChat', () => {
  it('checks the context window before dispatch', () => {
    const long = 'lorem '.repeat(16_100);
    const error = errorOf(() => startChat(engine, { ...BASE, messages: [{ role: 'user', content: long }] }));
    expect(error.code).toBe('context_length_exceeded');
    const withBudget = errorOf(() => startChat(engine, { ...BASE, max_completion_tokens: 16_000 }));
    expect(withBudget.message).toMatch(/16000 in max_completion_tokens/);
  });

  it('streams an answer whose chunks validate, ending in the usage chunk', async () => {
    const run = startChat(
      engine,
      { ...BASE, stream: true, stream_options: { include_usage: true }, seed: 1 },
      { requestId: 'req_1' },
    );
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of run.assembly.stream(run.events)) chunks.push(chunk);
    for (const chunk of chunks) expect(specErrors('ChatCompletionChunk', chunk)).toBe('');
    expect(chunks[chunks.length - 1]?.usage?.prompt_tokens).toBe(run.promptTokens);
    expect(run.assembly.billing().complete).toBe(true);
  });
});
