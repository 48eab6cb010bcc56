// Token counting with a real BPE tokenizer (o200k_base, pure JS, loaded on first use), and the
// context-window check that runs before a request is dispatched to an engine.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as O200k from 'gpt-tokenizer/encoding/o200k_base';
import type { GptEncoding } from 'gpt-tokenizer/GptEncoding';
import { LRUCache } from 'lru-cache';
import type {
  ChatCompletionRequestMessageContent,
  CreateChatCompletionRequest,
  TextModelId,
} from '../../generated/model/client/types.gen.ts';
import { BadRequestError } from '../platform/errors.ts';
import { TEXT_MODELS, type TextModel } from './catalogue.ts';

export const TOKENIZER = 'o200k_base';

// Fixed overheads in the manner of OpenAI's chat format: each message is framed by
// `<|start|>{role/name}<|message|>…<|end|>` and the reply is primed with `<|start|>assistant`.
export const TOKENS_PER_MESSAGE = 3;
export const TOKENS_PER_NAME = 1;
export const TOKENS_REPLY_PRIMING = 3;
export const TOKENS_PER_TOOL_CALL = 3;
export const TOKENS_PER_TOOL_DEFINITION = 8;
export const TOKENS_TOOLS_PREAMBLE = 12;

type Encoding = typeof O200k;
let loaded: Encoding | undefined;
/** Each token's text, or its bytes when they are not UTF-8 alone (the array the encoding holds). */
let vocabulary: (string | number[])[] = [];
/**
 * The vocabulary, loaded on first use: a model API that has counted no text yet holds none of it.
 * It is read from the package's `o200k_base.tiktoken` (base64 bytes and rank a line) rather than
 * imported as its 2.4 MB module of array literals, whose parsing left about 20 MiB more of the
 * process's memory resident for good (99 against 79 MiB after a compacting collection).
 */
function o200k(): Encoding {
  if (loaded === undefined) {
    const require = createRequire(import.meta.url);
    const { GptEncoding: Gpt } = require('gpt-tokenizer/GptEncoding') as { GptEncoding: typeof GptEncoding };
    const file = require.resolve('gpt-tokenizer/data/o200k_base.tiktoken');
    const ranks = tiktokenRanks(readFileSync(file, 'latin1'));
    vocabulary = ranks;
    loaded = Gpt.getEncodingApi('o200k_base', () => ranks) as unknown as Encoding;
  }
  return loaded;
}

/**
 * A `.tiktoken` file's ranks as gpt-tokenizer holds them: the text of a token that is UTF-8 (and
 * does not start with a byte-order mark), else its bytes.
 */
export function tiktokenRanks(text: string): (string | number[])[] {
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const ranks: (string | number[])[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const [base64 = '', rank = ''] = line.split(' ');
    const bytes = Buffer.from(base64, 'base64');
    let token: string | number[];
    try {
      token = utf8.decode(bytes);
      if (token.startsWith('\uFEFF')) token = [...bytes];
    } catch {
      token = [...bytes];
    }
    ranks[Number(rank)] = token;
  }
  return ranks;
}
/** The encoding's byte-pair merger, which encodes one piece of the pre-tokenizer's. */
interface PieceEncoder {
  tokenSplitRegex: RegExp;
  bytePairEncode(piece: string): number[];
}
const core = (): PieceEncoder =>
  (o200k() as unknown as { bytePairEncodingCoreProcessor: PieceEncoder }).bytePairEncodingCoreProcessor;

/**
 * The longest piece encoded whole, in UTF-16 units. Byte-pair merging costs the square of a
 * piece's length (a message of one character repeated 100,000 times took 14 s, and held the
 * thread that answers every request): a longer piece, which no language's words make (a run of
 * one character, a line of dashes), is encoded in parts of this length, so encoding is linear in
 * the text. The longest token of o200k_base is 128 bytes, so a part holds every token a piece
 * could; a count differs from the unbounded one by at most a token a part, and only there.
 */
export const LONGEST_PIECE = 128;

type Take = (tokens: readonly number[], end: number) => boolean;

