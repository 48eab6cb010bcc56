import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { CreateChatCompletionRequest } from '../../../generated/model/client/types.gen.ts';
import { ApiError } from '../../platform/errors.ts';
import { outbound } from '../../platform/outbound.ts';
import { ChatAssembly } from './assemble.ts';
import type { EngineEvent } from './engine.ts';
import { UpstreamEngine, parseRetryAfter } from './upstream.ts';
import { freePort } from '../../../contract-tests/support/processes.ts';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void | Promise<void>;

interface Fake {
  url: string;
  requests: { headers: http.IncomingHttpHeaders; body: Record<string, unknown> }[];
  closed: Promise<void>;
}

const servers: http.Server[] = [];
// the one outbound guard, as production has it: private addresses not allowed to customers, and
// the operator's upstreams (origin `operator`) on 127.0.0.1 allowed
const door = outbound({ allowPrivate: false });
afterAll(() => door.close());

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A fake OpenAI-compatible upstream on 127.0.0.1, port 0. */
async function fake(handler: Handler): Promise<Fake> {
  const requests: Fake['requests'] = [];
  let closedResolve: () => void = () => {};
  const closed = new Promise<void>((resolve) => (closedResolve = resolve));
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (text: string) => (body += text));
    req.on('end', () => {
      requests.push({ headers: req.headers, body: JSON.parse(body) as Record<string, unknown> });
      res.on('close', () => closedResolve());
      void handler(req, res, body);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, requests, closed };
}

