// Images, speech, transcriptions and the realtime voice stream (issue 19), through the official
// openai npm SDK with only its base URL changed, against the real model API with its built-in
// engines (the painter, Debian's espeak-ng, pocketsphinx, lame, flac and opus-tools, installed by
// scripts/test-deps.sh). Images and audio are checked with decoders we did not write.
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createWriteStream } from 'node:fs';
import jpeg from 'jpeg-js';
import { MPEGDecoder } from 'mpg123-decoder';
import OpenAI, { toFile } from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { PNG } from 'pngjs';
import { WebSocket } from 'ws';
import { Ajv } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushUsage } from '../src/platform/metering.ts';
import { bearer, expectError } from './support/envelope.ts';
import { startTestServers, type TestServers } from './support/server.ts';
import { expectMilliseconds } from './support/seconds.ts';

let servers: TestServers;
let openai: OpenAI;
let base: string;
let chatOnlyKey: string;
let imagesOnlyKey: string;
const work = mkdtempSync(join(tmpdir(), 'eurus-media-test-'));

const SENTENCE = 'Please call me tomorrow morning. I would like to book a table for two people at seven.';

beforeAll(async () => {
  servers = await startTestServers('pglite', { which: ['model'], env: { MODEL_RATE_LIMIT_RPM: '10000' } });
  base = servers.urls.model as string;
  openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: servers.adminKey, maxRetries: 0, timeout: 120_000 });
  const [admin] = await servers.platform.db.query<{ account_id: string }>(
    'select account_id from api_keys limit 1',
  );
  const mint = async (scopes: string[]) =>
    (
      await servers.platform.accounts.createKey(admin!.account_id, {
        name: `media ${scopes.join(' ')}`,
        scopes,
      })
    ).secret;
  chatOnlyKey = await mint(['chat']);
  imagesOnlyKey = await mint(['images']);
}, 120_000);
afterAll(async () => servers?.stop());

/** Width and height of a WebP (VP8, VP8L or VP8X), read from its header. */
function webpSize(bytes: Buffer): [number, number] {
  expect(bytes.toString('latin1', 0, 4)).toBe('RIFF');
  expect(bytes.toString('latin1', 8, 12)).toBe('WEBP');
  const chunk = bytes.toString('latin1', 12, 16);
  if (chunk === 'VP8 ') return [bytes.readUInt16LE(26) & 0x3fff, bytes.readUInt16LE(28) & 0x3fff];
  if (chunk === 'VP8L') {
    const b = bytes.readUInt32LE(21);
    return [(b & 0x3fff) + 1, ((b >> 14) & 0x3fff) + 1];
  }
  return [bytes.readUIntLE(24, 3) + 1, bytes.readUIntLE(27, 3) + 1];
}

async function lastUsage(
  endpoint: string,
): Promise<{ audio_seconds: number; images: number; cost_nano: string; status: number }> {
  await flushUsage(servers.platform.db);
  const [row] = await servers.platform.db.query<{
    audio_seconds: number;
    images: number;
    cost_nano: string;
    status: number;
  }>(
    'select audio_seconds, images, cost_nano::text as cost_nano, status from usage_records where endpoint = $1 order by id desc limit 1',
    [endpoint],
  );
  return row!;
}

/** Seconds of a streamed WAV of our speech (24 kHz mono 16-bit, sizes 0xFFFFFFFF): its bytes after the header. */
function wavSeconds(bytes: Buffer): number {
  expect(bytes.toString('latin1', 0, 4)).toBe('RIFF');
  expect(bytes.readUInt32LE(24)).toBe(24_000);
  expect(bytes.readUInt16LE(34)).toBe(16);
  return (bytes.length - 44) / 2 / 24_000;
}

let speechWav: Buffer;

