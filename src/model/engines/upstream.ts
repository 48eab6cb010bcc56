// An OpenAI-compatible upstream (vLLM, llama.cpp server, Ollama, any provider), called with
// `stream: true` and relayed chunk by chunk, or, for a caller that wants the whole answer only
// (a buffered chat completion), with `stream: false` and its one JSON answer read (a relay of
// sixteen chunks cost ours 0.6 ms of CPU a call more than one JSON: npm run bench:gateway). Timeouts per phase (connect, first byte, total),
// retries with exponential backoff and jitter while nothing was relayed yet, then failover to a
// fallback upstream. Failures map to 502 upstream_failed, 503 upstream_overloaded, 504 upstream_timeout.
//
// Every call goes through the outbound guard (platform/outbound.ts `open`, origin `operator`): its
// connection pools, its address check at connect time (an operator's private network is allowed,
// link-local and the like never), its timeouts and body caps; it never follows a redirect.
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CreateChatCompletionRequest, TextModelId } from '../../../generated/model/client/types.gen.ts';
import { ApiError } from '../../platform/errors.ts';
import {
  type Outbound,
  OutboundRefused,
  OutboundTimeout,
  OutboundTooLarge,
} from '../../platform/outbound.ts';
import { SseParser } from './sse.ts';
import { DEFAULT_DIMENSIONS } from '../../embeddings/index.ts';
import type { ChatOptions, EmbedRequest, EmbedResult, Engine, EngineEvent, FinishReason } from './engine.ts';

export interface UpstreamConfig {
  /** The OpenAI-compatible base URL, with its version prefix: `http://127.0.0.1:8000/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** The upstream's model name for every model this engine serves. */
  model?: string;
  /** The upstream's model name per model of ours (wins over `model`); default: our model id. */
  modelMap?: Partial<Record<string, string>>;
  /** Time to open the TCP connection. Default 5,000 ms. */
  connectTimeoutMs?: number;
  /**
   * Time from sending a streamed request to the first event of the answer. Default 60,000 ms.
   * A buffered call (the client asked for no stream) asks the upstream for one JSON answer, whose
   * first byte comes when it is complete, so only `totalTimeoutMs` bounds it (as LiteLLM's
   * `stream_timeout` and `timeout`).
   */
  firstByteTimeoutMs?: number;
  /** Time for the whole answer, streamed or buffered. Default 600,000 ms. */
  totalTimeoutMs?: number;
  /** Further attempts after a failure, only while nothing was relayed. Default 1. */
  retries?: number;
  /** First backoff delay; doubled per attempt, with jitter. Default 250 ms. */
  retryBaseMs?: number;
  /** A `Retry-After` of the upstream longer than this is not waited for (failover instead). Default 5,000 ms. */
  maxRetryWaitMs?: number;
  /** Extra request headers (an organisation header, a gateway key). */
  headers?: Record<string, string>;
  /** The upstream to try when this one fails before relaying anything. */
  fallback?: UpstreamConfig;
}

const DEFAULTS = {
  connectTimeoutMs: 5_000,
  firstByteTimeoutMs: 60_000,
  totalTimeoutMs: 600_000,
  retries: 1,
  retryBaseMs: 250,
  maxRetryWaitMs: 5_000,
};
const MAX_ERROR_BODY = 64 * 1024;
/** The most of a streamed chat answer read (about 16 million tokens of deltas): past it, a 502. */
const MAX_CHAT_ANSWER = 64 * 1024 * 1024;
/** How long the end of an answer may take after its `[DONE]` before the connection is cut. */
const DRAIN_MS = 250;
/** The most of an embeddings answer read (2,048 inputs of 3,072 floats as JSON text fit). */
const MAX_EMBEDDINGS_ANSWER = 256 * 1024 * 1024;

/** A whole answer as UTF-8 text (the guard caps its length). */
async function readText(body: AsyncIterable<Buffer>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of body) parts.push(part);
  return Buffer.concat(parts).toString('utf8');
}

/** The first 64 KiB of an error answer, for its message; the rest is dropped unread. */
export async function readError(body: AsyncIterable<Buffer>): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of body) {
    parts.push(part);
    size += part.length;
    if (size >= MAX_ERROR_BODY) break;
  }
  return Buffer.concat(parts).subarray(0, MAX_ERROR_BODY).toString('utf8');
}

