// The media benchmark (issue 19): images per second of the built-in painter, the real-time factor
// of built-in speech (eSpeak NG) and recognition (PocketSphinx), and what the gateway adds when
// imagine and voice are relayed to an OpenAI-compatible upstream.
//
// Two model APIs start in this process, PGlite in memory: A with the built-in engines, and B whose
// MODEL_ENGINES relays imagine and voice to A (the chain of contract-tests/media-upstream.test.ts).
// Every call goes through the official openai SDK. The real-time factor is the wall time of a call
// over the seconds of audio it made or read (below 1: faster than real time). The gateway's added
// latency is B's median minus A's for the same request, sequentially, alternating A and B.
// The load shares the machine with the services (and, on a shared machine, with whatever else
// runs): the figures are a floor for a dedicated server.
// `npm run bench:media -- [--images 12] [--speech 12] [--relay 30]`
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startInProcess } from './lib.ts';
import OpenAI, { toFile } from 'openai';

const { values: args } = parseArgs({
  options: {
    images: { type: 'string', default: '12' },
    speech: { type: 'string', default: '12' },
    relay: { type: 'string', default: '30' },
    out: { type: 'string', default: 'bench/results' },
  },
});
const IMAGES = Number(args.images);
const SPEECHES = Number(args.speech);
const RELAYS = Number(args.relay);
const KEY = 'sk_bench_media_0123456789abcdef0123';
const SENTENCES = [
  'Please call me tomorrow morning. I would like to book a table for two people at seven.',
  'The ferry to Corsica leaves at nine and arrives in Bonifacio a little after noon.',
  'Our bakery opens at six on weekdays and at eight on Sundays, closed on Mondays.',
  'Could you send the invoice for the repair of the heating system to our office in Lyon?',
];

const round = (n: number, digits = 2) => Number(n.toFixed(digits));
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

async function start(env: Record<string, string>) {
  const running = await startInProcess(['model'], KEY, {
    MODEL_RATE_LIMIT_RPM: '1000000',
    DEMO_LISTINGS: '0',
    ...env,
  });
  const url = running.urls.model ?? '';
  return {
    running,
    url,
    openai: new OpenAI({ baseURL: `${url}/v1`, apiKey: KEY, maxRetries: 0, timeout: 300_000 }),
  };
}

