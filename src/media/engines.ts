// What the media models' engines implement (issue 19), and the built-in ones: images painted here
// (images/art.ts), speech by eSpeak NG, recognition by PocketSphinx. An OpenAI-compatible upstream
// implements the same interfaces (src/model/engines/media-upstream.ts).
import { randomInt } from 'node:crypto';
import type { ImageFormat } from './images/image-formats.ts';
import { PaintPool } from './images/pool.ts';
import type { DecodedAudio } from './audio/decode.ts';
import { espeakSpeaker, type Speaker } from './speech.ts';
import { asSentence, pocketsphinxRecognizer, type Recognizer, type Utterance } from './recognize.ts';

export interface ImageRequest {
  prompt: string;
  n: number;
  width: number;
  height: number;
  /** As the request named it (`auto` already resolved): `low`, `medium`, `high`, `standard` or `hd`. */
  quality: 'low' | 'medium' | 'high' | 'standard' | 'hd';
  format: ImageFormat;
  /** 0-100 for jpeg and webp. */
  compression: number | undefined;
  transparent: boolean;
  style: 'vivid' | 'natural';
  seed: number | undefined;
  user: string | undefined;
}

export interface GeneratedImage {
  bytes: Buffer;
  revisedPrompt: string | undefined;
}

export interface ImageEngine {
  /** For logs: `builtin` or `upstream:<host>`. */
  readonly name: string;
  /** The images one by one, as each is ready (so a caller can hold one at a time). */
  generate(request: ImageRequest, signal?: AbortSignal): AsyncGenerator<GeneratedImage>;
}

export interface SpeechRequest {
  input: string;
  voice: string;
  speed: number;
  instructions: string | undefined;
}

export interface TranscriptionRequest {
  /** The file as uploaded (what an upstream gets) and its name. */
  bytes: Buffer;
  filename: string;
  /** The same audio decoded to 16 kHz mono (what the built-in recognizer gets). */
  audio: DecodedAudio;
  language: string | undefined;
  prompt: string | undefined;
  temperature: number | undefined;
}

export interface VoiceEngine {
  readonly name: string;
  /** Whether speech and recognition can run (the built-in engines need their Debian packages). */
  readonly speechAvailable: boolean;
  readonly recognitionAvailable: boolean;
  /** Languages it transcribes (ISO 639-1), or undefined for any. */
  readonly languages: readonly string[] | undefined;
  /** 24 kHz mono 16-bit little-endian PCM, in chunks as produced. */
  speak(request: SpeechRequest, signal?: AbortSignal): AsyncGenerator<Buffer>;
  /** Each stretch of speech as it is recognised. */
  transcribe(request: TranscriptionRequest, signal?: AbortSignal): AsyncGenerator<Utterance>;
}

const QUALITY = { low: 'low', medium: 'medium', high: 'high', standard: 'medium', hd: 'high' } as const;

/** The built-in image engine: a painting per image, encoded in the requested format, on worker threads. */
export class BuiltinImageEngine implements ImageEngine {
  readonly name = 'builtin';
  readonly #pool: PaintPool;

  /** `workers`: threads painting at once (each takes one core while it paints). */
  constructor(workers = 2) {
    this.#pool = new PaintPool(workers);
  }

  async *generate(request: ImageRequest, signal?: AbortSignal): AsyncGenerator<GeneratedImage> {
    const seed = request.seed ?? randomInt(2 ** 47);
    this.#pool.admit(request.n); // all n or none, before any is painted
    // all n at once: the pool paints as many as it has workers, in order
    const jobs = Array.from({ length: request.n }, (_, i) =>
      this.#pool.paint(
        request.prompt,
        {
          width: request.width,
          height: request.height,
          seed: seed + i,
          quality: QUALITY[request.quality],
          natural: request.style === 'natural',
          transparent: request.transparent,
        },
        request.format,
        request.compression,
        signal,
      ),
    );
    for (const job of jobs) job.catch(() => {});
    for (const job of jobs) {
      const { bytes, description } = await job;
      yield { bytes, revisedPrompt: description };
    }
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}

/** The built-in voice engine: eSpeak NG and PocketSphinx, each when installed. */
export class BuiltinVoiceEngine implements VoiceEngine {
  readonly name = 'builtin';
  readonly languages = ['en'] as const;
  readonly #speaker: Speaker;
  readonly #recognizer: Recognizer;

  constructor(options: { modelDir?: string | undefined } = {}) {
    this.#speaker = espeakSpeaker();
    this.#recognizer = pocketsphinxRecognizer(options.modelDir);
  }

  get speechAvailable(): boolean {
    return this.#speaker.available;
  }

  get recognitionAvailable(): boolean {
    return this.#recognizer.available;
  }

  speak(request: SpeechRequest, signal?: AbortSignal): AsyncGenerator<Buffer> {
    return this.#speaker.speak(request, signal);
  }

  async *transcribe(request: TranscriptionRequest, signal?: AbortSignal): AsyncGenerator<Utterance> {
    for await (const u of this.#recognizer.recognize(request.audio.samples, signal)) {
      yield { ...u, text: asSentence(u.text), language: 'en' };
    }
  }
}
