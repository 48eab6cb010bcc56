// How the server ends a realtime voice session (issue 19): at REALTIME_MAX_SECONDS, and at once
// when its key is revoked, on this instance or another one (PostgreSQL + Redis). Either way the
// response in flight is cut and billed for what was sent, its response.done says why, then an
// `error` event and the close (1000 or 1008). The voice model is relayed to an OpenAI-compatible
// upstream on loopback that speaks slowly (a tenth of a second of PCM every 100 ms for two
// minutes) and transcribes at once: so a response is surely being spoken when the session ends,
// whatever the machine's load.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushUsage } from '../src/platform/metering.ts';
import { bearer } from './support/envelope.ts';
import { redisAvailable } from './support/instances.ts';
import {
  createTestDatabase,
  hasPostgres,
  startTestServers,
  TEST_REDIS_URL,
  type TestServers,
} from './support/server.ts';
import { expectMilliseconds } from './support/seconds.ts';

interface Event {
  type: string;
  [key: string]: unknown;
}

let slowVoice: Server;
let voiceUrl = '';
const started: TestServers[] = [];

beforeAll(async () => {
  slowVoice = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/v1/audio/transcriptions') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            task: 'transcribe',
            language: 'english',
            duration: 1,
            text: 'Please book a table for two.',
            segments: [{ start: 0, end: 1, text: 'Please book a table for two.' }],
          }),
        );
        return;
      }
      // speech: 0.1 s of 24 kHz 16-bit PCM (a quiet tone) every 100 ms, for two minutes
      res.writeHead(200, { 'content-type': 'audio/pcm' });
      const tenth = Buffer.alloc(4800);
      for (let i = 0; i < 2400; i++) tenth.writeInt16LE(Math.round(2000 * Math.sin(i / 8)), i * 2);
      let sent = 0;
      const timer = setInterval(() => {
        if (++sent > 1200) {
          clearInterval(timer);
          res.end();
          return;
        }
        res.write(tenth);
      }, 100);
      res.on('close', () => clearInterval(timer));
    });
  });
  await new Promise<void>((resolve) => slowVoice.listen(0, '127.0.0.1', resolve));
  voiceUrl = `http://127.0.0.1:${(slowVoice.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  slowVoice.closeAllConnections();
  await new Promise((resolve) => slowVoice.close(resolve));
});

async function serve(env: Record<string, string> = {}, options: Parameters<typeof startTestServers>[1] = {}) {
  const servers = await startTestServers(options.databaseUrl ? 'postgres' : 'pglite', {
    which: ['model'],
    ...options,
    env: {
      MODEL_ENGINES: JSON.stringify({ voice: { type: 'upstream', baseUrl: voiceUrl, retries: 0 } }),
      ...env,
      ...options.env,
    },
  });
  started.push(servers);
  return servers;
}

/** A session and every event it received, with its close code once closed. */
interface Session {
  ws: WebSocket;
  events: Event[];
  opened: number;
  closed: Promise<{ code: number; at: number }>;
  /** Resolves with the first event of `type` (already received or to come). */
  next(type: string): Promise<Event>;
}

async function open(base: string, key: string): Promise<Session> {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/v1/realtime?model=voice`, {
    headers: bearer(key),
  });
  const events: Event[] = [];
  const waiting: { type: string; resolve: (e: Event) => void }[] = [];
  ws.on('message', (data) => {
    const event = JSON.parse(String(data)) as Event;
    events.push(event);
    for (const w of waiting.filter((x) => x.type === event.type)) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve(event);
    }
  });
  const closed = new Promise<{ code: number; at: number }>((resolve) =>
    ws.once('close', (code) => resolve({ code, at: Date.now() })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const session: Session = {
    ws,
    events,
    opened: Date.now(),
    closed,
    next: (type) =>
      new Promise((resolve) => {
        const seen = events.find((e) => e.type === type);
        if (seen) resolve(seen);
        else waiting.push({ type, resolve });
      }),
  };
  await session.next('session.created');
  return session;
}

/** One second of audio committed (heard and billed), then an answer asked for. */
async function speakAndAsk(session: Session): Promise<void> {
  const second = Buffer.alloc(48_000, 1).toString('base64');
  session.ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: second }));
  session.ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
  await session.next('conversation.item.input_audio_transcription.completed');
  session.ws.send(JSON.stringify({ type: 'response.create' }));
  // a few tenths of a second spoken: the answer is under way
  while (spokenSeconds(session.events) < 0.3) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** Seconds of the PCM the session received in response.output_audio.delta events. */