function chunk(
  delta: Record<string, unknown>,
  finish: string | null = null,
  extra: Record<string, unknown> = {},
) {
  return `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
}

function sseHead(res: http.ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
}

/** A full answer: "Hello world", then usage, then [DONE]. */
const answer: Handler = (_req, res) => {
  sseHead(res);
  res.write(chunk({ role: 'assistant', content: '' }));
  res.write(chunk({ content: 'Hello' }));
  res.write(chunk({ content: ' world' }));
  res.write(chunk({}, 'stop'));
  res.write(
    `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 11, completion_tokens: 2 } })}\n\n`,
  );
  res.end('data: [DONE]\n\n');
};

const REQUEST: CreateChatCompletionRequest = {
  model: 'king',
  messages: [{ role: 'user', content: 'Say hello.' }],
  max_completion_tokens: 50,
  metadata: { team: 'a' },
  user: 'u_1',
};

async function collect(iterable: AsyncIterable<EngineEvent>): Promise<EngineEvent[]> {
  const out: EngineEvent[] = [];
  for await (const event of iterable) out.push(event);
  return out;
}

async function failure(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a failure');
}

describe('UpstreamEngine', () => {
  it('relays chunk by chunk, before the upstream has finished', async () => {
    let releaseLast: () => void = () => {};
    const lastHeld = new Promise<void>((resolve) => (releaseLast = resolve));
    let finished = false;
    const upstream = await fake(async (_req, res) => {
      sseHead(res);
      res.write(': keep-alive\n\n');
      res.write(chunk({ role: 'assistant', content: 'Hel' }));
      await lastHeld; // the last chunk waits until the first one reached the engine's consumer
      res.write(
        'data: {"choices":[{"index":0,"delta":{"content":"lo"},\r\ndata: "finish_reason":"stop"}]}\r\n\r\n',
      );
      res.write(
        `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 2 } })}\n\n`,
      );
      res.end('data: [DONE]\n\n');
      finished = true;
    });
    const engine = new UpstreamEngine(
      {
        baseUrl: upstream.url,
        apiKey: 'sk-up',
        modelMap: { king: 'llama3' },
      },
      door,
    );
    const events: EngineEvent[] = [];
    for await (const event of engine.chat(REQUEST)) {
      events.push(event);
      if (events.length === 1) {
        expect(finished).toBe(false);
        releaseLast();
      }
    }
    expect(events).toEqual([
      { type: 'content', choice: 0, text: 'Hel' },
      { type: 'content', choice: 0, text: 'lo' },
      { type: 'finish', choice: 0, reason: 'stop' },
      { type: 'usage', promptTokens: 9, completionTokens: 2 },
    ]);
    const sent = upstream.requests[0];
    expect(sent?.headers.authorization).toBe('Bearer sk-up');
    expect(sent?.body).toEqual({
      model: 'llama3',
      messages: REQUEST.messages,
      max_tokens: 50,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(engine.fingerprint('king')).toMatch(/^fp_king_up_[0-9a-f]{10}$/);
    engine.close();
  });

  it('is probed by a connection alone: no request, so no tokens or rate limit spent', async () => {
    const upstream = await fake(answer);
    let connections = 0;
    servers.at(-1)!.on('connection', () => connections++);
    const engine = new UpstreamEngine({ baseUrl: upstream.url, apiKey: 'sk-up' }, door);
    await engine.reachable(AbortSignal.timeout(5_000));
    expect(connections).toBe(1);
    expect(upstream.requests).toHaveLength(0);
    // a closed primary: reachable through its fallback; no upstream listening: refused
    const closed = `http://127.0.0.1:${await freePort()}/v1`;
    await new UpstreamEngine({ baseUrl: closed, fallback: { baseUrl: upstream.url } }, door).reachable(
      AbortSignal.timeout(5_000),
    );
    await expect(
      new UpstreamEngine({ baseUrl: closed }, door).reachable(AbortSignal.timeout(5_000)),
    ).rejects.toThrow(/not reachable/);
    // the guard's ranges hold: the cloud metadata address is never connected to
    await expect(
      new UpstreamEngine({ baseUrl: 'http://169.254.169.254/v1' }, door).reachable(
        AbortSignal.timeout(5_000),
      ),
    ).rejects.toThrow(/not reachable/);
    expect(upstream.requests).toHaveLength(0);
  });

  it('keeps its connection to the upstream for the next call, and cuts one that lingers after [DONE]', async () => {
    const upstream = await fake(answer);
    const server = servers.at(-1)!;
    let connections = 0;
    server.on('connection', () => connections++);
    const engine = new UpstreamEngine({ baseUrl: upstream.url, apiKey: 'sk-up' }, door);
    for (let i = 0; i < 3; i++) {
      const events = await collect(engine.chat(REQUEST));
      expect(events.at(-1)).toEqual({ type: 'usage', promptTokens: 11, completionTokens: 2 });
    }
    expect(upstream.requests).toHaveLength(3);
    expect(connections).toBe(1);

    // an upstream that sends [DONE] and keeps the answer open: the call still ends, at once
    const lingering = await fake((_req, res) => {
      sseHead(res);
      res.write(chunk({ content: 'Hi' }, 'stop'));
      res.write('data: [DONE]\n\n'); // and never ends
    });
    const other = new UpstreamEngine({ baseUrl: lingering.url, apiKey: 'sk-up' }, door);
    const started = Date.now();
    const events = await collect(other.chat(REQUEST));
    expect(events).toEqual([
      { type: 'content', choice: 0, text: 'Hi' },
      { type: 'finish', choice: 0, reason: 'stop' },
    ]);
    expect(Date.now() - started).toBeLessThan(2000);
    await lingering.closed; // its connection was cut
    engine.close();
    other.close();
  });

  it('relays tool call pieces, and a buffered JSON answer from an upstream that ignores stream', async () => {
    const upstream = await fake((_req, res) => {
      sseHead(res);
      res.write(
        chunk({
          role: 'assistant',
          tool_calls: [
            {
              index: 0,
              id: 'chatcmpl-tool-1',
              type: 'function',
              function: { name: 'get_weather', arguments: '' },
            },
          ],
        }),
      );
      res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }));
      res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: '"Lisbon"}' } }] }));
      res.write(chunk({}, 'tool_calls'));
      res.end('data: [DONE]\n\n');
    });
    const engine = new UpstreamEngine({ baseUrl: upstream.url }, door);
    const completion = await new ChatAssembly({
      model: 'queen',
      promptTokens: 5,
      fingerprint: 'fp_x',
    }).collect(engine.chat({ ...REQUEST, model: 'queen' }));
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(completion.choices[0]?.message.tool_calls?.[0]?.function).toEqual({
      name: 'get_weather',
      arguments: '{"city":"Lisbon"}',
    });
    expect(completion.choices[0]?.message.tool_calls?.[0]?.id).toMatch(/^call_[0-9A-Za-z]{24}$/);
    expect(upstream.requests[0]?.body.model).toBe('queen');

    const buffered = await fake((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 4, completion_tokens: 2 },
        }),
      );
    });
    expect(await collect(new UpstreamEngine({ baseUrl: buffered.url }, door).chat(REQUEST))).toEqual([
      { type: 'content', choice: 0, text: 'Hi there' },
      { type: 'finish', choice: 0, reason: 'stop' },
      { type: 'usage', promptTokens: 4, completionTokens: 2 },
    ]);
  });

  it('asks for one JSON answer when the caller wants the whole answer, bounded by the total time only', async () => {
    const upstream = await fake((req, res, body) => {
      const streamed = (JSON.parse(body) as { stream?: boolean }).stream === true;
      // slower than the first-byte timeout: a whole answer's first byte is its last
      setTimeout(() => {
        if (streamed) return answer(req, res, body);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            choices: [
              { index: 0, message: { role: 'assistant', content: 'Hello world' }, finish_reason: 'stop' },
            ],
            usage: { prompt_tokens: 11, completion_tokens: 2 },
          }),
        );
      }, 200);
    });
    const engine = new UpstreamEngine(
      { baseUrl: upstream.url, firstByteTimeoutMs: 100, totalTimeoutMs: 5_000, retries: 0 },
      door,
    );
    expect(await collect(engine.chat(REQUEST, { whole: true }))).toEqual([
      { type: 'content', choice: 0, text: 'Hello world' },
      { type: 'finish', choice: 0, reason: 'stop' },
      { type: 'usage', promptTokens: 11, completionTokens: 2 },
    ]);
    expect(upstream.requests[0]?.body).toEqual({
      model: 'king',
      messages: REQUEST.messages,
      max_tokens: 50,
      stream: false,
    });
    expect(upstream.requests[0]?.headers.accept).toBe('application/json');
    // the same call streamed is held to the first-byte timeout
    const error = await failure(collect(engine.chat(REQUEST)));
    expect(error.code).toBe('upstream_timeout');
    engine.close();
  });

  it('reads a streamed answer to a request for the whole answer', async () => {
    const upstream = await fake(answer);
    const engine = new UpstreamEngine({ baseUrl: upstream.url }, door);
    expect(await collect(engine.chat(REQUEST, { whole: true }))).toEqual([
      { type: 'content', choice: 0, text: 'Hello' },
      { type: 'content', choice: 0, text: ' world' },
      { type: 'finish', choice: 0, reason: 'stop' },
      { type: 'usage', promptTokens: 11, completionTokens: 2 },
    ]);
    engine.close();
  });

  it('retries after a 5xx, then succeeds', async () => {
    let calls = 0;
    const upstream = await fake((req, res, body) => {
      calls++;
      if (calls === 1) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"CUDA out of memory"}}');
        return;
      }
      return answer(req, res, body);
    });
    const engine = new UpstreamEngine({ baseUrl: upstream.url, retries: 2, retryBaseMs: 10 }, door);
    const events = await collect(engine.chat(REQUEST));
    expect(calls).toBe(2);
    expect(
      events.filter((e) => e.type === 'content').map((e) => (e.type === 'content' ? e.text : '')),
    ).toEqual(['Hello', ' world']);
  });

  it('fails over to the fallback when the primary is down', async () => {
    const port = await freePort();
    const fallback = await fake(answer);
    const engine = new UpstreamEngine(
      {
        baseUrl: `http://127.0.0.1:${port}/v1`,
        retries: 1,
        retryBaseMs: 5,
        fallback: { baseUrl: fallback.url, model: 'backup-model' },
      },
      door,
    );
    const events = await collect(engine.chat(REQUEST));
    expect(events.some((e) => e.type === 'content' && e.text === 'Hello')).toBe(true);
    expect(fallback.requests[0]?.body.model).toBe('backup-model');
  });

  it('answers 502 upstream_failed when the upstream refuses the connection', async () => {
    const port = await freePort();
    const engine = new UpstreamEngine(
      { baseUrl: `http://127.0.0.1:${port}/v1`, retries: 1, retryBaseMs: 5 },
      door,
    );
    const error = await failure(collect(engine.chat(REQUEST)));
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_failed');
    expect(error.type).toBe('upstream_error');
    expect(error.message).toMatch(/refused/);
  });

  it('answers 504 upstream_timeout when the upstream is slow to answer', async () => {
    const upstream = await fake(() => {
      // never answers
    });
    const engine = new UpstreamEngine({ baseUrl: upstream.url, firstByteTimeoutMs: 150, retries: 0 }, door);
    const started = Date.now();
    const error = await failure(collect(engine.chat(REQUEST)));
    expect(error.status).toBe(504);
    expect(error.code).toBe('upstream_timeout');
    expect(error.type).toBe('timeout_error');
    expect(Date.now() - started).toBeLessThan(1000);
    await upstream.closed; // the request to the upstream was given up
  });

  it('answers 504 when the whole answer takes too long', async () => {
    const upstream = await fake((_req, res) => {
      sseHead(res);
      res.write(chunk({ content: 'slow' }));
      // and nothing more
    });
    const engine = new UpstreamEngine({ baseUrl: upstream.url, totalTimeoutMs: 200, retries: 0 }, door);
    const events = await collect(engine.chat(REQUEST));
    expect(events[0]).toEqual({ type: 'content', choice: 0, text: 'slow' });
    const last = events[events.length - 1];
    expect(last?.type === 'error' && last.error.status).toBe(504);
  });

  it.each([
    [429, { 'retry-after': '7' }, '7', '7000'],
    [503, {}, '1', '1000'],
    [503, { 'retry-after-ms': '2500' }, '3', '2500'],
  ])(
    'answers 503 upstream_overloaded with Retry-After when the upstream says %i',
    async (status, headers, after, ms) => {
      const upstream = await fake((_req, res) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end('{"error":{"message":"busy"}}');
      });
      const engine = new UpstreamEngine(
        {
          baseUrl: upstream.url,
          retries: 1,
          retryBaseMs: 5,
          maxRetryWaitMs: 100,
        },
        door,
      );
      const error = await failure(collect(engine.chat(REQUEST)));
      expect(error.status).toBe(503);
      expect(error.code).toBe('upstream_overloaded');
      expect(error.type).toBe('overloaded_error');
      expect(error.headers).toEqual({ 'Retry-After': after, 'retry-after-ms': ms });
      // a wait longer than maxRetryWaitMs is not taken: no retry then
      expect(upstream.requests.length).toBe(status === 503 && after === '1' ? 2 : 1);
    },
  );

  it('turns a failure after streaming began into an error event, without retrying', async () => {
    let calls = 0;
    const upstream = await fake((_req, res) => {
      calls++;
      sseHead(res);
      res.write(chunk({ role: 'assistant', content: 'Partial' }));
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const engine = new UpstreamEngine({ baseUrl: upstream.url, retries: 3, retryBaseMs: 5 }, door);
    const events = await collect(engine.chat(REQUEST));
    expect(calls).toBe(1);
    expect(events[0]).toEqual({ type: 'content', choice: 0, text: 'Partial' });
    const last = events[events.length - 1];
    expect(last?.type).toBe('error');
    expect(last?.type === 'error' && last.error.status).toBe(502);

    const assembly = new ChatAssembly({
      model: 'king',
      promptTokens: 5,
      fingerprint: 'fp_x',
      requestId: 'req_2',
    });
    const chunks = [];
    for await (const c of assembly.stream(engine.chat(REQUEST))) chunks.push(c);
    expect(chunks[chunks.length - 1]?.error?.code).toBe('upstream_failed');
    expect(chunks[chunks.length - 1]?.choices[0]?.finish_reason).toBe('error');
  });

  it('surfaces an error chunk of the upstream mid-stream as an error event', async () => {
    const upstream = await fake((_req, res) => {
      sseHead(res);
      res.write(chunk({ content: 'Par' }));
      res.end('data: {"error":{"message":"model crashed"}}\n\n');
    });
    const events = await collect(new UpstreamEngine({ baseUrl: upstream.url }, door).chat(REQUEST));
    const last = events[events.length - 1];
    expect(last?.type === 'error' && last.error.message).toMatch(/model crashed/);
  });

  it('never follows a redirect', async () => {
    const elsewhere = await fake(answer);
    const upstream = await fake((_req, res) => {
      res.writeHead(307, { location: `${elsewhere.url}/chat/completions` });
      res.end();
    });
    const error = await failure(collect(new UpstreamEngine({ baseUrl: upstream.url }, door).chat(REQUEST)));
    expect(error.status).toBe(502);
    expect(error.message).toMatch(/redirect/);
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('stops the upstream request when the client aborts', async () => {
    const upstream = await fake((_req, res) => {
      sseHead(res);
      res.write(chunk({ content: 'one' }));
      const timer = setInterval(() => res.write(chunk({ content: ' more' })), 10);
      res.on('close', () => clearInterval(timer));
    });
    const controller = new AbortController();
    const engine = new UpstreamEngine({ baseUrl: upstream.url }, door);
    const run = (async () => {
      let n = 0;
      for await (const event of engine.chat(REQUEST, { signal: controller.signal })) {
        if (event.type === 'content' && ++n === 3) controller.abort();
      }
    })();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    await upstream.closed;
  });

  it('refuses an upstream at a link-local address through the outbound guard, without retrying it', async () => {
    const fallback = await fake((_req, res) => {
      sseHead(res);
      res.write(chunk({ role: 'assistant', content: 'from the fallback' }));
      res.write(chunk({}, 'stop'));
      res.end('data: [DONE]\n\n');
    });
    const engine = new UpstreamEngine(
      {
        baseUrl: 'http://169.254.169.254/v1',
        retries: 3,
        retryBaseMs: 2000,
        fallback: { baseUrl: fallback.url },
      },
      door,
    );
    const started = Date.now();
    const events = await collect(engine.chat(REQUEST));
    expect(events).toContainEqual({ type: 'content', choice: 0, text: 'from the fallback' });
    expect(Date.now() - started).toBeLessThan(1500); // no backoff, no connect attempt
    const alone = new UpstreamEngine({ baseUrl: 'http://[fe80::1]:8000/v1', retries: 0 }, door);
    const error = await failure(collect(alone.chat(REQUEST)));
    expect([error.status, error.code]).toEqual([502, 'upstream_failed']);
    expect(error.message).toBe(
      'The upstream [fe80::1]:8000 may not be called: fe80::1 is a linkLocal address.',
    );
  });

  it('reads Retry-After as seconds, milliseconds or an HTTP date', () => {
    expect(parseRetryAfter({ 'retry-after': '3' })).toBe(3000);
    expect(parseRetryAfter({ 'retry-after-ms': '150', 'retry-after': '3' })).toBe(150);
    expect(parseRetryAfter({ 'retry-after': new Date(10_000).toUTCString() }, 4_000)).toBe(6000);
    expect(parseRetryAfter({})).toBeUndefined();
  });
});
