// The media models on an OpenAI-compatible upstream (another instance of this API, LocalAI,
// speaches / faster-whisper-server, Kokoro-FastAPI, whisper.cpp's server, any provider), through
// the upstream engine's timeouts, retries and failover. Speech is asked for as `pcm` and encoded
// here, so its length (the bill) is counted here; transcriptions as `verbose_json`, from which
// every response format is rendered here; images as `b64_json`, checked to be what was asked.
import { randomUUID } from 'node:crypto';
import type {
  GeneratedImage,
  ImageEngine,
  ImageRequest,
  SpeechRequest,
  TranscriptionRequest,
  VoiceEngine,
} from '../../media/engines.ts';
import type { RecognizedWord, Utterance } from '../../media/recognize.ts';
import type { Outbound } from '../../platform/outbound.ts';
import { failed, UpstreamEngine, type UpstreamConfig } from './upstream.ts';

/** Ten 1792x1024 PNGs in base64 fit (the guard drops the connection past it: a 502). */
const MAX_IMAGES_ANSWER = 200 * 1024 * 1024;
/** A verbose_json of three hours with every word's times fits. */
const MAX_TRANSCRIPTION_ANSWER = 64 * 1024 * 1024;
/** 4,096 characters spoken at speed 0.25 as 24 kHz 16-bit PCM (about 80 minutes) fit. */
const MAX_SPEECH_ANSWER = 256 * 1024 * 1024;

type Call = Awaited<ReturnType<UpstreamEngine['exchange']>>;

/** A call's JSON answer, read whole; the call closed, whatever happens. */
async function answerOf<T>(call: Call): Promise<T> {
  try {
    const parts: Buffer[] = [];
    for await (const part of call.body) parts.push(part);
    try {
      return JSON.parse(Buffer.concat(parts).toString('utf8')) as T;
    } catch {
      throw failed(`The upstream ${call.host} answered with invalid JSON.`, false);
    }
  } catch (error) {
    throw call.mapError(error);
  } finally {
    call.close();
  }
}

/** A media engine on an upstream: its name and its one UpstreamEngine, closed with it. */
abstract class UpstreamMediaEngine {
  readonly name: string;
  protected readonly upstream: UpstreamEngine;

  constructor(config: UpstreamConfig, door: Outbound) {
    this.upstream = new UpstreamEngine(config, door);
    this.name = this.upstream.name;
  }

  close(): void {
    this.upstream.close();
  }

  /** The status probe's check (UpstreamEngine.reachable): a connection, no request. */
  reachable(signal: AbortSignal): Promise<void> {
    return this.upstream.reachable(signal);
  }
}

const MAGIC: Record<ImageRequest['format'], (b: Buffer) => boolean> = {
  png: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  jpeg: (b) => b[0] === 0xff && b[1] === 0xd8,
  webp: (b) => b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP',
};

export class UpstreamImageEngine extends UpstreamMediaEngine implements ImageEngine {
  async *generate(request: ImageRequest, signal?: AbortSignal): AsyncGenerator<GeneratedImage> {
    const call = await this.upstream.exchange(
      'images/generations',
      (model) => {
        const body: Record<string, unknown> = {
          model,
          prompt: request.prompt,
          n: request.n,
          size: `${request.width}x${request.height}`,
          quality: request.quality,
          response_format: 'b64_json',
          output_format: request.format,
          background: request.transparent ? 'transparent' : 'opaque',
          style: request.style,
        };
        if (request.compression !== undefined) body.output_compression = request.compression;
        if (request.seed !== undefined) body.seed = request.seed;
        return body;
      },
      { model: 'imagine', accept: 'application/json', maxBodyBytes: MAX_IMAGES_ANSWER, signal },
    );
    const answer = await answerOf<{ data?: { b64_json?: unknown; revised_prompt?: unknown }[] }>(call);
    const data = Array.isArray(answer.data) ? answer.data : [];
    if (data.length !== request.n)
      throw failed(`The upstream ${call.host} answered ${data.length} images for ${request.n}.`, false);
    for (const item of data) {
      const bytes =
        typeof item.b64_json === 'string' ? Buffer.from(item.b64_json, 'base64') : Buffer.alloc(0);
      if (!MAGIC[request.format](bytes))
        throw failed(`The upstream ${call.host} answered an image that is not ${request.format}.`, false);
      yield {
        bytes,
        revisedPrompt: typeof item.revised_prompt === 'string' ? item.revised_prompt : undefined,
      };
    }
  }
}

interface VerboseTranscription {
  text?: unknown;
  language?: unknown;
  segments?: { start?: unknown; end?: unknown; text?: unknown }[];
  words?: { word?: unknown; start?: unknown; end?: unknown }[];
}

