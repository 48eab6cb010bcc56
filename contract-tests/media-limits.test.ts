// The per-key media limits (issue 19): images a minute (imagine) and seconds of audio a minute
// (voice: speech out, transcriptions in), lowered by MODEL_IMAGES_PER_MINUTE and
// MODEL_AUDIO_SECONDS_PER_MINUTE so a few small calls reach them. A refusal is a 429 in the
// envelope, as the spec documents it (Retry-After, retry-after-ms, the RateLimit fields), comes
// before any work, bills nothing, and the official SDK reads it as a RateLimitError; a request
// larger than a whole minute's allowance also says `x-should-retry: false`.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushUsage } from '../src/platform/metering.ts';
import { expectConformsParts } from './support/conformance.ts';
import { bearer, expectError } from './support/envelope.ts';
import { startTestServers, type TestServers } from './support/server.ts';
import { operations } from './support/spec.ts';

const IMAGES_PER_MINUTE = 6;
const AUDIO_SECONDS_PER_MINUTE = 8;

let servers: TestServers;
let base: string;

beforeAll(async () => {
  servers = await startTestServers('pglite', {
    which: ['model'],
    env: {
      MODEL_RATE_LIMIT_RPM: '10000',
      MODEL_IMAGES_PER_MINUTE: String(IMAGES_PER_MINUTE),
      MODEL_AUDIO_SECONDS_PER_MINUTE: String(AUDIO_SECONDS_PER_MINUTE),
    },
  });
  base = servers.urls.model as string;
}, 120_000);
afterAll(async () => servers?.stop());

async function mint(scopes: string[]): Promise<{ id: string; secret: string }> {
  const res = await fetch(`${base}/v1/keys`, {
    method: 'POST',
    headers: { ...bearer(servers.adminKey), 'content-type': 'application/json' },
    body: JSON.stringify({ name: `limits ${scopes.join(' ')}`, scopes }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; secret: string };
}

async function records(keyId: string, endpoint: string): Promise<number> {
  await flushUsage(servers.platform.db); // a journaled record reaches the table within 50 ms
  const [row] = await servers.platform.db.query<{ n: number }>(
    'select count(*)::int as n from usage_records where key_id = $1 and endpoint = $2',
    [keyId, endpoint],
  );
  return row!.n;
}

/** The 429 as documented for the operation: envelope, Retry-After and retry-after-ms, RateLimit fields. */
async function expectRefused(operationId: string, res: Response, unit: string, quota: number) {
  const op = operations('model').find((o) => o.operationId === operationId)!;
  const text = await res.clone().text();
  expectConformsParts(op, 429, res.headers, text, res.headers.get('content-type'));
  const error = await expectError('model', res, 429, 'rate_limit_error', 'rate_limit_exceeded');
  const ms = Number(res.headers.get('retry-after-ms'));
  expect(ms).toBeGreaterThan(0);
  expect(Number(res.headers.get('retry-after'))).toBe(Math.max(1, Math.ceil(ms / 1000)));
  expect(res.headers.get('ratelimit-policy')).toContain(`"${unit}";q=${quota};w=60`);
  expect(res.headers.get('ratelimit')).toMatch(new RegExp(`"${unit}";r=\\d+;t=\\d+`));
  return { error, ms };
}

/** A WAV of `seconds` of a 440 Hz tone, 16 kHz 16-bit mono. */
function toneWav(seconds: number): Buffer {
  const rate = 16_000;
  const samples = Math.round(rate * seconds);
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0, 'latin1');
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write('WAVEfmt ', 8, 'latin1');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(1, 22);
  wav.writeUInt32LE(rate, 24);
  wav.writeUInt32LE(rate * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36, 'latin1');
  wav.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++)
    wav.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), 44 + i * 2);
  return wav;
}