/** An ApiError of the upstream, with what the retry loop needs to know. */
export class UpstreamError extends ApiError {
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(
    status: 502 | 503 | 504,
    code: 'upstream_failed' | 'upstream_overloaded' | 'upstream_timeout',
    message: string,
    options: { retryable: boolean; retryAfterMs?: number | undefined },
  ) {
    const retryAfterMs = options.retryAfterMs;
    const headers =
      status === 503
        ? {
            'Retry-After': String(Math.max(1, Math.ceil((retryAfterMs ?? 1000) / 1000))),
            'retry-after-ms': String(retryAfterMs ?? 1000),
          }
        : {};
    super(status, code, message, { headers });
    this.retryable = options.retryable;
    this.retryAfterMs = retryAfterMs;
  }
}

export const failed = (message: string, retryable = true): UpstreamError =>
  new UpstreamError(502, 'upstream_failed', message, { retryable });
const timedOut = (message: string): UpstreamError =>
  new UpstreamError(504, 'upstream_timeout', message, { retryable: true });
const overloaded = (message: string, retryAfterMs: number | undefined): UpstreamError =>
  new UpstreamError(503, 'upstream_overloaded', message, { retryable: true, retryAfterMs });

/** Milliseconds of a `retry-after-ms` or `Retry-After` (seconds or an HTTP date) header. */
export function parseRetryAfter(headers: IncomingHttpHeaders, now = Date.now()): number | undefined {
  const ms = Number(headers['retry-after-ms']);
  if (headers['retry-after-ms'] !== undefined && Number.isFinite(ms) && ms >= 0) return Math.round(ms);
  const raw = headers['retry-after'];
  if (raw === undefined || raw === '') return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function mapFinish(reason: unknown): FinishReason {
  if (reason === 'length' || reason === 'tool_calls' || reason === 'content_filter') return reason;
  if (reason === 'function_call') return 'tool_calls';
  return 'stop';
}

interface UpstreamChunk {
  choices?: {
    index?: number;
    delta?: {
      content?: string | null;
      tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[];
    };
    message?: {
      content?: string | null;
      tool_calls?: { id?: string; function?: { name?: string; arguments?: string } }[];
    };
    finish_reason?: string | null;
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string; type?: string; code?: string | number } | string;
}

/** The engine events of one upstream chunk (or of a whole buffered answer, for upstreams that ignore `stream`). */
export function chunkEvents(chunk: UpstreamChunk): EngineEvent[] {
  const events: EngineEvent[] = [];
  for (const choice of chunk.choices ?? []) {
    const index = choice.index ?? 0;
    const part = choice.delta ?? choice.message ?? {};
    if (typeof part.content === 'string' && part.content !== '') {
      events.push({ type: 'content', choice: index, text: part.content });
    }
    (part.tool_calls ?? []).forEach((call, position) => {
      const event: EngineEvent = {
        type: 'tool_call',
        choice: index,
        index: 'index' in call && typeof call.index === 'number' ? call.index : position,
      };
      if (typeof call.id === 'string') event.id = call.id;
      if (typeof call.function?.name === 'string') event.name = call.function.name;
      if (typeof call.function?.arguments === 'string') event.arguments = call.function.arguments;
      events.push(event);
    });
    if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
      events.push({ type: 'finish', choice: index, reason: mapFinish(choice.finish_reason) });
    }
  }
  const usage = chunk.usage;
  if (usage !== null && usage !== undefined && typeof usage.prompt_tokens === 'number') {
    events.push({
      type: 'usage',
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens ?? 0,
    });
  }
  return events;
}

function upstreamMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
    if (typeof parsed.error?.message === 'string') return parsed.error.message;
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not JSON
  }
  return body.trim().slice(0, 200);
}

/**
 * The body of an upstream request: streamed with usage (buffered when `whole`), our model mapped,
 * our own fields left out.
 */
