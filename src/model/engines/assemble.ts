// One assembler for both answers: engine events become a buffered ChatCompletion (`collect`) or a
// sequence of ChatCompletionChunks (`stream`), from the same state, so both bill identically, and
// `billing()` tells at any moment what was produced so far (a client that leaves pays for that).
import { createHash, randomBytes } from 'node:crypto';
import type {
  ChatCompletion,
  ChatCompletionChoice,
  ChatCompletionChunk,
  ChatCompletionChunkChoice,
  ChatCompletionChunkToolCall,
  CompletionUsage,
  TextModelId,
} from '../../../generated/model/client/types.gen.ts';
import { ApiError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { formatEur } from '../../platform/metering.ts';
import { costNano } from '../catalogue.ts';
import { countCompletionTokens } from '../tokens.ts';
import type { EngineEvent, FinishReason } from './engine.ts';
import { nowSeconds } from '../../platform/clock.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TOOL_CALL_ID = /^call_[0-9A-Za-z]{24}$/;

function base62(bytes: Uint8Array, length: number): string {
  let out = '';
  for (let i = 0; out.length < length; i++) out += BASE62[(bytes[i % bytes.length] ?? 0) % 62];
  return out;
}

/** A new completion id, `chatcmpl-` and 26 characters (time-ordered, as every id of ours). */
export function newCompletionId(): string {
  return `chatcmpl-${newId('c').slice(2)}`;
}

/** A new random tool call id, `call_` and 24 base62 characters. */
export function newToolCallId(): string {
  return `call_${base62(randomBytes(24), 24)}`;
}

/**
 * The id a tool call is shown with: ids of the spec's shape pass through; others (an upstream's
 * own format) map to a stable `call_…` id derived from them, so the conversation stays consistent.
 */
export function normalizeToolCallId(id: string | undefined): string {
  if (id === undefined || id === '') return newToolCallId();
  if (TOOL_CALL_ID.test(id)) return id;
  return `call_${base62(createHash('sha256').update(id).digest(), 24)}`;
}

export interface AssemblyOptions {
  model: TextModelId;
  /** Prompt tokens as the route counted them; used unless the engine reports its own. */
  promptTokens: number;
  /** The engine's `fingerprint(model)`. */
  fingerprint: string;
  /** `n` of the request: the buffered answer holds at least this many choices. */
  n?: number;
  /** `stream_options.include_usage`: chunks carry `usage: null` and a last usage chunk follows. */
  includeUsage?: boolean;
  /** The request id, repeated in the error object of an in-stream failure. */
  requestId?: string;
  id?: string;
  created?: number;
}

/** What the request costs so far: final once `complete`, else what was generated until now. */
export interface Billing {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  costNano: number;
  /** Every started choice finished and the engine ended without error. */
  complete: boolean;
  /** The counts are the engine's own (else counted with the tokenizer). */
  reportedByEngine: boolean;
}

interface ToolCallState {
  id: string;
  name: string;
  arguments: string;
}

interface ChoiceState {
  content: string;
  toolCalls: Map<number, ToolCallState>;
  finish: FinishReason | undefined;
}

export class ChatAssembly {
  readonly id: string;
  readonly created: number;
  readonly model: TextModelId;
  readonly fingerprint: string;
  readonly #options: AssemblyOptions;
  readonly #choices = new Map<number, ChoiceState>();
  #engineUsage: { promptTokens: number; completionTokens: number } | undefined;
  #ended = false;
  #failed = false;

  constructor(options: AssemblyOptions) {
    this.#options = options;
    this.id = options.id ?? newCompletionId();
    this.created = options.created ?? nowSeconds();
    this.model = options.model;
    this.fingerprint = options.fingerprint;
  }

  /** Token counts and cost of what was produced so far (final after `collect` or a finished `stream`). */
  billing(): Billing {
    const reported = this.#engineUsage;
    const promptTokens = reported?.promptTokens ?? this.#options.promptTokens;
    const completionTokens =
      reported?.completionTokens ??
      countCompletionTokens(
        [...this.#choices.values()].map((choice) => ({
          content: choice.content,
          toolCalls: [...choice.toolCalls.values()],
        })),
      );
    const complete =
      this.#ended &&
      !this.#failed &&
      [...this.#choices.values()].every((choice) => choice.finish !== undefined);
    return {
      promptTokens,
      completionTokens,
      totalTokens: promptTokens + completionTokens,
      costNano: costNano(this.model, promptTokens, completionTokens),
      complete,
      reportedByEngine: reported !== undefined,
    };
  }

  /** The spec's `CompletionUsage` of `billing()`. */
  usage(): CompletionUsage {
    const billing = this.billing();
    return {
      prompt_tokens: billing.promptTokens,
      completion_tokens: billing.completionTokens,
      total_tokens: billing.totalTokens,
      cost_eur: formatEur(billing.costNano),
      currency: 'EUR',
    };
  }

  /** Consumes every event and returns the buffered answer; an `error` event is thrown as its ApiError. */
  async collect(events: AsyncIterable<EngineEvent>): Promise<ChatCompletion> {
    for await (const event of events) {
      if (event.type === 'error') {
        this.#failed = true;
        throw event.error;
      }
      this.#apply(event);
    }
    this.#ended = true;
    const count = Math.max(this.#options.n ?? 1, ...[...this.#choices.keys()].map((index) => index + 1));
    const choices: ChatCompletionChoice[] = [];
    for (let index = 0; index < count; index++) {
      const state = this.#choice(index);
      state.finish ??= 'stop';
      const toolCalls = [...state.toolCalls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
      choices.push({
        index,
        message: {
          role: 'assistant',
          content: state.content === '' && toolCalls.length > 0 ? null : state.content,
          refusal: null,
          ...(toolCalls.length > 0
            ? {
                tool_calls: toolCalls.map((call) => ({
                  id: call.id,
                  type: 'function' as const,
                  function: { name: call.name, arguments: call.arguments },
                })),
              }
            : {}),
        },
        finish_reason: state.finish,
        logprobs: null,
      });
    }
    return {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.model,
      choices,
      usage: this.usage(),
      system_fingerprint: this.fingerprint,
    };
  }

  /**
   * The streamed answer, chunk by chunk as events arrive. A failure before the first chunk is
   * thrown (answer it with a JSON error); after it, it becomes a last chunk with `error` and
   * `finish_reason: "error"`. An abort (client gone) is rethrown: nobody is listening.
   */
  async *stream(events: AsyncIterable<EngineEvent>): AsyncGenerator<ChatCompletionChunk, void, undefined> {
    let yielded = false;
    try {
      for await (const event of events) {
        if (event.type === 'error') {
          this.#failed = true;
          yield this.#errorChunk(event.error);
          return;
        }
        for (const choices of this.#apply(event)) {
          yielded = true;
          yield this.#chunk(choices);
        }
      }
    } catch (error) {
      if (!yielded || isAbort(error)) throw error;
      this.#failed = true;
      yield this.#errorChunk(
        error instanceof ApiError
          ? error
          : new ApiError(500, 'engine_failed', 'The engine failed while answering.'),
      );
      return;
    }
    this.#ended = true;
    for (const [index, state] of [...this.#choices.entries()].sort(([a], [b]) => a - b)) {
      if (state.finish === undefined) {
        state.finish = 'stop';
        yield this.#chunk([{ index, delta: {}, finish_reason: 'stop', logprobs: null }]);
      }
    }
    if (this.#choices.size === 0) {
      // an engine that produced nothing still answers with one (empty) choice
      this.#choice(0).finish = 'stop';
      yield this.#chunk([
        { index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null },
      ]);
      yield this.#chunk([{ index: 0, delta: {}, finish_reason: 'stop', logprobs: null }]);
    }
    if (this.#options.includeUsage === true) yield this.#chunk([], this.usage());
  }

  #choice(index: number): ChoiceState {
    let state = this.#choices.get(index);
    if (state === undefined) {
      state = { content: '', toolCalls: new Map(), finish: undefined };
      this.#choices.set(index, state);
    }
    return state;
  }

  /** Applies one event; returns the `choices` of the chunks it makes (a role chunk first for a new choice). */
  #apply(event: Exclude<EngineEvent, { type: 'error' }>): ChatCompletionChunkChoice[][] {
    if (event.type === 'usage') {
      this.#engineUsage = { promptTokens: event.promptTokens, completionTokens: event.completionTokens };
      return [];
    }
    const isNew = !this.#choices.has(event.choice);
    const state = this.#choice(event.choice);
    const out: ChatCompletionChunkChoice[][] = [];
    const index = event.choice;
    if (isNew) {
      const content = event.type === 'tool_call' ? null : '';
      out.push([{ index, delta: { role: 'assistant', content }, finish_reason: null, logprobs: null }]);
    }
    if (event.type === 'content') {
      if (event.text === '') return out;
      state.content += event.text;
      out.push([{ index, delta: { content: event.text }, finish_reason: null, logprobs: null }]);
    } else if (event.type === 'tool_call') {
      const known = state.toolCalls.get(event.index);
      const piece: ChatCompletionChunkToolCall = { index: event.index };
      if (known === undefined) {
        const call = {
          id: normalizeToolCallId(event.id),
          name: event.name ?? '',
          arguments: event.arguments ?? '',
        };
        state.toolCalls.set(event.index, call);
        piece.id = call.id;
        piece.type = 'function';
        piece.function = { name: call.name, arguments: call.arguments };
      } else {
        if (event.name !== undefined && known.name === '') known.name = event.name;
        known.arguments += event.arguments ?? '';
        piece.function = { arguments: event.arguments ?? '' };
      }
      out.push([{ index, delta: { tool_calls: [piece] }, finish_reason: null, logprobs: null }]);
    } else {
      state.finish = event.reason;
      out.push([{ index, delta: {}, finish_reason: event.reason, logprobs: null }]);
    }
    return out;
  }

  #chunk(choices: ChatCompletionChunkChoice[], usage?: CompletionUsage): ChatCompletionChunk {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      system_fingerprint: this.fingerprint,
      choices,
      ...(this.#options.includeUsage === true ? { usage: usage ?? null } : {}),
    };
  }

  #errorChunk(error: ApiError): ChatCompletionChunk {
    const open = [...this.#choices.entries()]
      .filter(([, state]) => state.finish === undefined)
      .map(([index]) => index);
    return {
      ...this.#chunk(
        (open.length > 0 ? open : [0]).map((index) => ({
          index,
          delta: {},
          finish_reason: 'error' as const,
          logprobs: null,
        })),
      ),
      error: {
        type: error.type,
        code: error.code,
        message: error.message,
        param: error.param,
        request_id: this.#options.requestId ?? '',
      },
    };
  }
}

/** An abort of the request's signal (the client left), as opposed to a failure of the engine. */
export function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}
