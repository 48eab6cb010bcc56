// The media models on an OpenAI-compatible upstream, proven by chaining: one instance of our model
// API (built-in engines) is the upstream of another, whose MODEL_ENGINES puts imagine and voice
// there; the official SDK calls the downstream. Then failover to a fallback, and a dead upstream.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushUsage } from '../src/platform/metering.ts';
import { freePort } from './support/processes.ts';
import { startTestServers, type TestServers } from './support/server.ts';
import { expectMilliseconds } from './support/seconds.ts';

let upstream: TestServers;
const started: TestServers[] = [];
let direct: OpenAI;

async function chained(engine: object): Promise<{ client: OpenAI; servers: TestServers }> {
  const servers = await startTestServers('pglite', {
    which: ['model'],
    env: { MODEL_ENGINES: JSON.stringify({ imagine: engine, voice: engine }) },
  });
  started.push(servers);
  return {
    client: new OpenAI({
      baseURL: `${servers.urls.model}/v1`,
      apiKey: servers.adminKey,
      maxRetries: 0,
      timeout: 120_000,
    }),
    servers,
  };
}

const toUpstream = () => ({
  type: 'upstream',
  baseUrl: `${upstream.urls.model}/v1`,
  apiKey: upstream.adminKey,
});
const SENTENCE = 'Please call me tomorrow morning. I would like to book a table for two people at seven.';

beforeAll(async () => {
  upstream = await startTestServers('pglite', { which: ['model'] });
  direct = new OpenAI({
    baseURL: `${upstream.urls.model}/v1`,
    apiKey: upstream.adminKey,
    maxRetries: 0,
    timeout: 120_000,
  });
}, 120_000);
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  await upstream?.stop();
});

describe('imagine and voice relayed to another instance of our API', () => {
  it('relays images: the upstream’s bytes, as b64_json or as URLs of the downstream', async () => {
    const { client, servers } = await chained(toUpstream());
    const ask = {
      prompt: 'Snowy mountains at night',
      size: '256x256',
      response_format: 'b64_json',
      seed: 9,
    } as const;
    const viaChain = await client.images.generate(ask as never);
    const straight = await direct.images.generate(ask as never);
    expect(viaChain.data![0]!.b64_json).toBe(straight.data![0]!.b64_json);
    expect(viaChain.usage).toMatchObject({ images: 1, cost_eur: '0.008000000' });
    const urls = await client.images.generate({ prompt: 'A lake at dawn', size: '256x256', n: 2 });
    for (const image of urls.data!) {
      expect(image.url!.startsWith(`${servers.urls.model}/v1/images/files/`)).toBe(true);
      const res = await fetch(image.url!);
      expect(res.status).toBe(200);
      expect(
        Buffer.from(await res.arrayBuffer())
          .subarray(1, 4)
          .toString(),
      ).toBe('PNG');
    }
    await flushUsage(servers.platform.db);
    const [billed] = await servers.platform.db.query<{ images: string }>(
      "select sum(images)::text as images from usage_records where model = 'imagine' and status = 200",
    );
    expect(billed!.images).toBe('3');
  }, 120_000);

  it('relays speech (asked upstream as pcm, encoded here) and bills its length', async () => {
    const { client, servers } = await chained(toUpstream());
    const viaChain = Buffer.from(
      await (
        await client.audio.speech.create({
          model: 'voice',
          voice: 'alloy',
          input: SENTENCE,
          response_format: 'pcm',
        })
      ).arrayBuffer(),
    );
    const straight = Buffer.from(
      await (
        await direct.audio.speech.create({
          model: 'voice',
          voice: 'alloy',
          input: SENTENCE,
          response_format: 'pcm',
        })
      ).arrayBuffer(),
    );
    expect(viaChain.equals(straight)).toBe(true);
    const wav = Buffer.from(
      await (
        await client.audio.speech.create({
          model: 'voice',
          voice: 'alloy',
          input: SENTENCE,
          response_format: 'wav',
        })
      ).arrayBuffer(),
    );
    expect(wav.subarray(44).equals(straight)).toBe(true);
    await flushUsage(servers.platform.db);
    const [row] = await servers.platform.db.query<{ audio_seconds: number }>(
      "select audio_seconds from usage_records where endpoint = '/v1/audio/speech' order by id desc limit 1",
    );
    expectMilliseconds(row!.audio_seconds, straight.length / 2 / 24_000);
  }, 120_000);

  it('relays transcriptions: the upstream’s words, in every format rendered here', async () => {
    const { client } = await chained(toUpstream());
    const wav = Buffer.from(
      await (
        await direct.audio.speech.create({
          model: 'voice',
          voice: 'alloy',
          input: SENTENCE,
          response_format: 'wav',
        })
      ).arrayBuffer(),
    );
    const viaChain = await client.audio.transcriptions.create({
      model: 'voice',
      file: await toFile(wav, 'speech.wav'),
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
    });
    const straight = await direct.audio.transcriptions.create({
      model: 'voice',
      file: await toFile(wav, 'speech.wav'),
    });
    expect(viaChain.text).toBe(straight.text);
    expect(viaChain.words!.length).toBeGreaterThan(5);
    expect(viaChain.segments!.length).toBeGreaterThan(0);
    const srt = (await client.audio.transcriptions.create({
      model: 'voice',
      file: await toFile(wav, 'speech.wav'),
      response_format: 'srt',
    })) as unknown as string;
    expect(srt).toMatch(/^1\n00:00:0\d,\d{3} --> /);
  }, 240_000);

  it('fails over to the fallback when the first upstream is down', async () => {
    const dead = await freePort();
    const { client } = await chained({
      type: 'upstream',
      baseUrl: `http://127.0.0.1:${dead}/v1`,
      retries: 1,
      retryBaseMs: 10,
      fallback: toUpstream(),
    });
    const images = await client.images.generate({
      prompt: 'A forest',
      size: '256x256',
      response_format: 'b64_json',
    });
    expect(images.data).toHaveLength(1);
    const speech = await client.audio.speech.create({
      model: 'voice',
      voice: 'nova',
      input: 'Hello there.',
      response_format: 'wav',
    });
    expect(Buffer.from(await speech.arrayBuffer()).length).toBeGreaterThan(44);
  }, 120_000);

  it('answers 502 in the envelope when no upstream answers', async () => {
    const dead = await freePort();
    const { client } = await chained({
      type: 'upstream',
      baseUrl: `http://127.0.0.1:${dead}/v1`,
      retries: 0,
    });
    const wav = Buffer.from(
      await (
        await direct.audio.speech.create({
          model: 'voice',
          voice: 'nova',
          input: 'Hello.',
          response_format: 'wav',
        })
      ).arrayBuffer(),
    );
    const calls = [
      () => client.images.generate({ prompt: 'A forest', size: '256x256' }),
      () => client.audio.speech.create({ model: 'voice', voice: 'nova', input: 'Hello.' }),
      async () => client.audio.transcriptions.create({ model: 'voice', file: await toFile(wav, 'a.wav') }),
    ];
    for (const call of calls) {
      const error = await call()
        .then(() => undefined)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_failed');
    }
  }, 120_000);
});