/** An upstream's verbose_json as utterances: its segments, each with the words that fall in it. */
export function utterancesOf(answer: VerboseTranscription, seconds: number): Utterance[] {
  const num = (x: unknown, fallback: number): number =>
    typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : fallback;
  const words: RecognizedWord[] = (Array.isArray(answer.words) ? answer.words : []).flatMap((w) =>
    typeof w.word === 'string'
      ? [{ word: w.word.trim(), start: num(w.start, 0), end: num(w.end, 0), confidence: 1 }]
      : [],
  );
  const segments = Array.isArray(answer.segments) ? answer.segments : [];
  if (segments.length === 0) {
    const text = typeof answer.text === 'string' ? answer.text.trim() : '';
    if (text === '') return [];
    const list =
      words.length > 0
        ? words
        : text.split(/\s+/).map((word) => ({ word, start: 0, end: seconds, confidence: 1 }));
    return [{ text, start: 0, end: seconds, words: list }];
  }
  return segments.map((segment) => {
    const start = num(segment.start, 0);
    const end = num(segment.end, seconds);
    const text = typeof segment.text === 'string' ? segment.text.trim() : '';
    const inside = words.filter((w) => w.start >= start - 0.01 && w.start < end);
    return {
      text,
      start,
      end,
      words:
        inside.length > 0
          ? inside
          : text
              .split(/\s+/)
              .filter(Boolean)
              .map((word) => ({ word, start, end, confidence: 1 })),
    };
  });
}

export class UpstreamVoiceEngine extends UpstreamMediaEngine implements VoiceEngine {
  readonly speechAvailable = true;
  readonly recognitionAvailable = true;
  readonly languages = undefined;

  async *speak(request: SpeechRequest, signal?: AbortSignal): AsyncGenerator<Buffer> {
    const call = await this.upstream.exchange(
      'audio/speech',
      (model) => {
        const body: Record<string, unknown> = {
          model,
          input: request.input,
          voice: request.voice,
          speed: request.speed,
          response_format: 'pcm',
        };
        if (request.instructions !== undefined) body.instructions = request.instructions;
        return body;
      },
      { model: 'voice', accept: 'audio/pcm', maxBodyBytes: MAX_SPEECH_ANSWER, signal },
    );
    const type = String(call.headers['content-type'] ?? '');
    try {
      if (type.includes('json') || type.includes('text/'))
        throw failed(`The upstream ${call.host} answered ${type}, not audio.`, false);
      let odd: Buffer | undefined;
      for await (const raw of call.body) {
        let chunk = odd ? Buffer.concat([odd, raw]) : raw;
        odd = undefined;
        if (chunk.length % 2 === 1) {
          odd = chunk.subarray(chunk.length - 1);
          chunk = chunk.subarray(0, chunk.length - 1);
        }
        if (chunk.length > 0) yield chunk;
      }
    } catch (error) {
      throw call.mapError(error);
    } finally {
      call.close();
    }
  }

  async *transcribe(request: TranscriptionRequest, signal?: AbortSignal): AsyncGenerator<Utterance> {
    const call = await this.upstream.exchange(
      'audio/transcriptions',
      (model) => {
        const fields: [string, string][] = [
          ['model', model],
          ['response_format', 'verbose_json'],
          ['timestamp_granularities[]', 'segment'],
          ['timestamp_granularities[]', 'word'],
        ];
        if (request.language !== undefined) fields.push(['language', request.language]);
        if (request.prompt !== undefined) fields.push(['prompt', request.prompt]);
        if (request.temperature !== undefined) fields.push(['temperature', String(request.temperature)]);
        return multipart(fields, { name: 'file', filename: request.filename, bytes: request.bytes });
      },
      { model: 'voice', accept: 'application/json', maxBodyBytes: MAX_TRANSCRIPTION_ANSWER, signal },
    );
    const answer = await answerOf<VerboseTranscription>(call);
    if (typeof answer.text !== 'string')
      throw failed(`The upstream ${call.host} answered a transcription without text.`, false);
    const language = typeof answer.language === 'string' ? answer.language.toLowerCase() : undefined;
    for (const u of utterancesOf(answer, request.audio.seconds))
      yield language === undefined ? u : { ...u, language };
  }
}

/** A multipart/form-data body of text fields and one file. */
export function multipart(
  fields: [string, string][],
  file: { name: string; filename: string; bytes: Buffer },
): { payload: Buffer; contentType: string } {
  const boundary = `----eurus${randomUUID().replace(/-/g, '')}`;
  const quote = (s: string) => s.replace(/["\r\n\\]/g, '_');
  const parts: Buffer[] = [];
  for (const [name, value] of fields) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`,
      ),
    );
  }
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${quote(file.name)}"; filename="${quote(file.filename)}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    file.bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}
