// Providers' answers read by an upstream model through our own Responses API (`text.format` a
// JSON schema), every figure then checked by code against the answer. The model API's
// MODEL_ENGINES puts `queen` (the agents runtime's model) on an OpenAI-compatible upstream on
// loopback that answers as a model would, and `king` on a second instance of our model API (the
// reference engine), whose answers are not readings: the check must refuse what is not written.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpAgent } from '../src/concierge/agent.ts';
import { checkedReading, READING_INSTRUCTIONS, READING_SCHEMA } from '../src/concierge/model-reading.ts';
import { readQuote } from '../src/concierge/quotes.ts';
import { startTestServers, type TestServers } from './support/server.ts';

const received = new Date('2026-11-26T12:00:00Z');
const BERLIN_NET =
  'Guten Tag, wir machen die Reparatur für EUR 245,00 zzgl. MwSt. Die Anfahrt von 35 EUR kommt hinzu. Termin ab 3. Dezember.';

/** What the loopback model answers next, and what it was asked. */
let next = '';
const asked: Record<string, unknown>[] = [];
let model: http.Server;
let reference: TestServers;
let servers: TestServers;

beforeAll(async () => {
  model = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (t: string) => (body += t));
    req.on('end', () => {
      const request = JSON.parse(body) as Record<string, unknown>;
      asked.push(request);
      const usage = { prompt_tokens: 50, completion_tokens: 40, total_tokens: 90 };
      if (request.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (delta: object, finish: string | null, extra = {}) =>
          `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
        res.write(chunk({ role: 'assistant', content: next }, null));
        res.write(chunk({}, 'stop'));
        res.write(
          `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage })}\n\n`,
        );
        res.end('data: [DONE]\n\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          created: 1,
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content: next }, finish_reason: 'stop' }],
          usage,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
  const port = (model.address() as AddressInfo).port;
  reference = await startTestServers('pglite', { which: ['model'] });
  servers = await startTestServers('pglite', {
    which: ['model'],
    env: {
      MODEL_ENGINES: JSON.stringify({
        queen: { type: 'upstream', baseUrl: `http://127.0.0.1:${port}/v1`, retries: 0 },
        king: { type: 'upstream', baseUrl: `${reference.urls.model}/v1`, apiKey: reference.adminKey },
      }),
    },
  });
}, 120_000);

afterAll(async () => {
  await servers?.stop();
  await reference?.stop();
  model?.closeAllConnections();
  await new Promise((resolve) => model?.close(resolve));
});

const agent = () =>
  httpAgent(() => servers.urls.model!, { secret: async () => servers.adminKey, replace: async () => {} });

async function read(reply: string, agentsModel?: string) {
  const run = await agent().structured({
    instructions: READING_INSTRUCTIONS,
    input: reply,
    name: 'quote_reading',
    schema: READING_SCHEMA as unknown as Record<string, unknown>,
    seed: 7,
    metadata: agentsModel ? { agents_model: agentsModel } : {},
  });
  return checkedReading(run.text, reply, received, readQuote(reply, received, 'DE'));
}

const answer = (over: Record<string, unknown>) =>
  JSON.stringify({
    declined: false,
    price_type: 'fixed',
    amount: null,
    amount_high: null,
    currency: 'EUR',
    vat: 'unknown',
    vat_rate: null,
    hours_low: null,
    hours_high: null,
    fees: [],
    available_from: null,
    valid_until: null,
    includes: [],
    excludes: [],
    ...over,
  });

describe('an answer read by the upstream model, its figures checked by code', () => {
  it('asks through the Responses API with the JSON schema, and keeps a reading whose figures are written', async () => {
    next = answer({
      amount: 245,
      vat: 'net',
      fees: [{ label: 'Anfahrt', amount: 35 }],
      available_from: '2026-12-03',
    });
    const reading = await read(BERLIN_NET);
    const request = asked.at(-1)!;
    expect(request.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'quote_reading' },
    });
    expect(reading).toMatchObject({
      read_by: 'model',
      dropped: [],
      amount: '245.00',
      currency: 'EUR',
      vat: { basis: 'net' },
      fees: [{ label: 'Anfahrt', amount: '35.00' }],
      available_from: '2026-12-03',
    });
    expect(reading.amount_quote).toContain('245,00');
    expect(reading.fees[0]?.quote).toContain('35 EUR');
  });

  it('refuses a figure the answer does not contain, and the rules read it', async () => {
    // 291.55 is 245 × 1.19: computed, not written
    next = answer({ amount: 291.55, vat: 'gross', fees: [{ label: 'Anfahrt', amount: 35 }] });
    const reading = await read(BERLIN_NET);
    expect(reading.read_by).toBe('rules');
    expect(reading.dropped).toEqual([
      { field: 'amount', value: '291.55', reason: 'not written in the answer' },
    ]);
    expect(reading).toMatchObject({ amount: '245.00', vat: { basis: 'net' } });
    next = answer({ amount: 245, available_from: '2026-12-24' });
    expect((await read(BERLIN_NET)).dropped).toEqual([
      { field: 'available_from', value: '2026-12-24', reason: 'no such date in the answer' },
    ]);
  });

  it('keeps the rules reading when the model answers no JSON of the schema', async () => {
    next = 'The price is 245 EUR.';
    const reading = await read(BERLIN_NET);
    expect(reading.read_by).toBe('rules');
    expect(reading.dropped[0]?.field).toBe('reading');
    expect(reading.amount).toBe('245.00');
  });

  it('on the reference engine upstream: whatever it answers, a kept figure is one the answer contains', async () => {
    const replies = [
      BERLIN_NET,
      '289 EUR including parts, call-out fee and VAT. We can come on Monday.',
      'Our rate is 65 EUR per hour, about 3 hours, plus VAT.',
      'Bonjour, 1 250 € HT pour le remplacement, plus 60 € de déplacement, disponible le 3 décembre.',
    ];
    for (const reply of replies) {
      const reading = await read(reply, 'king');
      const figures = [reading.amount, reading.amount_high, ...reading.fees.map((f) => f.amount)].filter(
        (x): x is string => x !== null,
      );
      if (reading.read_by === 'model') {
        for (const figure of figures)
          expect(reply.replace(/\s/g, '')).toContain(String(Math.trunc(Number(figure))));
      } else {
        expect(reading).toEqual({ ...readQuote(reply, received, 'DE'), dropped: reading.dropped });
      }
    }
  });
});
