// 24 kHz mono 16-bit PCM to the speech formats, as a stream: wav and pcm here; mp3, flac, opus
// and aac through Debian's encoders (lame, flac, opusenc, ffmpeg) as separate processes, fed as
// the samples arrive and read as they encode, so the first bytes go out before the last are made.
import { ApiError } from '../../platform/errors.ts';
import { wavHeader } from './decode.ts';
import { findTool, startTool } from './programs.ts';

export type SpeechFormat = 'mp3' | 'opus' | 'aac' | 'flac' | 'wav' | 'pcm';
export const SPEECH_RATE = 24_000;

export const SPEECH_CONTENT_TYPES: Record<SpeechFormat, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

const TOOLS: Record<Exclude<SpeechFormat, 'wav' | 'pcm'>, { bin: string; args: string[] }> = {
  mp3: {
    bin: 'lame',
    args: [
      '--quiet',
      '-r',
      '-s',
      '24',
      '--bitwidth',
      '16',
      '--signed',
      '--little-endian',
      '-m',
      'm',
      '-b',
      '64',
      '-',
      '-',
    ],
  },
  flac: {
    bin: 'flac',
    args: [
      '--silent',
      '--force-raw-format',
      '--endian=little',
      '--sign=signed',
      '--channels=1',
      '--bps=16',
      `--sample-rate=${SPEECH_RATE}`,
      '-o',
      '-',
      '-',
    ],
  },
  opus: {
    bin: 'opusenc',
    args: [
      '--quiet',
      '--raw',
      '--raw-bits',
      '16',
      `--raw-rate`,
      String(SPEECH_RATE),
      '--raw-chan',
      '1',
      '--raw-endianness',
      '0',
      '--bitrate',
      '32',
      '-',
      '-',
    ],
  },
  aac: {
    bin: 'ffmpeg',
    args: [
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      's16le',
      '-ar',
      String(SPEECH_RATE),
      '-ac',
      '1',
      '-i',
      'pipe:0',
      '-c:a',
      'aac',
      '-b:a',
      '64k',
      '-f',
      'adts',
      'pipe:1',
    ],
  },
};

export interface Encoders {
  /** The formats this server can make, in the spec's order. */
  available: SpeechFormat[];
  /** Encodes a stream of PCM chunks; throws the 400 for a format without its encoder. */
  encode(format: SpeechFormat, pcm: AsyncIterable<Buffer>, signal?: AbortSignal): AsyncGenerator<Buffer>;
}

/** The encoders found on PATH (checked once, at start-up). */
export function speechEncoders(): Encoders {
  const paths = new Map<SpeechFormat, string>();
  for (const [format, tool] of Object.entries(TOOLS)) {
    const path = findTool(tool.bin);
    if (path) paths.set(format as SpeechFormat, path);
  }
  const available = (['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as SpeechFormat[]).filter(
    (f) => f === 'wav' || f === 'pcm' || paths.has(f),
  );
  return {
    available,
    encode(format, pcm, signal) {
      if (format === 'pcm') return passThrough(pcm);
      if (format === 'wav') return withHeader(pcm);
      const path = paths.get(format);
      if (path === undefined) throw unsupportedFormat(format, available);
      return throughTool(path, TOOLS[format].args, pcm, signal);
    },
  };
}

export function unsupportedFormat(format: string, available: readonly string[]): ApiError {
  return new ApiError(
    400,
    'unsupported_response_format',
    `This server cannot encode ${format} (its encoder is not installed); it makes ${available.join(', ')}.`,
    { param: 'response_format' },
  );
}

async function* passThrough(pcm: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  for await (const chunk of pcm) if (chunk.length > 0) yield chunk;
}

async function* withHeader(pcm: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  yield wavHeader(SPEECH_RATE);
  yield* passThrough(pcm);
}

async function* throughTool(
  path: string,
  args: string[],
  pcm: AsyncIterable<Buffer>,
  signal?: AbortSignal,
): AsyncGenerator<Buffer> {
  const { child, done } = startTool(path, args, { timeoutMs: 10 * 60_000, signal });
  let feedError: unknown;
  const feed = (async () => {
    try {
      for await (const chunk of pcm) {
        if (child.stdin.destroyed) break;
        if (!child.stdin.write(chunk)) {
          await new Promise((resolve) => {
            child.stdin.once('drain', resolve);
            child.stdin.once('close', resolve);
          });
        }
      }
    } catch (error) {
      feedError = error;
      child.kill('SIGKILL');
    } finally {
      child.stdin.end();
    }
  })();
  try {
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) yield chunk;
    await feed;
    if (feedError !== undefined) throw feedError;
    const { code, stderr } = await done;
    if (code !== 0)
      throw new ApiError(
        500,
        'encoder_failed',
        `The ${path.split('/').pop()} encoder failed (exit ${code}): ${stderr.trim().slice(0, 200)}`,
      );
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}
