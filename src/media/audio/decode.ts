// Uploaded audio to mono 16-bit samples at the rate a recognizer wants, recognised by content
// (not by name or Content-Type): WAV (PCM 8/16/24/32-bit or float, any rate, any channels, the
// extensible header, streamed sizes), FLAC, MP3 and Ogg Opus (WebAssembly decoders). Anything
// else is a 400 that says what it looks like and what is accepted.
import { FLACDecoder } from '@wasm-audio-decoders/flac';
import { MPEGDecoder } from 'mpg123-decoder';
import { OggOpusDecoder } from 'ogg-opus-decoder';
import { BadRequestError } from '../../platform/errors.ts';
import { Resampler } from './resample.ts';

export type AudioKind = 'wav' | 'flac' | 'mp3' | 'opus';
export const ACCEPTED = 'WAV, FLAC, MP3 or Ogg Opus';

export interface DecodedAudio {
  kind: AudioKind;
  /** Mono samples at `sampleRate`. */
  samples: Int16Array;
  sampleRate: number;
  /** The duration of the input, in seconds. */
  seconds: number;
}

/** Bytes `from` to `to` as text, or less (or nothing) where the file is shorter. */
function ascii(bytes: Uint8Array, from: number, to: number): string {
  const start = Math.min(from, bytes.length);
  return Buffer.from(
    bytes.buffer,
    bytes.byteOffset + start,
    Math.max(0, Math.min(to, bytes.length) - start),
  ).toString('latin1');
}

/** What the bytes are, by their first bytes; throws the 400 for anything that is not accepted audio. */
export function sniff(bytes: Uint8Array): AudioKind {
  if (bytes.length === 0) {
    throw new BadRequestError('empty_audio', 'The file is empty: there is no audio to transcribe.', {
      param: 'file',
    });
  }
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WAVE') return 'wav';
  if (ascii(bytes, 0, 4) === 'fLaC') return 'flac';
  if (ascii(bytes, 0, 4) === 'OggS') {
    if (ascii(bytes, 28, 36) === 'OpusHead') return 'opus';
    throw unsupported('Ogg audio that is not Opus (Vorbis, say)');
  }
  if (ascii(bytes, 0, 3) === 'ID3') return 'mp3';
  if (bytes[0] === 0xff && ((bytes[1] as number) & 0xe0) === 0xe0 && ((bytes[1] as number) & 0x06) !== 0)
    return 'mp3';
  if (ascii(bytes, 4, 8) === 'ftyp') throw unsupported('an MP4/M4A container');
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3)
    throw unsupported('a WebM/Matroska container');
  const head = bytes.subarray(0, 512);
  const printable = head.every((b) => b === 9 || b === 10 || b === 13 || (b >= 32 && b < 127) || b >= 128);
  throw unsupported(printable ? 'text, not audio' : 'not a known audio format');
}

function unsupported(what: string): BadRequestError {
  return new BadRequestError(
    'unsupported_audio_format',
    `The file is ${what}. Send ${ACCEPTED}; the content decides, not the file name.`,
    { param: 'file' },
  );
}

const invalid = (detail: string): BadRequestError =>
  new BadRequestError('invalid_audio', `The audio could not be decoded: ${detail}.`, { param: 'file' });

/** Collects mono float pieces, resampled to `rate`, as 16-bit samples, refusing more than `maxSeconds`. */
class Collector {
  readonly #resampler: Resampler;
  readonly #chunks: Int16Array[] = [];
  readonly #max: number;
  inputSamples = 0;

  constructor(from: number, to: number, maxSeconds: number) {
    this.#resampler = new Resampler(from, to);
    this.#max = Math.ceil(maxSeconds * from);
  }

  push(mono: Float32Array): void {
    this.inputSamples += mono.length;
    if (this.inputSamples > this.#max) {
      throw new BadRequestError(
        'audio_too_long',
        `The audio is longer than ${Math.round(this.#max / this.#resampler.from)} seconds, the most one request may transcribe; split it.`,
        { param: 'file' },
      );
    }
    this.#add(this.#resampler.push(mono));
  }