/** Where the parts of a piece longer than LONGEST_PIECE end (a surrogate pair is never split). */
function* partEnds(piece: string): Generator<number> {
  for (let at = 0; at < piece.length;) {
    let to = Math.min(piece.length, at + LONGEST_PIECE);
    const last = piece.charCodeAt(to - 1);
    if (to < piece.length && last >= 0xd800 && last <= 0xdbff) to--;
    yield to;
    at = to;
  }
}

/** Gives `take` the tokens of one piece found at `index` (in parts when long); true when it stops. */
function givePiece(piece: string, index: number, take: Take): boolean {
  if (piece.length <= LONGEST_PIECE) return take(pieceTokens(piece), index + piece.length);
  let at = 0;
  for (const to of partEnds(piece)) {
    if (take(core().bytePairEncode(piece.slice(at, to)), index + to)) return true;
    at = to;
  }
  return false;
}

/** Calls `take` with the tokens of each piece of `text`, in order, until it returns true. */
function eachPieceTokens(text: string, take: Take): void {
  for (const match of text.matchAll(pieceSplit())) if (givePiece(match[0], match.index, take)) return;
}

/** The o200k_base tokens of `text`, special tokens as plain text, in time linear in its length. */
export function encodeText(text: string): number[] {
  const out: number[] = [];
  eachPieceTokens(text, (tokens) => {
    for (const token of tokens) out.push(token);
    return false;
  });
  return out;
}

/** How many tokens `text` has, counting no further than `stopAbove` (then a number above it). */
function countUpTo(text: string, stopAbove = Number.POSITIVE_INFINITY): number {
  let count = 0;
  eachPieceTokens(text, (tokens) => (count += tokens.length) > stopAbove);
  return count;
}

const UTF8 = new TextDecoder('utf-8');

/**
 * The text of `tokens`; a character whose bytes are cut at the end is U+FFFD. gpt-tokenizer's
 * own decode keeps such bytes in a TextDecoder it shares between calls (streaming), so they
 * came out at the start of whatever was decoded next.
 */
export function decodeTokens(tokens: readonly number[]): string {
  o200k();
  let text = '';
  let bytes: number[] = [];
  for (const token of tokens) {
    const entry = vocabulary[token];
    if (entry === undefined) {
      if (bytes.length > 0) text += UTF8.decode(Uint8Array.from(bytes));
      bytes = [];
      text += o200k().decode([token]); // a special token
    } else if (typeof entry === 'string') {
      if (bytes.length > 0) text += UTF8.decode(Uint8Array.from(bytes));
      bytes = [];
      text += entry;
    } else {
      for (const byte of entry) bytes.push(byte);
    }
  }
  if (bytes.length > 0) text += UTF8.decode(Uint8Array.from(bytes));
  return text;
}

/**
 * The first tokens of `text`, at most `max + 1` of them (enough to tell whether it fits in `max`),
 * encoding no further than that: a long answer cut to a short budget costs the budget, not the text.
 */
export function encodePrefix(text: string, max: number): number[] {
  return encodePrefixPieces(text, max).tokens;
}

/**
 * `encodePrefix`, and whether its first `max` tokens are whole pieces of the pre-tokenizer (a
 * word with its leading space, a run of punctuation...), ending at `text[end]`: the tokenizer
 * encodes each piece alone.
 */
export function encodePrefixPieces(
  text: string,
  max: number,
): { tokens: number[]; wholePieces: boolean; end: number } {
  const out: number[] = [];
  let wholePieces = max === 0;
  let end = 0;
  eachPieceTokens(text, (tokens, pieceEnd) => {
    for (const token of tokens) out.push(token);
    if (out.length === max) {
      wholePieces = true;
      end = pieceEnd;
    }
    return out.length > max;
  });
  return { tokens: out, wholePieces, end };
}

/** The pre-tokenizer's pattern, as the encoding holds it (one piece a match). */
function pieceSplit(): RegExp {
  return core().tokenSplitRegex;
}

/**
 * Tokens of pieces seen lately. A piece is encoded alone (the tokenizer looks past a piece only
 * at whitespace, and a piece of whitespace matches alone as in its text), and a text is mostly
 * the same few thousand words: a lookup here, in a table that stays in the CPU's caches, rather
 * than in the 200k-entry vocabulary's, which a call found cold (4 % of a chat call).
 */
