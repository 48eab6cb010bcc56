// What every engine implements: one stream of events per request, from which the assembler builds
// both the buffered ChatCompletion and the streamed chunks, so the two always bill the same.
import type { CreateChatCompletionRequest, TextModelId } from '../../../generated/model/client/types.gen.ts';
import type { ApiError } from '../../platform/errors.ts';

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** The next piece of the text of choice `choice`. */
export interface ContentEvent {
  type: 'content';
  choice: number;
  text: string;
}

/**
 * A piece of tool call `index` of choice `choice`. The first piece of a call carries `id` and
 * `name`; later pieces carry further text of `arguments`, to be appended.
 */
export interface ToolCallEvent {
  type: 'tool_call';
  choice: number;
  index: number;
  id?: string;
  name?: string;
  arguments?: string;
}

/** Choice `choice` is complete. */
export interface FinishEvent {
  type: 'finish';
  choice: number;
  reason: FinishReason;
}

/** Token counts of the whole request, when the engine knows them (sent once, at the end). */
export interface UsageEvent {
  type: 'usage';
  promptTokens: number;
  completionTokens: number;
}

/**
 * Generation failed after events were already produced (an upstream that broke off mid-stream).
 * It is the last event. A failure before the first event is thrown from the iterator instead.
 */
export interface ErrorEvent {
  type: 'error';
  error: ApiError;
}

export type EngineEvent = ContentEvent | ToolCallEvent | FinishEvent | UsageEvent | ErrorEvent;

export interface ChatOptions {
  /** Aborting stops generation promptly; the iterator then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Prompt tokens as the route counted them, so the engine need not tokenize the prompt again. */
  promptTokens?: number;
  /**
   * The caller wants the whole answer only (a buffered chat completion), not its pieces as they
   * come: an engine may then fetch it in one piece (the upstream engine asks with `stream:
   * false`). The events are the same.
   */
  whole?: boolean;
}

/** What an embeddings request asks of an engine, after the route's checks. */
export interface EmbedRequest {
  model: TextModelId;
  /** The inputs as the client sent them: texts, or token ids of `o200k_base` (what an upstream gets). */
  input: string[] | number[][];
  /** The inputs as texts (token ids decoded by the route): what the built-in engine embeds. */
  texts: string[];
  /** 1 to 384. */
  dimensions: number;
}

export interface EmbedResult {
  /** One unit-length vector of `dimensions` numbers per input, in order. */
  vectors: Float32Array[];
  /** Input tokens, when the engine counted them (an upstream's `usage.prompt_tokens`). */
  promptTokens?: number;
}

export interface Engine {
  /** For logs and metrics: `reference` or `upstream:<host>`. */
  readonly name: string;
  /** The `system_fingerprint` of answers, `fp_` then up to 64 of `[0-9a-z_]`. */
  fingerprint(model: CreateChatCompletionRequest['model']): string;
  /**
   * Generates the answer as events. Checks that belong before the 200 (validation, context
   * window) are the route's; an engine failure before the first event is thrown as an ApiError
   * (502, 503 or 504), one after it is an `error` event.
   */
  chat(request: CreateChatCompletionRequest, options?: ChatOptions): AsyncIterable<EngineEvent>;
  /** Embeds every input; failures are ApiErrors (502, 503 or 504 for an upstream). */
  embed(request: EmbedRequest, options?: { signal?: AbortSignal }): Promise<EmbedResult>;
}
