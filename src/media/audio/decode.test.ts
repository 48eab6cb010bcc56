import { describe, expect, it } from 'vitest';
import { ApiError } from '../../platform/errors.ts';
import { decodeAudio, sniff, wavHeader } from './decode.ts';

function wav(
  format: number,
  bits: number,
  channels: number,
  rate: number,
  frames: number,
  sample: (i: number) => number,
): Buffer {
  const width = bits / 8;
  const data = Buffer.alloc(frames * channels * width);
  for (let f = 0; f < frames; f++) {
    for (let c = 0; c < channels; c++) {
      const o = (f * channels + c) * width;
      const s = sample(f);
      if (format === 3) data.writeFloatLE(s, o);
      else if (bits === 8) data.writeUInt8(Math.round(s * 127 + 128), o);
      else if (bits === 16) data.writeInt16LE(Math.round(s * 32767), o);
      else if (bits === 24) data.writeIntLE(Math.round(s * 8388607), o, 3);
      else data.writeInt32LE(Math.round(s * 2147483647), o);
    }
  }
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(format, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * channels * width, 28);
  header.writeUInt16LE(channels * width, 32);
  header.writeUInt16LE(bits, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

async function code(bytes: Buffer, maxSeconds = 60): Promise<string> {
  try {
    await decodeAudio(bytes, 16_000, maxSeconds);
    return 'decoded';
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    return (error as ApiError).code;
  }
}

describe('decodeAudio', () => {
  it('reads PCM 8, 16, 24 and 32-bit and float WAV, mono or stereo, to 16 kHz mono at the input’s duration', async () => {
    const sine = (i: number) => 0.5 * Math.sin((2 * Math.PI * 440 * i) / 44_100);
    for (const [format, bits, channels] of [
      [1, 8, 1],
      [1, 16, 2],
      [1, 24, 1],
      [1, 32, 2],
      [3, 32, 1],
    ] as const) {
      const audio = await decodeAudio(wav(format, bits, channels, 44_100, 44_100, sine), 16_000, 60);
      expect(audio.kind).toBe('wav');
      expect(audio.seconds).toBeCloseTo(1, 6);
      expect(audio.samples.length).toBe(16_000);
      const peak = Math.max(...Array.from(audio.samples.subarray(1000, 15_000), Math.abs));
      expect(peak / 32768).toBeGreaterThan(0.45);
      expect(peak / 32768).toBeLessThan(0.55);
    }
  });

  it('reads a streamed WAV whose sizes are placeholders (0xFFFFFFFF)', async () => {
    const pcm = Buffer.alloc(24_000 * 2);
    const audio = await decodeAudio(Buffer.concat([wavHeader(24_000), pcm]), 16_000, 60);
    expect(audio.seconds).toBe(1);
  });

  it('says what is wrong: text named .wav, no bytes, no samples, a broken header, too long', async () => {
    expect(await code(Buffer.from('name,city\nLisbon Bakery,Lisbon\n'))).toBe('unsupported_audio_format');
    expect(await code(Buffer.alloc(0))).toBe('empty_audio');
    expect(await code(wavHeader(16_000, 0))).toBe('empty_audio');
    expect(await code(Buffer.from('RIFF\0\0\0\0WAVEdata\0\0\0\0', 'latin1'))).toBe('invalid_audio');
    expect(
      await code(
        wav(1, 16, 1, 8000, 8000 * 3, () => 0),
        2,
      ),
    ).toBe('audio_too_long');
    expect(await code(Buffer.concat([Buffer.from([0, 0, 0, 0x20]), Buffer.from('ftypM4A ')]))).toBe(
      'unsupported_audio_format',
    );
  });

  it('answers files shorter than any header with the 400, not a 500 (found by schemathesis)', async () => {
    for (const bytes of [[0xef, 0xbf, 0xbd], [0x52], [0x4f, 0x67, 0x67, 0x53]]) {
      // a buffer of its own, as a file read from disk is (not a slice of Node's shared pool)
      expect(await code(Buffer.from(new Uint8Array(bytes).buffer))).toBe('unsupported_audio_format');
    }
    // an MP3 frame header and nothing after it
    expect(await code(Buffer.from([0xff, 0xfb]))).toBe('empty_audio');
  });

  it('recognises formats by content', () => {
    expect(sniff(Buffer.from('fLaC\0\0\0\x22'))).toBe('flac');
    expect(sniff(Buffer.from('ID3\x04\0\0\0\0'))).toBe('mp3');
    expect(sniff(Buffer.from([0xff, 0xfb, 0x90, 0x64]))).toBe('mp3');
  });
});