const pieces = new Map<string, readonly number[]>();
const PIECES_KEPT = 8192;

function pieceTokens(piece: string): readonly number[] {
  let tokens = pieces.get(piece);
  if (tokens === undefined) {
    tokens = core().bytePairEncode(piece);
    if (piece.length <= 24) {
      if (pieces.size >= PIECES_KEPT) pieces.clear();
      pieces.set(piece, tokens);
    }
  }
  return tokens;
}

/**
 * Counts of texts seen lately. A conversation sends its earlier messages again on every turn,
 * and a system prompt comes with every call: each is counted once, then looked up (a count costs
 * tens of microseconds of BPE; a lookup, hashing the string). Long texts are not kept.
 */
const counted = new LRUCache<string, number>({ max: 4096 });
const CACHED_UP_TO = 16_384;
/**
 * Counts of long texts, by far fewer: a long prompt is counted before dispatch (a turn of the
 * event loop at a time, `countPromptTokensWithin`), then again by the engine and the agents'
 * steps, which find it here instead of holding the thread to count it again.
 */
const countedLong = new LRUCache<string, number>({
  // a few long prompts, for the seconds their request lasts: no prompt is kept longer than that
  maxSize: 16 * 1024 * 1024,
  sizeCalculation: (_count, text) => text.length,
  ttl: 60_000,
});

/** The number of o200k_base tokens of `text`: `countTokens('Hello, world!')` is 4. */
export function countTokens(text: string): number {
  if (text === '') return 0;
  const cache = text.length > CACHED_UP_TO ? countedLong : counted;
  let count = cache.get(text);
  if (count === undefined) {
    count = countUpTo(text);
    cache.set(text, count);
  }
  return count;
}

/**
 * The most characters one token of o200k_base holds (a run of 128 spaces): a text of more than
 * `n` times this many characters has more than `n` tokens, known without tokenizing it.
 */
export const MOST_CHARACTERS_A_TOKEN = 128;
/** Characters tokenized between two turns of the event loop, when counting a long prompt. */
const SLICE_CHARACTERS = 16_384;
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Gives the event loop a turn each SLICE_CHARACTERS characters counted, across the texts of one
 * request (many short texts cost as much as one long one), so every other request (health checks
 * included) is answered while a long or many-part input is counted.
 */
export class Pace {
  #since = 0;
  async counted(characters: number): Promise<void> {
    this.#since += characters;
    if (this.#since < SLICE_CHARACTERS) return;
    this.#since = 0;
    await nextTurn();
  }
}

/**
 * `countTokens` without holding the event loop (turns given back at `pace`); stops once the count
 * passes `stopAbove` (then the count so far, above it).
 */
async function countYielding(text: string, stopAbove: number, pace: Pace): Promise<number> {
  if (text.length <= CACHED_UP_TO) {
    const count = countTokens(text);
    await pace.counted(text.length);
    return count;
  }
  const known = countedLong.get(text);
  if (known !== undefined) return known;
  let count = 0;
  for (const match of text.matchAll(pieceSplit())) {
    const piece = match[0];
    if (piece.length <= LONGEST_PIECE) count += pieceTokens(piece).length;
    else {
      // one long piece (a run of one script without a space): counted and given back part by part
      let at = 0;
      for (const to of partEnds(piece)) {
        count += core().bytePairEncode(piece.slice(at, to)).length;
        if (count > stopAbove) return count;
        await pace.counted(to - at);
        at = to;
      }
      continue;
    }
    if (count > stopAbove) return count;
    await pace.counted(piece.length);
  }
  countedLong.set(text, count);
  return count;
}

/**
 * The tokens of one text counted no further than `limit`, letting other requests run meanwhile;
 * a text of more characters than `limit` tokens could hold is not tokenized at all.
 */
export async function countTokensWithin(
  text: string,
  limit: number,
  pace: Pace = new Pace(),
): Promise<PromptCount> {
  if (text.length > Math.max(0, limit) * MOST_CHARACTERS_A_TOKEN) {
    return { tokens: Math.ceil(text.length / MOST_CHARACTERS_A_TOKEN), exact: false };
  }
  const tokens = await countYielding(text, limit, pace);
  return { tokens, exact: tokens <= limit };
}

/** A prompt's count before dispatch: exact, or only known to be above the limit it was counted to. */
export interface PromptCount {
  tokens: number;
  /** False when counting stopped above the limit: `tokens` is then a lower bound. */
  exact: boolean;
}

/**
 * `countPromptTokens`, counted no further than `limit` and letting other requests run while a long
 * prompt is counted. Refuses at once, untokenized, a prompt of more characters than `limit` tokens
 * could hold. The work a request costs here is bounded by the model's window, not by its body.
 */
export async function countPromptTokensWithin(
  request: Pick<CreateChatCompletionRequest, 'messages' | 'tools' | 'response_format'>,
  limit: number,
): Promise<PromptCount> {
  const { fixed, texts } = promptTexts(request);
  let characters = 0;
  for (const text of texts) characters += text.length;
  if (characters > Math.max(0, limit) * MOST_CHARACTERS_A_TOKEN) {
    return { tokens: fixed + Math.ceil(characters / MOST_CHARACTERS_A_TOKEN), exact: false };
  }
  let total = fixed;
  const pace = new Pace();
  for (const text of texts) {
    total += await countYielding(text, limit - total, pace);
    if (total > limit) return { tokens: total, exact: false };
  }
  return { tokens: total, exact: true };
}

/** The text of a message's content: a string, or text parts joined in order. */
export function contentText(content: ChatCompletionRequestMessageContent | null | undefined): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => part.text).join('');
}