  #add(out: Float32Array): void {
    const pcm = new Int16Array(out.length);
    for (let i = 0; i < out.length; i++) {
      const s = Math.max(-1, Math.min(1, out[i] as number));
      pcm[i] = Math.round(s < 0 ? s * 32768 : s * 32767);
    }
    this.#chunks.push(pcm);
  }

  finish(): Int16Array {
    this.#add(this.#resampler.end());
    const expected = Math.round((this.inputSamples * this.#resampler.to) / this.#resampler.from);
    const all = new Int16Array(expected);
    let at = 0;
    for (const chunk of this.#chunks) {
      if (at >= expected) break;
      all.set(chunk.subarray(0, expected - at), at);
      at += chunk.length;
    }
    return all;
  }
}

function downmix(channels: Float32Array[], length: number): Float32Array {
  if (channels.length === 1) return (channels[0] as Float32Array).subarray(0, length);
  const out = new Float32Array(length);
  for (const channel of channels)
    for (let i = 0; i < length; i++) out[i] = (out[i] as number) + (channel[i] as number) / channels.length;
  return out;
}

interface WavFormat {
  format: number;
  channels: number;
  sampleRate: number;
  bits: number;
}

/** The WAV's format and where its samples are. */
export function parseWav(bytes: Uint8Array): { fmt: WavFormat; data: Uint8Array } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 12;
  let fmt: WavFormat | undefined;
  while (at + 8 <= bytes.length) {
    const id = ascii(bytes, at, at + 4);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > bytes.length) throw invalid('its format chunk is too short');
      let format = view.getUint16(body, true);
      if (format === 0xfffe && size >= 40) format = view.getUint16(body + 24, true); // WAVE_FORMAT_EXTENSIBLE
      fmt = {
        format,
        channels: view.getUint16(body + 2, true),
        sampleRate: view.getUint32(body + 4, true),
        bits: view.getUint16(body + 14, true),
      };
    } else if (id === 'data') {
      if (!fmt) throw invalid('its data comes before its format');
      // a streamed WAV gives a placeholder size (0xFFFFFFFF, 0x7FFFF000): the data runs to the end
      const end = size === 0 || body + size > bytes.length ? bytes.length : body + size;
      return { fmt, data: bytes.subarray(body, end) };
    }
    at = body + size + (size % 2);
  }
  throw invalid(fmt ? 'it has no data chunk' : 'it has no format chunk');
}

function decodeWav(
  bytes: Uint8Array,
  rate: number,
  maxSeconds: number,
): { collector: Collector; sampleRate: number } {
  const { fmt, data } = parseWav(bytes);
  const { format, channels, sampleRate, bits } = fmt;
  if (channels < 1 || channels > 16 || sampleRate < 1000 || sampleRate > 384_000) {
    throw invalid(`${channels} channels at ${sampleRate} Hz is not a usable format`);
  }
  const pcm = format === 1 && [8, 16, 24, 32].includes(bits);
  const float = format === 3 && (bits === 32 || bits === 64);
  if (!pcm && !float)
    throw invalid(`WAV format ${format} with ${bits}-bit samples is not supported (PCM or float are)`);
  const width = bits / 8;
  const frames = Math.floor(data.length / (width * channels));
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const collector = new Collector(sampleRate, rate, maxSeconds);
  const block = 65_536;
  for (let start = 0; start < frames; start += block) {
    const count = Math.min(block, frames - start);
    const mono = new Float32Array(count);
    for (let f = 0; f < count; f++) {
      let sum = 0;
      for (let c = 0; c < channels; c++) {
        const o = ((start + f) * channels + c) * width;
        let s: number;
        if (float) s = bits === 32 ? view.getFloat32(o, true) : view.getFloat64(o, true);
        else if (bits === 8) s = ((data[o] as number) - 128) / 128;
        else if (bits === 16) s = view.getInt16(o, true) / 32768;
        else if (bits === 24)
          s = (view.getUint8(o) | (view.getUint8(o + 1) << 8) | (view.getInt8(o + 2) << 16)) / 8388608;
        else s = view.getInt32(o, true) / 2147483648;
        sum += Number.isFinite(s) ? s : 0;
      }
      mono[f] = sum / channels;
    }
    collector.push(mono);
  }
  return { collector, sampleRate };
}