export function upstreamBody(
  request: CreateChatCompletionRequest,
  model: string,
  whole = false,
): Record<string, unknown> {
  const body: Record<string, unknown> = { ...request };
  // metadata is ours; `user` identifies our client's end users and stays here (data minimisation)
  for (const key of ['metadata', 'user', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens']) {
    delete body[key];
  }
  const max = request.max_completion_tokens ?? request.max_tokens ?? null;
  // `max_tokens` is the field every OpenAI-compatible server knows
  if (max !== null) body.max_tokens = max;
  return whole
    ? { ...body, model, stream: false }
    : { ...body, model, stream: true, stream_options: { include_usage: true } };
}

function asUpstreamError(error: unknown): UpstreamError {
  return error instanceof UpstreamError ? error : failed(`The upstream failed: ${(error as Error).message}`);
}

/** Exponential backoff with jitter, never shorter than the upstream's Retry-After. */
function backoffMs(
  settings: { retryBaseMs: number },
  attempt: number,
  lastError: UpstreamError | undefined,
): number {
  const backoff = settings.retryBaseMs * 2 ** (attempt - 1) * (0.5 + Math.random() * 0.5);
  return Math.max(backoff, lastError?.retryAfterMs ?? 0);
}

/** The vectors of an upstream's embeddings answer, checked: one per input, finite numbers. */
export function parseEmbeddings(text: string, request: EmbedRequest, host: string): EmbedResult {
  let parsed: { data?: { index?: number; embedding?: unknown }[]; usage?: { prompt_tokens?: unknown } };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    throw failed(`The upstream ${host} answered with invalid JSON.`, false);
  }
  const data = Array.isArray(parsed.data) ? parsed.data : [];
  if (data.length !== request.input.length) {
    throw failed(
      `The upstream ${host} answered ${data.length} embeddings for ${request.input.length} inputs.`,
      false,
    );
  }
  const vectors: Float32Array[] = new Array<Float32Array>(data.length);
  data.forEach((item, position) => {
    const index = typeof item.index === 'number' ? item.index : position;
    const embedding = item.embedding;
    if (
      !Array.isArray(embedding) ||
      embedding.length === 0 ||
      index < 0 ||
      index >= data.length ||
      !embedding.every((x) => typeof x === 'number' && Number.isFinite(x))
    ) {
      throw failed(`The upstream ${host} answered an embedding that is not an array of numbers.`, false);
    }
    vectors[index] = Float32Array.from(embedding as number[]);
  });
  for (let i = 0; i < vectors.length; i++) {
    if (vectors[i] === undefined)
      throw failed(`The upstream ${host} answered no embedding for input ${i}.`, false);
  }
  const result: EmbedResult = { vectors };
  const tokens = parsed.usage?.prompt_tokens;
  if (typeof tokens === 'number' && Number.isInteger(tokens) && tokens >= 0) result.promptTokens = tokens;
  return result;
}

function withDefaults(
  config: UpstreamConfig,
): Required<Omit<UpstreamConfig, 'apiKey' | 'model' | 'modelMap' | 'fallback' | 'headers'>> & UpstreamConfig {
  return { ...DEFAULTS, ...config };
}

export class UpstreamEngine implements Engine {
  readonly name: string;
  readonly config: UpstreamConfig;
  readonly #door: Outbound;

  /** `door` is the outbound guard every call goes through (platform/outbound.ts), as the operator's. */
  constructor(config: UpstreamConfig, door: Outbound) {
    this.config = config;
    this.#door = door;
    this.name = `upstream:${new URL(config.baseUrl).host}`;
  }

  fingerprint(model: TextModelId): string {
    const hash = createHash('sha256')
      .update(`${this.config.baseUrl}|${this.#upstreamModel(this.config, model)}`)
      .digest('hex')
      .slice(0, 10);
    return `fp_${model}_up_${hash}`;
  }

  /** Nothing to release: the outbound guard holds the connections (and is closed with the platform). */
  close(): void {}

  /**
   * Resolves when an upstream of the failover chain accepts a TCP connection, at an address the
   * outbound guard allows: the status page's probe, which sends no request, so it spends none of
   * the operator's tokens, money or rate limit (a completion every 30 s on every instance would).
   */
  async reachable(signal: AbortSignal): Promise<void> {
    let last: unknown;
    for (
      let config: UpstreamConfig | undefined = this.config;
      config !== undefined;
      config = config.fallback
    ) {
      const url = new URL(config.baseUrl);
      const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
      try {
        const { address } = await this.#door.address(url.hostname.replace(/^\[|\]$/g, ''), 'operator');
        await new Promise<void>((resolve, reject) => {
          const socket = connect({ host: address, port, signal });
          socket.once('connect', () => {
            socket.destroy();
            resolve();
          });
          socket.once('error', reject);
        });
        return;
      } catch (err) {
        last = new Error(`the upstream ${url.host} is not reachable: ${(err as Error).message ?? err}`);
      }
    }
    throw last;
  }

