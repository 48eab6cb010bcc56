// The upstream engine, proven by chaining: one instance of our model API serves as the
// OpenAI-compatible upstream of another, buffered and streamed; then the upstream down (502),
// slow (504) and saturated (503 with Retry-After); and the outbound guard every upstream call goes
// through (an operator's upstream on loopback is served, the cloud metadata address is refused).
import { createServer } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectConformsParts } from './support/conformance.ts';
import { freePort } from './support/processes.ts';
import { startTestServers, type TestServers } from './support/server.ts';
import { operations } from './support/spec.ts';

const chatOp = operations('model').find((op) => op.operationId === 'createChatCompletion')!;
const embeddingOp = operations('model').find((op) => op.operationId === 'createEmbedding')!;

/** The SDK's error matches what the spec documents for the status: envelope and headers. */
function expectDocumented(error: unknown, status: number, op = chatOp): void {
  expect(error).toBeInstanceOf(OpenAI.APIError);
  const { headers, error: body } = error as InstanceType<typeof OpenAI.APIError>;
  expectConformsParts(op, status, headers!, JSON.stringify({ error: body }), headers!.get('content-type'));
}

let upstream: TestServers;
const started: TestServers[] = [];

async function chained(engine: object, extraEnv: Record<string, string> = {}): Promise<OpenAI> {
  const downstream = await startTestServers('pglite', {
    which: ['model'],
    env: { MODEL_ENGINES: JSON.stringify({ default: engine }), ...extraEnv },
  });
  started.push(downstream);
  return new OpenAI({ baseURL: `${downstream.urls.model}/v1`, apiKey: downstream.adminKey, maxRetries: 0 });
}

/** A downstream that relays to `upstream`, and a client that calls `upstream` directly. */
async function relay(): Promise<[OpenAI, OpenAI]> {
  const client = await chained({
    type: 'upstream',
    baseUrl: `${upstream.urls.model}/v1`,
    apiKey: upstream.adminKey,
  });
  const direct = new OpenAI({
    baseURL: `${upstream.urls.model}/v1`,
    apiKey: upstream.adminKey,
    maxRetries: 0,
  });
  return [client, direct];
}

beforeAll(async () => {
  upstream = await startTestServers('pglite', { which: ['model'], env: { MODEL_RATE_LIMIT_RPM: '4' } });
});
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  await upstream?.stop();
});

describe('our model API as the upstream of another instance', () => {
  const messages = [{ role: 'user' as const, content: 'Which ferries link Sardinia and Corsica?' }];

  it('relays buffered and streamed answers, the same text both ways', async () => {
    const [client, direct] = await relay();
    const viaChain = await client.chat.completions.create({ model: 'prince', messages, seed: 11 });
    const straight = await direct.chat.completions.create({ model: 'prince', messages, seed: 11 });
    expect(viaChain.choices[0]?.message.content).toBe(straight.choices[0]?.message.content);
    expect(viaChain.usage?.completion_tokens).toBe(straight.usage?.completion_tokens);

    const stream = await client.chat.completions.create({
      model: 'prince',
      messages,
      seed: 11,
      stream: true,
    });
    let text = '';
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(chunks).toBeGreaterThan(3);
    expect(text).toBe(straight.choices[0]?.message.content);
  });

  it('relays embeddings: the upstream’s vectors and token counts', async () => {
    const [client, direct] = await relay();
    const input = ['Fähre von Olbia nach Bonifacio', 'ferry to Corsica'];
    const viaChain = await client.embeddings.create({ model: 'queen', input, dimensions: 32 });
    const straight = await direct.embeddings.create({ model: 'queen', input, dimensions: 32 });
    expect(viaChain.data.map((d) => d.embedding)).toEqual(straight.data.map((d) => d.embedding));
    expect(viaChain.usage.prompt_tokens).toBe(straight.usage.prompt_tokens);
  });

  it('answers 502 when the upstream is down', async () => {
    const port = await freePort(); // nothing listens there
    const client = await chained({ type: 'upstream', baseUrl: `http://127.0.0.1:${port}/v1`, retries: 0 });
    const error = await client.chat.completions.create({ model: 'queen', messages }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expectDocumented(error, 502);
    const streamed = await client.chat.completions
      .create({ model: 'queen', messages, stream: true })
      .catch((e: unknown) => e);
    expect((streamed as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expectDocumented(streamed, 502);
    const embedded = await client.embeddings
      .create({ model: 'queen', input: 'ferry' })
      .catch((e: unknown) => e);
    expect((embedded as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expectDocumented(embedded, 502, embeddingOp);
  });

  it('answers 504 when the upstream is too slow: a stream to its first event, a buffered answer in all', async () => {
    // A socket that accepts and never answers.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      const client = await chained({
        type: 'upstream',
        baseUrl: `http://127.0.0.1:${port}/v1`,
        firstByteTimeoutMs: 300,
        totalTimeoutMs: 1_500,
        retries: 0,
      });
      let started = Date.now();
      const streamed = await client.chat.completions
        .create({ model: 'queen', messages, stream: true })
        .catch((e: unknown) => e);
      expect((streamed as InstanceType<typeof OpenAI.APIError>).status).toBe(504);
      expectDocumented(streamed, 504);
      expect(Date.now() - started).toBeLessThan(1_400);
      // buffered, the upstream is asked for one JSON answer, whose first byte is its last
      started = Date.now();
      const buffered = await client.chat.completions
        .create({ model: 'queen', messages })
        .catch((e: unknown) => e);
      expect((buffered as InstanceType<typeof OpenAI.APIError>).status).toBe(504);
      expectDocumented(buffered, 504);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    } finally {
      silent.close();
    }
  });

  it('answers 503 with Retry-After when the upstream is saturated', async () => {
    const client = await chained({
      type: 'upstream',
      baseUrl: `${upstream.urls.model}/v1`,
      apiKey: upstream.adminKey,
      retries: 0,
    });
    let error: unknown;
    for (let i = 0; i < 8 && !error; i++) {
      error = await client.chat.completions
        .create({ model: 'king', messages })
        .then(() => undefined)
        .catch((e: unknown) => e);
    }
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expectDocumented(error, 503);
    const headers = (error as InstanceType<typeof OpenAI.APIError>).headers;
    expect(Number(headers?.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(headers?.get('retry-after-ms'))).toBeGreaterThan(0);
  });

  it('calls upstreams through the outbound guard: the metadata address refused, the fallback on loopback served', async () => {
    // OUTBOUND_ALLOW_PRIVATE is not set: the operator's upstream on 127.0.0.1 is allowed by the
    // guard's operator origin, the link-local address of the cloud metadata service never is
    const client = await chained({
      type: 'upstream',
      baseUrl: 'http://169.254.169.254/v1',
      connectTimeoutMs: 10_000,
      fallback: { baseUrl: `${upstream.urls.model}/v1`, apiKey: upstream.adminKey },
    });
    const started = Date.now();
    const answer = await client.chat.completions.create({ model: 'prince', messages, seed: 5 });
    expect(answer.choices[0]?.message.content).toBeTruthy();
    expect(Date.now() - started).toBeLessThan(5_000); // refused at once, no connect attempt to wait out

    const alone = await chained({ type: 'upstream', baseUrl: 'http://169.254.169.254/v1', retries: 3 });
    const error = await alone.chat.completions.create({ model: 'prince', messages }).catch((e: unknown) => e);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expectDocumented(error, 502);
    expect((error as Error).message).toMatch(
      /The upstream 169\.254\.169\.254 may not be called: 169\.254\.169\.254 is a linkLocal address/,
    );
  }, 180_000);
});
