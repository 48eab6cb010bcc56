// The model API's serving endpoints through the generated SDKs, on servers started here or on a
// deployment (`npm run contract -- model`): models, chat buffered and streamed (framing,
// keep-alive comments allowed, every chunk valid against the chunk schema, include_usage,
// [DONE]), embeddings, and usage that adds up to what the calls said they cost. Every call uses a
// key minted in the session's own project, so the usage report is filtered to this run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/model/client/client/index.ts';
import {
  createChatCompletion,
  createEmbedding,
  getModel,
  getUsage,
  listModels,
} from '../../generated/model/client/sdk.gen.ts';
import { bearer, expectError } from '../support/envelope.ts';
import { componentValidator, explain } from '../support/spec.ts';
import { covers, openSession, type Session, targets } from '../support/target.ts';

const TARGETS = await targets();

function valid(name: string, value: unknown) {
  const validate = componentValidator('model', name);
  expect(validate(value), `${name}: ${explain(validate)}`).toBe(true);
}

/** Sums Money strings exactly, in nano-EUR. */
function nano(money: string): bigint {
  const [whole = '0', frac = ''] = money.split('.');
  return BigInt(whole) * 1_000_000_000n + BigInt(frac.padEnd(9, '0').slice(0, 9));
}

/** Reads an SSE body: the data payloads in order, and whether anything else but comments came. */
function parseSse(text: string): { data: string[]; stray: string[] } {
  const data: string[] = [];
  const stray: string[] = [];
  for (const block of text.split('\n\n')) {
    if (block === '') continue;
    for (const line of block.split('\n')) {
      if (line.startsWith('data: ')) data.push(line.slice(6));
      else if (!line.startsWith(':')) stray.push(line);
    }
  }
  return { data, stray };
}

describe.runIf(covers('model')).each(TARGETS)('model API serving (%s)', (label) => {
  let session: Session;
  let chatKey: string;
  let chatKeyId: string;
  const costs: bigint[] = [];
  const client = (secret: string) => createClient({ baseUrl: session.urls.model, auth: secret });

  beforeAll(async () => {
    session = await openSession(label);
    const key = await session.mint(['chat']);
    chatKey = key.secret;
    chatKeyId = key.id;
  });
  afterAll(async () => session?.close());

  it('lists the seven models and retrieves each; an unknown one is a 404', async () => {
    const list = await listModels({ client: client(chatKey) });
    expect(list.response?.status).toBe(200);
    valid('ModelList', list.data);
    const ids = list.data!.data.map((m) => m.id);
    expect(ids).toEqual(['king', 'queen', 'prince', 'voice', 'imagine', 'agents', 'mcp']);
    for (const id of ids) {
      const one = await getModel({ client: client(chatKey), path: { model: id } });
      valid('Model', one.data);
      expect(one.data?.id).toBe(id);
    }
    const missing = await fetch(`${session.urls.model}/v1/models/emperor`, { headers: bearer(chatKey) });
    await expectError('model', missing, 404, 'invalid_request_error');
  });

  it('answers a buffered chat completion that matches the spec', async () => {
    const res = await createChatCompletion({
      client: client(chatKey),
      body: {
        model: 'prince',
        messages: [{ role: 'user', content: 'Which ferries cross from Calais to Dover?' }],
        max_completion_tokens: 60,
      },
    });
    expect(res.response?.status).toBe(200);
    valid('ChatCompletion', res.data);
    const completion = res.data!;
    expect(completion.choices[0]?.message.content).toMatch(/\w/);
    expect(completion.usage.completion_tokens).toBeLessThanOrEqual(60);
    expect(res.response?.headers.get('x-request-id')).toMatch(/\S/);
    costs.push(nano(completion.usage.cost_eur));
  });

  it('streams chunks valid against the chunk schema, then usage, then [DONE]', async () => {
    const res = await fetch(`${session.urls.model}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...bearer(chatKey), 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'prince',
        messages: [{ role: 'user', content: 'Name two rivers that cross Vienna.' }],
        max_completion_tokens: 40,
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { data, stray } = parseSse(await res.text());
    expect(stray).toEqual([]);
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as Record<string, unknown>);
    expect(chunks.length).toBeGreaterThan(2);
    const validate = componentValidator('model', 'ChatCompletionChunk');
    for (const chunk of chunks) expect(validate(chunk), explain(validate)).toBe(true);
    const ids = new Set(chunks.map((c) => c.id));
    expect(ids.size).toBe(1);
    const last = chunks.at(-1) as {
      choices: unknown[];
      usage: { completion_tokens: number; cost_eur: string };
    };
    expect(last.choices).toEqual([]);
    expect(last.usage.completion_tokens).toBeGreaterThan(0);
    costs.push(nano(last.usage.cost_eur));
    // no chunk before the last carries usage
    expect(chunks.slice(0, -1).every((c) => c.usage === null || c.usage === undefined)).toBe(true);
  });

  it('embeds texts as floats and as base64, and rejects a model that does not embed', async () => {
    const res = await createEmbedding({
      client: client(chatKey),
      body: { input: ['Zahnarzt in Graz', 'dentist in Graz'], model: 'prince' },
    });
    expect(res.response?.status).toBe(200);
    valid('CreateEmbeddingResponse', res.data);
    const [a, b] = res.data!.data.map((d) => d.embedding as number[]);
    expect(a).toHaveLength(384);
    const dot = a!.reduce((sum, x, i) => sum + x * (b![i] ?? 0), 0);
    expect(dot).toBeGreaterThan(0.3); // the same need in two languages
    costs.push(nano(res.data!.usage.cost_eur));

    const packed = await createEmbedding({
      client: client(chatKey),
      body: { input: 'Zahnarzt in Graz', encoding_format: 'base64', dimensions: 8 },
    });
    valid('CreateEmbeddingResponse', packed.data);
    expect(Buffer.from(packed.data!.data[0]!.embedding as string, 'base64')).toHaveLength(32);
    costs.push(nano(packed.data!.usage.cost_eur));

    const wrong = await fetch(`${session.urls.model}/v1/embeddings`, {
      method: 'POST',
      headers: { ...bearer(chatKey), 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'x', model: 'imagine' }),
    });
    await expectError('model', wrong, 400, 'invalid_request_error');
  });

  it('reports usage for this run’s key that adds up to what each call said it cost', async () => {
    const today = new Date().toISOString().slice(0, 10);
    // Streamed calls are recorded as the stream closes: allow the record a moment to land.
    let report: Awaited<ReturnType<typeof getUsage>>['data'];
    for (let attempt = 0; attempt < 20; attempt++) {
      const res = await getUsage({
        client: client(session.adminKey),
        query: { from: today, to: today, key_id: chatKeyId, group_by: ['model'] },
      });
      expect(res.response?.status).toBe(200);
      report = res.data;
      if (report?.totals.requests === costs.length) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    valid('UsageReport', report);
    expect(report!.totals.requests).toBe(costs.length);
    expect(nano(report!.totals.cost)).toBe(costs.reduce((sum, c) => sum + c, 0n));
    const models = report!.data.flatMap((bucket) => bucket.results.map((r) => r.model));
    expect(new Set(models)).toEqual(new Set(['prince']));
  });
});
