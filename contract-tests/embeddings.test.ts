// POST /v1/embeddings against the real model API on both storage paths: through the generated SDK
// and the official openai SDK (which asks for base64 by default), the same vectors as the
// directory's semantic search, every answer valid against the spec, billed by input tokens.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../generated/model/client/client/index.ts';
import { createEmbedding, createKey } from '../generated/model/client/sdk.gen.ts';
import { cosine, embedOne } from '../src/embeddings/index.ts';
import { countTokens, encodeText } from '../src/model/tokens.ts';
import { expectError } from './support/envelope.ts';
import { flushUsage } from '../src/platform/metering.ts';
import { type Storage, startTestServers, storages, type TestServers } from './support/server.ts';
import { explain, operations, responseValidator } from './support/spec.ts';

const STORAGES = await storages();
const op = operations('model').find((o) => o.operationId === 'createEmbedding')!;
const validate = responseValidator(op, '200');

function norm(v: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += (v[i] ?? 0) ** 2;
  return Math.sqrt(sum);
}

function fromBase64(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  const out = new Float32Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}

describe.each(STORAGES)('embeddings on %s', (storage: Storage) => {
  let servers: TestServers;
  let base: string;
  let client: ReturnType<typeof createClient>;
  const post = (body: unknown, key = servers.adminKey) =>
    fetch(`${base}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    servers = await startTestServers(storage, { which: ['model'] });
    base = servers.urls.model!;
    client = createClient({ baseUrl: base, auth: servers.adminKey });
  });
  afterAll(async () => servers?.stop());

  it('embeds one text with prince by default: 384 unit-length dimensions, the directory engine’s vector, billed by input tokens', async () => {
    const text = 'Bakery with gluten-free bread in Porto';
    const res = await createEmbedding({ client, body: { input: text } });
    expect(res.response?.status).toBe(200);
    expect(validate(res.data), explain(validate)).toBe(true);
    const data = res.data!;
    expect(data.model).toBe('prince');
    const vector = data.data[0]!.embedding as number[];
    expect(vector).toHaveLength(384);
    expect(norm(vector)).toBeCloseTo(1, 5);
    // the same vector the directory's semantic search stores for this text
    const directory = embedOne(text);
    vector.forEach((x, i) => expect(x).toBeCloseTo(directory[i] ?? NaN, 6));
    const tokens = countTokens(text);
    expect(data.usage).toEqual({
      prompt_tokens: tokens,
      total_tokens: tokens,
      cost_eur: `0.${String(tokens * 50).padStart(9, '0')}`, // prince: 0.05 EUR per 1M input tokens
      currency: 'EUR',
    });
    expect(res.response?.headers.get('ratelimit-policy')).toContain('"tokens"');

    await flushUsage(servers.platform.db); // the records wait in the journal up to 50 ms
    const rows = await servers.platform.db.query<{ input_tokens: number; cost_nano: string; status: number }>(
      `select input_tokens, cost_nano, status from usage_records where endpoint = '/v1/embeddings' order by created desc limit 1`,
    );
    expect(rows[0]).toMatchObject({ input_tokens: tokens, status: 200 });
    expect(Number(rows[0]?.cost_nano)).toBe(tokens * 50);
  });

  it('embeds a batch in order, and a need lands nearer its trade than another trade', async () => {
    const inputs = ['my kitchen pipe is leaking', 'plumber', 'dentist', 'Klempner'];
    const res = await createEmbedding({ client, body: { input: inputs, model: 'king' } });
    expect(validate(res.data), explain(validate)).toBe(true);
    expect(res.data!.model).toBe('king');
    expect(res.data!.data.map((d) => d.index)).toEqual([0, 1, 2, 3]);
    const [need, plumber, dentist, klempner] = res.data!.data.map((d) =>
      Float32Array.from(d.embedding as number[]),
    );
    expect(cosine(need!, plumber!)).toBeGreaterThan(cosine(need!, dentist!));
    expect(cosine(plumber!, klempner!)).toBeGreaterThan(cosine(plumber!, dentist!));
    // king costs 3 EUR per 1M input tokens
    const tokens = inputs.reduce((sum, text) => sum + countTokens(text), 0);
    expect(res.data!.usage.prompt_tokens).toBe(tokens);
    expect(res.data!.usage.cost_eur).toBe(`0.${String(tokens * 3000).padStart(9, '0')}`);
  });

  it('answers base64 float32 with fewer dimensions: the first ones, normalised again', async () => {
    const text = 'Padaria sem glúten no Porto';
    const res = await post({ input: text, model: 'queen', encoding_format: 'base64', dimensions: 4 });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { embedding: string }[] };
    expect(validate(body), explain(validate)).toBe(true);
    const vector = fromBase64(body.data[0]!.embedding);
    expect(vector).toHaveLength(4);
    expect(norm(vector)).toBeCloseTo(1, 5);
    const full = embedOne(text);
    const head = Array.from(full.slice(0, 4));
    const n = norm(head);
    head.forEach((x, i) => expect(vector[i]).toBeCloseTo(x / n, 5));

    const floats = await post({ input: text, model: 'queen', dimensions: 4 });
    const same = ((await floats.json()) as { data: { embedding: number[] }[] }).data[0]!.embedding;
    same.forEach((x, i) => expect(vector[i]).toBeCloseTo(x, 6));
  });

  it('takes token ids (o200k_base) as well as texts: the same vector, the ids counted as tokens', async () => {
    const text = 'Heizungsinstallateur mit Wärmepumpe';
    const ids = encodeText(text);
    const [byText, byIds, byArrays] = await Promise.all([
      post({ input: text }).then((r) => r.json() as Promise<{ data: { embedding: number[] }[] }>),
      post({ input: ids }).then(
        (r) => r.json() as Promise<{ data: { embedding: number[] }[]; usage: { prompt_tokens: number } }>,
      ),
      post({ input: [ids, ids] }).then((r) => r.json() as Promise<{ data: { embedding: number[] }[] }>),
    ]);
    expect(byIds.data[0]!.embedding).toEqual(byText.data[0]!.embedding);
    expect(byIds.usage.prompt_tokens).toBe(ids.length);
    expect(byArrays.data).toHaveLength(2);
    expect(byArrays.data[1]!.embedding).toEqual(byText.data[0]!.embedding);
  });

  it('refuses bad input with a clear 400, and bills nothing for it', async () => {
    await flushUsage(servers.platform.db); // the records wait in the journal up to 50 ms
    const before = await servers.platform.db.query<{ n: string }>(
      `select count(*) as n from usage_records where endpoint = '/v1/embeddings'`,
    );
    // 199998 is a gap in o200k_base's ids: outside the spec's range, refused by the validator
    const badToken = await expectError(
      'model',
      await post({ input: [15339, 199998] }),
      400,
      'invalid_request_error',
      'validation_failed',
    );
    expect(badToken.param).toMatch(/^input/);

    // prince holds 16,000 tokens: one input of ~20,000 tokens is too long, and the message says so
    const long = 'lorem ipsum dolor sit amet '.repeat(4000);
    const tooLong = await expectError(
      'model',
      await post({ input: ['short', long] }),
      400,
      'invalid_request_error',
      'context_length_exceeded',
    );
    expect(tooLong.message).toContain('16000');
    // counted no further than the window: the work a request costs is bounded by it
    expect(countTokens(long)).toBeGreaterThan(16000);
    expect(tooLong.message).toContain('input 1 holds more than 16000 tokens');

    // an empty input, too many dimensions, an unknown field
    for (const body of [{ input: '' }, { input: 'x', dimensions: 385 }, { input: 'x', colour: 'red' }]) {
      await expectError('model', await post(body), 400, 'invalid_request_error', 'validation_failed');
    }
    // a model of the catalogue that does not embed, and one the catalogue lacks (OpenAI's 404)
    await expectError(
      'model',
      await post({ input: 'x', model: 'voice' }),
      400,
      'invalid_request_error',
      'model_not_supported',
    );
    await expectError(
      'model',
      await post({ input: 'x', model: 'text-embedding-3-small' }),
      404,
      'invalid_request_error',
      'model_not_found',
    );
    await flushUsage(servers.platform.db);
    const after = await servers.platform.db.query<{ n: string }>(
      `select count(*) as n from usage_records where endpoint = '/v1/embeddings'`,
    );
    expect(after[0]?.n).toBe(before[0]?.n);
  });

  it('requires the chat scope', async () => {
    const { data: key } = await createKey({ client, body: { name: 'search only', scopes: ['search'] } });
    const res = await post({ input: 'hello' }, key!.secret);
    const error = await expectError('model', res, 403, 'permission_error', 'insufficient_scope');
    expect(error.message).toContain('chat');
  });

  it('serves the official openai SDK, which asks for base64 and decodes it', async () => {
    const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: servers.adminKey, maxRetries: 0 });
    const texts = ['Zahnarzt in Wien', 'dentiste à Lyon'];
    const answer = await openai.embeddings.create({ model: 'prince', input: texts });
    expect(answer.data).toHaveLength(2);
    expect(answer.data[0]!.embedding).toHaveLength(384);
    answer.data[0]!.embedding.forEach((x, i) => expect(x).toBeCloseTo(embedOne(texts[0]!)[i] ?? NaN, 6));
    expect(answer.usage.prompt_tokens).toBe(countTokens(texts[0]!) + countTokens(texts[1]!));
    const short = await openai.embeddings.create({
      model: 'queen',
      input: 'Zahnarzt',
      dimensions: 16,
      encoding_format: 'float',
    });
    expect(short.data[0]!.embedding).toHaveLength(16);
  });
});