describe('images through openai.images.generate', () => {
  it('answers b64_json PNG, JPEG and WebP of the requested size, deterministic by seed', async () => {
    const prompt = 'A pine forest by a lake at sunset';
    const png = await openai.images.generate({
      model: 'imagine',
      prompt,
      size: '512x512',
      response_format: 'b64_json',
      seed: 3,
    } as never);
    const bytes = Buffer.from(png.data![0]!.b64_json!, 'base64');
    const decoded = PNG.sync.read(bytes);
    expect([decoded.width, decoded.height]).toEqual([512, 512]);
    expect(png.data![0]!.revised_prompt).toMatch(/sunset.*forest.*water/);
    expect(png.usage).toMatchObject({ images: 1, cost_eur: '0.008000000', currency: 'EUR' });
    // the same seed draws the same picture; another seed another one
    const again = await openai.images.generate({
      model: 'imagine',
      prompt,
      size: '512x512',
      response_format: 'b64_json',
      seed: 3,
    } as never);
    expect(again.data![0]!.b64_json).toBe(png.data![0]!.b64_json);
    const other = await openai.images.generate({
      model: 'imagine',
      prompt,
      size: '512x512',
      response_format: 'b64_json',
      seed: 4,
    } as never);
    expect(other.data![0]!.b64_json).not.toBe(png.data![0]!.b64_json);

    const jpg = await openai.images.generate({
      prompt: 'Snowy mountains at night',
      size: '1536x1024',
      response_format: 'b64_json',
      output_format: 'jpeg',
      output_compression: 70,
    });
    const j = jpeg.decode(Buffer.from(jpg.data![0]!.b64_json!, 'base64'));
    expect([j.width, j.height]).toEqual([1536, 1024]);
    expect(jpg.output_format).toBe('jpeg');

    const webp = await openai.images.generate({
      prompt: 'abstract red and purple swirls',
      size: '1024x1792',
      response_format: 'b64_json',
      output_format: 'webp',
      background: 'transparent',
    });
    expect(webpSize(Buffer.from(webp.data![0]!.b64_json!, 'base64'))).toEqual([1024, 1792]);
  }, 120_000);

  it('answers URLs of ours, signed and fetched without a key; a forged one is a 403', async () => {
    const answer = await openai.images.generate({
      prompt: 'A harbour in Lisbon at sunrise, blue and gold',
      size: '256x256',
      n: 2,
    });
    expect(answer.data).toHaveLength(2);
    expect(answer.usage).toMatchObject({ images: 2, cost_eur: '0.016000000' });
    for (const image of answer.data!) {
      expect(image.url).toMatch(
        new RegExp(`^${base}/v1/images/files/img_[0-9A-Z]{26}\\?expires=\\d+&signature=[A-Za-z0-9_-]{43}$`),
      );
      const res = await fetch(image.url!);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      const expires = Number(new URL(image.url!).searchParams.get('expires'));
      expect(expires - answer.created).toBe(3600);
      const decoded = PNG.sync.read(Buffer.from(await res.arrayBuffer()));
      expect([decoded.width, decoded.height]).toEqual([256, 256]);
    }
    const url = new URL(answer.data![0]!.url!);
    url.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    await expectError('model', await fetch(url), 403, 'permission_error', 'invalid_signature');
    // a well-signed URL of an image not kept (signed here with the database's key) is a 404
    const [signing] = await servers.platform.db.query<{ secret: string }>(
      'select secret from media_signing_keys',
    );
    const gone = `img_${'0'.repeat(26)}`;
    const expires = Math.floor(Date.now() / 1000) + 60;
    const signature = createHmac('sha256', Buffer.from(signing!.secret, 'hex'))
      .update(`${gone}.${expires}`)
      .digest('base64url');
    await expectError(
      'model',
      await fetch(`${base}/v1/images/files/${gone}?expires=${expires}&signature=${signature}`),
      404,
      'invalid_request_error',
      'image_not_found',
    );
    expect((await lastUsage('/v1/images/generations')).images).toBe(2);
  }, 60_000);

  it('makes 10 images in one b64_json answer, billed 10', async () => {
    const answer = await openai.images.generate({
      prompt: 'A rainy city street',
      n: 10,
      size: '256x256',
      response_format: 'b64_json',
    });
    expect(answer.data).toHaveLength(10);
    for (const image of answer.data!)
      expect(PNG.sync.read(Buffer.from(image.b64_json!, 'base64')).width).toBe(256);
    expect(answer.usage).toMatchObject({ images: 10, cost_eur: '0.080000000' });
    const usage = await lastUsage('/v1/images/generations');
    expect([usage.images, usage.cost_nano]).toEqual([10, '80000000']);
  }, 120_000);

  it('refuses a size the model does not make, n over 10, a transparent jpeg, and keys without the images scope', async () => {
    const post = (body: unknown, key = servers.adminKey) =>
      fetch(`${base}/v1/images/generations`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const size = await expectError(
      'model',
      await post({ prompt: 'a lake', size: '100x100' }),
      400,
      'invalid_request_error',
    );
    expect(size.param).toBe('size');
    expect(size.message).toContain('1024x1024');
    await expectError('model', await post({ prompt: 'a lake', n: 11 }), 400, 'invalid_request_error');
    const alpha = await expectError(
      'model',
      await post({ prompt: 'a lake', output_format: 'jpeg', background: 'transparent' }),
      400,
      'invalid_request_error',
      'transparency_unsupported',
    );
    expect(alpha.param).toBe('background');
    await expectError(
      'model',
      await post({ prompt: 'a lake' }, chatOnlyKey),
      403,
      'permission_error',
      'insufficient_scope',
    );
  });
});

describe('speech through openai.audio.speech.create', () => {
  it('streams WAV to a file: the file decodes as audio of the billed length', async () => {
    const response = await openai.audio.speech.create({
      model: 'voice',
      voice: 'alloy',
      input: SENTENCE,
      response_format: 'wav',
    });
    expect(response.headers.get('content-type')).toBe('audio/wav');
    const file = join(work, 'speech.wav');
    await pipeline(Readable.fromWeb(response.body as never), createWriteStream(file));
    speechWav = readFileSync(file);
    const seconds = wavSeconds(speechWav);
    expect(seconds).toBeGreaterThan(3);
    const usage = await lastUsage('/v1/audio/speech');
    expectMilliseconds(usage.audio_seconds, seconds);
    // 6 EUR an hour: 1,666,666.67 nano-EUR a second
    expect(Number(usage.cost_nano)).toBe(Math.round((Math.round(seconds * 1000) * 6e9) / 3.6e6));
  }, 60_000);

  it('encodes mp3 (the default) and flac that independent decoders read at the billed length', async () => {
    const mp3 = Buffer.from(
      await (
        await openai.audio.speech.create({ model: 'voice', voice: 'nova', input: SENTENCE })
      ).arrayBuffer(),
    );
    const mpeg = new MPEGDecoder();
    await mpeg.ready;
    const decoded = mpeg.decode(mp3);
    mpeg.free();
    const billed = (await lastUsage('/v1/audio/speech')).audio_seconds;
    // mp3 adds up to a frame and the encoder's delay (about 50 ms) of padding
    expect(decoded.samplesDecoded / decoded.sampleRate).toBeGreaterThanOrEqual(billed - 0.01);
    expect(decoded.samplesDecoded / decoded.sampleRate).toBeLessThan(billed + 0.12);

    const flac = Buffer.from(
      await (
        await openai.audio.speech.create({
          model: 'voice',
          voice: 'onyx',
          input: SENTENCE,
          response_format: 'flac',
        })
      ).arrayBuffer(),
    );
    // Debian's flac decodes it (the WebAssembly decoder drops a stream's last short frame)
    const file = join(work, 'speech.flac');
    writeFileSync(file, flac);
    const wav = execFileSync('flac', ['-d', '-s', '-c', file]);
    expect(wav.readUInt32LE(24)).toBe(24_000);
    expectMilliseconds((await lastUsage('/v1/audio/speech')).audio_seconds, (wav.length - 44) / 2 / 24_000);
  }, 60_000);

  it('streams speech.audio.delta events and a speech.audio.done with the usage (stream_format sse)', async () => {
    const response = await openai.audio.speech.create({
      model: 'voice',
      voice: 'echo',
      input: SENTENCE,
      response_format: 'pcm',
      stream_format: 'sse',
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await response.text();
    const events = text
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map(
        (e) =>
          JSON.parse(e.slice(6)) as {
            type: string;
            audio?: string;
            usage?: { seconds: number; cost_eur: string };
          },
      );
    const deltas = events.filter((e) => e.type === 'speech.audio.delta');
    expect(deltas.length).toBeGreaterThan(1);
    const pcm = Buffer.concat(deltas.map((e) => Buffer.from(e.audio!, 'base64')));
    const done = events.at(-1)!;
    expect(done.type).toBe('speech.audio.done');
    expectMilliseconds(done.usage!.seconds, pcm.length / 2 / 24_000);
  }, 60_000);

  it('speaks faster at speed 2 and slower at 0.5, billed for what it made', async () => {
    const seconds = async (speed: number) => {
      const response = await openai.audio.speech.create({
        model: 'voice',
        voice: 'alloy',
        input: SENTENCE,
        response_format: 'pcm',
        speed,
      });
      const made = Buffer.from(await response.arrayBuffer()).length / 2 / 24_000;
      expectMilliseconds((await lastUsage('/v1/audio/speech')).audio_seconds, made);
      return made;
    };
    const normal = await seconds(1);
    const fast = await seconds(2);
    const slow = await seconds(0.5);
    expect(fast / normal).toBeGreaterThan(0.35);
    expect(fast / normal).toBeLessThan(0.75);
    expect(slow / normal).toBeGreaterThan(1.4);
    expect(slow / normal).toBeLessThan(2.6);
  }, 60_000);

  it('replays speech for a retry with the same Idempotency-Key, billed once', async () => {
    await flushUsage(servers.platform.db);
    const before = await servers.platform.db.query<{ n: string }>(
      "select count(*)::text as n from usage_records where endpoint = '/v1/audio/speech'",
    );
    const key = `speech-retry-${Date.now()}`;
    const ask = () =>
      openai.audio.speech.create(
        { model: 'voice', voice: 'fable', input: 'See you at seven.', response_format: 'mp3' },
        { headers: { 'Idempotency-Key': key } },
      );
    const first = await ask();
    const firstBytes = Buffer.from(await first.arrayBuffer());
    const again = await ask();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toBe('audio/mpeg');
    expect(Buffer.from(await again.arrayBuffer()).equals(firstBytes)).toBe(true);
    await flushUsage(servers.platform.db);
    const after = await servers.platform.db.query<{ n: string }>(
      "select count(*)::text as n from usage_records where endpoint = '/v1/audio/speech'",
    );
    expect(Number(after[0]!.n) - Number(before[0]!.n)).toBe(1);
  }, 60_000);

  it('says which formats it makes when asked for one it cannot encode, and needs the voice scope', async () => {
    const post = (body: unknown, key = servers.adminKey) =>
      fetch(`${base}/v1/audio/speech`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const aac = await post({ model: 'voice', voice: 'alloy', input: 'Hello.', response_format: 'aac' });
    if (aac.status === 400) {
      const error = await expectError(
        'model',
        aac,
        400,
        'invalid_request_error',
        'unsupported_response_format',
      );
      expect(error.message).toMatch(/mp3.*wav.*pcm/);
    } else {
      expect(aac.status).toBe(200); // ffmpeg is installed here
      expect(aac.headers.get('content-type')).toBe('audio/aac');
    }
    await expectError(
      'model',
      await post({ model: 'voice', voice: 'alloy', input: 'Hello.' }, imagesOnlyKey),
      403,
      'permission_error',
      'insufficient_scope',
    );
    await expectError(
      'model',
      await post({ model: 'voice', voice: 'alloy', input: 'x'.repeat(4097) }),
      400,
      'invalid_request_error',
    );
  });
});

describe('transcriptions through openai.audio.transcriptions.create', () => {
  const words = (text: string) => text.toLowerCase().match(/[a-z']+/g) ?? [];
  const recall = (heard: string) => {
    const got = new Set(words(heard));
    const said = words(SENTENCE);
    return said.filter((w) => got.has(w)).length / said.length;
  };

  it('round trip: our speech, transcribed, gives back the words (json)', async () => {
    const result = await openai.audio.transcriptions.create({
      model: 'voice',
      file: await toFile(speechWav, 'speech.wav'),
    });
    // PocketSphinx on eSpeak's voice: most words, not all (measured 70 to 100 %)
    expect(recall(result.text)).toBeGreaterThanOrEqual(0.6);
    const usage = (result as unknown as { usage: { type: string; seconds: number } }).usage;
    expect(usage.type).toBe('duration');
    expect(usage.seconds).toBeCloseTo(wavSeconds(speechWav), 2);
    expectMilliseconds((await lastUsage('/v1/audio/transcriptions')).audio_seconds, usage.seconds);
  }, 120_000);

  it('answers text, srt, vtt and verbose_json with words and segments', async () => {
    const file = () => toFile(speechWav, 'speech.wav');
    const text = await openai.audio.transcriptions.create({
      model: 'voice',
      file: await file(),
      response_format: 'text',
    });
    expect(typeof text).toBe('string');
    expect(recall(text as unknown as string)).toBeGreaterThanOrEqual(0.6);
    const srt = (await openai.audio.transcriptions.create({
      model: 'voice',
      file: await file(),
      response_format: 'srt',
    })) as unknown as string;
    expect(srt).toMatch(/^1\n\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}\n\S/);
    const vtt = (await openai.audio.transcriptions.create({
      model: 'voice',
      file: await file(),
      response_format: 'vtt',
    })) as unknown as string;
    expect(vtt).toMatch(/^WEBVTT\n\n\d\d:\d\d:\d\d\.\d{3} --> \d\d:\d\d:\d\d\.\d{3}\n\S/);
    const verbose = await openai.audio.transcriptions.create({
      model: 'voice',
      file: await file(),
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
    });
    expect(verbose.language).toBe('english');
    expect(verbose.duration).toBeCloseTo(wavSeconds(speechWav), 2);
    expect(verbose.segments!.length).toBeGreaterThan(0);
    const segment = verbose.segments![0]!;
    expect(segment).toMatchObject({ id: 0, temperature: 0 });
    expect(segment.tokens.length).toBeGreaterThan(0);
    expect(verbose.words!.length).toBeGreaterThan(5);
    for (const w of verbose.words!) expect(w.end).toBeGreaterThanOrEqual(w.start);
    expect(verbose.words!.at(-1)!.end).toBeLessThanOrEqual(verbose.duration + 0.01);
  }, 240_000);

  it('streams transcript.text.delta events and a transcript.text.done (stream: true)', async () => {
    const stream = await openai.audio.transcriptions.create({
      model: 'voice',
      file: await toFile(speechWav, 'speech.wav'),
      stream: true,
    });
    let deltas = '';
    let done: { text: string; usage?: unknown } | undefined;
    for await (const event of stream) {
      if (event.type === 'transcript.text.delta') deltas += event.delta;
      if (event.type === 'transcript.text.done') done = event;
    }
    expect(done?.text).toBe(deltas);
    expect(recall(deltas)).toBeGreaterThanOrEqual(0.6);
  }, 120_000);

  it('refuses a text file named .wav, 0-second audio and a language it does not know, none billed', async () => {
    await flushUsage(servers.platform.db);
    const before = await servers.platform.db.query<{ n: string }>(
      "select count(*)::text as n from usage_records where endpoint = '/v1/audio/transcriptions'",
    );
    const post = async (bytes: Buffer, name: string, extra: Record<string, string> = {}) => {
      const form = new FormData();
      form.set('model', 'voice');
      for (const [k, v] of Object.entries(extra)) form.set(k, v);
      form.set('file', new Blob([new Uint8Array(bytes)]), name);
      return fetch(`${base}/v1/audio/transcriptions`, {
        method: 'POST',
        headers: bearer(servers.adminKey),
        body: form,
      });
    };
    const text = await expectError(
      'model',
      await post(Buffer.from('this is not audio at all\n'), 'notes.wav'),
      400,
      'invalid_request_error',
      'unsupported_audio_format',
    );
    expect(text.message).toMatch(/text, not audio/);
    const header = speechWav.subarray(0, 44);
    const empty = await expectError(
      'model',
      await post(Buffer.from(header), 'empty.wav'),
      400,
      'invalid_request_error',
      'empty_audio',
    );
    expect(empty.message).toMatch(/0 seconds/);
    await expectError(
      'model',
      await post(Buffer.alloc(0), 'zero.wav'),
      400,
      'invalid_request_error',
      'empty_audio',
    );
    await expectError(
      'model',
      await post(speechWav, 'speech.wav', { language: 'de' }),
      400,
      'invalid_request_error',
      'unsupported_language',
    );
    // the SDK, too, gets the envelope
    const error = await openai.audio.transcriptions
      .create({ model: 'voice', file: await toFile(Buffer.from('plain text'), 'a.wav') })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('unsupported_audio_format');
    await flushUsage(servers.platform.db);
    const after = await servers.platform.db.query<{ n: string }>(
      "select count(*)::text as n from usage_records where endpoint = '/v1/audio/transcriptions'",
    );
    expect(after[0]!.n).toBe(before[0]!.n);
  }, 60_000);

  it('answers a 30 MB upload with a 413 in the envelope, keeping none of it', async () => {
    const big = Buffer.alloc(30 * 1024 * 1024, 1);
    big.write('RIFF', 0, 'latin1');
    const form = new FormData();
    form.set('model', 'voice');
    form.set('file', new Blob([big]), 'big.wav');
    const res = await fetch(`${base}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: bearer(servers.adminKey),
      body: form,
    });
    await expectError('model', res, 413, 'invalid_request_error', 'payload_too_large');
  }, 60_000);
});

describe('usage of the media models', () => {
  it('GET /v1/usage reports images and audio seconds by model, summing the records', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const res = await fetch(`${base}/v1/usage?from=${today}&to=${today}&group_by=model`, {
      headers: bearer(servers.adminKey),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      data: { results: { model: string; images: number; audio_seconds: number }[] }[];
    };
    const results = body.data.flatMap((b) => b.results);
    const imagine = results.find((r) => r.model === 'imagine')!;
    const voice = results.find((r) => r.model === 'voice')!;
    await flushUsage(servers.platform.db);
    const [sums] = await servers.platform.db.query<{ images: string; audio: number }>(
      "select sum(images)::text as images, sum(audio_seconds)::float8 as audio from usage_records where model in ('imagine', 'voice')",
    );
    expect(imagine.images).toBe(Number(sums!.images));
    expect(imagine.images).toBeGreaterThanOrEqual(15);
    expect(voice.audio_seconds).toBeCloseTo(sums!.audio, 3);
  });
});

/** A TLS terminator in front of the model API (as a load balancer is): the SDK's realtime client speaks wss only. */
function tlsProxy(target: string): Promise<{ server: TlsServer; url: string; ca: Buffer }> {
  const key = join(work, 'key.pem');
  const cert = join(work, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  const { port, hostname } = new URL(target);
  const server = createTlsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (socket) => {
    const upstream = connect(Number(port), hostname);
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        server,
        url: `https://127.0.0.1:${(server.address() as { port: number }).port}`,
        ca: readFileSync(cert),
      }),
    ),
  );
}

/** Checks server events against their message payloads in the AsyncAPI document. */
function asyncApiCheck(): (event: { type: string }) => void {
  const doc = parseYaml(readFileSync('spec/model/realtime.asyncapi.yaml', 'utf8')) as {
    components: { messages: Record<string, { name: string }> };
  };
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addSchema(doc, 'realtime');
  const byName = new Map(
    Object.entries(doc.components.messages).map(([key, message]) => [
      message.name,
      ajv.getSchema(`realtime#/components/messages/${key}/payload`)!,
    ]),
  );
  return (event) => {
    const validate = byName.get(event.type);
    expect(validate, `the AsyncAPI document has no message ${event.type}`).toBeDefined();
    expect(validate!(event), `${event.type}: ${JSON.stringify(validate!.errors)}`).toBe(true);
  };
}

describe('the realtime voice stream', () => {
  it('holds a session through the SDK realtime client: heard, answered by queen, spoken, billed', async () => {
    const proxy = await tlsProxy(base);
    try {
      const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: servers.adminKey });
      const rt = new OpenAIRealtimeWS({ model: 'voice', options: { ca: proxy.ca } }, client);
      const events: { type: string; [k: string]: unknown }[] = [];
      const finished = new Promise<void>((resolve, reject) => {
        rt.on('event', (event) => {
          events.push(event as never);
          if (event.type === 'response.done') resolve();
        });
        rt.on('error', (err) => reject(err));
      });
      await new Promise<void>((resolve) => rt.socket.once('open', () => resolve()));
      rt.send({
        type: 'session.update',
        session: {
          type: 'realtime',
          instructions: 'Answer in one sentence.',
          audio: { output: { voice: 'coral' } },
        },
      });
      const pcm = speechWav.subarray(44);
      for (let i = 0; i < pcm.length; i += 24_000)
        rt.send({ type: 'input_audio_buffer.append', audio: pcm.subarray(i, i + 24_000).toString('base64') });
      rt.send({ type: 'input_audio_buffer.commit' });
      rt.send({ type: 'response.create' });
      await finished;
      rt.close();
      const types = events.map((e) => e.type);
      const conforms = asyncApiCheck();
      for (const event of events) conforms(event);
      expect(types[0]).toBe('session.created');
      expect(types).toContain('session.updated');
      const transcript = events.find(
        (e) => e.type === 'conversation.item.input_audio_transcription.completed',
      ) as { transcript: string } | undefined;
      expect(recall(transcript!.transcript)).toBeGreaterThanOrEqual(0.6);
      const audio = events.filter((e) => e.type === 'response.output_audio.delta');
      expect(audio.length).toBeGreaterThan(0);
      const spoken = Buffer.concat(audio.map((e) => Buffer.from(e.delta as string, 'base64')));
      const said = events.find((e) => e.type === 'response.output_audio_transcript.done') as unknown as {
        transcript: string;
      };
      expect(said.transcript.length).toBeGreaterThan(10);
      const done = events.at(-1) as unknown as {
        response: { status: string; usage: { total_tokens: number; audio_seconds: number } };
      };
      expect(done.response.status).toBe('completed');
      expect(done.response.usage.total_tokens).toBeGreaterThan(0);
      expectMilliseconds(done.response.usage.audio_seconds, spoken.length / 2 / 24_000);
      // billed: the audio heard and spoken (voice) and the answer's tokens (queen)
      await flushUsage(servers.platform.db);
      const rows = await servers.platform.db.query<{
        model: string;
        audio_seconds: number;
        output_tokens: number;
        cost_nano: string;
      }>(
        "select model, audio_seconds, output_tokens, cost_nano::text as cost_nano from usage_records where endpoint = '/v1/realtime' order by id",
      );
      expect(rows.map((r) => r.model)).toEqual(['voice', 'queen', 'voice']);
      expectMilliseconds(rows[0]!.audio_seconds, pcm.length / 2 / 24_000);
      expect(rows[1]!.output_tokens).toBe(
        done.response.usage.total_tokens -
          (done.response.usage as unknown as { input_tokens: number }).input_tokens,
      );
      expectMilliseconds(rows[2]!.audio_seconds, spoken.length / 2 / 24_000);
      expect(rows.every((r) => Number(r.cost_nano) > 0)).toBe(true);
    } finally {
      proxy.server.close();
    }
  }, 180_000);

  function words(text: string) {
    return text.toLowerCase().match(/[a-z']+/g) ?? [];
  }
  function recall(heard: string) {
    const got = new Set(words(heard));
    const said = words(SENTENCE);
    return said.filter((w) => got.has(w)).length / said.length;
  }

  it('checks the key at the upgrade: the subprotocol form, 401 and 403 in the envelope, a wrong model', async () => {
    const wsUrl = `${base.replace('http', 'ws')}/v1/realtime?model=voice`;
    const refused = (
      url: string,
      options: ConstructorParameters<typeof WebSocket>[2],
      protocols?: string[],
    ) =>
      new Promise<{ status: number; body: { error: { code: string; type: string } } }>((resolve, reject) => {
        const ws = new WebSocket(url, protocols, options);
        ws.on('open', () => reject(new Error('the upgrade was accepted')));
        ws.on('unexpected-response', (_req, res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) as never }));
        });
        ws.on('error', () => {});
      });
    const none = await refused(wsUrl, {});
    expect([none.status, none.body.error.code]).toEqual([401, 'missing_api_key']);
    const bad = await refused(wsUrl, { headers: bearer('sk_not_a_key') });
    expect([bad.status, bad.body.error.code]).toEqual([401, 'invalid_api_key']);
    const scope = await refused(wsUrl, { headers: bearer(chatOnlyKey) });
    expect([scope.status, scope.body.error.code, scope.body.error.type]).toEqual([
      403,
      'insufficient_scope',
      'permission_error',
    ]);
    const model = await refused(wsUrl.replace('model=voice', 'model=queen'), {
      headers: bearer(servers.adminKey),
    });
    expect([model.status, model.body.error.code]).toEqual([400, 'model_not_supported']);

    // the browser SDK's form: the key as a subprotocol, no header
    const ws = new WebSocket(wsUrl, ['realtime', `openai-insecure-api-key.${servers.adminKey}`]);
    const first = await new Promise<{ type: string }>((resolve, reject) => {
      ws.once('message', (m) => resolve(JSON.parse(String(m)) as { type: string }));
      ws.once('error', reject);
    });
    expect(first.type).toBe('session.created');
    expect(ws.protocol).toBe('realtime');
    // bad events are error events, not a closed socket
    ws.send('not json');
    ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
    ws.send(JSON.stringify({ type: 'no.such.event' }));
    const errors: { type: string; error: { code: string } }[] = [];
    await new Promise<void>((resolve) => {
      ws.on('message', (m) => {
        errors.push(JSON.parse(String(m)) as never);
        if (errors.length === 3) resolve();
      });
    });
    const conforms = asyncApiCheck();
    for (const event of [first, ...errors]) conforms(event);
    expect(errors.map((e) => [e.type, e.error.code])).toEqual([
      ['error', 'invalid_json'],
      ['error', 'input_audio_buffer_commit_empty'],
      ['error', 'unknown_event'],
    ]);
    // a message over the size bound closes the connection (1009)
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: 'A'.repeat(5 * 1024 * 1024) }));
    expect(await closed).toBe(1009);
  }, 60_000);
});