interface WasmDecoded {
  channelData: Float32Array[];
  samplesDecoded: number;
  sampleRate: number;
  errors: { message: string }[];
}

/** What the three WASM decoders share; MPEG's `decode` answers at once and it has no `flush`. */
interface WasmDecoder {
  ready: Promise<void>;
  decode(bytes: Uint8Array): unknown;
  flush?: () => Promise<unknown>;
  free(): void;
}

async function decodeWasm(
  kind: 'flac' | 'mp3' | 'opus',
  bytes: Uint8Array,
  rate: number,
  maxSeconds: number,
): Promise<{ collector: Collector; sampleRate: number }> {
  // Fed in slices, so a long file's floats never all exist at once.
  const slice = 256 * 1024;
  let collector: Collector | undefined;
  let sampleRate = 0;
  let errors = 0;
  const take = (out: WasmDecoded) => {
    errors += out.errors.length;
    if (out.samplesDecoded === 0) return;
    sampleRate ||= out.sampleRate;
    collector ??= new Collector(sampleRate, rate, maxSeconds);
    collector.push(downmix(out.channelData, out.samplesDecoded));
  };
  const decoder: WasmDecoder =
    kind === 'mp3' ? new MPEGDecoder() : kind === 'flac' ? new FLACDecoder() : new OggOpusDecoder();
  await decoder.ready;
  try {
    for (let at = 0; at < bytes.length; at += slice)
      take((await decoder.decode(bytes.subarray(at, at + slice))) as WasmDecoded);
    if (decoder.flush) take((await decoder.flush()) as WasmDecoded);
  } finally {
    decoder.free();
  }
  if (collector === undefined) {
    throw errors > 0
      ? invalid(`the ${kind.toUpperCase()} stream is damaged`)
      : new BadRequestError(
          'empty_audio',
          'The audio holds no samples (0 seconds): there is nothing to transcribe.',
          { param: 'file' },
        );
  }
  return { collector, sampleRate };
}

/**
 * Decodes `bytes` to mono 16-bit samples at `rate`. Throws a 400: `unsupported_audio_format`
 * (not audio, or a format not accepted), `invalid_audio` (does not decode), `empty_audio`
 * (no samples), `audio_too_long` (over `maxSeconds`).
 */
export async function decodeAudio(
  bytes: Uint8Array,
  rate: number,
  maxSeconds: number,
): Promise<DecodedAudio> {
  const kind = sniff(bytes);
  const { collector, sampleRate } =
    kind === 'wav' ? decodeWav(bytes, rate, maxSeconds) : await decodeWasm(kind, bytes, rate, maxSeconds);
  const seconds = collector.inputSamples / sampleRate;
  if (collector.inputSamples === 0) {
    throw new BadRequestError(
      'empty_audio',
      'The audio holds no samples (0 seconds): there is nothing to transcribe.',
      { param: 'file' },
    );
  }
  return { kind, samples: collector.finish(), sampleRate: rate, seconds };
}

/** A WAV header for mono 16-bit PCM; `dataBytes` undefined gives the streaming placeholders (0xFFFFFFFF). */
export function wavHeader(sampleRate: number, dataBytes?: number): Buffer {
  const header = Buffer.alloc(44);
  const unknown = dataBytes === undefined;
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(unknown ? 0xffffffff : 36 + dataBytes, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(unknown ? 0xffffffff : dataBytes, 40);
  return header;
}
