// A realtime session (realtime.ts accepts the upgrade): the client's events in order, the input
// buffer committed and transcribed, responses answered by the text model and spoken, each turn
// billed, and the session ended by the server when its time is up or its key is no longer valid.
import { WebSocket } from 'ws';
import type {
  ChatCompletionRequestMessage,
  CreateChatCompletionRequest,
} from '../../generated/model/client/types.gen.ts';
import { takeMediaUnits } from '../limits/middleware.ts';
import { wavHeader } from '../media/audio/decode.ts';
import { fromPcm16, resample } from '../media/audio/resample.ts';
import { SPEECH_RATE } from '../media/audio/speech-formats.ts';
import { RECOGNIZER_RATE } from '../media/recognize.ts';
import { ApiError } from '../platform/errors.ts';
import { recordUsage } from '../platform/metering.ts';
import type { Principal } from '../platform/principal.ts';
import { audioCostNano } from './catalogue.ts';
import { ChatAssembly } from './engines/assemble.ts';
import { countPromptTokens } from './tokens.ts';
import {
  type ClientEvent,
  DEFAULT_INSTRUCTIONS,
  type Ending,
  ENDING_GRACE_MS,
  id,
  type Item,
  keyEnding,
  MAX_BUFFER_SECONDS,
  MAX_ITEMS,
  REALTIME_TEXT_MODEL,
  type RealtimeDeps,
  type SessionConfig,
  sessionObject,
  updateConfig,
} from './realtime-config.ts';

