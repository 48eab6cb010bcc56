// What a realtime session (realtime.ts) is made with and keeps: its dependencies and bounds, its
// configuration as `session.update` changes it, and how the server ends it.
import { randomBytes } from 'node:crypto';
import type { Authenticator } from '../accounts/auth.ts';
import type { Bus } from '../accounts/bus.ts';
import type { Limiter } from '../limits/limiter.ts';
import type { LimitSettings } from '../limits/policies.ts';
import { SPEECH_RATE } from '../media/audio/speech-formats.ts';
import type { VoiceEngine } from '../media/engines.ts';
import { nowSeconds } from '../platform/clock.ts';
import type { Db } from '../platform/db.ts';
import type { ApiError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { Engine } from './engines/engine.ts';

export interface RealtimeDeps {
  db: Db;
  auth: Authenticator;
  /** The revocation fan-out: a key revoked or rotated on any instance is named here at once. */
  revocations: Pick<Bus, 'subscribe'>;
  limiter: Limiter;
  /** The plans' limits and their overrides (MODEL_RATE_LIMIT_RPM). */
  limits: LimitSettings;
  voice: VoiceEngine;
  /** The engine of the default text model that answers. */
  chatEngine: () => Engine;
  logger: Logger;
  /** The longest a session stays open. */
  maxSeconds: number;
}

/** The text model that answers in a realtime session. */
export const REALTIME_TEXT_MODEL = 'queen';
/** The largest message a client may send (a 15 s append is about 960 KB of base64). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** The most audio the input buffer holds before a commit (5 minutes). */
export const MAX_BUFFER_SECONDS = 300;
/** Conversation items kept for context; older ones are dropped. */
export const MAX_ITEMS = 64;
export const DEFAULT_INSTRUCTIONS =
  'You are a helpful voice assistant. Answer briefly, in one to three sentences of plain speech.';

export type ClientEvent = { type?: unknown; event_id?: unknown; [key: string]: unknown };

/** Why the server ends a session: the error event it sends last, the close code, and what a cut response says. */
export interface Ending {
  type: 'invalid_request_error' | 'authentication_error' | 'permission_error';
  code: string;
  message: string;
  closeCode: 1000 | 1008;
  closeReason: string;
  /** `status_details.reason` of a response the ending cut short. */
  cancelReason: 'session_expired' | 'key_revoked';
}

/** How long an ending waits for the work in flight to stop and be billed before it closes anyway. */
export const ENDING_GRACE_MS = 5000;

export interface Item {
  id: string;
  role: 'user' | 'assistant' | 'system';
  text: string;
  audio: boolean;
}

export interface SessionConfig {
  instructions: string;
  voice: string;
  speed: number;
  outputModalities: ('audio' | 'text')[];
}

const VOICES = new Set([
  'alloy',
  'ash',
  'ballad',
  'cedar',
  'coral',
  'echo',
  'fable',
  'marin',
  'nova',
  'onyx',
  'sage',
  'shimmer',
  'verse',
]);

export function id(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}

/** The session as the client reads it in session.created and session.updated. */
export function sessionObject(
  id: string,
  config: SessionConfig,
  maxSeconds: number,
): Record<string, unknown> {
  return {
    type: 'realtime',
    object: 'realtime.session',
    id: id,
    model: 'voice',
    output_modalities: config.outputModalities,
    instructions: config.instructions,
    max_output_tokens: 'inf',
    audio: {
      input: {
        format: { type: 'audio/pcm', rate: SPEECH_RATE },
        transcription: { model: 'voice', language: 'en' },
        turn_detection: null,
      },
      output: {
        format: { type: 'audio/pcm', rate: SPEECH_RATE },
        voice: config.voice,
        speed: config.speed,
      },
    },
    expires_at: nowSeconds() + maxSeconds,
  };
}

/** What a `session.update` refused: its error code, message and the param at fault. */
export interface Refusal {
  code: string;
  message: string;
  param: string;
}

/**
 * Applies a `session.update`'s `session` to `config`, in the order of its fields: what comes
 * before a refused field stays applied, as the client sees it in the next session.updated.
 */
export function updateConfig(config: SessionConfig, value: unknown): Refusal | undefined {
  const session = (value ?? {}) as Record<string, unknown>;
  if (typeof session !== 'object' || session === null)
    return { code: 'invalid_value', message: '`session` must be an object.', param: 'session' };
  if (typeof session.instructions === 'string') config.instructions = session.instructions.slice(0, 16_384);
  const modalities = session.output_modalities ?? session.modalities;
  if (Array.isArray(modalities)) {
    const wanted = modalities.filter((m): m is 'audio' | 'text' => m === 'audio' || m === 'text');
    if (wanted.length > 0) config.outputModalities = wanted.includes('audio') ? ['audio'] : ['text'];
  }
  const output = ((session.audio as Record<string, unknown> | undefined)?.output ?? {}) as Record<
    string,
    unknown
  >;
  const voice = output.voice ?? session.voice;
  if (voice !== undefined) {
    if (typeof voice !== 'string' || !VOICES.has(voice))
      return {
        code: 'invalid_value',
        message: `Unknown voice ${JSON.stringify(voice)}; the voices are ${[...VOICES].join(', ')}.`,
        param: 'session.audio.output.voice',
      };
    config.voice = voice;
  }
  if (typeof output.speed === 'number' && output.speed >= 0.25 && output.speed <= 4)
    config.speed = output.speed;
  const input = ((session.audio as Record<string, unknown> | undefined)?.input ?? {}) as Record<
    string,
    unknown
  >;
  const format = (input.format ?? {}) as Record<string, unknown>;
  if (
    (format.type !== undefined && format.type !== 'audio/pcm') ||
    (format.rate !== undefined && format.rate !== SPEECH_RATE)
  ) {
    return {
      code: 'unsupported_format',
      message: 'Audio in is audio/pcm at 24000 Hz only.',
      param: 'session.audio.input.format',
    };
  }
  if (input.turn_detection !== undefined && input.turn_detection !== null) {
    return {
      code: 'unsupported_turn_detection',
      message:
        'Turn detection is not offered: commit the input buffer and send response.create yourself (turn_detection: null).',
      param: 'session.audio.input.turn_detection',
    };
  }
  return undefined;
}

/** The ending of a session whose key is no longer valid (revoked, expired, rotated past its grace). */
export function keyEnding(err: ApiError): Ending {
  return {
    type: err.status === 403 ? 'permission_error' : 'authentication_error',
    code: err.code,
    message: `${err.message} The session ends.`,
    closeCode: 1008,
    closeReason: 'key no longer valid',
    cancelReason: 'key_revoked',
  };
}
