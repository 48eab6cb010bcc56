// Issue 19, "done when": every media row of the seed answers through the official openai SDK as a
// new user tries it after `npm start` — the model API run as its own process the way the
// README's start command runs it (`node --max-semi-space-size=64 src/main.ts`, here the model
// service alone, on an empty data directory), with the admin key it prints on its first start
// and nothing else configured: the built-in engines.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { PNG } from 'pngjs';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, outputOf, printed, stop, waitForHttp } from './support/processes.ts';

const SENTENCE = 'Please call me tomorrow morning. I would like to book a table for two people at seven.';
const dir = mkdtempSync(join(tmpdir(), 'media-first-run-'));
let child: ChildProcess;
let url = '';
let openai: OpenAI;
let secret = '';

beforeAll(async () => {
  const port = await freePort();
  child = spawn(process.execPath, ['--max-semi-space-size=64', 'src/main.ts', 'model'], {
    env: {
      ...process.env,
      BOOTSTRAP_ADMIN_KEY: '',
      DATA_DIR: dir,
      MODEL_API_PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = outputOf(child);
  url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/healthz`, child, 90_000);
  secret = (await printed('the admin key', output, /^\s+(sk_[A-Za-z0-9]{48})$/m))[1]!;
  openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: secret, maxRetries: 0, timeout: 120_000 });
}, 120_000);
afterAll(async () => {
  if (child) await stop(child);
  rmSync(dir, { recursive: true, force: true });
});

describe('the media rows after a first `npm start`, with the printed key', () => {
  it('makes an image as b64_json and as a URL of ours', async () => {
    const inline = await openai.images.generate({
      model: 'imagine',
      prompt: 'A harbour at sunrise',
      size: '256x256',
      response_format: 'b64_json',
    });
    const png = PNG.sync.read(Buffer.from(inline.data![0]!.b64_json!, 'base64'));
    expect([png.width, png.height]).toEqual([256, 256]);
    const linked = await openai.images.generate({ model: 'imagine', prompt: 'A forest', size: '256x256' });
    const fetched = await fetch(linked.data![0]!.url!);
    expect(fetched.headers.get('content-type')).toBe('image/png');
    expect(PNG.sync.read(Buffer.from(await fetched.arrayBuffer())).width).toBe(256);
  }, 60_000);

  it('speaks a sentence and transcribes it back to its words', async () => {
    const speech = await openai.audio.speech.create({
      model: 'voice',
      voice: 'alloy',
      input: SENTENCE,
      response_format: 'wav',
    });
    const wav = Buffer.from(await speech.arrayBuffer());
    expect(wav.toString('latin1', 0, 4)).toBe('RIFF');
    expect((wav.length - 44) / 2 / 24_000).toBeGreaterThan(3);
    const heard = await openai.audio.transcriptions.create({
      model: 'voice',
      file: await toFile(wav, 'speech.wav'),
    });
    const got = new Set(heard.text.toLowerCase().match(/[a-z']+/g));
    const said = SENTENCE.toLowerCase().match(/[a-z']+/g)!;
    expect(said.filter((w) => got.has(w)).length / said.length).toBeGreaterThanOrEqual(0.6);
  }, 120_000);

  it('opens a realtime voice session with the key and answers a text turn', async () => {
    const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/realtime?model=voice`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    const events: { type: string; response?: { status: string } }[] = [];
    const done = new Promise<void>((resolve, reject) => {
      ws.on('message', (data) => {
        const event = JSON.parse(String(data)) as { type: string; response?: { status: string } };
        events.push(event);
        if (event.type === 'response.done') resolve();
      });
      ws.once('error', reject);
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.send(
      JSON.stringify({
        type: 'conversation.item.create',
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hello?' }] },
      }),
    );
    ws.send(JSON.stringify({ type: 'response.create' }));
    await done;
    ws.close();
    expect(events[0]!.type).toBe('session.created');
    expect(events.some((e) => e.type === 'response.output_audio.delta')).toBe(true);
    expect(events.at(-1)!.response!.status).toBe('completed');
  }, 120_000);
});
