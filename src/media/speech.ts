// The built-in speech engine: eSpeak NG (Debian's `espeak-ng`, GPL-3.0, run as a separate
// process, so none of its code is linked into ours), English, each OpenAI voice name mapped to an
// eSpeak voice variant. Its 22,050 Hz samples are resampled to the API's 24 kHz as they arrive.
import { ApiError } from '../platform/errors.ts';
import { Resampler, fromPcm16, toPcm16 } from './audio/resample.ts';
import { SPEECH_RATE } from './audio/speech-formats.ts';
import { findTool, Semaphore, startTool } from './audio/programs.ts';

/** Each OpenAI voice: an eSpeak variant (Klatt voices, which the recognizer understands best) and a pitch. */
export const VOICES: Record<string, { variant: string; pitch: number }> = {
  alloy: { variant: 'klatt2', pitch: 50 },
  ash: { variant: 'klatt4', pitch: 40 },
  ballad: { variant: 'klatt3', pitch: 55 },
  cedar: { variant: 'edward', pitch: 35 },
  coral: { variant: 'f5', pitch: 60 },
  echo: { variant: 'edward', pitch: 50 },
  fable: { variant: 'klatt', pitch: 55 },
  marin: { variant: 'klatt2', pitch: 65 },
  nova: { variant: 'klatt5', pitch: 60 },
  onyx: { variant: 'adam', pitch: 30 },
  sage: { variant: 'm1', pitch: 50 },
  shimmer: { variant: 'klatt6', pitch: 70 },
  verse: { variant: 'klatt', pitch: 40 },
};

export interface SpeakRequest {
  input: string;
  voice: string;
  /** 0.25 to 4. */
  speed: number;
}

export interface Speaker {
  readonly available: boolean;
  /** 24 kHz mono 16-bit little-endian PCM, in chunks as eSpeak produces it. */
  speak(request: SpeakRequest, signal?: AbortSignal): AsyncGenerator<Buffer>;
}

export function engineUnavailable(what: string, install: string): ApiError {
  return new ApiError(
    503,
    'engine_unavailable',
    `The built-in ${what} engine is not installed on this server (${install}); the operator can install it or relay the model to an upstream.`,
    {
      headers: { 'Retry-After': '60', 'retry-after-ms': '60000' },
    },
  );
}

/** eSpeak NG's words a minute for `speed` (its range is 80 to 450; 175 is its normal pace). */
export function wordsPerMinute(speed: number): number {
  return Math.round(Math.min(450, Math.max(80, 175 * speed)));
}

export function espeakSpeaker(concurrency = 4): Speaker {
  const path = findTool('espeak-ng');
  const slots = new Semaphore(concurrency, 64);
  return {
    available: path !== undefined,
    async *speak(request, signal) {
      if (path === undefined) throw engineUnavailable('speech', 'Debian package espeak-ng');
      const voice = VOICES[request.voice] ?? (VOICES.alloy as { variant: string; pitch: number });
      const release = await slots.acquire('speech', signal);
      const { child, done } = startTool(
        path,
        [
          '-v',
          `en-us+${voice.variant}`,
          '-p',
          String(voice.pitch),
          '-s',
          String(wordsPerMinute(request.speed)),
          '--stdout',
        ],
        { timeoutMs: 5 * 60_000, signal },
      );
      try {
        // the text goes in on stdin: never an argument eSpeak could read as an option
        child.stdin.end(request.input.replace(/\s+/g, ' '));
        let header = Buffer.alloc(0);
        let rate = 0;
        let resampler: Resampler | undefined;
        let odd: Buffer | undefined;
        let samplesIn = 0;
        let samplesOut = 0;
        for await (const raw of child.stdout as AsyncIterable<Buffer>) {
          let chunk = raw;
          if (resampler === undefined) {
            header = Buffer.concat([header, chunk]);
            if (header.length < 44) continue;
            if (header.toString('latin1', 0, 4) !== 'RIFF')
              throw new ApiError(500, 'engine_failed', 'eSpeak NG answered something other than WAV audio.');
            rate = header.readUInt32LE(24);
            resampler = new Resampler(rate, SPEECH_RATE);
            chunk = header.subarray(44);
          }
          if (odd) {
            chunk = Buffer.concat([odd, chunk]);
            odd = undefined;
          }
          if (chunk.length % 2 === 1) {
            odd = chunk.subarray(chunk.length - 1);
            chunk = chunk.subarray(0, chunk.length - 1);
          }
          samplesIn += chunk.length / 2;
          const out = resampler.push(fromPcm16(chunk));
          samplesOut += out.length;
          if (out.length > 0) yield toPcm16(out);
        }
        const { code, stderr } = await done;
        if (signal?.aborted) throw signal.reason as Error;
        if (code !== 0 || resampler === undefined) {
          throw new ApiError(
            500,
            'engine_failed',
            `eSpeak NG failed (exit ${code}): ${stderr.trim().slice(0, 200)}`,
          );
        }
        const tail = resampler.end();
        // the resampler's padding past the input's last sample is not speech: keep the exact length
        const rest = Math.round((samplesIn * SPEECH_RATE) / rate) - samplesOut;
        if (rest > 0) yield toPcm16(tail.subarray(0, rest));
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
        release();
      }
    },
  };
}
