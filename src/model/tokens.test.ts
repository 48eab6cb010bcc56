import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isDeepStrictEqual } from 'node:util';
import { ApiError } from '../platform/errors.ts';
import {
  TOKENS_PER_MESSAGE,
  TOKENS_REPLY_PRIMING,
  assertFitsContext,
  completionBudget,
  countCompletionTokens,
  countPromptTokens,
  countPromptTokensWithin,
  countTokens,
  decodeTokens,
  LONGEST_PIECE,
  MOST_CHARACTERS_A_TOKEN,
  promptTokensFitting,
  encodePrefix,
  encodeText,
  tiktokenRanks,
} from './tokens.ts';

describe('countTokens (o200k_base)', () => {
  it('counts known strings', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('Hello, world!')).toBe(4);
    expect(countTokens('The quick brown fox jumps over the lazy dog.')).toBe(10);
    expect(countTokens('hello world')).toBe(2);
  });

  it('treats special tokens in user text as plain text', () => {
    expect(countTokens('a <|endoftext|> b')).toBe(9);
  });
});

describe('decodeTokens', () => {
  it('ends a character cut at the end in U+FFFD, and leaves nothing of it for the next text', () => {
    const whale = encodeText('🐋 whale');
    const cut = whale.findIndex((_, i) => decodeTokens(whale.slice(0, i + 1)).includes('🐋'));
    expect(cut).toBeGreaterThan(0); // the emoji takes more than one token
    expect(decodeTokens(whale.slice(0, cut))).toBe('\uFFFD');
    expect(decodeTokens(encodeText('hello'))).toBe('hello');
    expect(decodeTokens(whale)).toBe('🐋 whale');
  });
});

describe('encodePrefix', () => {
  it('encodes piece by piece as the tokenizer encodes the whole text', () => {
    const texts = [
      'Sure, here is how I would say hello in one short sentence.',
      'Zürich über alles, naïve café — déjà vu; 東京タワーは高い。 🐋🐋 whales!',
      'a   b \n\n  c\r\n\td  ',
      "I'm sure you've seen it: DON'T PANIC. HelloWorld 1234567 3.14 x/y/z ...!!!",
      'plain <|endoftext|> text, {"json": [1, 2, 3]}',
      ' leading and trailing spaces   ',
    ];
    for (let round = 0; round < 2; round++) {
      for (const text of texts) {
        const whole = encodeText(text);
        expect(encodePrefix(text, whole.length + 5)).toEqual(whole);
        const prefix = encodePrefix(text, 3); // up to the end of the piece that passes 3
        expect(prefix.length).toBeGreaterThan(3);
        expect(prefix).toEqual(whole.slice(0, prefix.length));
      }
    }
  });
});

describe('bounded tokenizing (no request holds the thread)', () => {
  const require = createRequire(import.meta.url);
  const { encode } = require('gpt-tokenizer/encoding/o200k_base') as {
    encode: (text: string, options: object) => number[];
  };
  const plain = { allowedSpecial: new Set(), disallowedSpecial: new Set() };

  it("encodes as gpt-tokenizer's own encode wherever no piece is longer than LONGEST_PIECE", () => {
    const texts = [
      'Bonjour, nous cherchons trois plombiers à Lille avant le 15 décembre. Merci !',
      'Donaudampfschifffahrtsgesellschaftskapitänsmütze und Rindfleischetikettierungsüberwachung',
      `${'='.repeat(LONGEST_PIECE)} ${'-'.repeat(100)} ${' '.repeat(LONGEST_PIECE - 1)}x`,
      'Ελληνικά, Кирилица, 東京タワー, 🐋🐋🐋, https://example.eu/a/b?c=d&e=f',
    ];
    for (const text of texts) expect(encodeText(text)).toEqual(encode(text, plain));
  });

  it('encodes a longer piece in parts: tokens that decode to it, a count near the whole one', () => {
    const run = 'a'.repeat(LONGEST_PIECE * 40 + 3);
    const tokens = encodeText(run);
    expect(decodeTokens(tokens)).toBe(run);
    expect(Math.abs(tokens.length - encode(run, plain).length)).toBeLessThanOrEqual(40);
    const surrogates = '🐋'.repeat(LONGEST_PIECE); // a part never splits a pair
    expect(decodeTokens(encodeText(surrogates))).toBe(surrogates);
  });

  it('refuses, untokenized, a prompt of more characters than the window could hold', async () => {
    const huge = 'x'.repeat(16_000 * MOST_CHARACTERS_A_TOKEN + 1);
    const count = await countPromptTokensWithin({ messages: [{ role: 'user', content: huge }] }, 16_000);
    expect(count).toEqual({ tokens: expect.any(Number) as number, exact: false });
    expect(count.tokens).toBeGreaterThan(16_000);
  });

  it('stops counting once past the limit, and counts exactly below it', async () => {
    const long = 'lorem ipsum dolor sit amet '.repeat(20_000); // about 100,000 tokens
    const over = await countPromptTokensWithin({ messages: [{ role: 'user', content: long }] }, 10_000);
    expect(over.exact).toBe(false);
    expect(over.tokens).toBeGreaterThan(10_000);
    expect(over.tokens).toBeLessThan(10_100);
    const request = { messages: [{ role: 'user' as const, content: long }] };
    expect(await countPromptTokensWithin(request, 200_000)).toEqual({
      tokens: countPromptTokens(request),
      exact: true,
    });
    await expect(promptTokensFitting('prince', request)).rejects.toMatchObject({
      status: 400,
      code: 'context_length_exceeded',
    });
  });

  it('gives the event loop back while a long prompt is counted', async () => {
    const long = Array.from({ length: 300_000 }, (_, i) => String.fromCodePoint(0x4e00 + (i % 5000))).join(
      '',
    );
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    await countPromptTokensWithin({ messages: [{ role: 'user', content: long }] }, 1_000_000);
    clearInterval(ticking);
    expect(turns).toBeGreaterThan(3);
  });
});