  /**
   * The attempts of one call: each upstream in failover order, each tried up to `retries + 1`
   * times with backoff (never shorter than its Retry-After, never longer than `maxRetryWaitMs`).
   * The caller records each failure in `state.lastError` before asking for the next attempt; a
   * failure that is not retryable moves on to the fallback at once.
   */
  async *#attempts(
    signal: AbortSignal | undefined,
    state: { lastError?: UpstreamError },
  ): AsyncGenerator<ReturnType<typeof withDefaults>> {
    for (
      let config: UpstreamConfig | undefined = this.config;
      config !== undefined;
      config = config.fallback
    ) {
      const settings = withDefaults(config);
      for (let attempt = 0; attempt <= settings.retries; attempt++) {
        if (attempt > 0) {
          const wait = backoffMs(settings, attempt, state.lastError);
          if (wait > settings.maxRetryWaitMs) break;
          await sleep(wait, undefined, signal === undefined ? {} : { signal });
        }
        yield settings;
        if (state.lastError?.retryable === false) break;
      }
    }
  }

  async *chat(request: CreateChatCompletionRequest, options: ChatOptions = {}): AsyncGenerator<EngineEvent> {
    const signal = options.signal;
    const state: { lastError?: UpstreamError } = {};
    for await (const settings of this.#attempts(signal, state)) {
      let relayed = false;
      try {
        for await (const event of this.#attempt(settings, request, signal, options.whole === true)) {
          relayed = true;
          yield event;
        }
        return;
      } catch (error) {
        if (signal?.aborted === true) throw signal.reason ?? error;
        const upstream = asUpstreamError(error);
        if (relayed) {
          yield { type: 'error', error: upstream };
          return;
        }
        state.lastError = upstream;
      }
    }
    throw state.lastError ?? failed('No upstream answered.');
  }

  async embed(request: EmbedRequest, options: { signal?: AbortSignal } = {}): Promise<EmbedResult> {
    const signal = options.signal;
    const state: { lastError?: UpstreamError } = {};
    for await (const settings of this.#attempts(signal, state)) {
      try {
        return await this.#embedAttempt(settings, request, signal);
      } catch (error) {
        if (signal?.aborted === true) throw signal.reason ?? error;
        state.lastError = asUpstreamError(error);
      }
    }
    throw state.lastError ?? failed('No upstream answered.');
  }

  #upstreamModel(config: UpstreamConfig, model: TextModelId): string {
    return config.modelMap?.[model] ?? config.model ?? model;
  }

  /**
   * One POST relayed with this engine's timeouts, retries and failover, for the media models: the
   * upstream's answer once it is a 200 (its body still to read, as bytes, at most `maxBodyBytes`),
   * else the mapped UpstreamError of the last attempt. `body` is JSON, or bytes with their
   * content type (multipart); `model` names our model, mapped by `model` / `modelMap` of each upstream.
   */
  async exchange(
    path: string,
    body: (model: string) => Record<string, unknown> | { payload: Buffer; contentType: string },
    options: { model: string; accept: string; maxBodyBytes: number; signal?: AbortSignal | undefined },
  ): Promise<{
    headers: IncomingHttpHeaders;
    body: AsyncIterable<Buffer>;
    host: string;
    mapError(error: unknown): unknown;
    close(): void;
  }> {
    const signal = options.signal;
    const state: { lastError?: UpstreamError } = {};
    for await (const settings of this.#attempts(signal, state)) {
      const upstreamModel = settings.modelMap?.[options.model] ?? settings.model ?? options.model;
      const call = this.#open(
        settings,
        path,
        body(upstreamModel),
        options.accept,
        signal,
        options.maxBodyBytes,
      );
      try {
        const res = await call.response;
        if (res.status !== 200) {
          throw this.#statusError(call.url.host, res.status, res.headers, await readError(call.body()));
        }
        call.firstByte();
        return {
          headers: res.headers,
          body: call.body(),
          host: call.url.host,
          mapError: call.mapError,
          close: call.close,
        };
      } catch (error) {
        const mapped = call.mapError(error);
        call.close();
        if (signal?.aborted === true) throw signal.reason ?? error;
        state.lastError = asUpstreamError(mapped);
      }
    }
    throw state.lastError ?? failed('No upstream answered.');
  }

  /**
   * Sends one POST to one upstream through the outbound guard (origin `operator`: the operator
   * configured this address), with the connect, first-byte and total timeouts and the body cap
   * armed and the client's abort wired in. `mapError` turns whatever the caller caught into the
   * UpstreamError to throw (or the client's abort reason); `close` disarms and frees everything.
   */
  #open(
    config: ReturnType<typeof withDefaults>,
    path: string,
    body: Record<string, unknown> | { payload: Buffer; contentType: string },
    accept: string,
    signal: AbortSignal | undefined,
    maxBodyBytes: number,
  ): {
    url: URL;
    response: Promise<{ status: number; headers: IncomingHttpHeaders }>;
    body(): AsyncIterable<Buffer>;
    firstByte(): void;
    mapError(error: unknown): unknown;
    close(): void;
  } {
    const base = config.baseUrl.endsWith('/') ? config.baseUrl : `${config.baseUrl}/`;
    const url = new URL(path, base);
    const raw =
      body.payload instanceof Buffer ? (body as { payload: Buffer; contentType: string }) : undefined;
    const headers: Record<string, string> = {
      ...config.headers,
      'content-type': raw ? raw.contentType : 'application/json',
      accept,
    };
    if (config.apiKey !== undefined) headers.authorization = `Bearer ${config.apiKey}`;
    const call = this.#door.open(url, {
      method: 'POST',
      headers,
      body: raw ? raw.payload : JSON.stringify(body),
      origin: 'operator',
      connectTimeoutMs: config.connectTimeoutMs,
      firstByteTimeoutMs: config.firstByteTimeoutMs,
      totalTimeoutMs: config.totalTimeoutMs,
      maxBodyBytes,
      signal,
    });
    return {
      url,
      response: call.response,
      body: () => call.body(),
      firstByte: call.firstByte,
      mapError: (error: unknown) => {
        const cause = call.cause(error);
        if (signal?.aborted === true) return cause;
        return this.#guardError(url.host, config, cause);
      },
      close: call.close,
    };
  }

  /** The UpstreamError of what ended a call: the guard's timeouts, cap and refusals, or the network's. */
  #guardError(host: string, config: ReturnType<typeof withDefaults>, cause: unknown): UpstreamError {
    if (cause instanceof UpstreamError) return cause;
    if (cause instanceof OutboundTimeout) {
      if (cause.phase === 'connect')
        return timedOut(
          `The upstream ${host} did not accept a connection within ${config.connectTimeoutMs} ms.`,
        );
      if (cause.phase === 'first_byte')
        return timedOut(
          `The upstream ${host} did not start answering within ${config.firstByteTimeoutMs} ms.`,
        );
      return timedOut(`The upstream ${host} did not finish within ${config.totalTimeoutMs} ms.`);
    }
    if (cause instanceof OutboundTooLarge) {
      return failed(`The upstream ${host} answered more than ${cause.limit / 1024 / 1024} MiB.`, false);
    }
    if (cause instanceof OutboundRefused) {
      return failed(`The upstream ${host} may not be called: ${cause.message}.`, false);
    }
    return this.#networkError(host, cause as NodeJS.ErrnoException);
  }

  /**
   * One request to one upstream; yields its events as they arrive; throws UpstreamError on failure.
   * `whole`: asked for in one JSON answer, whose first byte comes when it is complete, so only the
   * total time bounds it (an upstream that streams all the same is read as a stream).
   */
  async *#attempt(
    config: ReturnType<typeof withDefaults>,
    request: CreateChatCompletionRequest,
    signal: AbortSignal | undefined,
    whole: boolean,
  ): AsyncGenerator<EngineEvent> {
    const call = this.#open(
      whole ? { ...config, firstByteTimeoutMs: config.totalTimeoutMs } : config,
      'chat/completions',
      upstreamBody(request, this.#upstreamModel(config, request.model), whole),
      whole ? 'application/json' : 'text/event-stream',
      signal,
      MAX_CHAT_ANSWER,
    );
    const url = call.url;
    try {
      const res = await call.response;
      const status = res.status;
      const type = String(res.headers['content-type'] ?? '');
      if (status !== 200)
        throw this.#statusError(url.host, status, res.headers, await readError(call.body()));
      if (type.includes('application/json')) {
        // an upstream that ignored `stream: true`: relay its buffered answer as events
        const body = await readText(call.body());
        call.firstByte();
        let parsed: UpstreamChunk;
        try {
          parsed = JSON.parse(body) as UpstreamChunk;
        } catch {
          throw failed(`The upstream ${url.host} answered with invalid JSON.`);
        }
        if (parsed.error !== undefined)
          throw failed(`The upstream ${url.host} failed: ${upstreamMessage(body)}`);
        yield* chunkEvents(parsed);
        return;
      }
      if (!type.includes('text/event-stream')) {
        throw failed(
          `The upstream ${url.host} answered with ${type || 'no content type'}, not an event stream.`,
        );
      }
      const parser = new SseParser();
      const decoder = new StringDecoder('utf8');
      let done = false;
      let finished = false;
      let drain: NodeJS.Timeout | undefined;
      try {
        for await (const bytes of call.body()) {
          // after [DONE]: the end of the answer is read rather than cut, so the connection goes
          // back to the pool for the next call (cut, every call paid a new TCP connection and
          // its close); an upstream that does not end within DRAIN_MS is cut all the same
          if (done) continue;
          for (const event of parser.push(decoder.write(bytes))) {
            call.firstByte();
            if (event.data === '[DONE]') {
              done = true;
              drain = setTimeout(() => call.close(), DRAIN_MS);
              break;
            }
            let chunk: UpstreamChunk;
            try {
              chunk = JSON.parse(event.data) as UpstreamChunk;
            } catch {
              throw failed(`The upstream ${url.host} sent an event that is not JSON.`, false);
            }
            if (chunk.error !== undefined) {
              throw failed(`The upstream ${url.host} failed mid-answer: ${upstreamMessage(event.data)}`);
            }
            for (const out of chunkEvents(chunk)) {
              if (out.type === 'finish') finished = true;
              yield out;
            }
          }
        }
      } catch (error) {
        if (!done) throw error; // cut after [DONE]: the answer was whole
      } finally {
        clearTimeout(drain);
      }
      if (!done && !finished)
        throw failed(`The upstream ${url.host} closed the stream before the answer was complete.`);
    } catch (error) {
      throw call.mapError(error);
    } finally {
      call.close();
    }
  }

  /** One embeddings request to one upstream, buffered; throws UpstreamError on failure. */
  async #embedAttempt(
    config: ReturnType<typeof withDefaults>,
    request: EmbedRequest,
    signal: AbortSignal | undefined,
  ): Promise<EmbedResult> {
    const body: Record<string, unknown> = {
      model: this.#upstreamModel(config, request.model),
      input: request.input,
      encoding_format: 'float',
    };
    if (request.dimensions !== DEFAULT_DIMENSIONS) body.dimensions = request.dimensions;
    const call = this.#open(config, 'embeddings', body, 'application/json', signal, MAX_EMBEDDINGS_ANSWER);
    const url = call.url;
    try {
      const res = await call.response;
      call.firstByte();
      if (res.status !== 200)
        throw this.#statusError(url.host, res.status, res.headers, await readError(call.body()));
      return parseEmbeddings(await readText(call.body()), request, url.host);
    } catch (error) {
      throw call.mapError(error);
    } finally {
      call.close();
    }
  }

  #statusError(host: string, status: number, headers: IncomingHttpHeaders, body: string): UpstreamError {
    const detail = upstreamMessage(body);
    const suffix = detail === '' ? '' : `: ${detail}`;
    if (status === 429 || status === 503) {
      return overloaded(
        `The upstream ${host} is overloaded (HTTP ${status})${suffix}`,
        parseRetryAfter(headers),
      );
    }
    if (status === 504 || status === 408)
      return timedOut(`The upstream ${host} timed out (HTTP ${status})${suffix}`);
    if (status >= 300 && status < 400) {
      return failed(
        `The upstream ${host} answered with a redirect (HTTP ${status}), which is not followed.`,
        false,
      );
    }
    if (status >= 500) return failed(`The upstream ${host} failed (HTTP ${status})${suffix}`);
    return failed(`The upstream ${host} rejected the request (HTTP ${status})${suffix}`, false);
  }

  #networkError(host: string, error: NodeJS.ErrnoException): UpstreamError {
    const code = error.code ?? '';
    if (code === 'ECONNREFUSED') return failed(`The upstream ${host} refused the connection.`);
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
      return failed(`The upstream host ${host} could not be resolved.`);
    if (code === 'ETIMEDOUT') return timedOut(`The connection to the upstream ${host} timed out.`);
    return failed(
      `The connection to the upstream ${host} failed${code === '' ? '' : ` (${code})`}: ${error.message}`,
    );
  }
}