/** One client’s realtime session on its WebSocket, from session.created to the close. */
export class Session {
  readonly #ws: WebSocket;
  readonly #principal: Principal;
  readonly #secret: string;
  readonly #deps: RealtimeDeps;
  readonly #id = id('sess');
  readonly #requestId: string;
  readonly #config: SessionConfig = {
    instructions: DEFAULT_INSTRUCTIONS,
    voice: 'alloy',
    speed: 1,
    outputModalities: ['audio'],
  };
  #buffer: Buffer[] = [];
  #bufferBytes = 0;
  readonly #items: Item[] = [];
  #response: AbortController | undefined;
  /** The response in flight, settled once it is billed and its response.done sent. */
  #responding: Promise<void> = Promise.resolve();
  #transcriptions = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  /** Set when the server ends the session (its time is up, its key revoked); aborts the work in flight. */
  #ending: Ending | undefined;
  readonly #life = new AbortController();

  constructor(ws: WebSocket, principal: Principal, secret: string, deps: RealtimeDeps, requestId: string) {
    this.#ws = ws;
    this.#principal = principal;
    this.#secret = secret;
    this.#deps = deps;
    this.#requestId = requestId;
  }

  start(): void {
    this.#timer = setTimeout(() => {
      void this.#end({
        type: 'invalid_request_error',
        code: 'session_expired',
        message: `The session reached its limit of ${this.#deps.maxSeconds} seconds; open a new one.`,
        closeCode: 1000,
        closeReason: 'session expired',
        cancelReason: 'session_expired',
      });
    }, this.#deps.maxSeconds * 1000);
    this.#timer.unref();
    this.#ws.on('message', (data, isBinary) => {
      if (this.#ending !== undefined) return; // the session is closing: nothing new starts
      if (isBinary) {
        this.#error('invalid_event', 'Send events as JSON text messages, not binary ones.');
        return;
      }
      let event: ClientEvent;
      try {
        event = JSON.parse(String(data)) as ClientEvent;
      } catch {
        this.#error('invalid_json', 'The message is not valid JSON.');
        return;
      }
      if (typeof event !== 'object' || event === null || Array.isArray(event)) {
        this.#error('invalid_event', 'An event is a JSON object with a `type`.');
        return;
      }
      void this.#handle(event).catch((err: unknown) => {
        const api = err instanceof ApiError ? err : undefined;
        if (!api) this.#deps.logger.error({ err, request_id: this.#requestId }, 'realtime event failed');
        this.#error(
          api?.code ?? 'internal_error',
          api?.message ?? 'The event could not be handled.',
          event,
          null,
          api?.type,
        );
      });
    });
    this.#ws.on('close', () => {
      this.#closed = true;
      clearTimeout(this.#timer);
      this.#response?.abort(new DOMException('The client disconnected.', 'AbortError'));
      this.#life.abort(new DOMException('The client disconnected.', 'AbortError'));
    });
    this.#ws.on('error', () => {});
    this.#send({ type: 'session.created', session: this.#session() });
  }

  #send(event: Record<string, unknown>): void {
    if (this.#closed || this.#ws.readyState !== WebSocket.OPEN) return;
    this.#ws.send(JSON.stringify({ event_id: id('event'), ...event }));
  }

  /**
   * Ends the session from the server's side: nothing new starts, the response in flight is cut
   * (billed for the tokens and audio it made, with a response.done that says why), a
   * transcription in flight is dropped unbilled, then the error event and the close.
   */
  async #end(ending: Ending): Promise<void> {
    if (this.#ending !== undefined || this.#closed) return;
    this.#ending = ending;
    clearTimeout(this.#timer);
    this.#life.abort(new DOMException(ending.message, 'AbortError'));
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([this.#responding, this.#transcriptions]),
      new Promise((resolve) => (grace = setTimeout(resolve, ENDING_GRACE_MS))),
    ]);
    clearTimeout(grace);
    this.#error(ending.code, ending.message, undefined, null, ending.type);
    this.#ws.close(ending.closeCode, ending.closeReason);
  }

  /**
   * The key of this session was revoked or rotated somewhere: asks again whether its secret is
   * valid, and ends the session at once when it is not (a rotation's grace keeps it open).
   */
  async recheck(): Promise<void> {
    if (this.#ending !== undefined || this.#closed) return;
    try {
      await this.#deps.auth.principalOf(this.#secret, ['voice'], 'GET /v1/realtime');
    } catch (err) {
      // only a verdict on the key ends the session; a database hiccup does not
      if (err instanceof ApiError && (err.status === 401 || err.status === 403))
        await this.#end(keyEnding(err));
    }
  }

  #error(
    code: string,
    message: string,
    event?: ClientEvent,
    param: string | null = null,
    type = 'invalid_request_error',
  ): void {
    this.#send({
      type: 'error',
      error: {
        type,
        code,
        message,
        param,
        event_id: typeof event?.event_id === 'string' ? event.event_id : null,
      },
    });
  }

  #session(): Record<string, unknown> {
    return sessionObject(this.#id, this.#config, this.#deps.maxSeconds);
  }

  async #handle(event: ClientEvent): Promise<void> {
    switch (event.type) {
      case 'session.update':
        return this.#update(event);
      case 'input_audio_buffer.append': {
        if (typeof event.audio !== 'string')
          return this.#error(
            'invalid_value',
            '`audio` must be base64 of 24 kHz 16-bit mono PCM.',
            event,
            'audio',
          );
        const bytes = Buffer.from(event.audio, 'base64');
        if (this.#bufferBytes + bytes.length > MAX_BUFFER_SECONDS * SPEECH_RATE * 2) {
          return this.#error(
            'input_audio_buffer_full',
            `The input buffer holds at most ${MAX_BUFFER_SECONDS} seconds; commit or clear it first.`,
            event,
          );
        }
        this.#buffer.push(bytes);
        this.#bufferBytes += bytes.length;
        return;
      }
      case 'input_audio_buffer.clear':
        this.#buffer = [];
        this.#bufferBytes = 0;
        return this.#send({ type: 'input_audio_buffer.cleared' });
      case 'input_audio_buffer.commit':
        return this.#commit(event);
      case 'conversation.item.create':
        return this.#createItem(event);
      case 'response.create':
        return this.#respond(event);
      case 'response.cancel':
        this.#response?.abort(new DOMException('Cancelled by the client.', 'AbortError'));
        return;
      default:
        return this.#error(
          'unknown_event',
          `Unknown event type ${JSON.stringify(event.type)}.`,
          event,
          'type',
        );
    }
  }

  #update(event: ClientEvent): void {
    const refused = updateConfig(this.#config, event.session);
    if (refused) return this.#error(refused.code, refused.message, event, refused.param);
    this.#send({ type: 'session.updated', session: this.#session() });
  }

  /**
   * Re-checks the key before each billable turn (a key that expired, or whose rotation grace
   * ended, since the last check ends the session here) and takes the audio per minute.
   */
  async #stillAllowed(seconds: number): Promise<void> {
    try {
      await this.#deps.auth.principalOf(this.#secret, ['voice'], 'GET /v1/realtime');
    } catch (err) {
      if (err instanceof ApiError && (err.status === 401 || err.status === 403))
        void this.#end(keyEnding(err));
      throw err;
    }
    await takeMediaUnits(
      this.#deps.limiter,
      this.#deps.limits,
      undefined,
      this.#principal,
      'voice',
      'audio_seconds',
      Math.max(1, Math.ceil(seconds)),
    );
  }

  /**
   * Takes the buffer at once (events are handled in their order up to their first await), then
   * transcribes in turn: each commit after the one before, and a response after them all.
   */
  #commit(event: ClientEvent): Promise<void> {
    const pcm = Buffer.concat(this.#buffer);
    this.#buffer = [];
    this.#bufferBytes = 0;
    const ms = (pcm.length / 2 / SPEECH_RATE) * 1000;
    if (ms < 100) {
      this.#error(
        'input_audio_buffer_commit_empty',
        `Expected at least 100ms of audio, but the buffer only has ${ms.toFixed(2)}ms of audio.`,
        event,
      );
      return Promise.resolve();
    }
    const previous = this.#items.at(-1)?.id ?? null;
    const item: Item = { id: id('item'), role: 'user', text: '', audio: true };
    this.#remember(item);
    this.#send({ type: 'input_audio_buffer.committed', previous_item_id: previous, item_id: item.id });
    const shown = {
      id: item.id,
      object: 'realtime.item',
      type: 'message',
      role: 'user',
      status: 'completed',
      content: [{ type: 'input_audio', transcript: null }],
    };
    this.#send({ type: 'conversation.item.added', previous_item_id: previous, item: shown });
    this.#send({ type: 'conversation.item.done', previous_item_id: previous, item: shown });
    const turn = this.#transcriptions.then(async () => {
      if (this.#ending !== undefined) return;
      try {
        await this.#stillAllowed(ms / 1000);
      } catch (err) {
        // the item was committed: say that its transcript will not come, and why
        if (err instanceof ApiError && this.#ending === undefined) this.#transcriptionFailed(item, err);
        throw err;
      }
      await this.#transcribe(item, pcm, ms);
    });
    this.#transcriptions = turn.catch(() => {});
    return turn;
  }

  async #transcribe(item: Item, pcm: Buffer, ms: number): Promise<void> {
    const started = Date.now();
    const samples16k = resample(fromPcm16(pcm), SPEECH_RATE, RECOGNIZER_RATE);
    const pcm16k = new Int16Array(samples16k.length);
    for (let i = 0; i < samples16k.length; i++)
      pcm16k[i] = Math.round(Math.max(-1, Math.min(1, samples16k[i] as number)) * 32767);
    const wav = Buffer.concat([wavHeader(SPEECH_RATE, pcm.length), pcm]);
    let status = 200;
    try {
      const parts: string[] = [];
      for await (const u of this.#deps.voice.transcribe(
        {
          bytes: wav,
          filename: 'audio.wav',
          audio: { kind: 'wav', samples: pcm16k, sampleRate: RECOGNIZER_RATE, seconds: ms / 1000 },
          language: 'en',
          prompt: undefined,
          temperature: undefined,
        },
        this.#life.signal,
      )) {
        parts.push(u.text);
        this.#send({
          type: 'conversation.item.input_audio_transcription.delta',
          item_id: item.id,
          content_index: 0,
          delta: (parts.length > 1 ? ' ' : '') + u.text,
        });
      }
      item.text = parts.join(' ');
      this.#send({
        type: 'conversation.item.input_audio_transcription.completed',
        item_id: item.id,
        content_index: 0,
        transcript: item.text,
        usage: { type: 'duration', seconds: Math.round(ms) / 1000 },
      });
    } catch (err) {
      // ended by the server or the client: dropped before its transcript, so not billed
      status = this.#life.signal.aborted ? 499 : err instanceof ApiError ? err.status : 500;
      const ending = this.#ending;
      this.#transcriptionFailed(
        item,
        ending !== undefined
          ? new ApiError(400, ending.code, ending.message)
          : err instanceof ApiError
            ? err
            : new ApiError(500, 'engine_failed', 'The transcription failed.'),
      );
    }
    await this.#bill({
      model: 'voice',
      audioSeconds: Math.round(ms) / 1000,
      costNano: status === 200 ? audioCostNano(ms) : 0,
      status,
      latencyMs: Date.now() - started,
    });
  }

  #transcriptionFailed(item: Item, error: ApiError): void {
    this.#send({
      type: 'conversation.item.input_audio_transcription.failed',
      item_id: item.id,
      content_index: 0,
      error: { type: 'transcription_error', code: error.code, message: error.message, param: null },
    });
  }

  #createItem(event: ClientEvent): void {
    const raw = (event.item ?? {}) as { type?: unknown; role?: unknown; content?: unknown };
    const role = raw.role;
    if (
      raw.type !== 'message' ||
      (role !== 'user' && role !== 'system' && role !== 'assistant') ||
      !Array.isArray(raw.content)
    ) {
      return this.#error(
        'invalid_value',
        'Only message items with a role (user, system, assistant) and text content can be created.',
        event,
        'item',
      );
    }
    const text = (raw.content as { type?: unknown; text?: unknown }[])
      .filter(
        (c) =>
          (c.type === 'input_text' || c.type === 'text' || c.type === 'output_text') &&
          typeof c.text === 'string',
      )
      .map((c) => c.text as string)
      .join('\n')
      .slice(0, 32_768);
    if (text === '')
      return this.#error(
        'invalid_value',
        'The item holds no text (input_text content).',
        event,
        'item.content',
      );
    const previous = this.#items.at(-1)?.id ?? null;
    const item: Item = { id: id('item'), role, text, audio: false };
    this.#remember(item);
    const shown = {
      id: item.id,
      object: 'realtime.item',
      type: 'message',
      role,
      status: 'completed',
      content: [{ type: role === 'assistant' ? 'output_text' : 'input_text', text }],
    };
    this.#send({ type: 'conversation.item.added', previous_item_id: previous, item: shown });
    this.#send({ type: 'conversation.item.done', previous_item_id: previous, item: shown });
  }

  #remember(item: Item): void {
    this.#items.push(item);
    if (this.#items.length > MAX_ITEMS) this.#items.splice(0, this.#items.length - MAX_ITEMS);
  }

  async #respond(event: ClientEvent): Promise<void> {
    if (this.#response !== undefined) {
      return this.#error(
        'conversation_already_has_active_response',
        'A response is in progress; wait for response.done or send response.cancel.',
        event,
      );
    }
    const options = (event.response ?? {}) as {
      instructions?: unknown;
      output_modalities?: unknown;
      modalities?: unknown;
    };
    const heard = this.#transcriptions; // the commits before this event, not after
    const controller = new AbortController();
    this.#response = controller;
    // cancelled by the client, or cut by the server ending the session
    const signal = AbortSignal.any([controller.signal, this.#life.signal]);
    let settle: () => void = () => {};
    this.#responding = new Promise<void>((resolve) => (settle = resolve));
    const responseId = id('resp');
    const itemId = id('item');
    const modalities = options.output_modalities ?? options.modalities;
    const audio = Array.isArray(modalities)
      ? modalities.includes('audio')
      : this.#config.outputModalities.includes('audio');
    const started = Date.now();
    const base = {
      id: responseId,
      object: 'realtime.response',
      conversation_id: this.#id,
      output_modalities: audio ? ['audio'] : ['text'],
    };
    this.#send({
      type: 'response.created',
      response: { ...base, status: 'in_progress', output: [], usage: null },
    });
    let status: 'completed' | 'cancelled' | 'failed' = 'completed';
    let text = '';
    let samples = 0;
    let usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
    let failure: ApiError | undefined;
    try {
      await heard;
      await this.#stillAllowed(1);
      const instructions =
        typeof options.instructions === 'string' ? options.instructions : this.#config.instructions;
      const messages: ChatCompletionRequestMessage[] = [
        { role: 'system', content: instructions },
        ...this.#items
          .filter((i) => i.text !== '')
          .map((i) => ({ role: i.role, content: i.text }) as ChatCompletionRequestMessage),
      ];
      if (messages.length === 1) messages.push({ role: 'user', content: '(silence)' });
      const request: CreateChatCompletionRequest = {
        model: REALTIME_TEXT_MODEL,
        messages,
        max_completion_tokens: 200,
      };
      const engine = this.#deps.chatEngine();
      const assembly = new ChatAssembly({
        model: REALTIME_TEXT_MODEL,
        promptTokens: countPromptTokens(request),
        fingerprint: engine.fingerprint(REALTIME_TEXT_MODEL),
      });
      try {
        // streamed from an upstream, not `whole`: a silent upstream then fails a spoken turn at its
        // first-byte timeout rather than after the total time
        const completion = await assembly.collect(
          engine.chat(request, { signal, promptTokens: countPromptTokens(request) }),
        );
        text = completion.choices[0]?.message.content ?? '';
      } finally {
        const billing = assembly.billing();
        usage = {
          input_tokens: billing.promptTokens,
          output_tokens: billing.completionTokens,
          total_tokens: billing.totalTokens,
        };
        await this.#bill({
          model: REALTIME_TEXT_MODEL,
          inputTokens: billing.promptTokens,
          outputTokens: billing.completionTokens,
          costNano: billing.costNano,
          status: 200,
          latencyMs: Date.now() - started,
        });
      }
      const item = {
        id: itemId,
        object: 'realtime.item',
        type: 'message',
        role: 'assistant',
        status: 'in_progress',
        content: [] as unknown[],
      };
      this.#send({ type: 'response.output_item.added', response_id: responseId, output_index: 0, item });
      this.#send({ type: 'conversation.item.added', previous_item_id: this.#items.at(-1)?.id ?? null, item });
      const part = audio ? { type: 'audio', transcript: '' } : { type: 'text', text: '' };
      const at = { response_id: responseId, item_id: itemId, output_index: 0, content_index: 0 };
      this.#send({ type: 'response.content_part.added', ...at, part });
      if (audio) {
        this.#send({ type: 'response.output_audio_transcript.delta', ...at, delta: text });
        if (text.trim() !== '') {
          for await (const chunk of this.#deps.voice.speak(
            {
              input: text.slice(0, 4096),
              voice: this.#config.voice,
              speed: this.#config.speed,
              instructions: undefined,
            },
            signal,
          )) {
            samples += chunk.length / 2;
            this.#send({ type: 'response.output_audio.delta', ...at, delta: chunk.toString('base64') });
          }
        }
        this.#send({ type: 'response.output_audio.done', ...at });
        this.#send({ type: 'response.output_audio_transcript.done', ...at, transcript: text });
        this.#send({ type: 'response.content_part.done', ...at, part: { type: 'audio', transcript: text } });
      } else {
        this.#send({ type: 'response.output_text.delta', ...at, delta: text });
        this.#send({ type: 'response.output_text.done', ...at, text });
        this.#send({ type: 'response.content_part.done', ...at, part: { type: 'text', text } });
      }
      const done = {
        ...item,
        status: 'completed',
        content: [audio ? { type: 'output_audio', transcript: text } : { type: 'output_text', text }],
      };
      this.#send({ type: 'response.output_item.done', response_id: responseId, output_index: 0, item: done });
      this.#send({
        type: 'conversation.item.done',
        previous_item_id: this.#items.at(-1)?.id ?? null,
        item: done,
      });
      this.#remember({ id: itemId, role: 'assistant', text, audio });
    } catch (err) {
      if (signal.aborted || this.#ending !== undefined) status = 'cancelled';
      else {
        status = 'failed';
        failure = err instanceof ApiError ? err : new ApiError(500, 'engine_failed', 'The response failed.');
        if (!(err instanceof ApiError))
          this.#deps.logger.error({ err, request_id: this.#requestId }, 'realtime response failed');
      }
    } finally {
      this.#response = undefined;
      const ms = (samples * 1000) / SPEECH_RATE;
      if (samples > 0) {
        await this.#bill({
          model: 'voice',
          audioSeconds: Math.round(ms) / 1000,
          costNano: audioCostNano(ms),
          status: 200,
          latencyMs: Date.now() - started,
        });
      }
      this.#send({
        type: 'response.done',
        response: {
          ...base,
          status,
          status_details: failure
            ? { type: 'failed', error: { type: failure.type, code: failure.code, message: failure.message } }
            : status === 'cancelled'
              ? { type: 'cancelled', reason: this.#ending?.cancelReason ?? 'client_cancelled' }
              : null,
          output:
            status === 'completed'
              ? [
                  {
                    id: itemId,
                    object: 'realtime.item',
                    type: 'message',
                    role: 'assistant',
                    status: 'completed',
                    content: [
                      audio ? { type: 'output_audio', transcript: text } : { type: 'output_text', text },
                    ],
                  },
                ]
              : [],
          usage: {
            ...usage,
            input_token_details: { text_tokens: usage.input_tokens, audio_tokens: 0 },
            output_token_details: { text_tokens: usage.output_tokens, audio_tokens: 0 },
            audio_seconds: Math.round(ms) / 1000,
          },
        },
      });
      settle();
    }
  }

  async #bill(record: {
    model: string;
    inputTokens?: number;
    outputTokens?: number;
    audioSeconds?: number;
    costNano: number;
    status: number;
    latencyMs: number;
  }): Promise<void> {
    await recordUsage(this.#deps.db, this.#principal, {
      service: 'model',
      endpoint: '/v1/realtime',
      streamed: true,
      ...record,
    }).catch((err: unknown) => this.#deps.logger.error({ err }, 'usage record failed'));
  }
}