/**
 * Prompt tokens of a chat request: every message's role, name, content and tool calls with a
 * fixed framing overhead per message, the tool definitions the model reads, the JSON schema of
 * `response_format`, and the priming of the reply.
 */
export function countPromptTokens(
  request: Pick<CreateChatCompletionRequest, 'messages' | 'tools' | 'response_format'>,
): number {
  const { fixed, texts } = promptTexts(request);
  let total = fixed;
  for (const text of texts) total += countTokens(text);
  return total;
}

/** What a prompt's count is made of: the framing's fixed tokens, and every text the model reads. */
function promptTexts(request: Pick<CreateChatCompletionRequest, 'messages' | 'tools' | 'response_format'>): {
  fixed: number;
  texts: string[];
} {
  let fixed = TOKENS_REPLY_PRIMING;
  const texts: string[] = [];
  for (const message of request.messages) {
    fixed += TOKENS_PER_MESSAGE;
    texts.push(message.role, contentText(message.content));
    if ('name' in message && message.name !== undefined) {
      fixed += TOKENS_PER_NAME;
      texts.push(message.name);
    }
    if (message.role === 'assistant') {
      if (typeof message.refusal === 'string') texts.push(message.refusal);
      for (const call of message.tool_calls ?? []) {
        fixed += TOKENS_PER_TOOL_CALL;
        texts.push(call.function.name, call.function.arguments);
      }
    }
    if (message.role === 'tool') texts.push(message.tool_call_id);
  }
  if (request.tools !== undefined && request.tools.length > 0) {
    fixed += TOKENS_TOOLS_PREAMBLE;
    for (const tool of request.tools) {
      const fn = tool.function;
      fixed += TOKENS_PER_TOOL_DEFINITION;
      texts.push(fn.name);
      if (fn.description !== undefined) texts.push(fn.description);
      if (fn.parameters !== undefined) texts.push(JSON.stringify(fn.parameters));
    }
  }
  const format = request.response_format;
  if (format?.type === 'json_schema') {
    fixed += TOKENS_PER_MESSAGE;
    texts.push(format.json_schema.name);
    if (format.json_schema.description !== undefined) texts.push(format.json_schema.description);
    if (format.json_schema.schema !== undefined) texts.push(JSON.stringify(format.json_schema.schema));
  } else if (format?.type === 'json_object') {
    fixed += TOKENS_PER_MESSAGE;
  }
  return { fixed, texts };
}

/** What one generated choice holds, for counting its completion tokens. */
export interface GeneratedChoice {
  content: string;
  /** The content's tokens, when the engine counted them already. */
  contentTokens?: number | undefined;
  toolCalls: readonly { name: string; arguments: string }[];
}

/**
 * Completion tokens of the generated choices (all `n` of them): the content plus each tool
 * call's name and arguments with a fixed overhead. Engines that report no usage are billed by this.
 */