describe('countPromptTokens', () => {
  it('adds a fixed overhead per message and for the reply', () => {
    const one = countPromptTokens({ messages: [{ role: 'user', content: 'hello world' }] });
    expect(one).toBe(TOKENS_REPLY_PRIMING + TOKENS_PER_MESSAGE + countTokens('user') + 2);
    const parts = countPromptTokens({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hello' },
            { type: 'text', text: ' world' },
          ],
        },
      ],
    });
    expect(parts).toBe(one);
  });

  it('counts names, tool calls, tool results and tool definitions', () => {
    const base = countPromptTokens({ messages: [{ role: 'user', content: 'Weather in Lisbon?' }] });
    const named = countPromptTokens({
      messages: [{ role: 'user', content: 'Weather in Lisbon?', name: 'ana' }],
    });
    expect(named).toBeGreaterThan(base);
    const withTools = countPromptTokens({
      messages: [{ role: 'user', content: 'Weather in Lisbon?' }],
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
    });
    expect(withTools - base).toBeGreaterThan(20);
    const conversation = countPromptTokens({
      messages: [
        { role: 'user', content: 'Weather in Lisbon?' },
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
        { role: 'tool', tool_call_id: 'call_1', content: '{"temperature_c":19}' },
      ],
    });
    expect(conversation).toBeGreaterThan(base + 2 * TOKENS_PER_MESSAGE + 10);
  });
});

describe('countCompletionTokens', () => {
  it('sums content and tool calls of all choices', () => {
    expect(countCompletionTokens([{ content: 'Hello, world!', toolCalls: [] }])).toBe(4);
    expect(
      countCompletionTokens([
        { content: 'hello world', toolCalls: [] },
        { content: '', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Lisbon"}' }] },
      ]),
    ).toBe(2 + 3 + countTokens('get_weather') + countTokens('{"city":"Lisbon"}'));
  });
});

describe('assertFitsContext', () => {
  it('passes what fits, up to the exact window', () => {
    expect(() => assertFitsContext('prince', 15_000, 1_000)).not.toThrow();
    expect(() => assertFitsContext('prince', 16_000)).not.toThrow();
    expect(() => assertFitsContext('king', 100_000, 100_000)).not.toThrow();
  });

  it('throws 400 context_length_exceeded naming both counts, param messages', () => {
    let caught: unknown;
    try {
      assertFitsContext('queen', 60_000, 5_000);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ApiError);
    const error = caught as ApiError;
    expect(error.status).toBe(400);
    expect(error.code).toBe('context_length_exceeded');
    expect(error.param).toBe('messages');
    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toContain('64000');
    expect(error.message).toContain('60000');
    expect(error.message).toContain('5000');
    expect(() => assertFitsContext('prince', 16_001, null)).toThrow(/16001/);
  });

  it('defaults the completion budget to what is left of the window', () => {
    expect(completionBudget('prince', 1000, {})).toBe(15_000);
    expect(completionBudget('prince', 1000, { max_tokens: 50 })).toBe(50);
    expect(completionBudget('prince', 1000, { max_completion_tokens: 70, max_tokens: null })).toBe(70);
  });
});

describe('the o200k_base vocabulary', () => {
  it("is read from the package's .tiktoken file exactly as its module holds it", async () => {
    const require = createRequire(import.meta.url);
    const text = readFileSync(require.resolve('gpt-tokenizer/data/o200k_base.tiktoken'), 'latin1');
    const ranks = tiktokenRanks(text);
    const { default: module } = (await import('gpt-tokenizer/bpeRanks/o200k_base')) as {
      default: (string | number[])[];
    };
    expect(ranks.length).toBe(module.length);
    const differ = ranks.flatMap((token, rank) => (isDeepStrictEqual(token, module[rank]) ? [] : [rank]));
    expect(differ).toEqual([]);
  });
});