describe('images a minute per key', () => {
  it('answers 429 with Retry-After once the images are spent, bills nothing, and takes the rest', async () => {
    const key = await mint(['images']);
    const generate = (n: number) =>
      fetch(`${base}/v1/images/generations`, {
        method: 'POST',
        headers: { ...bearer(key.secret), 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'a lake at dawn', n, size: '256x256', response_format: 'b64_json' }),
      });
    const first = await generate(5);
    expect(first.status).toBe(200);
    expect(((await first.json()) as { data: unknown[] }).data).toHaveLength(5);
    expect(first.headers.get('ratelimit-policy')).toContain(`"images";q=${IMAGES_PER_MINUTE};w=60`);
    expect(first.headers.get('ratelimit')).toContain('"images";r=1;');

    // three more need two more than the one left: at 6 a minute, one comes back every 10 s
    const refused = await generate(3);
    const { ms } = await expectRefused('createImage', refused, 'images', IMAGES_PER_MINUTE);
    expect(ms).toBeGreaterThan(5_000);
    expect(ms).toBeLessThanOrEqual(20_000);
    expect(refused.headers.get('x-should-retry')).toBeNull(); // waiting does help

    // the official SDK reads it as a RateLimitError, with the server's wait
    const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: key.secret, maxRetries: 0 });
    const error = await openai.images
      .generate({ model: 'imagine', prompt: 'a lake at dawn', n: 3, size: '256x256' as never })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('rate_limit_exceeded');
    expect(
      Number((error as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after')),
    ).toBeGreaterThan(0);

    // the refusals took nothing: the image left is still there
    const last = await generate(1);
    expect(last.status).toBe(200);
    expect(await records(key.id, '/v1/images/generations')).toBe(2);
    await flushUsage(servers.platform.db);
    const [billed] = await servers.platform.db.query<{ images: number }>(
      "select sum(images)::int as images from usage_records where key_id = $1 and endpoint = '/v1/images/generations'",
      [key.id],
    );
    expect(billed!.images).toBe(6);
  }, 120_000);

  it('says x-should-retry: false to a request larger than a minute allows', async () => {
    const key = await mint(['images']);
    const res = await fetch(`${base}/v1/images/generations`, {
      method: 'POST',
      headers: { ...bearer(key.secret), 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'a lake', n: IMAGES_PER_MINUTE + 1, size: '256x256' }),
    });
    const { error } = await expectRefused('createImage', res, 'images', IMAGES_PER_MINUTE);
    expect(res.headers.get('x-should-retry')).toBe('false');
    expect(error.message).toMatch(/waiting cannot make it fit/);
    expect(await records(key.id, '/v1/images/generations')).toBe(0);
  });
});

describe('seconds of audio a minute per key', () => {
  // 70 characters are reserved as 5 seconds of speech before any is made (14 a second)
  const input = 'Your table for two is booked for seven tonight, see you at the harbour.';

  it('refuses speech once the seconds are spent, before speaking, billing nothing', async () => {
    const key = await mint(['voice']);
    const speak = () =>
      fetch(`${base}/v1/audio/speech`, {
        method: 'POST',
        headers: { ...bearer(key.secret), 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'voice', voice: 'alloy', input, response_format: 'wav' }),
      });
    const first = await speak();
    expect(first.status).toBe(200);
    expect((await first.arrayBuffer()).byteLength).toBeGreaterThan(44);
    expect(first.headers.get('ratelimit-policy')).toContain(
      `"audio_seconds";q=${AUDIO_SECONDS_PER_MINUTE};w=60`,
    );
    const refused = await speak();
    const { ms } = await expectRefused('createSpeech', refused, 'audio_seconds', AUDIO_SECONDS_PER_MINUTE);
    // five seconds needed, at 8 a minute one comes back every 7.5 s
    expect(ms).toBeLessThanOrEqual(37_500);
    const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: key.secret, maxRetries: 0 });
    const error = await openai.audio.speech
      .create({ model: 'voice', voice: 'alloy', input })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(await records(key.id, '/v1/audio/speech')).toBe(1);
  }, 120_000);

  it('refuses a transcription once the seconds are spent, and one longer than a minute allows', async () => {
    const key = await mint(['voice']);
    const transcribe = (wav: Buffer, secret = key.secret) => {
      const form = new FormData();
      form.set('model', 'voice');
      form.set('file', new Blob([new Uint8Array(wav)]), 'tone.wav');
      return fetch(`${base}/v1/audio/transcriptions`, {
        method: 'POST',
        headers: bearer(secret),
        body: form,
      });
    };
    const first = await transcribe(toneWav(5));
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    const refused = await transcribe(toneWav(5));
    await expectRefused('createTranscription', refused, 'audio_seconds', AUDIO_SECONDS_PER_MINUTE);
    expect(refused.headers.get('x-should-retry')).toBeNull();
    expect(await records(key.id, '/v1/audio/transcriptions')).toBe(1);

    const other = await mint(['voice']);
    const tooLong = await transcribe(toneWav(AUDIO_SECONDS_PER_MINUTE + 2), other.secret);
    const { error } = await expectRefused(
      'createTranscription',
      tooLong,
      'audio_seconds',
      AUDIO_SECONDS_PER_MINUTE,
    );
    expect(tooLong.headers.get('x-should-retry')).toBe('false');
    expect(error.message).toMatch(/needs more than the 8 audio_seconds per 60 s/);
    expect(await records(other.id, '/v1/audio/transcriptions')).toBe(0);
  }, 120_000);
});