async function main(): Promise<void> {
  const a = await start({});
  const b = await start({
    MODEL_ENGINES: JSON.stringify({
      imagine: { type: 'upstream', baseUrl: `${a.url}/v1`, apiKey: KEY },
      voice: { type: 'upstream', baseUrl: `${a.url}/v1`, apiKey: KEY },
    }),
  });
  const results: Record<string, unknown> = {
    when: new Date().toISOString(),
    cpus: cpus().length,
    load_average_at_start: loadavg().map((l) => round(l, 2)),
  };

  // images per second: sequential (one at a time) and with n = 4 (the pool's two workers in parallel)
  const images: unknown[] = [];
  for (const [size, n, format] of [
    ['256x256', 1, 'png'],
    ['1024x1024', 1, 'png'],
    ['1024x1024', 4, 'png'],
    ['1024x1024', 4, 'jpeg'],
    ['1792x1024', 4, 'webp'],
  ] as const) {
    const calls = Math.max(1, Math.round(IMAGES / n));
    const started = performance.now();
    const latencies: number[] = [];
    for (let i = 0; i < calls; i++) {
      const t = performance.now();
      await a.openai.images.generate({
        prompt: `A pine forest by a lake at sunset ${i}`,
        size,
        n,
        response_format: 'b64_json',
        output_format: format,
      });
      latencies.push(performance.now() - t);
    }
    const seconds = (performance.now() - started) / 1000;
    const row = {
      size,
      n,
      format,
      images: calls * n,
      images_per_second: round((calls * n) / seconds, 2),
      call_p50_ms: round(median(latencies), 0),
    };
    images.push(row);
    console.log('images', JSON.stringify(row));
  }
  results.images = images;

  // speech: real-time factor and time to the first byte, per format
  const speech: unknown[] = [];
  for (const format of ['pcm', 'wav', 'mp3', 'opus', 'flac'] as const) {
    let audio = 0;
    let wall = 0;
    const firstBytes: number[] = [];
    for (let i = 0; i < SPEECHES; i++) {
      const t = performance.now();
      const response = await a.openai.audio.speech.create({
        model: 'voice',
        voice: 'alloy',
        input: SENTENCES[i % SENTENCES.length]!,
        response_format: format,
      });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      let first = true;
      for (;;) {
        const { done } = await reader.read();
        if (first) {
          firstBytes.push(performance.now() - t);
          first = false;
        }
        if (done) break;
      }
      wall += performance.now() - t;
      const [row] = await a.running.platform.db.query<{ audio_seconds: number }>(
        "select audio_seconds from usage_records where endpoint = '/v1/audio/speech' order by id desc limit 1",
      );
      audio += row?.audio_seconds ?? 0;
    }
    const row = {
      format,
      calls: SPEECHES,
      audio_seconds: round(audio, 1),
      real_time_factor: round(wall / 1000 / audio, 3),
      first_byte_p50_ms: round(median(firstBytes), 0),
    };
    speech.push(row);
    console.log('speech', JSON.stringify(row));
  }
  results.speech = speech;

  // transcription: real-time factor of the recognizer on our own speech
  const wav = Buffer.from(
    await (
      await a.openai.audio.speech.create({
        model: 'voice',
        voice: 'alloy',
        input: SENTENCES.join(' '),
        response_format: 'wav',
      })
    ).arrayBuffer(),
  );
  const seconds = (wav.length - 44) / 2 / 24_000;
  const walls: number[] = [];
  for (let i = 0; i < Math.max(2, Math.round(SPEECHES / 4)); i++) {
    const t = performance.now();
    await a.openai.audio.transcriptions.create({ model: 'voice', file: await toFile(wav, 'speech.wav') });
    walls.push(performance.now() - t);
  }
  results.transcription = {
    audio_seconds: round(seconds, 2),
    calls: walls.length,
    real_time_factor: round(median(walls) / 1000 / seconds, 3),
    call_p50_ms: round(median(walls), 0),
  };
  console.log('transcription', JSON.stringify(results.transcription));

  // the gateway's added latency: the same request to A, and to B which relays it to A
  const relay: Record<string, unknown> = {};
  const pair = async (name: string, call: (client: OpenAI) => Promise<unknown>) => {
    const direct: number[] = [];
    const relayed: number[] = [];
    for (let i = 0; i < RELAYS; i++) {
      for (const [client, list] of [
        [a.openai, direct],
        [b.openai, relayed],
      ] as const) {
        const t = performance.now();
        await call(client);
        list.push(performance.now() - t);
      }
    }
    relay[name] = {
      calls: RELAYS,
      direct_p50_ms: round(median(direct), 1),
      relayed_p50_ms: round(median(relayed), 1),
      added_p50_ms: round(median(relayed) - median(direct), 1),
    };
    console.log('relay', name, JSON.stringify(relay[name]));
  };
  await pair('speech pcm, one sentence', async (client) => {
    const response = await client.audio.speech.create({
      model: 'voice',
      voice: 'alloy',
      input: SENTENCES[0]!,
      response_format: 'pcm',
    });
    await response.arrayBuffer();
  });
  await pair('image 256x256 b64_json', (client) =>
    client.images.generate({
      prompt: 'A lake at dawn',
      size: '256x256',
      response_format: 'b64_json',
      seed: 1,
    } as never),
  );
  results.relay = relay;
  results.load_average_at_end = loadavg().map((l) => round(l, 2));

  mkdirSync(args.out ?? 'bench/results', { recursive: true });
  const stamp = new Date().toISOString().slice(0, 16).replace(/[T:]/g, '-');
  const file = join(args.out ?? 'bench/results', `media-${stamp}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`written to ${file}`);
  await b.running.close();
  await a.running.close();
}

await main();
