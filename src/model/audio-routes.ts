// POST /v1/audio/speech and POST /v1/audio/transcriptions (voice): speech streamed as it is made
// (audio chunks, or SSE), transcriptions from a multipart upload kept on disk, in every OpenAI
// response format or streamed. Billed per second of audio (out for speech, in for
// transcriptions); one usage record per call.
import { readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import type { Request, Response } from 'express';
import type {
  CreateTranscriptionResponse,
  TranscriptionSegment,
} from '../../generated/model/client/types.gen.ts';
import type { Limiter } from '../limits/limiter.ts';
import { takeMediaUnits } from '../limits/middleware.ts';
import type { LimitSettings } from '../limits/policies.ts';
import { decodeAudio } from '../media/audio/decode.ts';
import {
  type Encoders,
  SPEECH_CONTENT_TYPES,
  SPEECH_RATE,
  unsupportedFormat,
} from '../media/audio/speech-formats.ts';
import type { VoiceEngine } from '../media/engines.ts';
import { RECOGNIZER_RATE, type Utterance } from '../media/recognize.ts';
import { engineUnavailable } from '../media/speech.ts';
import type { Db } from '../platform/db.ts';
import type { Principal } from '../platform/principal.ts';
import { BadRequestError } from '../platform/errors.ts';
import { type Disconnect, watchDisconnect } from '../platform/disconnect.ts';
import type { Logger } from '../platform/logger.ts';
import { formatEur, recordUsage } from '../platform/metering.ts';
import { SENT, operationRouter, type OperationRouter } from '../platform/route.ts';
import { audioCostNano } from './catalogue.ts';
import { isAbort } from './engines/assemble.ts';
import { encodeText } from './tokens.ts';
import { openSse } from '../platform/sse.ts';

export interface AudioDeps {
  db: Db;
  limiter: Limiter;
  /** The plans' limits and their overrides (MODEL_IMAGES_PER_MINUTE, MODEL_AUDIO_SECONDS_PER_MINUTE). */
  limits: LimitSettings;
  engine: VoiceEngine;
  encoders: Encoders;
  logger: Logger;
}

/** The longest audio one transcription takes (the 25 MB upload holds more at low bitrates). */
export const MAX_TRANSCRIPTION_SECONDS = 3 * 3600;

/** An AudioUsage of `ms` milliseconds. */
export function audioUsage(ms: number) {
  return {
    type: 'duration' as const,
    seconds: Math.round(ms) / 1000,
    cost_eur: formatEur(audioCostNano(ms)),
    currency: 'EUR' as const,
  };
}

/** Ends the response on a client abort, else with `err` (a 500 if it is not an ApiError), logged. */
function failMidStream(res: Response, logger: Logger, err: unknown): void {
  if (!isAbort(err)) logger.error({ err }, 'media stream failed after the 200');
  // the client must not take a cut-off file for a whole one: break the connection
  res.destroy();
}

/**
 * Writes the rest of a streamed answer with `write`, ends it and bills it (200: the client has
 * what was sent); a failure midway breaks the stream (failMidStream), billed the same.
 */
async function finishStream(
  res: Response,
  logger: Logger,
  bill: (status: number) => Promise<void>,
  write: () => Promise<void>,
): Promise<typeof SENT> {
  try {
    await write();
    res.end();
    await bill(200);
  } catch (err) {
    await bill(200);
    failMidStream(res, logger, err);
  }
  return SENT;
}

const LANGUAGES: Record<string, string> = {
  en: 'english',
  de: 'german',
  fr: 'french',
  es: 'spanish',
  it: 'italian',
  pt: 'portuguese',
  nl: 'dutch',
  pl: 'polish',
  sv: 'swedish',
  da: 'danish',
  fi: 'finnish',
  cs: 'czech',
  el: 'greek',
  hu: 'hungarian',
  ro: 'romanian',
};

function timestamp(seconds: number, separator: ',' | '.'): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(ms % 1000, 3)}`;
}

/** SubRip subtitles, one cue per utterance. */
export function toSrt(utterances: readonly Utterance[]): string {
  return utterances
    .map((u, i) => `${i + 1}\n${timestamp(u.start, ',')} --> ${timestamp(u.end, ',')}\n${u.text}\n`)
    .join('\n');
}

/** WebVTT subtitles, one cue per utterance. */
export function toVtt(utterances: readonly Utterance[]): string {
  return `WEBVTT\n\n${utterances.map((u) => `${timestamp(u.start, '.')} --> ${timestamp(u.end, '.')}\n${u.text}\n`).join('\n')}`;
}

/** OpenAI's segment fields, from an utterance and its words' confidences. */
export function segmentOf(u: Utterance, id: number): TranscriptionSegment {
  const confidences = u.words.map((w) => w.confidence);
  const mean = confidences.length ? confidences.reduce((a, b) => a + b, 0) / confidences.length : 0;
  const logprob = confidences.length
    ? confidences.reduce((sum, c) => sum + Math.log(Math.max(c, 1e-4)), 0) / confidences.length
    : -10;
  const bytes = Buffer.byteLength(u.text);
  return {
    id,
    seek: Math.round(u.start * 100),
    start: u.start,
    end: u.end,
    text: u.text,
    tokens: encodeText(u.text),
    temperature: 0,
    avg_logprob: Math.min(0, Math.round(logprob * 1000) / 1000),
    compression_ratio: bytes === 0 ? 0 : Math.round((bytes / gzipSync(u.text).length) * 1000) / 1000,
    no_speech_prob: Math.round(Math.max(0, Math.min(1, 1 - mean)) * 1000) / 1000,
  };
}

function joinText(utterances: readonly Utterance[]): string {
  return utterances
    .map((u) => u.text)
    .filter((t) => t !== '')
    .join(' ');
}

interface UploadedFile {
  path: string;
  originalname: string;
  size: number;
}

/** Takes `seconds` (at least 1) of the key's audio seconds a minute: the 429 when they do not fit. */
async function takeVoiceSeconds(
  deps: AudioDeps,
  res: Response,
  principal: Principal,
  seconds: number,
): Promise<void> {
  const whole = Math.max(1, Math.ceil(seconds));
  await takeMediaUnits(deps.limiter, deps.limits, res, principal, 'voice', 'audio_seconds', whole);
}

/** Records a voice call's usage: `ms` of audio, billed on a 200 only; a failed record is logged. */
function voiceUsage(
  deps: AudioDeps,
  principal: Principal,
  call: { endpoint: string; started: number; streamed: boolean; client: Disconnect },
): (status: number, ms: number) => Promise<void> {
  return async (status, ms) => {
    await recordUsage(deps.db, principal, {
      service: 'model',
      model: 'voice',
      endpoint: call.endpoint,
      audioSeconds: Math.round(ms) / 1000,
      costNano: status === 200 ? audioCostNano(ms) : 0,
      status,
      latencyMs: Date.now() - call.started,
      streamed: call.streamed,
      disconnected: call.client.left,
    }).catch((err: unknown) => deps.logger.error({ err }, 'usage record failed'));
  };
}

export function createAudioRouter(deps: AudioDeps) {
  const api: OperationRouter = operationRouter();

  api.on('createSpeech', async ({ body, res, principal: caller }): Promise<typeof SENT> => {
    const started = Date.now();
    const format = body.response_format ?? 'mp3';
    if (!deps.encoders.available.includes(format)) throw unsupportedFormat(format, deps.encoders.available);
    if (!deps.engine.speechAvailable) throw engineUnavailable('speech', 'Debian package espeak-ng');
    const principal = caller();
    const speed = body.speed ?? 1;
    // about 14 characters a second at normal pace: reserved before speaking, so a 429 comes first
    await takeVoiceSeconds(deps, res, principal, body.input.length / 14 / speed);
    const client = watchDisconnect(res);
    let samples = 0;
    const pcm = deps.engine.speak(
      { input: body.input, voice: body.voice, speed, instructions: body.instructions },
      client.signal,
    );
    async function* counted(): AsyncGenerator<Buffer> {
      for await (const chunk of pcm) {
        samples += chunk.length / 2;
        yield chunk;
      }
    }
    const ms = () => (samples * 1000) / SPEECH_RATE;
    const record = voiceUsage(deps, principal, {
      endpoint: '/v1/audio/speech',
      started,
      streamed: true,
      client,
    });
    const bill = (status: number) => record(status, ms());
    const chunks = deps.encoders.encode(format, counted(), client.signal)[Symbol.asyncIterator]();
    let next: IteratorResult<Buffer>;
    try {
      next = await chunks.next();
    } catch (err) {
      await bill(client.statusOf(err));
      if (client.left) return SENT;
      throw err;
    }
    const sse = body.stream_format === 'sse' ? openSse(res) : undefined;
    if (!sse) {
      res.status(200);
      res.setHeader('Content-Type', SPEECH_CONTENT_TYPES[format]);
      res.flushHeaders();
    }
    return finishStream(res, deps.logger, bill, async () => {
      while (!next.done) {
        if (sse) sse.send({ type: 'speech.audio.delta', audio: next.value.toString('base64') });
        else res.write(next.value);
        next = await chunks.next();
      }
      if (sse) sse.send({ type: 'speech.audio.done', usage: audioUsage(ms()) });
    });
  });

  api.on('createTranscription', async ({ body, req, res, principal: caller }) => {
    const started = Date.now();
    const file = ((req as Request & { files?: UploadedFile[] }).files ?? [])[0];
    if (file === undefined)
      throw new BadRequestError('missing_file', 'Send the audio as the multipart field `file`.', {
        param: 'file',
      });
    const languages = deps.engine.languages;
    if (body.language !== undefined && languages !== undefined && !languages.includes(body.language)) {
      throw new BadRequestError(
        'unsupported_language',
        `The built-in recognizer knows ${languages.join(', ')} only, not ${body.language}; leave language out or ask the operator for an upstream that knows it.`,
        { param: 'language' },
      );
    }
    if (!deps.engine.recognitionAvailable) {
      throw engineUnavailable('speech recognition', 'Debian packages pocketsphinx and pocketsphinx-en-us');
    }
    const bytes = await readFile(file.path);
    const audio = await decodeAudio(bytes, RECOGNIZER_RATE, MAX_TRANSCRIPTION_SECONDS);
    const principal = caller();
    await takeVoiceSeconds(deps, res, principal, audio.seconds);
    const ms = Math.round(audio.seconds * 1000);
    const client = watchDisconnect(res);
    const stream = body.stream === true;
    const record = voiceUsage(deps, principal, {
      endpoint: '/v1/audio/transcriptions',
      started,
      streamed: stream,
      client,
    });
    const bill = (status: number) => record(status, ms);
    const transcript = deps.engine.transcribe(
      {
        bytes,
        filename: file.originalname || 'audio',
        audio,
        language: body.language,
        prompt: body.prompt,
        temperature: body.temperature,
      },
      client.signal,
    );
    const utterances = transcript[Symbol.asyncIterator]();
    const heard: Utterance[] = [];
    let next: IteratorResult<Utterance>;
    try {
      next = await utterances.next();
      if (!stream) {
        while (!next.done) {
          heard.push(next.value);
          next = await utterances.next();
        }
      }
    } catch (err) {
      await bill(client.statusOf(err));
      if (client.left) return SENT;
      throw err;
    }

    if (stream) {
      const events = openSse(res);
      return finishStream(res, deps.logger, bill, async () => {
        while (!next.done) {
          const delta = (heard.length > 0 ? ' ' : '') + next.value.text;
          heard.push(next.value);
          events.send({ type: 'transcript.text.delta', delta });
          next = await utterances.next();
        }
        events.send({ type: 'transcript.text.done', text: joinText(heard), usage: audioUsage(ms) });
      });
    }

    await bill(200);
    const text = joinText(heard);
    const format = body.response_format ?? 'json';
    if (format === 'text' || format === 'srt' || format === 'vtt') {
      const out = format === 'text' ? `${text}\n` : format === 'srt' ? toSrt(heard) : toVtt(heard);
      res.status(200).type('text/plain; charset=utf-8').send(out);
      return SENT;
    }
    const answer: CreateTranscriptionResponse = { text, usage: audioUsage(ms) };
    if (format === 'verbose_json') {
      const granularities = body.timestamp_granularities ?? ['segment'];
      const language = heard.find((u) => u.language !== undefined)?.language ?? body.language ?? 'en';
      const verbose: CreateTranscriptionResponse = {
        task: 'transcribe',
        language: LANGUAGES[language] ?? (/^[a-z ]+$/.test(language) ? language : 'unknown'),
        duration: ms / 1000,
        text,
        usage: answer.usage,
      };
      if (granularities.includes('segment')) verbose.segments = heard.map(segmentOf);
      if (granularities.includes('word')) {
        verbose.words = heard.flatMap((u) =>
          u.words.map((w) => ({ word: w.word, start: w.start, end: w.end })),
        );
      }
      // usage last, as the OpenAI API orders it
      delete (verbose as Partial<CreateTranscriptionResponse>).usage;
      verbose.usage = answer.usage;
      return { status: 200, body: verbose };
    }
    return { status: 200, body: answer };
  });
  return api;
}