function spokenSeconds(events: Event[]): number {
  const bytes = events
    .filter((e) => e.type === 'response.output_audio.delta')
    .reduce((sum, e) => sum + Buffer.from(e.delta as string, 'base64').length, 0);
  return bytes / 2 / 24_000;
}

async function realtimeUsage(servers: TestServers, keyId?: string) {
  await flushUsage(servers.platform.db); // a journaled record reaches the table within 50 ms
  return servers.platform.db.query<{
    model: string;
    audio_seconds: number;
    output_tokens: number;
    cost_nano: string;
  }>(
    `select model, audio_seconds, output_tokens, cost_nano::text as cost_nano from usage_records
      where endpoint = '/v1/realtime' ${keyId ? 'and key_id = $1' : ''} order by id`,
    keyId ? [keyId] : [],
  );
}

async function mintVoiceKey(base: string, adminKey: string): Promise<{ id: string; secret: string }> {
  const res = await fetch(`${base}/v1/keys`, {
    method: 'POST',
    headers: { ...bearer(adminKey), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'realtime bounds', scopes: ['voice'] }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; secret: string };
}

/** The end the server gives a session: response.done cut, billed as sent, the error, the close. */
async function expectEnded(
  servers: TestServers,
  session: Session,
  keyId: string,
  want: { reason: string; type: string; code: string; close: number },
) {
  const { code } = await session.closed;
  expect(code).toBe(want.close);
  const types = session.events.map((e) => e.type);
  const done = session.events.find((e) => e.type === 'response.done') as unknown as {
    response: { status: string; status_details: { reason: string }; usage: { audio_seconds: number } };
  };
  expect(done.response.status).toBe('cancelled');
  expect(done.response.status_details.reason).toBe(want.reason);
  const last = session.events.at(-1) as unknown as { type: string; error: { type: string; code: string } };
  expect([last.type, last.error.type, last.error.code]).toEqual(['error', want.type, want.code]);
  expect(types.indexOf('response.done')).toBeLessThan(types.length - 1);
  // billed: the second heard, the answer's tokens, and exactly the audio that was sent
  const spoken = spokenSeconds(session.events);
  expect(spoken).toBeGreaterThan(0.2);
  expectMilliseconds(done.response.usage.audio_seconds, spoken);
  const rows = await realtimeUsage(servers, keyId);
  expect(rows.map((r) => r.model)).toEqual(['voice', 'queen', 'voice']);
  expectMilliseconds(rows[0]!.audio_seconds, 1);
  expect(rows[1]!.output_tokens).toBeGreaterThan(0);
  expectMilliseconds(rows[2]!.audio_seconds, spoken);
  expect(rows.every((r) => Number(r.cost_nano) > 0)).toBe(true);
}

describe('a realtime session ended by the server', () => {
  it('closes at REALTIME_MAX_SECONDS: the answer cut and billed as sent, session_expired, code 1000', async () => {
    const servers = await serve({ REALTIME_MAX_SECONDS: '10' });
    const base = servers.urls.model as string;
    const key = await mintVoiceKey(base, servers.adminKey);
    const session = await open(base, key.secret);
    const created = session.events[0] as unknown as { session: { expires_at: number } };
    expect(created.session.expires_at - Math.floor(session.opened / 1000)).toBeGreaterThanOrEqual(9);
    await speakAndAsk(session);
    const { at } = await session.closed;
    // on time: not before the limit, and within the ending's grace after it
    expect(at - session.opened).toBeGreaterThanOrEqual(9_900);
    expect(at - session.opened).toBeLessThan(16_000);
    await expectEnded(servers, session, key.id, {
      reason: 'session_expired',
      type: 'invalid_request_error',
      code: 'session_expired',
      close: 1000,
    });
  }, 120_000);

  it('closes at once when its key is revoked: the answer cut and billed as sent, code 1008', async () => {
    const servers = await serve();
    const base = servers.urls.model as string;
    const key = await mintVoiceKey(base, servers.adminKey);
    const session = await open(base, key.secret);
    await speakAndAsk(session);
    const revoked = Date.now();
    const res = await fetch(`${base}/v1/keys/${key.id}`, {
      method: 'DELETE',
      headers: bearer(servers.adminKey),
    });
    expect(res.status).toBe(200);
    const { at } = await session.closed;
    expect(at - revoked).toBeLessThan(3_000); // at once, not at a next turn that never comes
    await expectEnded(servers, session, key.id, {
      reason: 'key_revoked',
      type: 'authentication_error',
      code: 'invalid_api_key',
      close: 1008,
    });
    // and the key opens no new session
    const again = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${base.replace('http', 'ws')}/v1/realtime?model=voice`, {
        headers: bearer(key.secret),
      });
      ws.on('unexpected-response', (_req, r) => resolve(r.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => {});
    });
    expect(again).toBe(401);
  }, 120_000);

  it('keeps a session open through a rotation with a grace period, and ends it on one without', async () => {
    const servers = await serve();
    const base = servers.urls.model as string;
    const key = await mintVoiceKey(base, servers.adminKey);
    const session = await open(base, key.secret);
    const rotate = (grace: number) =>
      fetch(`${base}/v1/keys/${key.id}/rotate`, {
        method: 'POST',
        headers: { ...bearer(servers.adminKey), 'content-type': 'application/json' },
        body: JSON.stringify({ grace_period_seconds: grace }),
      });
    expect((await rotate(3600)).status).toBe(200);
    // still answering: a text turn after the rotation
    session.ws.send(
      JSON.stringify({
        type: 'conversation.item.create',
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hello?' }] },
      }),
    );
    session.ws.send(JSON.stringify({ type: 'response.create', response: { output_modalities: ['text'] } }));
    const done = (await session.next('response.done')) as unknown as { response: { status: string } };
    expect(done.response.status).toBe('completed');
    expect(session.ws.readyState).toBe(WebSocket.OPEN);
    // a second rotation stops the secret this session was opened with at once
    expect((await rotate(0)).status).toBe(200);
    const { code } = await session.closed;
    expect(code).toBe(1008);
    expect((session.events.at(-1) as unknown as { error: { code: string } }).error.code).toBe(
      'invalid_api_key',
    );
  }, 120_000);
});

describe('seconds of audio a minute in a realtime session', () => {
  it("refuses a turn over the key's audio a minute: transcription failed, a rate_limit_error, nothing billed, still open", async () => {
    const servers = await serve({ MODEL_AUDIO_SECONDS_PER_MINUTE: '2' });
    const base = servers.urls.model as string;
    const key = await mintVoiceKey(base, servers.adminKey);
    const session = await open(base, key.secret);
    const commit = () => {
      const audio = Buffer.alloc(36_000, 1).toString('base64'); // 0.75 s
      session.ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio }));
      session.ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio }));
      session.ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
    };
    commit(); // 1.5 s, billed as 2 of the 2 a minute
    await session.next('conversation.item.input_audio_transcription.completed');
    commit();
    const failed = (await session.next('conversation.item.input_audio_transcription.failed')) as unknown as {
      error: { code: string };
    };
    expect(failed.error.code).toBe('rate_limit_exceeded');
    const error = (await session.next('error')) as unknown as {
      error: { type: string; code: string; message: string };
    };
    expect([error.error.type, error.error.code]).toEqual(['rate_limit_error', 'rate_limit_exceeded']);
    expect(error.error.message).toMatch(/retry in \d+ s/);
    expect(session.ws.readyState).toBe(WebSocket.OPEN);
    const rows = await realtimeUsage(servers, key.id);
    expect(rows.map((r) => [r.model, r.audio_seconds])).toEqual([['voice', 1.5]]);
    session.ws.close();
  }, 120_000);
});

describe('a key revoked on another instance (PostgreSQL, revocations over Redis)', async () => {
  const ready = (await hasPostgres()) && (await redisAvailable());
  it.runIf(ready)(
    'ends the session on this instance at once',
    async () => {
      const database = await createTestDatabase();
      try {
        const adminKey = `sk_test_admin_${Date.now()}_realtime_bounds`;
        const options = { databaseUrl: database.url, adminKey, env: { REDIS_URL: TEST_REDIS_URL } };
        const a = await serve({}, options);
        const b = await serve({}, options);
        const key = await mintVoiceKey(a.urls.model as string, adminKey);
        const session = await open(b.urls.model as string, key.secret);
        await speakAndAsk(session);
        const revoked = Date.now();
        const res = await fetch(`${a.urls.model}/v1/keys/${key.id}`, {
          method: 'DELETE',
          headers: bearer(adminKey),
        });
        expect(res.status).toBe(200);
        const { at } = await session.closed;
        expect(at - revoked).toBeLessThan(3_000);
        await expectEnded(b, session, key.id, {
          reason: 'key_revoked',
          type: 'authentication_error',
          code: 'invalid_api_key',
          close: 1008,
        });
      } finally {
        await Promise.all(started.splice(0).map((s) => s.stop()));
        await database.drop();
      }
    },
    180_000,
  );
});