export function countCompletionTokens(choices: Iterable<GeneratedChoice>): number {
  let total = 0;
  for (const choice of choices) {
    total += choice.contentTokens ?? countTokens(choice.content);
    for (const call of choice.toolCalls) {
      total += TOKENS_PER_TOOL_CALL + countTokens(call.name) + countTokens(call.arguments);
    }
  }
  return total;
}

/** The most completion tokens a request may produce: `max_completion_tokens` (or `max_tokens`), else what is left of the window. */
export function completionBudget(
  model: TextModel | TextModelId,
  promptTokens: number,
  request: Pick<CreateChatCompletionRequest, 'max_completion_tokens' | 'max_tokens'>,
): number {
  const window = (typeof model === 'string' ? TEXT_MODELS[model] : model).contextWindow;
  const asked = request.max_completion_tokens ?? request.max_tokens ?? null;
  return asked ?? Math.max(0, window - promptTokens);
}

/**
 * Throws a 400 `context_length_exceeded` (param `messages`) unless the prompt plus
 * `maxCompletionTokens` (or the prompt alone, when it is null or undefined) fits the model's window.
 */
export function assertFitsContext(
  model: TextModel | TextModelId,
  promptTokens: number | PromptCount,
  maxCompletionTokens?: number | null,
): void {
  const entry = typeof model === 'string' ? TEXT_MODELS[model] : model;
  const completion = maxCompletionTokens ?? 0;
  const window = entry.contextWindow;
  const count = typeof promptTokens === 'number' ? { tokens: promptTokens, exact: true } : promptTokens;
  if (count.tokens + completion <= window) return;
  const held = `${count.exact ? '' : 'more than '}${count.tokens}`;
  const message =
    maxCompletionTokens === null || maxCompletionTokens === undefined
      ? `The context window of ${entry.id} is ${window} tokens, but the messages hold ${held} tokens. ` +
        `Shorten the messages.`
      : `The context window of ${entry.id} is ${window} tokens, but ${count.exact ? '' : 'more than '}${count.tokens + completion} were requested: ` +
        `${held} tokens in the messages and ${completion} in max_completion_tokens. ` +
        `Shorten the messages or lower max_completion_tokens.`;
  throw new BadRequestError('context_length_exceeded', message, { param: 'messages' });
}

/** The prompt's tokens before dispatch: counted within the window, a 400 when it does not fit. */
export async function promptTokensFitting(
  model: TextModel | TextModelId,
  request: Pick<CreateChatCompletionRequest, 'messages' | 'tools' | 'response_format'>,
  maxCompletionTokens?: number | null,
): Promise<number> {
  const entry = typeof model === 'string' ? TEXT_MODELS[model] : model;
  const count = await countPromptTokensWithin(request, entry.contextWindow - (maxCompletionTokens ?? 0));
  assertFitsContext(entry, count, maxCompletionTokens);
  return count.tokens;
}

/** The longest prefix of `text` of at most `max` tokens (never splitting a character). */
export function truncateToTokens(text: string, max: number): string {
  return truncateCounted(text, max).text;
}

/**
 * `truncateToTokens` with the prefix's token count, so the answer is not tokenized again to be
 * billed. A generated text is counted without the tokenizer's cache: it is seldom seen twice.
 */
export function truncateCounted(text: string, max: number): { text: string; tokens: number } {
  const { tokens, wholePieces, end } = encodePrefixPieces(text, max);
  if (tokens.length <= max) return { text, tokens: tokens.length };
  // Whole pieces that end in a character other than a space are split and encoded alike in the
  // prefix alone (the pre-tokenizer looks past a piece only at whitespace): `max` tokens again.
  if (wholePieces && max > 0 && !/\s/u.test(text.charAt(end - 1)))
    return { text: text.slice(0, end), tokens: max };
  let keep = Math.max(0, max);
  let out = decodeTokens(tokens.slice(0, keep));
  let count = encodePrefix(out, max).length;
  while (keep > 0 && (out.endsWith('\uFFFD') || count > max)) {
    keep--;
    out = decodeTokens(tokens.slice(0, keep));
    count = encodePrefix(out, max).length;
  }
  return { text: out, tokens: count };
}
